"""Drops for staff: set up (what a drop covers, its times, outflow and limits) with Django's own
forms, since a drop's rules are its model's constraints and what its line reads is written when
it is saved (drops.receivers); its waiting list only read. A warning when the outflow is above
what the server was measured to sell (MUSEUM_DROP_OUTFLOW_WARNING)."""

from django import forms
from django.contrib import admin, messages
from django.db.models import Q
from django.utils import timezone

from drops import services
from drops.models import Drop, WaitingEntry
from events.models import EventDate
from hours.models import EntrySlot, MuseumDay


class DropForm(forms.ModelForm):
    """Days, slots and event dates to come, and those the drop covers already: a museum's past
    rows would make the lists long and are never chosen."""

    class Meta:
        model = Drop
        fields = [
            "name",
            "days",
            "slots",
            "event_dates",
            "prequeue_opens_at",
            "opens_at",
            "closes_at",
            "outflow_per_minute",
            "max_tickets",
            "admission_minutes",
            "octo_allocation",
            "seed",
        ]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        today = timezone.localdate()
        pk = self.instance.pk
        chosen = Q(drops=pk) if pk is not None else Q(pk__in=[])
        choices = {
            "days": MuseumDay.objects.filter(Q(date__gte=today) | chosen),
            "slots": EntrySlot.objects.filter(Q(day__gte=today) | chosen),
            "event_dates": EventDate.objects.select_related("event").filter(
                Q(date__gte=today) | chosen
            ),
        }
        for name, rows in choices.items():
            if name in self.fields:
                self.fields[name].queryset = rows.distinct()  # type: ignore[attr-defined]


class WaitingEntryInline(admin.TabularInline):
    model = WaitingEntry
    fields = readonly_fields = (
        "joined_at",
        "email",
        "language",
        "quantity",
        "offered_at",
        "voucher",
    )
    ordering = ["joined_at", "pk"]
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Drop)
class DropAdmin(admin.ModelAdmin):
    form = DropForm
    list_display = [
        "name",
        "prequeue_opens_at",
        "opens_at",
        "closes_at",
        "stage",
        "outflow_per_minute",
        "max_tickets",
    ]
    search_fields = ["name"]
    date_hierarchy = "opens_at"
    filter_horizontal = ["days", "slots", "event_dates"]
    readonly_fields = ["created_at"]
    inlines = [WaitingEntryInline]
    fieldsets = [
        (None, {"fields": ["name", "days", "slots", "event_dates"]}),
        ("Times", {"fields": ["prequeue_opens_at", "opens_at", "closes_at"]}),
        (
            "The line",
            {
                "fields": [
                    "outflow_per_minute",
                    "max_tickets",
                    "admission_minutes",
                    "octo_allocation",
                    "seed",
                    "created_at",
                ]
            },
        ),
    ]

    @admin.display(description="stage")
    def stage(self, drop):
        return drop.stage(timezone.now())

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        warning = services.outflow_warning(obj)
        if warning:
            messages.warning(request, warning)
