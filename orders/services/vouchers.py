"""Vouchers in a sale: the one answer to "does this voucher reduce this ticket?", what it makes a
price, and its uses and budget taken and given back under the sale's locks.

A voucher is found by its code, read case-insensitively. Whether it applies is asked before any
lock (`refusal`: a reason, or None), and again by the counting itself: a sale takes a use per
ticket it reduces and the discount it gives from the budget with one conditional UPDATE of the
voucher's row (`redeem`), late in its transaction, after its lines are written and before its
receipt's number: two buyers racing for the last use queue on that row, and the second's
condition fails, so the code is never used more than its `max_uses`, nor its budget exceeded,
whatever the race (eventyay#1398 checked before the lock); and the row is held only for the
end of each sale. A voucher that keeps places is locked earlier, before the sale's places
(`lock`; see below). The uses and the discount of tickets voided go back the same way, each in
its turn (`give_back`). A voucher without a limit is not counted at all (Voucher.counted).

A voucher that keeps places holds back one place per use left on its one slot, day or event
date while it is valid (`held_back`): the public's sale counts them as taken, in the same UPDATE
that counts the members' kept places; its holders' do not count the ones they take. Locked
first, a holder's sale reads its voucher's uses as the last holder left them: on PostgreSQL a
statement reads the rows of its subqueries as they were when it began, and one that began
before the last holder committed would count that holder's place twice.
"""

import secrets
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime, time
from decimal import Decimal

from django.db.models import (
    Case,
    Count,
    DecimalField,
    Exists,
    F,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
    Value,
    When,
)
from django.db.models.functions import Coalesce, Greatest, Now
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from audit.models import Action
from audit.services import AuditEntry, record_each
from museum.exceptions import InvalidInput, MuseumProblem
from museum.kept import Kept
from museum.money import ZERO, to_cent
from orders.exceptions import VoucherBudgetSpent, VoucherNotApplicable, VoucherUsedUp
from orders.models import (
    Channel,
    Ticket,
    VisitorCategory,
    Voucher,
    VoucherChannel,
    VoucherEffect,
)

# What generated codes are made of: no 0/O, 1/I/L, nor 5/S and 2/Z, which a reader mistakes.
ALPHABET = "ABCDEFGHJKMNPQRTUVWXY346789"
CODE_LENGTH = 10


def normalized(code: str) -> str:
    """A code as kept: trimmed, upper-case."""
    return code.strip().upper()


def new_code(prefix: str = "", length: int = CODE_LENGTH) -> str:
    """A fresh random code, `prefix` first."""
    return normalized(prefix) + "".join(secrets.choice(ALPHABET) for _ in range(length))


# What other codes a buyer may type as a voucher says what it is (the giftcards app registers a
# gift card's): a problem to answer instead of "not applicable", or None.
OTHER_CODES: list[Callable[[str], MuseumProblem | None]] = []


def register_other_codes(recognise: Callable[[str], MuseumProblem | None]) -> None:
    if recognise not in OTHER_CODES:
        OTHER_CODES.append(recognise)


def find(code: str) -> Voucher:
    """The voucher of `code`; VoucherNotApplicable if there is none (or what another kind of
    code it is says: a gift card's)."""
    code = normalized(code)
    found = (
        Voucher.objects.annotate(
            # Whether it is for some categories or events only: the ids are read only then.
            scoped_categories=Exists(
                Voucher.categories.through.objects.filter(voucher=OuterRef("pk"))
            ),
            scoped_events=Exists(Voucher.events.through.objects.filter(voucher=OuterRef("pk"))),
        )
        .filter(code=code)
        .order_by()
    )
    voucher = next(iter(found[:1]), None) if code else None
    if voucher is not None:
        return voucher
    for recognise in OTHER_CODES:
        problem = recognise(code)
        if problem is not None:
            raise problem
    raise VoucherNotApplicable(reason="unknown")


@dataclass(frozen=True)
class Visit:
    """What a sale's tickets share that a voucher's scope reads."""

    ticket_type: str
    ticket_date: date
    event_id: object | None = None
    # The slot's time on timed entry (None: untimed, or the earliest slot).
    entry_time: time | None = None


