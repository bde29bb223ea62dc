"""The problems of the rows that count places (museum days, entry slots, event dates)."""

from django.utils.translation import gettext_lazy as _

from museum.exceptions import MuseumProblem


class CapacityBelowSold(MuseumProblem):
    """A capacity edit would leave fewer places than are already sold or held."""

    default_code = "capacity_below_sold"
    title = _("Capacity below tickets sold")
    default_detail = _("More places are already sold or held than that capacity.")


class SaleEnded(MuseumProblem):
    """Today's sale for a slot ended when the next slot began, or for the last slot and untimed
    entry when the museum closed."""

    default_code = "sale_ended"
    title = _("No longer on sale")
    default_detail = _("That entry is no longer sold today.")


class MemberPlacesAboveCapacity(MuseumProblem):
    """A slot would keep more places for members than it has."""

    kind = "invalid"
    default_code = "member_places_above_capacity"
    title = _("More member places than capacity")
    default_detail = _("A slot cannot keep more places for members than its capacity.")
