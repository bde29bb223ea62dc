from django.conf import settings
from django.core.management.base import BaseCommand

from tickets.services import anonymise_old_tickets


class Command(BaseCommand):
    help = (
        "Replace the buyer's email and phone on tickets more than "
        "MUSEUM_PERSONAL_DATA_RETENTION_DAYS days past their date; the admission record stays. "
        "Run it daily."
    )

    def handle(self, *args, **options):
        count = anonymise_old_tickets()
        days = settings.MUSEUM_PERSONAL_DATA_RETENTION_DAYS
        self.stdout.write(f"{count} tickets anonymised (more than {days} days past their date).")
