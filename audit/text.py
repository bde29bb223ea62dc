"""The audit log in words: each change as a sentence staff read ("Moved from 13:00 to 14:00 by
desk1"), in the active language, naming the objects it touched rather than their keys.

The audit log is the bottom layer and knows no app's models, so each app words its own records
(`register`, from its AppConfig.ready); the rest read generically, from the model's fields. A
describer is given every change of its kind on a page at once, so that it names the objects they
mention in a few queries, not a few per row.
"""

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time

from django.apps import apps
from django.core.exceptions import FieldDoesNotExist
from django.db import models
from django.utils import timezone
from django.utils.formats import date_format, time_format
from django.utils.translation import gettext as _

from audit.models import PERSONAL_FIELDS, Action, AuditRecord

HIDDEN = "(hidden)"
# A value longer than this (an event's description) is cut: the sentence says that it changed.
LONGEST_VALUE = 60


@dataclass
class Change:
    """What one step did to one object: its records, oldest first, and their sentence. The
    records of one object made in one request are one step (a cancellation, the refund it made
    and the cash the desk paid out)."""

    records: list[AuditRecord]
    text: str = ""

    @property
    def first(self) -> AuditRecord:
        return self.records[0]

    @property
    def at(self) -> datetime:
        return self.records[-1].at

    def of(self, action: str) -> AuditRecord | None:
        return next((entry for entry in self.records if entry.action == action), None)


# Words each change of one kind of object, all at once: a sentence per change, in their order,
# or "" for the generic wording.
Describer = Callable[[Sequence[Change]], list[str]]
_describers: dict[str, Describer] = {}


def register(object_type: str, describer: Describer) -> None:
    """Word the records of `object_type` ("orders.order") with `describer`."""
    _describers[object_type] = describer


def describe(records: Iterable[AuditRecord], *, viewer, by_step: bool = True) -> list[Change]:
    """The records in words, newest first; personal values only for superusers. With `by_step`,
    the records of one object made in one request read as one change."""
    ordered = sorted(records, key=lambda entry: (entry.at, entry.pk))
    changes = _steps(ordered) if by_step else [Change([entry]) for entry in ordered]
    of_kind: dict[str, list[Change]] = defaultdict(list)
    for change in changes:
        of_kind[change.first.object_type].append(change)
    generic = []
    for object_type, kind in of_kind.items():
        describer = _describers.get(object_type)
        texts = describer(kind) if describer else [""] * len(kind)
        for change, text in zip(kind, texts, strict=True):
            change.text = text
            if not text:
                generic.append(change)
    _describe_generically(generic, viewer=viewer)
    return changes[::-1]


def _steps(ordered: list[AuditRecord]) -> list[Change]:
    steps: dict[tuple[str, str, str], Change] = {}
    changes = []
    for entry in ordered:
        key = (entry.object_type, entry.object_id, entry.request_id)
        if entry.request_id and key in steps:
            steps[key].records.append(entry)
            continue
        steps[key] = Change([entry])
        changes.append(steps[key])
    return changes


def when(moment: datetime) -> str:
    """A record's time in the museum's zone, to the second."""
    return date_format(timezone.localtime(moment), "Y-m-d H:i:s")


def actor(entry: AuditRecord) -> str:
    return entry.actor_name


# The generic wording: "Late opening changed by staff: price from 12.00 to 14.00".


def _describe_generically(changes: list[Change], *, viewer) -> None:
    names = _related_names([entry for change in changes for entry in change.records])
    show_personal = viewer is not None and viewer.is_superuser
    for change in changes:
        change.text = "; ".join(
            _generic_sentence(entry, names, show_personal) for entry in change.records
        )


def _generic_sentence(entry: AuditRecord, names: dict, show_personal: bool) -> str:
    words = {"object": entry.object_repr or entry.object_id, "by": actor(entry)}
    details = "; ".join(_details(entry, names, show_personal))
    if entry.action == Action.CREATED:
        text = _("%(object)s created by %(by)s") % words
    elif entry.action == Action.CHANGED:
        text = _("%(object)s changed by %(by)s") % words
    elif entry.action == Action.DELETED:
        text = _("%(object)s deleted by %(by)s") % words
    else:
        text = _("%(object)s: %(action)s by %(by)s") % {
            **words,
            "action": entry.get_action_display(),
        }
    return f"{text}: {details}" if details else text


def _details(entry: AuditRecord, names: dict, show_personal: bool) -> list[str]:
    model = _model(entry.object_type)
    details = []
    for name, value in entry.changes.items():
        field = _field(model, name)
        label = str(getattr(field, "verbose_name", name))
        hidden = name in PERSONAL_FIELDS and not show_personal
        if entry.action == Action.CHANGED and isinstance(value, list) and len(value) == 2:
            before, after = (HIDDEN if hidden else _value(one, field, names) for one in value)
            words = {"field": label, "before": before, "after": after}
            details.append(_("%(field)s from %(before)s to %(after)s") % words)
        elif value not in (None, "", []):  # a new object's empty fields say nothing
            details.append(f"{label} {HIDDEN if hidden else _value(value, field, names)}")
    return details


def _value(value, field, names: dict) -> str:
    related = _related_model(field)
    if related is not None and value is not None:
        return names.get((related._meta.label_lower, str(value)), str(value))
    if value is None or value == "":
        return "–"
    if value is True or value is False:
        return _("yes") if value else _("no")
    if isinstance(value, list):
        return ", ".join(str(item) for item in value)
    text = _moment(value, field) if isinstance(value, str) else str(value)
    return text if len(text) <= LONGEST_VALUE else f"{text[: LONGEST_VALUE - 1]}…"


def _moment(value: str, field) -> str:
    """A date, time or instant as the log keeps it (ISO), as staff read it."""
    try:
        if isinstance(field, models.DateTimeField):
            return when(datetime.fromisoformat(value))
        if isinstance(field, models.DateField):
            return date_format(date.fromisoformat(value), "DATE_FORMAT")
        if isinstance(field, models.TimeField):
            return time_format(time.fromisoformat(value), "TIME_FORMAT")
    except ValueError:  # not one after all (a value removed with personal data)
        pass
    return value


def _related_names(records: list[AuditRecord]) -> dict[tuple[str, str], str]:
    """The names of the objects the records' foreign keys name, by (model, key): a query per
    model named."""
    wanted: dict[type[models.Model], set[str]] = defaultdict(set)
    for entry in records:
        model = _model(entry.object_type)
        for name, value in entry.changes.items():
            related = _related_model(_field(model, name))
            if related is None:
                continue
            pair = entry.action == Action.CHANGED and isinstance(value, list)
            values = value if pair else [value]
            wanted[related] |= {str(one) for one in values if one is not None}
    names = {}
    for related, keys in wanted.items():
        label = related._meta.label_lower
        for key, obj in related._default_manager.in_bulk(list(keys)).items():
            names[(label, str(key))] = str(obj)
    return names


def _model(object_type: str) -> type[models.Model] | None:
    try:
        return apps.get_model(object_type)
    except (LookupError, ValueError):
        return None


def _field(model: type[models.Model] | None, name: str):
    if model is None:
        return None
    try:
        return model._meta.get_field(name)
    except FieldDoesNotExist:
        return None


def _related_model(field) -> type[models.Model] | None:
    if field is not None and field.concrete and (field.many_to_one or field.one_to_one):
        return field.related_model
    return None
