from django.apps import AppConfig


class OrdersConfig(AppConfig):
    name = "orders"
    verbose_name = "Orders and visitor categories"

    def ready(self):
        from hours.services import register_held_back
        from museum.monitoring import register_scrape_time_collector
        from orders.history import register_descriptions
        from orders.membership_reports import ActiveMembersCollector
        from orders.models import SaleLimits, VisitorCategory, Voucher
        from orders.selectors import EmailsWaitingCollector
        from orders.services.limits import OWN_LIMITS, register_email_counter
        from orders.services.payments import buyer_emails_sent
        from orders.services.pricing import ON_SALE
        from orders.services.vouchers import ROWS_KEPT, held_back_places

        ON_SALE.changes_with(VisitorCategory)
        OWN_LIMITS.changes_with(SaleLimits)
        ROWS_KEPT.changes_with(Voucher)
        register_held_back(held_back_places)
        register_email_counter(buyer_emails_sent)
        register_scrape_time_collector(EmailsWaitingCollector())
        register_scrape_time_collector(ActiveMembersCollector())
        register_descriptions()
