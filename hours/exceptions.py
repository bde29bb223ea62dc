"""The problems of the rows that count places (museum days, entry slots, event dates)."""

from museum.exceptions import MuseumProblem


class CapacityBelowSold(MuseumProblem):
    """A capacity edit would leave fewer places than are already sold or held."""

    default_code = "capacity_below_sold"
    title = "Capacity below tickets sold"
    default_detail = "More places are already sold or held than that capacity."


class SaleEnded(MuseumProblem):
    """Today's sale for a slot ended when the next slot began, or for the last slot and untimed
    entry when the museum closed."""

    default_code = "sale_ended"
    title = "No longer on sale"
    default_detail = "That entry is no longer sold today."
