from django.apps import AppConfig


class DropsConfig(AppConfig):
    """A blockbuster drop: a fair waiting room on Redis in front of the sale of some days, slots
    or event dates, its admissions, and the waiting list after the last place (an app above the
    sale and vouchers, whose services it calls; the sale asks it through the gate it registers)."""

    name = "drops"
    verbose_name = "Drops and waiting rooms"

    def ready(self):
        from drops import gate, monitoring, receivers
        from drops.tasks import offers_sent
        from orders.services.limits import register_email_counter

        register_email_counter(offers_sent)
        gate.register()
        receivers.connect()
        monitoring.register()