# Each reason a voucher does not reduce a ticket, in the words staff read.
REASONS = {
    "unknown": gettext_noop("No voucher has this code."),
    "not_yet_valid": gettext_noop("The voucher is not valid yet."),
    "expired": gettext_noop("The voucher has expired."),
    "channel": gettext_noop("The voucher is not for this channel."),
    "ticket_type": gettext_noop("The voucher is not for this kind of visit."),
    "event": gettext_noop("The voucher is not for this event."),
    "category": gettext_noop("The voucher is not for this visitor category."),
    "date": gettext_noop("The voucher is not for visits on this date."),
    "slot": gettext_noop("The voucher is not for this entry time."),
    "used_up": gettext_noop("The voucher has no uses left."),
}


def reason_text(reason: str) -> str:
    return _(REASONS.get(reason, REASONS["unknown"]))


@contextmanager
def reasons_for(viewer) -> Iterator[None]:
    """Staff read why a voucher does not apply (reason_text); anyone else only that it does
    not, an unknown code and one out of scope alike, so codes cannot be probed."""
    try:
        yield
    except VoucherNotApplicable as problem:
        if viewer is not None and viewer.is_staff:
            problem.detail = reason_text(problem.reason)
        raise


def refusal(
    voucher: Voucher,
    *,
    visit: Visit,
    channel: str,
    category_id: int | None = None,
    now: datetime | None = None,
    uses_read: bool = True,
) -> str | None:
    """Why `voucher` does not reduce a ticket of `category_id` on `visit` sold through `channel`
    (a VoucherChannel): a key of REASONS, or None where it does. The one question every face
    asks (the sale, a quote, the check, the desk, OCTO). `uses_read` False: its uses left are
    not asked (a sale's `redeem` counts them under the lock, after holds that ran out with
    some went back)."""
    return (
        _refusal_of_use(voucher, channel=channel, now=now or timezone.now(), uses_read=uses_read)
        or _refusal_of_scope(voucher, visit=visit, category_id=category_id)
        or _refusal_of_kept_row(voucher, visit=visit)
    )


def _refusal_of_use(
    voucher: Voucher, *, channel: str, now: datetime, uses_read: bool = True
) -> str | None:
    """Whether it may be used now, here, at all."""
    if voucher.valid_from is not None and now < voucher.valid_from:
        return "not_yet_valid"
    if voucher.valid_until is not None and now >= voucher.valid_until:
        return "expired"
    if channel not in voucher.channels:
        return "channel"
    if uses_read and voucher.uses_left == 0:
        return "used_up"
    return None


def _refusal_of_scope(voucher: Voucher, *, visit: Visit, category_id: int | None) -> str | None:
    """Whether the visit and the category are among those it is for."""
    if voucher.ticket_type and voucher.ticket_type != visit.ticket_type:
        return "ticket_type"
    if visit.event_id is not None and visit.event_id not in _ids(voucher, "events", visit.event_id):
        return "event"
    if category_id is not None and category_id not in _ids(voucher, "categories", category_id):
        return "category"
    if (voucher.visit_from and visit.ticket_date < voucher.visit_from) or (
        voucher.visit_until and visit.ticket_date > voucher.visit_until
    ):
        return "date"
    if voucher.entry_from or voucher.entry_until:
        at = visit.entry_time
        if at is None or (voucher.entry_from and at < voucher.entry_from):
            return "slot"
        if voucher.entry_until and at > voucher.entry_until:
            return "slot"
    return None


def _refusal_of_kept_row(voucher: Voucher, *, visit: Visit) -> str | None:
    """A voucher that keeps places reduces only the visits on its row."""
    if voucher.keep_slot_id is not None:
        slot = voucher.keep_slot
        assert slot is not None  # its key is set
        if visit.ticket_date != slot.day_id or visit.entry_time != slot.entry_time:
            return "slot"
    if voucher.keep_day is not None:
        if visit.event_id is not None:
            return "ticket_type"
        if visit.ticket_date != voucher.keep_day:
            return "date"
    if voucher.keep_event_date_id is not None:
        kept = voucher.keep_event_date
        assert kept is not None  # its key is set
        if visit.event_id != kept.event_id or visit.ticket_date != kept.date:
            return "date"
    return None


def _ids(voucher: Voucher, relation: str, key) -> set:
    """The keys of the voucher's `relation` (read once per voucher object); empty, it is for
    all: `key` alone."""
    if getattr(voucher, f"scoped_{relation}", True) is False:
        return {key}  # found unscoped (find): no query
    cached = voucher.__dict__.setdefault("_scope_ids", {})
    if relation not in cached:
        cached[relation] = set(getattr(voucher, relation).values_list("pk", flat=True))
    return cached[relation] or {key}


