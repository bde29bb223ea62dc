"""The problems of the rows that count places (museum days, entry slots, event dates)."""

from museum.exceptions import MuseumProblem


class CapacityBelowSold(MuseumProblem):
    """A capacity edit would leave fewer places than are already sold or held."""

    default_code = "capacity_below_sold"
    title = "Capacity below tickets sold"
    default_detail = "More places are already sold or held than that capacity."
