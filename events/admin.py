from django.contrib import admin

from events.models import EventDate, SpecialEvent


class EventDateInline(admin.TabularInline):
    model = EventDate
    extra = 1


@admin.register(SpecialEvent)
class SpecialEventAdmin(admin.ModelAdmin):
    list_display = ["name", "location", "price", "first_date", "cancelled_at"]
    search_fields = ["name", "location"]
    readonly_fields = ["cancelled_at", "created_at", "updated_at"]
    inlines = [EventDateInline]

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("dates")

    @admin.display(description="first date")
    def first_date(self, event):
        dates = event.dates.all()
        return dates[0].date if dates else None
