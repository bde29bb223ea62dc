"""Groups' refusals, in the domain's words (museum.exceptions): each face maps them once."""

from django.utils.translation import gettext_lazy as _

from museum.exceptions import MuseumProblem


class GuideNotFree(MuseumProblem):
    """The guide cannot lead this tour: `reason` says why (groups.services.guides.REASONS:
    inactive, language, audience, not_working, busy)."""

    default_code = "guide_not_free"
    title = _("Guide not free")
    default_detail = _("The guide cannot lead this tour.")

    def __init__(self, detail: str, *, reason: str):
        super().__init__(detail, reason=reason)
        self.reason = reason


class TourOver(MuseumProblem):
    default_code = "tour_over"
    title = _("Tour over")
    default_detail = _("This tour is over.")


class GuideLinkInvalid(MuseumProblem):
    """A guide's answer link that was not made by the museum (mistyped, cut short, tampered)."""

    kind = "not_found"
    default_code = "link_invalid"
    title = _("Not Found")
    default_detail = _("This link is not valid. Please use the link in the latest email.")


class GuideLinkOutdated(MuseumProblem):
    """A guide's answer link for an ask that was replaced: the tour was given to another guide,
    asked again, or is no longer planned."""

    default_code = "link_outdated"
    title = _("Link outdated")
    default_detail = _("This request is no longer open: the tour was reassigned or cancelled.")


class AlreadyAnswered(MuseumProblem):
    default_code = "already_answered"
    title = _("Already answered")
    default_detail = _("This request was answered already.")
