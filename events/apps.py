from django.apps import AppConfig


class EventsConfig(AppConfig):
    name = "events"
    verbose_name = "Special events"

    def ready(self):
        from events.models import EventDate, SpecialEvent
        from museum.shared_reads import watch

        watch("events", SpecialEvent, EventDate)
