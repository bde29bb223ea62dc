"""Groups for staff, a module per concern (as orders/admin/): tour programmes, guides and
their tours (`tours`)."""

from groups.admin import tours  # noqa: F401 (registers its admins)
