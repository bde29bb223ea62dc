from django.apps import AppConfig


class DeskConfig(AppConfig):
    """The front desk: staff's pages for selling to the visitor in front of them, finding and
    changing orders, and members. A face above every layer; it has no models of its own."""

    name = "desk"
    verbose_name = "Front desk"
