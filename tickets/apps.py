from django.apps import AppConfig
from django.db.models.signals import post_delete


class TicketsConfig(AppConfig):
    name = "tickets"
    verbose_name = "Tickets"

    def ready(self):
        from orders.models import TicketImage
        from tickets.selectors import forget_drawn_image

        # Every way an image goes (a cancellation, a ticket or account deleted) is a delete.
        post_delete.connect(
            lambda sender, instance, **kwargs: forget_drawn_image(ticket_id=instance.pk),
            sender=TicketImage,
            weak=False,
            dispatch_uid="tickets:forget-drawn-image",
        )
