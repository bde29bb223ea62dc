from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.forms.models import BaseInlineFormSet

from events.models import EventDate, SpecialEvent
from events.services import most_sold_on_one_date


class SpecialEventForm(forms.ModelForm):
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


@admin.register(SpecialEvent)
class SpecialEventAdmin(admin.ModelAdmin):
    list_display = ["name", "location", "price", "capacity", "first_date", "cancelled_at"]
    search_fields = ["name", "location"]
    readonly_fields = ["cancelled_at", "created_at", "updated_at"]
    inlines = [EventDateInline]
    form = SpecialEventForm

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("dates")

    @admin.display(description="first date")
    def first_date(self, event):
        dates = event.dates.all()
        return dates[0].date if dates else None

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        # Every date, new ones too, counts places against the event's capacity.
        form.instance.dates.update(capacity=form.instance.capacity)