def sale_channel(*, paid_by: str, seller=None, octo: bool = False) -> str:
    """The VoucherChannel a sale goes through: OCTO, the desk (a `seller`), a sales partner's
    account (`paid_by`, the order's Channel, on account), or a buyer's own online purchase."""
    if octo:
        return VoucherChannel.OCTO
    if seller is not None:
        return VoucherChannel.DESK
    if paid_by == Channel.ON_ACCOUNT:
        return VoucherChannel.PARTNER
    return VoucherChannel.ONLINE


def voucher_price(voucher: Voucher, price: Decimal) -> Decimal:
    """What a catalogue price `price` becomes with the voucher: never more, never below 0."""
    if voucher.effect == VoucherEffect.FREE:
        return ZERO
    if voucher.effect == VoucherEffect.SET_PRICE:
        return min(voucher.value, price)
    if voucher.effect == VoucherEffect.AMOUNT_OFF:
        return max(price - voucher.value, ZERO)
    return max(to_cent(price * (100 - voucher.value) / 100), ZERO)


def _rows_kept() -> frozenset[tuple[str, object]]:
    keeping = Voucher.objects.filter(
        Q(keep_slot__isnull=False) | Q(keep_day__isnull=False) | Q(keep_event_date__isnull=False)
    )
    return frozenset(
        (row, key)
        for keys in keeping.order_by().values_list("keep_slot", "keep_day", "keep_event_date")
        for row, key in zip(("slot", "day", "event_date"), keys, strict=True)
        if key is not None
    )


# The rows vouchers keep places on, ("slot", key), ("day", date) or ("event_date", key), kept
# in each process until staff change a voucher (orders/apps.py connects the change; a batch's
# bulk_create calls keeping_changed): a sale on any other row neither reads nor locks more.
ROWS_KEPT: Kept[frozenset[tuple[str, object]]] = Kept("voucher-rows", _rows_kept)


def keeping_changed() -> None:
    """Vouchers were written without their signals (bulk_create): read ROWS_KEPT again."""
    ROWS_KEPT.forget()


def held_back_places(row: str, keys: Sequence) -> dict:
    """The places valid vouchers hold back on each of the rows of kind `row` with these keys,
    as the public's availability shows them (hours.services.held_back_on); no query for rows
    no voucher keeps places on."""
    kept = ROWS_KEPT.get()
    keys = [key for key in keys if (row, key) in kept]
    if not keys:
        return {}
    keeping = (
        Voucher.objects.filter(**{f"keep_{row}__in": keys}, max_uses__isnull=False)
        .filter(Q(valid_until__isnull=True) | Q(valid_until__gt=Now()))
        .order_by()
        .values(f"keep_{row}")
        .annotate(
            kept=Sum(Greatest(F("max_uses") - F("uses"), Value(0), output_field=IntegerField()))
        )
    )
    return {held[f"keep_{row}"]: held["kept"] for held in keeping}


def held_back(row: str, *, taking: Mapping[int, int] | None = None) -> Coalesce:
    """The places the valid vouchers keeping places on the counted `row` ("slot", "day" or
    "event_date") hold back: one per use left, less what this sale's own vouchers (`taking`:
    voucher key: uses) take of theirs. An expression over the counted row, for its UPDATE."""
    left = F("max_uses") - F("uses")
    if taking:
        left = left - Case(
            *(When(pk=pk, then=Value(n)) for pk, n in taking.items()),
            default=Value(0),
            output_field=IntegerField(),
        )
    keeping = (
        Voucher.objects.filter(**{f"keep_{row}": OuterRef("pk")}, max_uses__isnull=False)
        .filter(Q(valid_until__isnull=True) | Q(valid_until__gt=Now()))
        .order_by()
        .values(f"keep_{row}")
        .annotate(kept=Sum(Greatest(left, Value(0), output_field=IntegerField())))
        .values("kept")
    )
    return Coalesce(Subquery(keeping, output_field=IntegerField()), Value(0))


def lock(vouchers: Iterable[Voucher]) -> None:
    """Lock the rows of the vouchers that keep places a sale names, by key, before its
    places."""
    keys = sorted({voucher.pk for voucher in vouchers if voucher.keeps_places})
    if keys:
        list(Voucher.objects.select_for_update().filter(pk__in=keys).values_list("pk", flat=True))


