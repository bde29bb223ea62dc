"""Vouchers for staff: made, changed and deleted through the same services as the API
(vouchers.services: the rules, the row's lock, the audit record), what they gave only read;
the selected ones exported as CSV, a CSV file imported, and the statistics per tag."""

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect
from django.urls import path

from audit.admin import AuditedAdmin
from museum.admin_pages import Table, admin_page, csv_response, report_cells
from museum.exceptions import InvalidInput, MuseumProblem
from museum.money import ZERO
from orders.models import Voucher, VoucherChannel
from orders.services.vouchers import given
from vouchers import csv_files, services


class VoucherForm(forms.ModelForm):
    """The services' rules as the form's errors, each on its field."""

    channels = forms.MultipleChoiceField(
        choices=VoucherChannel.choices,
        widget=forms.CheckboxSelectMultiple,
        initial=VoucherChannel.values,
        help_text="Where it may be used.",
    )
    code = forms.CharField(
        max_length=40, required=False, help_text="Kept upper-case; empty: a new one is made."
    )

    class Meta:
        model = Voucher
        fields = ["code", *services.FIELDS, *services.RELATIONS]

    def clean_code(self):
        code = self.cleaned_data.get("code") or ""
        if self.instance.pk is not None:
            return self.instance.code  # a code once given stays
        if not code.strip():
            return ""
        try:
            return services.check_code(code)
        except MuseumProblem as problem:
            raise forms.ValidationError(str(problem.detail)) from None

    def _post_clean(self):
        super()._post_clean()  # type: ignore[misc]  # ModelForm's, which the stubs leave out
        wanted = {
            name: self.cleaned_data[name] for name in services.FIELDS if name in self.cleaned_data
        }
        try:
            services.check_settings(wanted, voucher=self.instance if self.instance.pk else None)
        except InvalidInput as problem:
            for name, errors in problem.errors.items():
                field = services.MODEL_FIELDS.get(name)
                self.add_error(field if field in self.fields else None, errors)

    def validate_unique(self):
        pass  # the code is checked by the service (clean_code), gift cards' too

    def settings(self, *, only_changed: bool) -> dict:
        names = [*services.FIELDS, *services.RELATIONS]
        if only_changed:
            names = [name for name in names if name in self.changed_data]
        return {name: self.cleaned_data[name] for name in names if name in self.cleaned_data}


@admin.register(Voucher)
class VoucherAdmin(AuditedAdmin):
    form = VoucherForm
    list_display = [
        "code",
        "effect",
        "value",
        "tag",
        "used",
        "max_uses",
        "discounted",
        "budget",
        "valid_until",
        "created_at",
    ]
    list_filter = ["effect", "tag", "stacks", "valid_until"]
    search_fields = ["code", "tag", "comment"]
    readonly_fields = ["used", "discounted", "created_at"]
    filter_horizontal = ["categories", "events"]
    raw_id_fields = ["keep_slot", "keep_event_date"]
    actions = ["export_csv"]
    fieldsets = [
        (None, {"fields": ["code", "effect", "value", "stacks", "tag", "comment"]}),
        ("Uses", {"fields": ["max_uses", "used", "budget", "discounted", "created_at"]}),
        ("Validity", {"fields": ["valid_from", "valid_until", "channels"]}),
        (
            "Scope",
            {
                "fields": [
                    "ticket_type",
                    "categories",
                    "events",
                    "visit_from",
                    "visit_until",
                    "entry_from",
                    "entry_until",
                ]
            },
        ),
        ("Places kept", {"fields": ["keep_slot", "keep_day", "keep_event_date"]}),
    ]

    def get_queryset(self, request):
        return given(super().get_queryset(request))

    @admin.display(description="uses", ordering="used")
    def used(self, voucher):
        """Its valid tickets (held or sold, not cancelled)."""
        return voucher.used

    @admin.display(description="discount given", ordering="discounted")
    def discounted(self, voucher):
        return voucher.discounted

    def get_actions(self, request):
        actions = super().get_actions(request)
        # A deletion goes through the service, one at a time: never one used, always audited.
        actions.pop("delete_selected", None)
        return actions

    def save_model(self, request, obj, form, change):
        if change:
            settings = form.settings(only_changed=True)
            if settings:
                services.update_voucher(voucher_id=obj.pk, by=request.user, **settings)
            return
        made = services.create_voucher(
            by=request.user, code=form.cleaned_data["code"], **form.settings(only_changed=False)
        )
        obj.pk, obj.code, obj.created_at = made.pk, made.code, made.created_at

    def save_related(self, request, form, formsets, change):
        pass  # its categories and events were saved by the service

    def delete_model(self, request, obj):
        services.delete_voucher(voucher_id=obj.pk, by=request.user)

    @admin.action(description="Export the selected vouchers as CSV")
    def export_csv(self, request, queryset):
        chosen = given(queryset).prefetch_related("categories", "events").order_by("code")
        return csv_response("vouchers.csv", csv_files.HEADER, csv_files.rows_of(chosen))

    def get_urls(self):
        return [
            path(
                "import/",
                self.admin_site.admin_view(self.import_view),
                name="orders_voucher_import",
            ),
            path(
                "stats/", self.admin_site.admin_view(self.stats_view), name="orders_voucher_stats"
            ),
            *super().get_urls(),
        ]

    def import_view(self, request):
        """A CSV file's vouchers made, all or none: a refusal names its row."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        form = ImportForm(request.POST or None, request.FILES or None)
        if form.is_valid():
            try:
                text = form.cleaned_data["file"].read().decode("utf-8")
                made = services.import_vouchers(by=request.user, rows=csv_files.read(text))
            except UnicodeDecodeError:
                form.add_error("file", "The file is not UTF-8 text.")
            except InvalidInput as problem:
                for name, errors in problem.errors.items():
                    form.add_error("file", f"{name}: {errors[0]}")
            except MuseumProblem as problem:
                form.add_error("file", str(problem.detail))
            else:
                self.message_user(request, f"{len(made)} vouchers made.", messages.SUCCESS)
                return redirect("admin:orders_voucher_changelist")
        return admin_page(
            self,
            request,
            "admin/orders/voucher/import.html",
            title="Import vouchers from a CSV file",
            form=form,
            header=csv_files.HEADER,
        )

    def stats_view(self, request):
        """Per tag: codes issued, used, their uses and the discount they gave; ?format=csv."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        table = stats_table()
        if request.GET.get("format") == "csv":
            return csv_response("voucher-stats.csv", table.header, [*table.rows, table.total])
        return admin_page(
            self,
            request,
            "admin/orders/voucher/stats.html",
            title="Vouchers per tag",
            tables=[table],
        )


class ImportForm(forms.Form):
    file = forms.FileField(
        help_text="A CSV file as the export writes it: code and effect at least."
    )


def stats_table() -> Table:
    rows = services.stats()
    return Table(
        title="Per tag",
        header=["Tag", "Codes issued", "Codes used", "Uses (tickets)", "Discount given"],
        rows=[
            report_cells(
                row["tag"] or "(none)", row["issued"], row["used"], row["uses"], row["discount"]
            )
            for row in rows
        ],
        total=report_cells(
            "Total",
            sum(row["issued"] for row in rows),
            sum(row["used"] for row in rows),
            sum(row["uses"] for row in rows),
            sum((row["discount"] for row in rows), ZERO),
        ),
    )
