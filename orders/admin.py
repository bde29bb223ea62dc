"""Orders, refunds and visitor categories for staff; the sales summary per day and category.

Orders are made through the API and never edited or deleted here: cancelling goes through the
same service as the API (orders.services.cancel_order), under the same locks.
"""

from datetime import date, timedelta

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Q, Sum
from django.urls import path
from django.utils import timezone

from museum.admin_pages import admin_page
from museum.exceptions import MuseumProblem
from orders import selectors, services
from orders.models import Order, OrderStatus, Refund, VisitorCategory
from tickets.models import Ticket

DATE_INPUT = forms.DateInput(format="%Y-%m-%d", attrs={"type": "date"})


@admin.register(VisitorCategory)
class VisitorCategoryAdmin(admin.ModelAdmin):
    list_display = [
        "category",
        "name",
        "general_price",
        "event_price_percent",
        "check_at_door",
        "active",
        "ordering",
    ]
    list_filter = ["active", "check_at_door"]
    search_fields = ["category", "name"]

    def has_delete_permission(self, request, obj=None):
        return False  # tickets keep their category: untick Active instead


class OrderTicketInline(admin.TabularInline):
    model = Ticket
    fields = readonly_fields = (
        "confirmation_code",
        "category",
        "price",
        "slot",
        "cancelled_at",
        "checked_in_at",
    )
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False


class RefundInline(admin.TabularInline):
    model = Refund
    fields = readonly_fields = ("ticket", "amount", "created_at", "cancelled_by")
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


class OrderDateFilter(admin.SimpleListFilter):
    title = "visit date"
    parameter_name = "when"

    def lookups(self, request, model_admin):
        return [("today", "Today"), ("upcoming", "From tomorrow"), ("past", "Before today")]

    def queryset(self, request, queryset):
        today = timezone.localdate()
        lookups = {"today": "date", "upcoming": "date__gt", "past": "date__lt"}
        lookup = lookups.get(self.value() or "")
        return queryset.filter(**{lookup: today}) if lookup else queryset


@admin.register(Order)
class OrderAdmin(admin.ModelAdmin):
    list_display = [
        "confirmation_code",
        "status",
        "date",
        "entry",
        "event",
        "email",
        "total",
        "created_at",
    ]
    # Emails still waiting: "Confirmation sent at" is empty (each attempt and its error are a task
    # result, under Django Tasks DB).
    list_filter = [
        "status",
        OrderDateFilter,
        "ticket_type",
        ("confirmation_sent_at", admin.EmptyFieldListFilter),
    ]
    list_select_related = ["event", "slot"]
    date_hierarchy = "date"
    search_fields = ["confirmation_code", "email", "tickets__confirmation_code"]
    fields = readonly_fields = (
        "confirmation_code",
        "status",
        "buyer",
        "email",
        "phone",
        "ticket_type",
        "date",
        "event",
        "slot",
        "total",
        "hold_expires_at",
        "created_at",
        "confirmed_at",
        "cancelled_at",
        "confirmation_sent_at",
    )
    inlines = [OrderTicketInline, RefundInline]
    actions = ["cancel_selected_orders"]

    @admin.display(description="entry", ordering="slot__entry_time")
    def entry(self, order):
        return f"{order.slot.entry_time:%H:%M}" if order.slot_id else "—"

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def has_cancel_permission(self, request):
        return request.user.has_perm(selectors.CANCEL_ANY_ORDER)

    @admin.action(
        description="Cancel the selected orders (refunds recorded)", permissions=["cancel"]
    )
    def cancel_selected_orders(self, request, queryset):
        cancelled, refused = 0, []
        for order in queryset.exclude(status__in=[OrderStatus.CANCELLED, OrderStatus.EXPIRED]):
            try:
                services.cancel_order(order_id=order.pk, by=request.user)
                cancelled += 1
            except MuseumProblem as problem:
                refused.append(f"{order.confirmation_code}: {problem.detail}")
        self.message_user(request, f"Cancelled {cancelled} order(s).", messages.SUCCESS)
        for words in refused:
            self.message_user(request, words, messages.WARNING)

    def get_urls(self):
        sales = self.admin_site.admin_view(self.sales_view)
        return [path("sales/", sales, name="orders_order_sales"), *super().get_urls()]

    def sales_view(self, request):
        """Tickets sold and takings per day and visitor category, for a range of days."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        form = SalesRangeForm(request.GET or None)
        today = timezone.localdate()
        first, last = today - timedelta(days=7), today + timedelta(days=30)
        if form.is_valid():
            first = form.cleaned_data["first"] or first
            last = form.cleaned_data["last"] or last
        return admin_page(
            self,
            request,
            "admin/orders/order/sales.html",
            title="Sales per day and visitor category",
            form=form,
            first=first,
            last=last,
            rows=sales_summary(first=first, last=last),
        )


class SalesRangeForm(forms.Form):
    first = forms.DateField(label="From", required=False, widget=DATE_INPUT)
    last = forms.DateField(label="To", required=False, widget=DATE_INPUT)


def sales_summary(*, first: date, last: date) -> list[dict]:
    """Per visit date and category: tickets sold (confirmed orders), cancelled, takings."""
    return list(
        Ticket.objects.filter(date__gte=first, date__lte=last, order__isnull=False)
        .exclude(order__status__in=[OrderStatus.HELD, OrderStatus.EXPIRED])
        .values("date", "category__name")
        .annotate(
            sold=Count("pk", filter=Q(cancelled_at__isnull=True)),
            cancelled=Count("pk", filter=Q(cancelled_at__isnull=False)),
            takings=Sum("price", filter=Q(cancelled_at__isnull=True)),
        )
        .order_by("date", "category__ordering", "category__name")
    )


@admin.register(Refund)
class RefundAdmin(admin.ModelAdmin):
    list_display = ["ticket", "order", "amount", "created_at", "cancelled_by"]
    list_select_related = ["ticket", "order", "cancelled_by"]
    search_fields = ["order__confirmation_code", "ticket__confirmation_code", "order__email"]
    date_hierarchy = "created_at"

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
