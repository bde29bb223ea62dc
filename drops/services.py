"""A drop's rules: which sales it stands in front of, joining its line, where one stands, the
admission a buyer spends on a purchase, and the places it still has. The line itself is
drops/queue.py's; this module turns its answers into the domain's (and its refusals), and keeps
the drops Redis needs written there.

`standing_of` (a poll) reads Redis alone: the drop's settings are in Redis too, written when
staff save the drop and whenever Redis is found without them.
"""

import json
import logging
import math
import random
import secrets
from contextvars import ContextVar
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, NoReturn

from django.conf import settings
from django.core import signing
from django.db import transaction
from django.utils import timezone

from drops import queue
from drops.exceptions import (
    DropClosed,
    MailboxInLine,
    NotInLine,
    QueueNotOpen,
    QueuePaused,
    QueueTokenExpired,
    QueueTokenRequired,
    QueueTokenUsed,
    TooManyForDrop,
)
from drops.models import Drop
from events.models import EventDate
from hours.models import EntrySlot, MuseumDay
from hours.services import held_back_on, slots_on_sale
from museum import metrics
from museum.exceptions import NotFound
from museum.kept import Kept
from orders.services.limits import mailbox_of

logger = logging.getLogger("museum.drops")
TOKEN_SALT = "museum.drops.admission"
PAUSE_SECONDS = QueuePaused.retry_after


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def _at(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


def member_of(account) -> str:
    return f"a{account.pk}"


# The drops not over, each with what it covers: kept in every process while no drop changes
# (museum/kept.py), so that a sale no drop covers pays no query to learn so.
@dataclass(frozen=True)
class Cover:
    drop: Drop
    rows: frozenset

    def covers(self, *, ticket_type: str, ticket_date, event_id, entry_time, earliest_slot) -> bool:
        if event_id is not None:
            return ("event", str(event_id), ticket_date) in self.rows
        if ("day", ticket_date) in self.rows:
            return True
        if earliest_slot or entry_time is None:
            return ("slot-day", ticket_date) in self.rows
        return ("slot", ticket_date, entry_time) in self.rows


def _load_covers() -> list[Cover]:
    drops = Drop.objects.filter(closes_at__gt=timezone.now()).prefetch_related(
        "days__slots", "slots", "event_dates"
    )
    covers = []
    for drop in drops:
        rows: set = {("day", day.date) for day in drop.days.all()}
        rows |= {("slot-pk", slot.pk) for day in drop.days.all() for slot in day.slots.all()}
        for slot in drop.slots.all():
            rows |= {("slot", slot.day_id, slot.entry_time), ("slot-day", slot.day_id)}
            rows.add(("slot-pk", slot.pk))
        for event_date in drop.event_dates.all():
            rows |= {("event", str(event_date.event_id), event_date.date)}
            rows.add(("event-date-pk", event_date.pk))
        covers.append(Cover(drop, frozenset(rows)))
    return covers


ACTIVE: Kept[list[Cover]] = Kept("drops", _load_covers)


def covering(**visit) -> Drop | None:
    """The drop whose waiting room stands in front of this visit's places now, if any."""
    now = timezone.now()
    for cover in ACTIVE.get():
        if cover.drop.is_on(now) and cover.covers(**visit):
            return cover.drop
    return None


def covering_row(*, day, slot_id: int | None, event_id) -> Drop | None:
    """The drop on now that covers these counted rows (a visit's: its slot, else its day, or
    its event's date), if any."""
    row: tuple
    if event_id is not None:
        row = ("event", str(event_id), day)
    else:
        row = ("slot-pk", slot_id) if slot_id is not None else ("day", day)
    now = timezone.now()
    for cover in ACTIVE.get():
        if cover.drop.is_on(now) and row in cover.rows:
            return cover.drop
    return None


# Places.

# Set while the line counts its own places, which the public's availability leaves out.
_counting_for_the_line: ContextVar[bool] = ContextVar("drops_counting", default=False)
ALL_OF_THEM = 10**9
_ROW_TAGS = {"slot": "slot-pk", "day": "day", "event_date": "event-date-pk"}


def held_for_the_line(kind: str, keys) -> dict:
    """What a drop holds back from the public's availability (hours.services.held_back_on):
    while it is on, all its places, which only its line may buy, so that a place that comes
    back is never shown free to whoever refreshes first."""
    if _counting_for_the_line.get() or kind not in _ROW_TAGS:
        return {}
    now = timezone.now()
    covers = [cover for cover in ACTIVE.get() if cover.drop.is_on(now)]
    tag = _ROW_TAGS[kind]
    return {key: ALL_OF_THEM for key in keys if any((tag, key) in c.rows for c in covers)}


@dataclass(frozen=True)
class Room:
    """One of the drop's rows that count places (an entry slot, an untimed day or an event
    date: `kind` as the vouchers that keep places name it) and what the public may still buy
    of it (None: unlimited)."""

    kind: str
    row: Any
    left: int | None


def rooms_of(drop: Drop) -> list[Room]:
    """The drop's rows as the sale counts them: a slot's free places within its day's, a day's
    and an event date's, each less what vouchers keep there (not what the drop itself holds
    back from the public: those are the line's to buy)."""
    token = _counting_for_the_line.set(True)
    try:
        return _rooms_of(drop)
    finally:
        _counting_for_the_line.reset(token)


def _rooms_of(drop: Drop) -> list[Room]:
    # Read afresh: a kept drop (ACTIVE) holds its rows as they were when it was loaded.
    rooms = []
    slots_by_day: dict = {}
    for slot in EntrySlot.objects.filter(drops=drop).select_related("day"):
        slots_by_day.setdefault(slot.day, set()).add(slot.pk)
    for day in MuseumDay.objects.filter(drops=drop):
        slots_by_day[day] = None  # all of them
    for day, chosen in slots_by_day.items():
        if day.is_closed:
            continue
        slots = list(day.slots.order_by("entry_time"))
        if slots:
            rooms += [
                Room("slot", slot, slot.available)
                for slot in slots_on_sale(day=day, slots=slots)
                if chosen is None or slot.pk in chosen
            ]
        elif day.capacity is None:
            rooms.append(Room("day", day, None))
        else:
            held = held_back_on("day", [day.date])[day.date]
            rooms.append(Room("day", day, max(day.capacity - day.sold - held, 0)))
    event_dates = list(EventDate.objects.filter(drops=drop).select_related("event"))
    held = held_back_on("event_date", [d.pk for d in event_dates])
    for event_date in event_dates:
        left = None
        if event_date.capacity is not None:
            left = max(event_date.capacity - event_date.sold - held.get(event_date.pk, 0), 0)
        rooms.append(Room("event_date", event_date, left))
    return rooms


def places_left(drop: Drop) -> int:
    """What the public may still buy of the drop's places (-1: unlimited), as the sale counts
    them (rooms_of)."""
    return left_in(rooms_of(drop))


def left_in(rooms: list[Room]) -> int:
    """The places left in all these rooms (-1: unlimited)."""
    left = [room.left for room in rooms]
    return -1 if None in left else sum(n for n in left if n is not None)


def outflow_warning(drop: Drop) -> str | None:
    """What staff are told of an outflow above the purchases a minute the server was measured
    to keep up with (MUSEUM_DROP_OUTFLOW_WARNING), else None."""
    limit = settings.MUSEUM_DROP_OUTFLOW_WARNING
    if drop.outflow_per_minute <= limit:
        return None
    return (
        f"{drop.outflow_per_minute} admissions a minute is above {limit} "
        "(MUSEUM_DROP_OUTFLOW_WARNING): the server may then not keep up with the purchases of "
        "those it lets in. `make bench` measured its purchase rate (docs/performance.md)."
    )


def configure(drop: Drop) -> None:
    """Write the drop's settings and places left where the line reads them."""
    queue.configure(
        drop.pk,
        {
            "prequeue": _ms(drop.prequeue_opens_at),
            "opens": _ms(drop.opens_at),
            "closes": _ms(drop.closes_at),
            "rate": drop.outflow_per_minute,
            "admit_ms": drop.admission_minutes * 60_000,
            "max": drop.max_tickets,
            "left": places_left(drop),
        },
        seed=drop.seed if drop.seed is not None else secrets.randbits(31),
    )


def recount(drop: Drop) -> None:
    """The places left as the sale last committed them, for the line to let in by (after a
    sale, a place given back, and every minute)."""
    queue.set_left(drop.pk, places_left(drop))


def recount_after_commit(drop: Drop) -> None:
    """recount once the change commits; never failing it (the line then counts by the last
    recount until the next)."""

    def recount_now() -> None:
        try:
            recount(drop)
        except Exception:  # the sale has committed: it is answered as made, whatever this says
            logger.warning("Drop %s: places left recounted later", drop.pk, exc_info=True)

    transaction.on_commit(recount_now)


# The line.


@dataclass(frozen=True)
class Place:
    """Where an account stands in a drop's line, as a poll answers it."""

    drop_id: int
    state: str
    opens_at: datetime
    position: int | None = None
    ahead: int | None = None
    wait_seconds: int | None = None
    likely_sold_out: bool = False
    places_left: int = -1
    poll_after: int = 0
    token: str | None = None
    expires_at: datetime | None = None
    max_tickets: int = 0


def _paused(error: Exception):
    logger.warning("Drop paused: Redis unreachable (%s)", type(error).__name__)
    return QueuePaused()


def _step_or_configure(drop_id: int, run):
    """Run a step of the line; where Redis has no settings for the drop (it never had, or lost
    them), write them from the database first."""
    try:
        step = run()
        if step is None:
            drop = Drop.objects.filter(pk=drop_id).first()
            if drop is None:
                raise NotFound()
            configure(drop)
            step = run()
    except queue.Unreachable as error:
        # A drop that does not exist is not paused (this path alone may ask the database).
        if not Drop.objects.filter(pk=drop_id).exists():
            raise NotFound() from error
        raise _paused(error) from error
    assert step is not None
    _log_admissions(drop_id, step.newly)
    return step


def _log_admissions(drop_id: int, newly) -> None:
    if not newly:
        return
    metrics.DROP_ADMISSIONS.inc(len(newly))
    for member, position in newly:
        logger.info(
            json.dumps(
                {"event": "drop_admission", "drop": drop_id, "member": member, "position": position}
            )
        )


def join(drop_id: int, account) -> tuple[Place, bool]:
    """Join the drop's line (one place per account and per mailbox: joining again answers the
    same place); the place, and whether this call gave it."""
    mailbox = mailbox_of(account.email) if account.email else ""
    now = timezone.now()
    step = _step_or_configure(
        drop_id, lambda: queue.join(drop_id, member_of(account), mailbox, _ms(now))
    )
    refused = {
        "not_open": QueueNotOpen,
        "closed": DropClosed,
        "mailbox_taken": MailboxInLine,
    }.get(step.standing.state)
    if refused is not None:
        raise refused()
    return _place(drop_id, account, step, now), step.joined


def standing_of(drop_id: int, account) -> Place:
    """Where the account stands (a poll): Redis alone answers."""
    now = timezone.now()
    step = _step_or_configure(drop_id, lambda: queue.status(drop_id, member_of(account), _ms(now)))
    if step.standing.state == "none":
        raise NotInLine()
    return _place(drop_id, account, step, now)


# How soon a poll's answer asks the buyer to ask again: those far back seldom (half their
# estimated wait, at most two minutes), those near the front every two seconds, so that a crowd
# of ten thousand asks a server a hundred or two times a second, not thousands
# (docs/performance.md, "A blockbuster drop").
POLL_SOONEST, POLL_LATEST, OPENING_SPREAD = 2, 120, 60


def _place(drop_id: int, account, step: queue.Step, now: datetime) -> Place:
    standing, rate = step.standing, step.rate
    opens_at = _at(step.opens_ms)
    if standing.state == "pending":
        # Places are drawn at the opening, whoever asks first: no use asking before it, and
        # spread over the minute after it, so that the crowd does not ask in one second.
        until = max(math.ceil((opens_at - now).total_seconds()), 0)
        if until > POLL_LATEST:
            return Place(drop_id, "pending", opens_at, poll_after=POLL_LATEST)
        spread = random.randint(1, OPENING_SPREAD)
        return Place(drop_id, "pending", opens_at, poll_after=until + spread)
    base = Place(
        drop_id,
        standing.state,
        opens_at,
        position=standing.position,
        places_left=standing.left,
        likely_sold_out=standing.state == "sold_out",
    )
    if standing.state == "waiting":
        assert standing.position is not None
        ahead = max(standing.position - standing.cursor - 1, 0)
        wait = math.ceil(ahead * 60 / rate)
        return replace(
            base,
            ahead=ahead,
            wait_seconds=wait,
            likely_sold_out=0 <= standing.left <= ahead + standing.deciding,
            poll_after=min(max(wait // 2, POLL_SOONEST), POLL_LATEST),
        )
    if standing.state == "admitted":
        assert standing.runs_out_ms is not None
        token = signing.dumps(
            {"d": drop_id, "m": member_of(account), "x": standing.runs_out_ms}, salt=TOKEN_SALT
        )
        return replace(
            base,
            ahead=0,
            wait_seconds=0,
            token=token,
            expires_at=_at(standing.runs_out_ms),
            max_tickets=step.max_tickets,
        )
    return base


# The admission a purchase spends.


def spend_admission(drop: Drop, *, buyer, token: str | None, quantity: int) -> str:
    """Spend the buyer's admission to buy `quantity` of the drop's places: the member whose
    admission it was (give_back_admission returns it if the sale fails). Refuses an absent,
    foreign, spent or expired one."""
    if not token:
        _refused("required")
    try:
        claims = signing.loads(token, salt=TOKEN_SALT)
    except signing.BadSignature:
        _refused("required")
    member = member_of(buyer)
    if claims.get("d") != drop.pk or claims.get("m") != member:
        _refused("required")  # another drop's, or another account's: not shared
    if quantity > drop.max_tickets:
        raise TooManyForDrop(max=drop.max_tickets)
    now = _ms(timezone.now())
    if claims.get("x", 0) <= now:
        _refused("expired")
    try:
        answer = queue.spend(drop.pk, member, now)
        if answer is None:
            configure(drop)
            answer = queue.spend(drop.pk, member, now)
    except queue.Unreachable as error:
        raise _paused(error) from error
    if answer != "ok":
        _refused(answer or "required")
    return member


def give_back_admission(drop: Drop, member: str) -> None:
    try:
        queue.unspend(drop.pk, member, _ms(timezone.now()))
    except queue.Unreachable:
        logger.warning("Drop %s: Redis away; an admission whose sale failed stays spent", drop.pk)


REFUSALS = {"required": QueueTokenRequired, "used": QueueTokenUsed, "expired": QueueTokenExpired}


def _refused(reason: str) -> NoReturn:
    metrics.DROP_TOKENS_REFUSED.labels(reason).inc()
    raise REFUSALS[reason]()


def take_reseller_places(drop: Drop, n: int) -> bool:
    """Take n of the resellers' allocation (OCTO books them without waiting): False when it has
    not that many left."""
    try:
        return queue.take_allocation(drop.pk, n, drop.octo_allocation)
    except queue.Unreachable as error:
        raise _paused(error) from error


def give_back_reseller_places(drop: Drop, n: int) -> None:
    try:
        queue.give_back_allocation(drop.pk, n)
    except queue.Unreachable:
        logger.warning("Drop %s: Redis away; %s reseller places stay taken", drop.pk, n)
