"""The audit log in the admin: a filterable list, and each object's history on its own page."""

import json

from django.contrib import admin
from django.db import transaction
from django.utils.html import format_html, format_html_join

from audit.models import PERSONAL_FIELDS, Action, AuditRecord
from audit.services import changed_fields, history, record
from museum.request_context import current_request


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


@admin.register(AuditRecord)
class AuditRecordAdmin(admin.ModelAdmin):
    list_display = ["at", "action", "object_type", "object_repr", "actor_name", "request_id"]
    list_filter = ["action", "object_type", "at"]
    search_fields = ["object_id", "object_repr", "actor_name", "request_id"]
    search_help_text = "Search by object id or name, account or request id."
    date_hierarchy = "at"
    list_select_related = ["actor"]
    fields = readonly_fields = (
        "at",
        "action",
        "object_type",
        "object_id",
        "object_repr",
        "actor_name",
        "request_id",
        "what_changed",
    )

    @admin.display(description="changes")
    def what_changed(self, entry):
        return shown_changes(entry, _viewer())

    # The record of what happened is written by the services alone.
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class AuditedAdmin(admin.ModelAdmin):
    """A ModelAdmin whose own saves and deletions (those that go straight to the ORM, not through
    a service) are audited, and whose change page shows the object's history."""

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        return [*fields, "audit_history"] if obj is not None else fields

    def get_fields(self, request, obj=None):
        fields = [f for f in super().get_fields(request, obj) if f != "audit_history"]
        return [*fields, "audit_history"] if obj is not None else fields

    @admin.display(description="history")
    def audit_history(self, obj):
        rows = history(obj)[:50]
        user = _viewer()
        if not rows:
            return "–"
        body = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (e.at, e.get_action_display(), e.actor_name, shown_changes(e, user), e.request_id)
                for e in rows
            ),
        )
        return format_html(
            "<table><tr><th>when</th><th>action</th><th>by</th><th>changes</th>"
            "<th>request</th></tr>{}</table>",
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


def _plain_fields(obj) -> set[str]:
    """The object's own columns (no many-to-many), the names a form edits."""
    return {field.name for field in obj._meta.concrete_fields}
