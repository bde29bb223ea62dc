"""Documents kept for a sale, made once: the order's tickets PDF and each ticket's image."""

from django.db import models

from .sale import Order, Ticket


class TicketsPdf(models.Model):
    """The order's tickets as a PDF, kept so it is made once (orders.documents): `etag` names
    what it prints, and a request that finds the tickets printing otherwise makes it again."""

    order = models.OneToOneField(
        Order, on_delete=models.CASCADE, primary_key=True, related_name="tickets_pdf"
    )
    pdf = models.BinaryField()
    etag = models.CharField(max_length=64)
    made_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "tickets PDF"
        verbose_name_plural = "tickets PDFs"

    def __str__(self):
        return f"Tickets PDF of {self.order_id}"


class TicketImage(models.Model):
    """The rendered PNG of a ticket, kept so each image is drawn once, not on every request."""

    ticket = models.OneToOneField(
        Ticket, on_delete=models.CASCADE, primary_key=True, related_name="image"
    )
    png = models.BinaryField()
    etag = models.CharField(max_length=64)
    rendered_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "tickets_ticketimage"

    def __str__(self):
        return f"Image of {self.ticket_id}"
