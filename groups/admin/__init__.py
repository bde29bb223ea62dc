"""Groups for staff, a module per concern (as orders/admin/): the requests, group rates,
chaperone rules and arrivals (`requests`); tour programmes, guides and their tours (`tours`)."""

from groups.admin import requests, tours  # noqa: F401 (registers their admins)