@dataclass
class Redemption:
    """What a sale takes of one voucher: uses (its tickets) and the discount they get."""

    voucher: Voucher
    uses: int = 0
    discount: Decimal = ZERO


def redeem(redemptions: Iterable[Redemption]) -> None:
    """Take each voucher's uses and discount, by key, while it has them and is valid, or raise
    VoucherUsedUp, VoucherBudgetSpent or VoucherNotApplicable (the caller's transaction undoes
    the sale). Run after the sale's places are counted. An uncounted voucher's row is left
    alone: its tickets say what it gave."""
    for taken in sorted(redemptions, key=lambda taken: taken.voucher.pk):
        if not taken.uses or not taken.voucher.counted:
            continue
        counted = (
            Voucher.objects.filter(pk=taken.voucher.pk)
            .filter(Q(max_uses__isnull=True) | Q(uses__lte=F("max_uses") - taken.uses))
            .filter(Q(budget__isnull=True) | Q(discount_given__lte=F("budget") - taken.discount))
            .filter(Q(valid_until__isnull=True) | Q(valid_until__gt=Now()))
            .update(
                uses=F("uses") + taken.uses,
                discount_given=F("discount_given") + taken.discount,
            )
        )
        if not counted:
            raise _why_not_taken(taken)


def refuse_past_budget(taken: Redemption) -> None:
    """VoucherBudgetSpent if the discount would pass its budget (as read now: a quote's
    answer; `redeem` decides under the lock)."""
    voucher = taken.voucher
    if voucher.budget is not None and voucher.discount_given + taken.discount > voucher.budget:
        raise VoucherBudgetSpent()


def _why_not_taken(taken: Redemption) -> MuseumProblem:
    voucher = Voucher.objects.get(pk=taken.voucher.pk)
    if voucher.max_uses is not None and voucher.uses + taken.uses > voucher.max_uses:
        return VoucherUsedUp(usesLeft=voucher.uses_left)
    if voucher.budget is not None and voucher.discount_given + taken.discount > voucher.budget:
        return VoucherBudgetSpent()
    return VoucherNotApplicable(reason="expired")


def give_back(tickets: Iterable[tuple[int | None, Decimal]], *, keeping: bool) -> None:
    """Give back the uses and discount of voided tickets, each (its voucher's key, its
    discount), by key: of the vouchers that keep places (`keeping`, before the tickets'
    places go back, in the sale's lock order), or of the others (after)."""
    per_voucher: dict[int, list] = defaultdict(lambda: [0, ZERO])
    for voucher_id, discount in tickets:
        if voucher_id is not None:
            per_voucher[voucher_id][0] += 1
            per_voucher[voucher_id][1] += discount
    for voucher_id in sorted(per_voucher):
        uses, discount = per_voucher[voucher_id]
        # Counted ones alone; never below nothing (one made counted since, then recounted).
        keeps = Voucher.keep_places()
        Voucher.objects.filter(
            keeps if keeping else (Voucher.are_counted() & ~keeps), pk=voucher_id
        ).update(
            uses=Greatest(F("uses") - uses, Value(0)),
            discount_given=Greatest(F("discount_given") - discount, Value(ZERO)),
        )


def given(vouchers: QuerySet[Voucher]) -> QuerySet[Voucher]:
    """The vouchers with what their valid tickets (of orders held or confirmed) took: `used`
    and `discounted`, the one answer to "how much did it give?" for counted and uncounted
    vouchers alike."""
    valid = Ticket.objects.filter(voucher=OuterRef("pk"), cancelled_at__isnull=True).order_by()
    return vouchers.annotate(
        used=Coalesce(
            Subquery(valid.values("voucher").annotate(n=Count("pk")).values("n")), Value(0)
        ),
        discounted=Coalesce(
            Subquery(valid.values("voucher").annotate(d=Sum("discount")).values("d")),
            Value(ZERO),
            output_field=DecimalField(max_digits=10, decimal_places=2),
        ),
    )


def recount(voucher_id: int) -> None:
    """Set a counted voucher's counters to what its valid tickets took, under its row's lock:
    after staff change its limits (a promotion code given a budget counts from what it gave)."""
    voucher = Voucher.objects.select_for_update().filter(pk=voucher_id).first()
    if voucher is None or not voucher.counted:
        return
    counted = (
        given(Voucher.objects.filter(pk=voucher_id))
        .values("used", "discounted")  # type: ignore[misc]  # annotations, unseen by the plugin
        .get()
    )
    Voucher.objects.filter(pk=voucher_id).update(
        uses=counted["used"], discount_given=counted["discounted"]
    )


