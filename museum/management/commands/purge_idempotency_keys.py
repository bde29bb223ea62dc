from django.core.management.base import BaseCommand

from museum.idempotency import KEY_LIFETIME, purge_expired_keys


class Command(BaseCommand):
    help = (
        f"Delete Idempotency-Keys older than {KEY_LIFETIME.total_seconds() / 3600:g} hours. "
        "Expired keys are already ignored; this keeps the table small (run it hourly or daily)."
    )

    def handle(self, *args, **options):
        self.stdout.write(f"{purge_expired_keys()} expired idempotency keys deleted.")
