from django.apps import AppConfig


class HoursConfig(AppConfig):
    name = "hours"
    verbose_name = "Opening hours"
