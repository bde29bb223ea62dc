from django.apps import AppConfig


class HoursConfig(AppConfig):
    name = "hours"
    verbose_name = "Opening hours"

    def ready(self):
        from hours.models import EntrySlot, MuseumDay
        from museum.response_cache import group_changes_with

        group_changes_with("hours", MuseumDay)
        # A closed or reopened day changes its slots' answer too.
        group_changes_with("slots", EntrySlot, MuseumDay)
