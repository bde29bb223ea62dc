from django.apps import AppConfig


class OctoConfig(AppConfig):
    name = "octo"
    verbose_name = "OCTO (resellers)"
    default_auto_field = "django.db.models.BigAutoField"
