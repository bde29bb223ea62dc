import base64

from django.contrib import admin
from django.utils.html import format_html

from tickets.models import Ticket
from tickets.services import ticket_image


@admin.register(Ticket)
class TicketAdmin(admin.ModelAdmin):
    list_display = [
        "confirmation_code",
        "ticket_type",
        "date",
        "event",
        "email",
        "checked_in_at",
        "cancelled_at",
    ]
    list_filter = ["ticket_type", "date", "checked_in_at", "cancelled_at"]
    list_select_related = ["event"]
    search_fields = ["confirmation_code", "email", "event__name"]
    date_hierarchy = "date"
    # What was bought is a record: staff read it, the service alone writes it.
    readonly_fields = [
        "id",
        "confirmation_code",
        "buyer",
        "ticket_type",
        "date",
        "event",
        "email",
        "phone",
        "price",
        "purchased_at",
        "cancelled_at",
        "checked_in_at",
        "checked_in_by",
        "ticket_image_preview",
    ]

    def has_add_permission(self, request):
        return False  # tickets are bought through the API, where the rules are checked

    @admin.display(description="ticket")
    def ticket_image_preview(self, ticket):
        png = bytes(ticket_image(ticket=ticket).png)
        return format_html(
            '<img src="data:image/png;base64,{}" alt="Ticket {}" style="max-width:320px">',
            base64.b64encode(png).decode(),
            ticket.confirmation_code,
        )
