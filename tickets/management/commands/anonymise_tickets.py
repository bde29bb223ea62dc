from django.conf import settings
from django.core.management.base import BaseCommand

from orders.services.personal_data import anonymise_old_orders


class Command(BaseCommand):
    help = (
        "Replace the buyer's email and phone on orders more than "
        "MUSEUM_PERSONAL_DATA_RETENTION_DAYS days past their date; the orders and their tickets "
        "stay. The task worker does it hourly."
    )

    def handle(self, *args, **options):
        days = settings.MUSEUM_PERSONAL_DATA_RETENTION_DAYS
        orders = anonymise_old_orders()
        self.stdout.write(f"{orders} orders anonymised (more than {days} days past their date).")
