"""The audit log: one record per change, written in the change's own transaction.

Every service that changes the museum's data calls `record()` once, inside its transaction: the
record commits or rolls back with the change. Once committed, `recorded` is sent for each record
(webhooks listen); nothing else happens in the writer's transaction.
"""

from collections.abc import Callable, Iterable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import models, transaction
from django.db.models import Q
from django.dispatch import Signal
from django.utils import timezone

from audit.models import ANONYMISED, PERSONAL_FIELDS, SYSTEM, AuditRecord
from museum.context import current_request_id
from museum.request_context import current_request

# Sent after the commit of the transaction that wrote `record`.
recorded = Signal()

# One change for record_each: (action, the object, its changes).
AuditEntry = tuple[str, models.Model, dict[str, Any]]


def record(
    *,
    action: str,
    obj: models.Model,
    by=None,
    changes: dict[str, Any] | None = None,
) -> AuditRecord:
    """Record `action` on `obj` by `by` (else the request's account, else "system")."""
    entry = AuditRecord.objects.create(
        action=action,
        object_type=obj._meta.label_lower,
        object_id=str(obj.pk),
        object_repr=str(obj)[:200],
        changes=changes or {},
        **_author(by),
    )
    _send_after_commit(entry)
    return entry


def record_each(*, entries: Iterable[AuditEntry], by=None) -> list[AuditRecord]:
    """`record()` for many changes at once (a bulk change, or a change and its refunds):
    (action, obj, changes) each, in one INSERT."""
    author = _author(by)
    made = AuditRecord.objects.bulk_create(
        AuditRecord(
            action=action,
            object_type=obj._meta.label_lower,
            object_id=str(obj.pk),
            object_repr=str(obj)[:200],
            changes=changes,
            **author,
        )
        for action, obj, changes in entries
    )
    for entry in made:
        _send_after_commit(entry)
    return made


# The columns record_rows_sql takes from each row rather than from the record it fills in.
_FROM_EACH_ROW = ("id", "object_id", "object_repr")


def record_rows_sql(
    *, action: str, model: type[models.Model], rows: str, key: str, shown: str, by, at, connection
) -> tuple[str, list, Callable[[Iterable[tuple[int, models.Model]]], None]]:
    """For a statement that changes rows and records them at once (PostgreSQL's data-modifying
    WITH: one round trip where a transaction takes four): the INSERT of one record of `action`
    per row of the WITH query `rows`, whose column `key` is the object's key and `shown` its
    str() (the caller's model says which), by `by` at `at`, returning each record's "id" and
    "object_id"; its values; and what announces the records after the commit, given (the
    record's id, its object) each. The same columns as record_each writes."""
    common = {"action": action, "object_type": model._meta.label_lower, "at": at, **_author(by)}
    template = AuditRecord(**common)  # the model's defaults too ("changes", "published")
    written = [f for f in AuditRecord._meta.concrete_fields if f.name not in _FROM_EACH_ROW]
    columns = "".join(f'"{field.column}", ' for field in written)
    values = [
        field.get_db_prep_save(getattr(template, field.attname), connection) for field in written
    ]
    sql = (
        f'INSERT INTO "{AuditRecord._meta.db_table}" ({columns}"object_id", "object_repr")'
        f' SELECT {", ".join(["%s"] * len(values))}, "{rows}"."{key}"::text,'
        f' LEFT("{rows}"."{shown}", 200) FROM "{rows}" RETURNING "id", "object_id"'
    )

    def announce(records: Iterable[tuple[int, models.Model]]) -> None:
        for pk, obj in records:
            entry = AuditRecord(pk=pk, object_id=str(obj.pk), object_repr=str(obj)[:200], **common)
            _send_after_commit(entry)

    return sql, values, announce


def _author(by) -> dict[str, Any]:
    """Who made a change, as its record says: `by` (else the request's account, else none, named
    "system") and the request it came in."""
    if by is None:
        request = current_request()
        by = getattr(request, "user", None) if request is not None else None
    actor = by if by is not None and by.is_authenticated else None
    return {
        "actor": actor,
        "actor_name": actor.get_username() if actor is not None else SYSTEM,
        "request_id": current_request_id(),
    }


def _send_after_commit(entry: AuditRecord) -> None:
    def send() -> None:
        recorded.send(sender=AuditRecord, record=entry)

    transaction.on_commit(send)


def changed_fields(before: models.Model | dict, after: models.Model, names: Iterable[str]):
    """{"field": [before, after]} for each of `names` whose value differs."""
    old = before if isinstance(before, dict) else values_of(before, names)
    new = values_of(after, names)
    return {
        name: [_plain(old.get(name)), new[name]]
        for name in names
        if _plain(old.get(name)) != new[name]
    }


def values_of(obj: models.Model, names: Iterable[str]) -> dict[str, Any]:
    """The fields' values as the log keeps them: a related object by its key."""
    return {name: _plain(getattr(obj, name)) for name in names}


def _plain(value):
    return value.pk if isinstance(value, models.Model) else value


def history(obj: models.Model, *, also: Iterable[models.Model] = ()):
    """The records of `obj`, and of the objects `also` (an order's tickets), newest first."""
    keys: dict[str, set[str]] = {obj._meta.label_lower: {str(obj.pk)}}
    for other in also:
        keys.setdefault(other._meta.label_lower, set()).add(str(other.pk))
    wanted = Q()
    for object_type, ids in keys.items():
        wanted |= Q(object_type=object_type, object_id__in=sorted(ids))
    return AuditRecord.objects.filter(wanted).select_related("actor")


def forget_personal_data(*, model: type[models.Model], ids: Iterable[Any]) -> int:
    """Replace the personal values (PERSONAL_FIELDS) in the records of these objects; how many
    records changed. Called where the objects' own personal data is removed."""
    keys = [str(pk) for pk in ids]
    found = AuditRecord.objects.filter(object_type=model._meta.label_lower, object_id__in=keys)
    changed = []
    for entry in found.only("pk", "changes"):
        if PERSONAL_FIELDS & entry.changes.keys():
            entry.changes = {
                name: _anonymised(value) if name in PERSONAL_FIELDS else value
                for name, value in entry.changes.items()
            }
            changed.append(entry)
    AuditRecord.objects.bulk_update(changed, ["changes"])
    return len(changed)


def _anonymised(value):
    return [ANONYMISED for _ in value] if isinstance(value, list) else ANONYMISED


def purge_old_records(*, batch_size: int = 1000) -> int:
    """Delete the records older than MUSEUM_AUDIT_RETENTION_DAYS; how many."""
    cutoff = timezone.now() - timedelta(days=settings.MUSEUM_AUDIT_RETENTION_DAYS)
    old = AuditRecord.objects.filter(at__lt=cutoff).order_by().values_list("pk", flat=True)
    purged = 0
    while batch := list(old[:batch_size]):
        purged += AuditRecord.objects.filter(pk__in=batch).delete()[0]
    return purged
