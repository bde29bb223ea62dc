from datetime import timedelta
from urllib.parse import urlencode

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Count, Max, Min, Q, Sum
from django.shortcuts import redirect
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from audit.admin import AuditedAdmin
from hours.models import EntrySlot, MuseumDay
from hours.services import (
    DEFAULT_PATTERN,
    MAX_DAYS,
    CapacityBelowSold,
    MemberPlacesAboveCapacity,
    apply_weekly_pattern,
    close_days,
    parse_weekly_pattern,
    set_slot_capacity,
)
from museum.admin_pages import admin_page
from museum.forms import DATE_INPUT


class CloseDaysForm(forms.Form):
    note = forms.CharField(
        max_length=MuseumDay._meta.get_field("note").max_length,
        help_text="Why the museum is closed, e.g. 'Closed for a public holiday'.",
    )


class WeeklyPatternForm(forms.Form):
    start = forms.DateField(label="First day", widget=DATE_INPUT)
    end = forms.DateField(
        label="Last day", required=False, widget=DATE_INPUT, help_text="Or give a number of days."
    )
    days = forms.IntegerField(
        label="Number of days", required=False, min_value=1, max_value=MAX_DAYS
    )
    pattern = forms.CharField(
        label="Weekly opening hours",
        initial=DEFAULT_PATTERN,
        widget=forms.TextInput(attrs={"size": 60}),
        help_text=(
            "Days and hours separated by commas, e.g. 'tue-sun 10:00-17:00' or "
            "'mon-thu 09:00-18:00, fri 10:00-16:00'. Weekdays not named are closed."
        ),
    )
    capacity = forms.IntegerField(
        label="General-entry tickets per day",
        required=False,
        min_value=0,
        help_text="For the days this adds; empty means unlimited.",
    )
    slot_minutes = forms.IntegerField(
        label="Timed entry: minutes per slot",
        required=False,
        min_value=5,
        max_value=24 * 60,
        help_text="Splits each open day without slots into entry slots; empty: untimed.",
    )
    slot_capacity = forms.IntegerField(
        label="Tickets per slot",
        required=False,
        min_value=0,
        help_text="Empty means unlimited.",
    )
    slot_member_places = forms.IntegerField(
        label="Places per slot kept for members",
        required=False,
        min_value=0,
        help_text="Of the tickets per slot; sold to anyone from MUSEUM_MEMBER_PLACES_RELEASE_HOURS "
        "before the slot. Empty: none.",
    )
    overwrite_staff_edits = forms.BooleanField(
        label="Also reset days staff changed",
        required=False,
        help_text="Days edited or closed here are kept as they are unless this is ticked.",
    )

    def clean_pattern(self):
        try:
            self.weekly = parse_weekly_pattern(self.cleaned_data["pattern"])
        except ValueError as exc:
            raise ValidationError(str(exc)) from None
        return self.cleaned_data["pattern"]

    def clean(self):
        super().clean()
        cleaned = self.cleaned_data
        start, end, days = cleaned.get("start"), cleaned.get("end"), cleaned.get("days")
        if start is None or self.has_error("end") or self.has_error("days"):
            return cleaned
        if (end is None) == (days is None):
            raise ValidationError("Give either the last day or the number of days.")
        if end is not None:
            days = (end - start).days + 1
            if not 1 <= days <= MAX_DAYS:
                raise ValidationError(
                    f"The last day must be on or after the first, within {MAX_DAYS} days."
                )
        cleaned["days"] = days
        capacity, kept = cleaned.get("slot_capacity"), cleaned.get("slot_member_places") or 0
        if capacity is not None and kept > capacity:
            raise ValidationError(str(MemberPlacesAboveCapacity.default_detail))
        return cleaned


