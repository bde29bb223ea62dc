from django.apps import AppConfig


class VouchersConfig(AppConfig):
    """Vouchers administered: staff's API and admin over orders' Voucher (created alone, in
    batches or from a CSV file, mailed, counted per tag), and the check a buyer asks of a code
    (an app above `orders` and `giftcards`, whose services it calls)."""

    name = "vouchers"
    verbose_name = "Vouchers"

    def ready(self):
        from orders.services.limits import register_email_counter
        from vouchers.tasks import codes_sent

        register_email_counter(codes_sent)
