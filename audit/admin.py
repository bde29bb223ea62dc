"""The audit log in the admin: a filterable list, and each object's history on its own page,
in words (audit.text), with the raw records a click away for superusers."""

import json

from django.contrib import admin
from django.contrib.admin.views.main import ChangeList
from django.db import transaction
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from audit.models import PERSONAL_FIELDS, Action, AuditRecord
from audit.services import changed_fields, history, record
from audit.text import describe, when
from museum.admin import ReadOnlyAdmin
from museum.request_context import current_request

# The newest records an object's page shows; the audit log lists them all.
HISTORY_ROWS = 50


def _viewer():
    # The admin's instances serve every thread: the viewer comes from the request being served.
    request = current_request()
    return getattr(request, "user", None)


def shown_changes(entry: AuditRecord, user) -> str:
    """The record's changes as text, personal values hidden from all but superusers."""
    changes = entry.changes
    if not (user is not None and user.is_superuser):
        changes = {k: "(hidden)" if k in PERSONAL_FIELDS else v for k, v in changes.items()}
    return json.dumps(changes, ensure_ascii=False, default=str)


class DescribedChangeList(ChangeList):
    """The page's records worded at once (audit.text names their objects in a few queries)."""

    def get_results(self, request):
        super().get_results(request)
        self.result_list = list(self.result_list)
        for change in describe(self.result_list, viewer=request.user, by_step=False):
            change.first.sentence = change.text  # type: ignore[attr-defined]


@admin.register(AuditRecord)
class AuditRecordAdmin(ReadOnlyAdmin):
    list_display = ["moment", "what_happened", "object_type", "actor_name", "request_id"]
    list_filter = ["action", "object_type", "at"]
    search_fields = ["object_id", "object_repr", "actor_name", "request_id"]
    search_help_text = "Search by object id or name, account or request id."
    date_hierarchy = "at"
    list_select_related = ["actor"]
    fields = readonly_fields = (
        "moment",
        "what_happened",
        "action",
        "object_type",
        "object_id",
        "object_repr",
        "actor_name",
        "request_id",
        "what_changed",
    )

    def get_changelist(self, request, **kwargs):
        return DescribedChangeList

    @admin.display(description=gettext_lazy("when"), ordering="at")
    def moment(self, entry):
        return when(entry.at)

    @admin.display(description=gettext_lazy("what happened"))
    def what_happened(self, entry):
        if not hasattr(entry, "sentence"):  # the record's own page
            [change] = describe([entry], viewer=_viewer(), by_step=False)
            entry.sentence = change.text
        return entry.sentence

    @admin.display(description="changes")
    def what_changed(self, entry):
        return shown_changes(entry, _viewer())


class AuditedAdmin(admin.ModelAdmin):
    """A ModelAdmin whose own saves and deletions (those that go straight to the ORM, not through
    a service) are audited, and whose change page shows the object's history."""

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        return [*fields, "audit_history"] if obj is not None else fields

    def get_fields(self, request, obj=None):
        fields = [f for f in super().get_fields(request, obj) if f != "audit_history"]
        return [*fields, "audit_history"] if obj is not None else fields

    def history_records(self, obj):
        """The records the object's page shows: its own, newest first."""
        return history(obj)

    @admin.display(description=gettext_lazy("history"))
    def audit_history(self, obj):
        user = _viewer()
        changes = describe(self.history_records(obj)[:HISTORY_ROWS], viewer=user)
        if not changes:
            return "–"
        raw = user is not None and user.is_superuser
        body = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td>{}</tr>",
            (
                (
                    when(change.at),
                    change.text,
                    change.first.request_id,
                    _raw_links(change.records) if raw else "",
                )
                for change in changes
            ),
        )
        return format_html(
            '<table class="museum-history"><tr><th>{}</th><th>{}</th><th>{}</th>{}</tr>{}</table>',
            _("when"),
            _("what happened"),
            _("request"),
            format_html("<th>{}</th>", _("record")) if raw else "",
            body,
        )

    def save_model(self, request, obj, form, change):
        with transaction.atomic():
            super().save_model(request, obj, form, change)
            names = [n for n in form.changed_data if n in _plain_fields(obj)]
            if change:
                before = {n: form.initial.get(n) for n in names}
                changes = changed_fields(before, obj, names)
                record(action=Action.CHANGED, obj=obj, by=request.user, changes=changes)
            else:
                values = {n: getattr(obj, n) for n in names}
                record(action=Action.CREATED, obj=obj, by=request.user, changes=values)

    def delete_model(self, request, obj):
        with transaction.atomic():
            record(action=Action.DELETED, obj=obj, by=request.user)
            super().delete_model(request, obj)


def _raw_links(records: list[AuditRecord]):
    """The step's records as they are kept, each a link (superusers only)."""
    links = format_html_join(
        ", ",
        '<a href="{}">{}</a>',
        (
            (reverse("admin:audit_auditrecord_change", args=[entry.pk]), entry.action)
            for entry in records
        ),
    )
    return format_html("<td>{}</td>", links)


def _plain_fields(obj) -> set[str]:
    """The object's own columns (no many-to-many), the names a form edits."""
    return {field.name for field in obj._meta.concrete_fields}
