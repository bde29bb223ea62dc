from django.contrib import admin

from hours.models import MuseumDay


@admin.register(MuseumDay)
class MuseumDayAdmin(admin.ModelAdmin):
    list_display = ["date", "weekday", "opens_at", "closes_at", "is_closed", "note"]
    list_filter = ["is_closed", "edited_by_staff"]
    date_hierarchy = "date"
    readonly_fields = ["edited_by_staff"]

    @admin.display(description="weekday")
    def weekday(self, day):
        return f"{day.date:%A}"

    def save_model(self, request, obj, form, change):
        # Marks the day as staff's, so the next seed_hours run does not undo the edit.
        obj.edited_by_staff = True
        super().save_model(request, obj, form, change)