def for_lines(
    *,
    lines: Sequence[dict],
    categories: Sequence[VisitorCategory | None],
    code: str | None,
    visit: Visit,
    channel: str,
    uses_read: bool = True,
) -> list[Voucher | None]:
    """Each line's voucher, asked before any lock: the line's own `voucher` code, which must
    apply, else the order's `code` where it applies to the line's category (it must apply to
    one). A member's free place takes none. Raises VoucherNotApplicable, VoucherUsedUp (the
    uses left as read, unless not `uses_read`: refusal) or what `find` says."""
    found: dict[str, Voucher] = {}
    named: list[Voucher | None] = []
    for index, (line, category) in enumerate(zip(lines, categories, strict=True)):
        own = line.get("voucher")
        if category is None:
            if own:
                raise InvalidInput(
                    f"lines.{index}.voucher", _("A member's free place takes no voucher.")
                )
            named.append(None)
            continue
        voucher = None
        typed = own or code
        if typed:
            voucher = found.get(typed) or found.setdefault(typed, find(typed))
            reason = refusal(
                voucher,
                visit=visit,
                channel=channel,
                category_id=category.pk,
                uses_read=uses_read,
            )
            if reason == "category" and not own:
                voucher = None  # the order's code, for its other lines
            elif reason is not None:
                raise refused(reason)
        named.append(voucher)
    if code and not any(named):
        raise refused("category")
    if uses_read:
        _refuse_past_uses(lines, named)
    return named


def _refuse_past_uses(lines: Sequence[dict], named: Sequence[Voucher | None]) -> None:
    """VoucherUsedUp if the lines want more uses of a voucher than it has left (as read now;
    `redeem` decides under the lock)."""
    for voucher, wanted in uses_wanted(lines, named).items():
        if voucher.uses_left is not None and wanted > voucher.uses_left:
            raise VoucherUsedUp(usesLeft=voucher.uses_left)


def uses_wanted(lines: Sequence[dict], named: Sequence[Voucher | None]) -> dict[Voucher, int]:
    """The most uses each voucher may take: the tickets of its lines."""
    wanted: dict[Voucher, int] = defaultdict(int)
    for line, voucher in zip(lines, named, strict=True):
        if voucher is not None:
            wanted[voucher] += line["quantity"]
    return wanted


def refused(reason: str) -> MuseumProblem:
    """The problem a refusal's reason is: VoucherUsedUp, or VoucherNotApplicable (whose detail
    the faces word for staff alone: reason_text)."""
    if reason == "used_up":
        return VoucherUsedUp(usesLeft=0)
    return VoucherNotApplicable(reason=reason)


def redemptions_of(lines) -> list[Redemption]:
    """What priced lines (orders.services.pricing.Line) take of their vouchers."""
    taken: dict[int, Redemption] = {}
    for line in lines:
        if line.voucher is not None:
            redemption = taken.setdefault(line.voucher.pk, Redemption(line.voucher))
            redemption.uses += line.quantity
            redemption.discount += line.discount * line.quantity
    return list(taken.values())


def redeemed(tickets: Iterable) -> list[AuditEntry]:
    """The audit entries of a confirmed order's vouchers, one per voucher its tickets used (the
    `voucher.redeemed` webhook is made from it); none without a voucher, and no query."""
    per_voucher: dict[int, Redemption] = {}
    order_id = None
    for ticket in tickets:
        if ticket.voucher_id is not None:
            order_id = ticket.order_id
            redemption = per_voucher.setdefault(ticket.voucher_id, Redemption(ticket.voucher))
            redemption.uses += 1
            redemption.discount += ticket.discount
    return [
        (
            Action.REDEEMED,
            redemption.voucher,
            {
                "order": str(order_id),
                "uses": redemption.uses,
                "discount": redemption.discount,
                "tag": redemption.voucher.tag,
            },
        )
        for redemption in per_voucher.values()
    ]


def record_redeemed(tickets: Iterable) -> None:
    """Record `redeemed` (a held order's, confirmed now)."""
    entries = redeemed(tickets)
    if entries:
        record_each(entries=entries)
