import base64

from django.contrib import admin
from django.utils import timezone
from django.utils.html import format_html

from audit.admin import AuditedAdmin
from museum.admin_pages import VisitDateFilter
from orders.exceptions import NotPaid
from orders.models import Ticket, TicketState
from orders.selectors import refuse_unless_printable
from tickets.images import ticket_image


class TicketStatusFilter(admin.SimpleListFilter):
    title = "status"
    parameter_name = "status"

    def lookups(self, request, model_admin):
        return TicketState.choices

    def queryset(self, request, queryset):
        # Ticket.state as a filter: the list and the filter never disagree.
        state = self.value()
        if state in TicketState.values:
            return queryset.filter(Ticket.in_state(state, timezone.now()))
        return queryset


@admin.register(Ticket)
class TicketAdmin(AuditedAdmin):
    list_display = [
        "confirmation_code",
        "status",
        "date",
        "ticket_type",
        "event",
        "order",
        "checked_in_at",
        "checked_in_by",
    ]
    list_filter = [TicketStatusFilter, VisitDateFilter, "ticket_type"]
    list_select_related = ["event", "order", "checked_in_by"]
    search_fields = ["confirmation_code", "order__email", "event__name"]
    search_help_text = "Search by confirmation code, email address or event name."
    date_hierarchy = "date"
    # What was bought is a record: staff read it, the service alone writes it.
    readonly_fields = [
        "id",
        "confirmation_code",
        "buyer",
        "ticket_type",
        "date",
        "event",
        "order",
        "price",
        "purchased_at",
        "cancelled_at",
        "checked_in_at",
        "checked_in_by",
        "ticket_image_preview",
    ]

    def has_add_permission(self, request):
        return False  # tickets are bought through the API, where the rules are checked

    def has_delete_permission(self, request, obj=None):
        # A deleted ticket would leave its place counted as sold; cancelling an event cancels
        # its tickets and keeps them.
        return False

    @admin.display(description="status")
    def status(self, ticket):
        return TicketState(ticket.state()).label

    @admin.display(description="ticket")
    def ticket_image_preview(self, ticket):
        # As the API draws it: not for an order that is not paid.
        try:
            refuse_unless_printable(ticket.order)
        except NotPaid as problem:
            return format_html(
                '<p class="museum-ticket-refused" data-code="{}">{}</p>',
                problem.code,
                problem.detail,
            )
        png = bytes(ticket_image(ticket=ticket).png)
        return format_html(
            '<img src="data:image/png;base64,{}" alt="Ticket {}" class="museum-ticket-image">',
            base64.b64encode(png).decode(),
            ticket.confirmation_code,
        )
