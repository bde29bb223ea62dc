from contextlib import suppress

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import Exists, OuterRef
from django.forms.models import BaseInlineFormSet
from django.http import Http404
from django.utils import timezone

from events.models import EventDate, SpecialEvent
from events.services import cancel_event, most_sold_on_one_date
from museum.admin_pages import admin_page
from tickets.models import Ticket


class SpecialEventForm(forms.ModelForm):
    class Meta:
        model = SpecialEvent
        fields = ["name", "location", "description", "price", "capacity"]
        help_texts = {
            "location": "Where in the museum, e.g. 'Great Hall'.",
            "description": "Shown to visitors in the programme.",
            "price": "Per ticket, in the museum's currency.",
            "capacity": "Tickets per date; empty means unlimited.",
        }

    def clean_capacity(self):
        capacity = self.cleaned_data["capacity"]
        most_sold = most_sold_on_one_date(self.instance) if self.instance.pk else 0
        if capacity is not None and capacity < most_sold:
            raise ValidationError(f"{most_sold} tickets are already sold for one of the dates.")
        return capacity


class EventDateFormSet(BaseInlineFormSet):
    def clean(self):
        super().clean()
        for form in self.deleted_forms:
            if form.instance.pk and form.instance.sold:
                raise ValidationError(
                    f"Tickets are sold for {form.instance.date}; that date cannot be removed."
                )


class EventDateInline(admin.TabularInline):
    model = EventDate
    formset = EventDateFormSet
    extra = 1
    fields = ["date", "sold", "capacity"]
    readonly_fields = ["sold", "capacity"]
    verbose_name_plural = "dates (tickets sold against capacity)"


def _has_dates_from(day):
    return Exists(EventDate.objects.filter(event=OuterRef("pk"), date__gte=day))


class EventStatusFilter(admin.SimpleListFilter):
    title = "status"
    parameter_name = "status"

    def lookups(self, request, model_admin):
        return [
            ("upcoming", "Upcoming (a date from today on)"),
            ("past", "Past (every date before today)"),
            ("cancelled", "Cancelled"),
        ]

    def queryset(self, request, queryset):
        today = timezone.localdate()
        if self.value() == "upcoming":
            return queryset.active().filter(_has_dates_from(today))
        if self.value() == "past":
            return queryset.active().exclude(_has_dates_from(today))
        if self.value() == "cancelled":
            return queryset.filter(cancelled_at__isnull=False)
        return queryset


@admin.register(SpecialEvent)
class SpecialEventAdmin(admin.ModelAdmin):
    list_display = ["name", "status", "dates_run", "location", "places", "tickets_sold", "price"]
    list_filter = [EventStatusFilter]
    search_fields = ["name", "location"]
    search_help_text = "Search by event name or location."
    readonly_fields = ["cancelled_at", "created_at", "updated_at"]
    inlines = [EventDateInline]
    form = SpecialEventForm
    actions = ["cancel_selected_events"]

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("dates")

    @admin.display(description="dates")
    def dates_run(self, event):
        dates = [slot.date for slot in event.dates.all()]
        if not dates:
            return "–"
        if len(dates) == 1:
            return f"{dates[0]:%a %d %b %Y}"
        return f"{len(dates)} dates, {dates[0]:%d %b} – {dates[-1]:%d %b %Y}"

    @admin.display(description="places per date", ordering="capacity")
    def places(self, event):
        return "unlimited" if event.capacity is None else event.capacity

    @admin.display(description="tickets sold")
    def tickets_sold(self, event):
        return sum(slot.sold for slot in event.dates.all())

    @admin.display(description="status")
    def status(self, event):
        if event.cancelled_at:
            return "Cancelled"
        today = timezone.localdate()
        return "Upcoming" if any(slot.date >= today for slot in event.dates.all()) else "Past"

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        # Every date, new ones too, counts places against the event's capacity.
        form.instance.dates.update(capacity=form.instance.capacity)

    def has_delete_permission(self, request, obj=None):
        # Sold tickets point at the event: staff cancel it instead, which keeps the record.
        return False

    def has_cancel_permission(self, request):
        # Cancelling takes the place of deleting, as DELETE does in the API.
        return request.user.has_perm("events.delete_specialevent")

    @admin.action(
        description="Cancel the selected events and their tickets", permissions=["cancel"]
    )
    def cancel_selected_events(self, request, queryset):
        events = queryset.active()
        if request.POST.get("post") == "yes":
            for event in events:
                # An event cancelled meanwhile (another tab, the API) is a 404 to the service.
                with suppress(Http404):
                    cancel_event(event_id=event.pk)
            self.message_user(request, f"Cancelled {len(events)} event(s).", messages.SUCCESS)
            return None
        return admin_page(
            self,
            request,
            "admin/events/specialevent/cancel_events.html",
            title="Cancel events",
            events=events,
            already_cancelled=queryset.filter(cancelled_at__isnull=False),
            tickets=Ticket.objects.filter(event__in=events, cancelled_at__isnull=True).count(),
        )