class WhenFilter(admin.SimpleListFilter):
    """From today unless asked otherwise: the list opens where a calendar would."""

    title = "when"
    parameter_name = "when"

    def __init__(self, request, params, model, model_admin):
        super().__init__(request, params, model, model_admin)
        # Drilling into a month by the dates above the list means that month, past or not.
        drilled = any(key.startswith("date__") for key in request.GET)
        self.chosen = self.value() or ("all" if drilled else "upcoming")

    def lookups(self, request, model_admin):
        return [("upcoming", "From today"), ("past", "Past"), ("all", "All days")]

    def queryset(self, request, queryset):
        today = timezone.localdate()
        if self.chosen == "upcoming":
            return queryset.filter(date__gte=today)
        if self.chosen == "past":
            return queryset.filter(date__lt=today)
        return queryset

    def choices(self, changelist):
        for value, label in self.lookup_choices:
            yield {
                "selected": self.chosen == value,
                "query_string": changelist.get_query_string({self.parameter_name: value}),
                "display": label,
            }


def with_held(slots):
    """Slots with `held`: the places of orders held and not yet paid (counted in `sold`)."""
    return slots.annotate(
        held=Count(
            "tickets",
            filter=Q(tickets__order__status="held", tickets__cancelled_at__isnull=True),
        )
    )


