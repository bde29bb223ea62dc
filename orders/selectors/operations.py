"""What the operators watch: confirmation emails not gone yet."""

from prometheus_client.core import GaugeMetricFamily

from orders.models import (
    ANONYMISED_EMAIL,
    Order,
    OrderStatus,
)


def emails_waiting() -> int:
    """Confirmed orders whose confirmation email has not gone yet (waiting, or being retried)."""
    return (
        Order.objects.filter(status=OrderStatus.CONFIRMED, confirmation_sent_at__isnull=True)
        .exclude(email=ANONYMISED_EMAIL)
        .count()
    )


class EmailsWaitingCollector:
    """`museum_emails_waiting`, read at each scrape of /metrics (registered in OrdersConfig)."""

    def collect(self):
        yield GaugeMetricFamily(
            "museum_emails_waiting",
            "Confirmed orders whose email has not gone yet",
            value=emails_waiting(),
        )
