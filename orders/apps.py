from django.apps import AppConfig


class OrdersConfig(AppConfig):
    name = "orders"
    verbose_name = "Orders and visitor categories"

    def ready(self):
        from museum.monitoring import register_scrape_time_collector
        from orders.history import register_descriptions
        from orders.membership_reports import ActiveMembersCollector
        from orders.selectors import EmailsWaitingCollector

        register_scrape_time_collector(EmailsWaitingCollector())
        register_scrape_time_collector(ActiveMembersCollector())
        register_descriptions()
