from django.apps import AppConfig


class HoursConfig(AppConfig):
    name = "hours"
    verbose_name = "Opening hours"

    def ready(self):
        from hours.models import EntrySlot, MuseumDay
        from museum.shared_reads import watch

        watch("hours", MuseumDay)
        # A closed or reopened day changes its slots' answer too.
        watch("slots", EntrySlot, MuseumDay)
