from django.apps import AppConfig


class OctoConfig(AppConfig):
    name = "octo"
    verbose_name = "OCTO (resellers)"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from octo.webhooks import register_webhooks

        # The webhooks app, below this one, delivers OCTO's types once told of them.
        register_webhooks()
