"""The refusals of groups: each a kind and a reason."""

from django.utils.translation import gettext_lazy as _

from museum.exceptions import MuseumProblem, NotFound


class UnknownGroupRequest(NotFound):
    default_code = "unknown_group_request"
    default_detail = _("No group request has this key.")


class GroupTooLarge(MuseumProblem):
    """More people than MUSEUM_GROUP_MAX_PEOPLE (`max`)."""

    kind = "invalid"
    default_code = "group_too_large"
    title = _("Group too large")
    default_detail = _("This group is larger than the museum takes in one group.")


class GroupRequestAnswered(MuseumProblem):
    """A step the request's status no longer allows (`status`): approving a declined one,
    changing the numbers of one not approved."""

    default_code = "group_request_answered"
    title = _("Group request already answered")
    default_detail = _("This group request can no longer be changed this way.")

    def __init__(self, detail: str | None = None, *, status: str = "", **extra):
        # `status` is the problem's own HTTP status in its body: the request's is `requestStatus`.
        super().__init__(detail, requestStatus=status, **extra)


class GroupRequestExpired(MuseumProblem):
    default_code = "group_request_expired"
    title = _("Group request expired")
    default_detail = _("This group request waited past its date and gave its places back.")


class TooManyGroupRequests(MuseumProblem):
    """A mailbox's requests waiting for an answer, at most MUSEUM_GROUP_OPEN_REQUESTS (`limit`):
    a request holds places for days, so no one holds a museum's days with many."""

    kind = "too_many"
    default_code = "too_many_group_requests"
    title = _("Too many group requests")
    default_detail = _("This address has as many group requests waiting for an answer as it may.")


class GroupPaidBeyond(MuseumProblem):
    """Fewer people would cost less than the group has paid: the difference is refunded first."""

    default_code = "group_paid_beyond"
    title = _("Paid more than the new total")
    default_detail = _(
        "The group has paid more than it would cost with these numbers: refund the difference "
        "first."
    )


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


class GroupNotAdmitted(MuseumProblem):
    """The door may not admit the group today: `reason` says why (groups.services.day.REFUSALS:
    not approved, cancelled, another day, a no-show, arrived in full), its words the detail."""

    default_code = "group_not_admitted"
    title = _("Group not admitted")
    default_detail = _("The group may not be admitted today.")

    def __init__(self, detail=None, *, reason: str, **extra):
        super().__init__(detail, **extra)
        self.code = reason


class TooManyArriving(MuseumProblem):
    """More people than the group booked (`headcount`), or than are still to come (`left`)."""

    default_code = "more_than_booked"
    title = _("More people than booked")
    default_detail = _("More people than the group booked.")


class NoShowRefused(MuseumProblem):
    """A no-show marked where it may not be: someone of the group arrived, its day has not come,
    or it is not an approved group's."""

    default_code = "no_show_refused"
    title = _("Not a no-show")
    default_detail = _("This group cannot be marked as a no-show.")
