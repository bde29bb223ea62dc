from django.apps import AppConfig


class EventsConfig(AppConfig):
    name = "events"
    verbose_name = "Special events"

    def ready(self):
        from events.models import EventDate, SpecialEvent
        from museum.response_cache import group_changes_with

        group_changes_with("events", SpecialEvent, EventDate)
