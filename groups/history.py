"""How a group request's audit records read in the history staff see (audit.text): "Requested
by weber: 31 people, Tuesday 2 Jun 2026, 10:00", "Another time offered by staff: ...",
"Declined by staff: the museum is closed for a private event". Registered by the groups app
(groups/apps.py)."""

from collections.abc import Sequence
from datetime import date, time

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from audit.models import Action, AuditRecord
from audit.text import Change, actor, register
from groups.models import GroupRequest, GroupStatus
from museum.i18n import day_in_words, time_in_words

GROUP = GroupRequest._meta.label_lower


def describe_groups(changes: Sequence[Change]) -> list[str]:
    """Each step in one sentence; "" for the generic wording of a step these words do not know."""
    texts = []
    for change in changes:
        parts = [_group_record(entry) for entry in change.records]
        texts.append("; ".join(parts) if all(parts) else "")
    return texts


def _group_record(entry: AuditRecord) -> str:
    changes, by = entry.changes, actor(entry)
    status = changes.get("status")
    now = status[-1] if isinstance(status, list) and status else status
    if entry.action == Action.CREATED:
        return _("Requested by %(by)s: %(people)s, %(when)s") % {
            "by": by,
            "people": _people(_count(changes.get("people"))),
            "when": _visit(changes.get("date"), changes.get("time")),
        }
    if entry.action == Action.CONFIRMED:
        return _("Approved by %(by)s: its group order made") % {"by": by}
    if entry.action == Action.CANCELLED and now == GroupStatus.DECLINED:
        return _("Declined by %(by)s: %(reason)s") % {"by": by, "reason": changes.get("reason")}
    if entry.action == Action.CANCELLED and now == GroupStatus.CANCELLED:
        if changes.get("reason"):
            return _("Cancelled by %(by)s: %(reason)s") % {"by": by, "reason": changes["reason"]}
        return _("Cancelled by %(by)s") % {"by": by}
    if entry.action == Action.EXPIRED:
        return _("Expired unanswered: its places were given back")
    if entry.action == Action.CHANGED:
        return _changed(entry)
    return ""


def _changed(entry: AuditRecord) -> str:
    changes, by = entry.changes, actor(entry)
    status = changes.get("status") or [None, None]
    if status[-1] == GroupStatus.OFFERED:
        days, times = changes.get("date") or [None, None], changes.get("time") or [None, None]
        return _("Another time offered by %(by)s: %(when)s") % {
            "by": by,
            "when": _visit(days[-1], times[-1]),
        }
    if status == [GroupStatus.OFFERED, GroupStatus.REQUESTED]:
        return _("The group accepted the time offered")
    if isinstance(people := changes.get("people"), list) and len(people) == 2:
        return _("Numbers changed by %(by)s: from %(before)s to %(after)s") % {
            "by": by,
            "before": _people(_count(people[0])),
            "after": _people(_count(people[1])),
        }
    return ""


def _count(people) -> int:
    """People as a record keeps them: a number, or {category: how many}."""
    if isinstance(people, dict):
        return sum(int(n) for n in people.values())
    return int(people or 0)


def _people(count: int) -> str:
    return ngettext("%(count)s person", "%(count)s people", count) % {"count": count}


def _visit(day: date | str | None, hour: time | str | None) -> str:
    if isinstance(day, str):
        day = date.fromisoformat(day)
    if isinstance(hour, str):
        hour = time.fromisoformat(hour)
    words = day_in_words(day) if day else "–"
    return f"{words}, {time_in_words(hour)}" if hour else words


def register_descriptions() -> None:
    register(GROUP, describe_groups)
