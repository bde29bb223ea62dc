"""The refusals of groups: each a kind and a reason."""

from django.utils.translation import gettext_lazy as _

from museum.exceptions import MuseumProblem, NotFound


class UnknownGroupRequest(NotFound):
    default_code = "unknown_group_request"
    default_detail = _("No group request has this key.")


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