class EntrySlotForm(forms.ModelForm):
    class Meta:
        model = EntrySlot
        fields = ["day", "entry_time", "capacity", "member_places"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Empty keeps none, as a slot made without the field does.
        self.fields["member_places"].required = False

    def clean_member_places(self):
        return self.cleaned_data["member_places"] or 0

    def clean_capacity(self):
        capacity = self.cleaned_data["capacity"]
        sold = self.instance.sold if self.instance.pk else 0
        if capacity is not None and capacity < sold:
            raise ValidationError(f"{sold} places of this slot are sold or held already.")
        return capacity

    def clean(self):
        super().clean()
        cleaned = self.cleaned_data
        capacity, kept = cleaned.get("capacity"), cleaned.get("member_places")
        if capacity is not None and kept is not None and kept > capacity:
            self.add_error("member_places", str(MemberPlacesAboveCapacity.default_detail))
        return cleaned


class SlotCounts:
    """Sold and held against capacity, for the slot list and a day's slots."""

    @admin.display(description="sold (of which held) / capacity")
    def places(self, slot):
        capacity = "unlimited" if slot.capacity is None else slot.capacity
        counted = f"{slot.sold} ({slot.held} held) / {capacity}"
        if slot.member_places or slot.member_sold:
            counted += f"; members {slot.member_sold} of {slot.member_places} kept"
        return counted


@admin.register(EntrySlot)
class EntrySlotAdmin(SlotCounts, AuditedAdmin):
    list_display = ["day", "entry_time", "places"]
    list_filter = [("day__date", admin.DateFieldListFilter)]
    date_hierarchy = "day__date"
    ordering = ["day", "entry_time"]
    form = EntrySlotForm
    fields = ["day", "entry_time", "capacity", "member_places"]

    def get_queryset(self, request):
        return with_held(super().get_queryset(request))

    def get_readonly_fields(self, request, obj=None):
        audited = super().get_readonly_fields(request, obj)
        return [*audited, "day", "entry_time"] if obj else audited

    def save_model(self, request, obj, form, change):
        if not change:
            super().save_model(request, obj, form, change)
            return
        # Through the service, as a sale may have landed since the form was checked.
        try:
            set_slot_capacity(
                slot_id=obj.pk, capacity=obj.capacity, member_places=obj.member_places
            )
        except (CapacityBelowSold, MemberPlacesAboveCapacity) as refusal:
            self.message_user(request, str(refusal), messages.ERROR)

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(MuseumDay)
class MuseumDayAdmin(AuditedAdmin):
    list_display = ["day", "hours", "note", "general_tickets", "changed_by_staff"]
    list_filter = [WhenFilter, "is_closed", "edited_by_staff"]
    list_per_page = 62  # two months
    date_hierarchy = "date"
    ordering = ["date"]
    readonly_fields = ["sold", "edited_by_staff", "entry_slots"]
    actions = ["close_selected_days", "apply_pattern_to_selection"]

    def changelist_view(self, request, extra_context=None):
        extra_context = {**(extra_context or {}), "may_apply_pattern": self._may_reseed(request)}
        return super().changelist_view(request, extra_context)

    @admin.display(description="day", ordering="date")
    def day(self, day):
        return f"{day.date:%a %d %b %Y}"

    @admin.display(description="hours")
    def hours(self, day):
        if day.is_closed:
            return format_html('<strong class="museum-closed">{}</strong>', "Closed")
        return f"{day.opens_at:%H:%M}–{day.closes_at:%H:%M}"

    @admin.display(description="tickets sold")
    def general_tickets(self, day):
        return f"{day.sold} of {day.capacity}" if day.capacity is not None else f"{day.sold}"

    @admin.display(description="entry slots: sold (of which held) / capacity")
    def entry_slots(self, day):
        slots = with_held(EntrySlot.objects.filter(day=day)).order_by("entry_time")
        if not day.pk or not slots:
            return "None: untimed entry."
        return format_html_join(
            mark_safe("<br>"),  # noqa: S308 (a constant)
            '<a href="{}">{}</a>: {}',
            (
                (
                    reverse("admin:hours_entryslot_change", args=[slot.pk]),
                    f"{slot.entry_time:%H:%M}",
                    SlotCounts().places(slot),
                )
                for slot in slots
            ),
        )

    @admin.display(description="changed by staff", boolean=True, ordering="edited_by_staff")
    def changed_by_staff(self, day):
        return day.edited_by_staff

    def save_model(self, request, obj, form, change):
        # Marks the day as staff's, so the next seed_hours run does not undo the edit.
        obj.edited_by_staff = True
        super().save_model(request, obj, form, change)

    @admin.action(description="Close the selected days (asks for a note)", permissions=["change"])
    def close_selected_days(self, request, queryset):
        form = CloseDaysForm(request.POST if "apply" in request.POST else None)
        if form.is_valid():
            note = form.cleaned_data["note"]
            closed = close_days(dates=queryset.values_list("date", flat=True), note=note)
            self.message_user(request, f"Closed {closed} day(s): {note}", messages.SUCCESS)
            return None
        return admin_page(
            self,
            request,
            "admin/hours/museumday/close_days.html",
            title="Close days",
            form=form,
            days=queryset,
            tickets_sold=queryset.aggregate(total=Sum("sold"))["total"] or 0,
        )

    @admin.action(
        description="Apply a weekly pattern to the selected days' dates",
        permissions=["add", "change", "delete"],
    )
    def apply_pattern_to_selection(self, request, queryset):
        span = queryset.aggregate(first=Min("date"), last=Max("date"))
        query = urlencode({"start": span["first"].isoformat(), "end": span["last"].isoformat()})
        return redirect(f"{reverse('admin:hours_museumday_apply_pattern')}?{query}")

    def _may_reseed(self, request) -> bool:
        # Applying a pattern adds, changes and removes days.
        return (
            self.has_add_permission(request)
            and self.has_change_permission(request)
            and self.has_delete_permission(request)
        )

    def get_urls(self):
        apply_pattern = self.admin_site.admin_view(self.apply_pattern_view)
        return [
            path("apply-pattern/", apply_pattern, name="hours_museumday_apply_pattern"),
            *super().get_urls(),
        ]

    def apply_pattern_view(self, request):
        """The form behind `seed_hours`, for staff: same parser, same service."""
        if not self._may_reseed(request):
            raise PermissionDenied
        today = timezone.localdate()
        initial = {
            "start": request.GET.get("start", today),
            "end": request.GET.get("end", today + timedelta(days=89)),
        }
        form = WeeklyPatternForm(request.POST or None, initial=initial)
        if form.is_valid():
            data = form.cleaned_data
            summary = apply_weekly_pattern(
                start=data["start"],
                days=data["days"],
                pattern=form.weekly,
                capacity=data["capacity"],
                overwrite_staff_edits=data["overwrite_staff_edits"],
                slot_minutes=data["slot_minutes"],
                slot_capacity=data["slot_capacity"],
                slot_member_places=data["slot_member_places"] or 0,
            )
            self.message_user(
                request,
                f"Opening hours from {data['start']} for {data['days']} days: {summary}.",
                messages.SUCCESS,
            )
            if summary.tickets_warning:
                self.message_user(request, summary.tickets_warning, messages.WARNING)
            return redirect("admin:hours_museumday_changelist")
        return admin_page(
            self,
            request,
            "admin/hours/museumday/apply_pattern.html",
            title="Apply a weekly pattern",
            form=form,
        )
