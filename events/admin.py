from contextlib import suppress

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.db.models import Exists, OuterRef
from django.http import Http404
from django.utils import timezone
from modeltranslation.admin import TranslationAdmin
from modeltranslation.utils import build_localized_fieldname

from audit.admin import AuditedAdmin
from events.models import EventDate, SpecialEvent
from events.services import (
    CapacityBelowSold,
    DatesHaveTickets,
    create_event,
    update_event,
)
from museum.admin_pages import admin_page
from museum.exceptions import InvalidInput, MuseumProblem
from orders.models import Ticket
from orders.services.cancellation import cancel_event

TEXTS = ("name", "location", "description")


class SpecialEventForm(forms.ModelForm):
    # The service's refusal of this very submission, when the admin shows the form again.
    refusal: MuseumProblem | None = None

    class Meta:
        model = SpecialEvent
        fields = ["name", "location", "description", "price", "capacity", "starts_at", "ends_at"]
        widgets = {
            "starts_at": forms.TimeInput(format="%H:%M", attrs={"type": "time"}),
            "ends_at": forms.TimeInput(format="%H:%M", attrs={"type": "time"}),
        }
        help_texts = {
            "location": "Where in the museum, e.g. 'Great Hall'.",
            "description": "Shown to visitors in the programme.",
            "price": "Per ticket, in the museum's currency.",
            "capacity": "Tickets per date; empty means unlimited.",
            "starts_at": "On each date; the tickets, email and calendar entry say it. Empty: "
            "the day's opening hours.",
            "ends_at": "After it starts. Empty: when the museum closes.",
        }

    def clean(self):
        cleaned = super().clean()
        if self.refusal is not None:
            field = "capacity" if isinstance(self.refusal, CapacityBelowSold) else None
            self.add_error(field, str(self.refusal.detail))
        return cleaned


class EventDateInline(admin.TabularInline):
    model = EventDate
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
class SpecialEventAdmin(AuditedAdmin, TranslationAdmin):
    """Each text in every shipped language (modeltranslation's fields, `name_de`...): the museum's
    own is required, a missing one is read in the museum's."""

    list_display = [
        "name",
        "status",
        "dates_run",
        "location",
        "places",
        "tickets_sold",
        "price",
        "tax_rate",
    ]
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

    # Saving goes through the services the API uses, under the event's lock and with their
    # refusals: the event and its dates are one call, made once the dates are known.
    def save_model(self, request, obj, form, change):
        pass

    def save_related(self, request, form, formsets, change):
        fields = {
            name: value
            for name, value in form.cleaned_data.items()
            # A text's column per language ("name_de") under its own name's.
            if name in SpecialEventForm.Meta.fields or name.rsplit("_", 1)[0] in TEXTS
        }
        # The museum's own language's column under the text's own name, as the API gives it.
        for text in TEXTS:
            fields[text] = fields.pop(build_localized_fieldname(text, settings.MUSEUM_LANGUAGE))
        dates = {
            date_form.cleaned_data["date"]
            for formset in formsets
            for date_form in formset.forms
            if date_form.cleaned_data.get("date") and not date_form.cleaned_data.get("DELETE")
        }
        if change:
            update_event(event_id=form.instance.pk, dates=dates, **fields)
        else:
            form.instance.pk = create_event(dates=dates, **fields).pk
        form.instance.refresh_from_db()

    def construct_change_message(self, request, form, formsets, add=False):
        # The service saved the dates, not the formsets, which therefore hold no saved objects.
        message = super().construct_change_message(request, form, [], add)
        if not add and any(formset.has_changed() for formset in formsets):
            message.append({"changed": {"fields": ["dates"]}})
        return message

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except (CapacityBelowSold, DatesHaveTickets, InvalidInput) as refusal:
            # The service refused and its transaction rolled back: the same form again, saying
            # why, as a validation error would.
            request.event_refusal = refusal
            return super().changeform_view(request, object_id, form_url, extra_context)

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change=change, **kwargs)
        refusal = getattr(request, "event_refusal", None)
        return type(form.__name__, (form,), {"refusal": refusal}) if refusal else form

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
