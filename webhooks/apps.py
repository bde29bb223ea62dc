from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "webhooks"
    verbose_name = "Webhooks"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from audit.services import recorded
        from webhooks.fanout import on_recorded

        recorded.connect(on_recorded, dispatch_uid="webhooks:fan-out")
