"""A drop's waiting list: those its line told the places are sold out, offered the places that
come back later, in the order they asked, each as a single-use voucher (vouchers.services) that
keeps its places on one of the drop's rows for MUSEUM_DROP_OFFER_HOURS and takes nothing off,
by email (drops.tasks). The gate lets such a voucher buy without an admission (drops.gate).

Places come back when an order is cancelled or a hold runs out (drops.receivers, once the change
commits) and when an offer runs out unused (its voucher keeps nothing then): the periodic job
(drops.jobs.tend_drops) counts every drop's places again each minute and offers what it finds.
Offers are made under the lock of the drop's row, so that two of them at once never offer one
place twice; strictly in order: an entry whose tickets do not fit on one row stops the offers
until they do, rather than let a smaller ask behind it go first.
"""

import logging
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from drops import queue, services
from drops.exceptions import NotInLine, NotOnWaitingList, NotSoldOut
from drops.models import Drop, WaitingEntry
from drops.tasks import mail_offer
from museum import i18n
from museum.exceptions import InvalidInput, NotFound
from orders.models import VoucherChannel, VoucherEffect
from orders.services.vouchers import keeping_changed
from vouchers.services import create_voucher

logger = logging.getLogger("museum.drops")

# An offer is the drop's doing, not the request's that gave the places back: its voucher's
# audit record names no account ("system").
BY_THE_DROP = AnonymousUser()


def join_waiting_list(*, drop_id: int, account, quantity: int) -> tuple[WaitingEntry, bool]:
    """Put the account on the drop's waiting list for `quantity` tickets, once the line told it
    the places are sold out; asked again, the same entry. The entry (waiting_entry_of), and
    whether this call made it."""
    drop = Drop.objects.filter(pk=drop_id).first()
    if drop is None:
        raise NotFound()
    if WaitingEntry.objects.filter(drop=drop, account=account).exists():
        return waiting_entry_of(drop_id=drop_id, account=account), False
    if not 1 <= quantity <= drop.max_tickets:
        message = _("From 1 to %(max)s tickets.") % {"max": drop.max_tickets}
        raise InvalidInput("quantity", message)
    try:
        told = services.standing_of(drop_id, account).state
    except NotInLine:
        told = "none"
    if told != "sold_out":
        raise NotSoldOut()
    try:
        with transaction.atomic():
            WaitingEntry.objects.create(
                drop=drop,
                account=account,
                email=account.email or "",
                language=i18n.current(),
                quantity=quantity,
            )
    except IntegrityError:  # the same account's other request made it meanwhile
        return waiting_entry_of(drop_id=drop_id, account=account), False
    return waiting_entry_of(drop_id=drop_id, account=account), True


def waiting_entry_of(*, drop_id: int, account) -> WaitingEntry:
    """The account's entry on the drop's waiting list with its `position` (from 1, in the order
    of joining) and its offer's voucher; NotOnWaitingList."""
    entry = (
        WaitingEntry.objects.select_related("voucher")
        .filter(drop_id=drop_id, account=account)
        .first()
    )
    if entry is None:
        raise NotOnWaitingList()
    before = WaitingEntry.objects.filter(drop_id=drop_id).filter(
        Q(joined_at__lt=entry.joined_at) | Q(joined_at=entry.joined_at, pk__lt=entry.pk)
    )
    entry.position = before.count() + 1  # type: ignore[attr-defined]
    return entry


def offer_freed_places(drop: Drop) -> list[WaitingEntry]:
    """Offer the places free on the drop's rows to its waiting list, once its line is sold out:
    to the entries not yet offered, in order, while one row has room for the next one's
    tickets. The entries offered now. Raises queue.Unreachable (a paused drop offers nothing)."""
    if not queue.sold_out(drop.pk):
        return []
    now = timezone.now()
    offered: list[WaitingEntry] = []
    with transaction.atomic():
        locked = Drop.objects.select_for_update().filter(pk=drop.pk).first()
        if locked is None:
            return []
        # Read afresh which rows vouchers keep places on: another process's offer committed a
        # moment ago may not have reached this one's kept copy yet, and would be offered again.
        keeping_changed()
        rooms = services.rooms_of(locked)
        left = services.left_in(rooms)
        if left <= 0:  # none, or unlimited: nobody waits for places then
            return []
        waiting = locked.waiting_list.filter(offered_at=None).order_by("joined_at", "pk")
        for entry in waiting[:left]:  # each takes one place at least
            room = next((r for r in rooms if r.left is not None and r.left >= entry.quantity), None)
            if room is None:
                break
            _offer(locked, entry, room, now=now)
            offered.append(entry)
            rooms = services.rooms_of(locked)  # as the sale counts them, with the offer's
    if offered:
        logger.info("Drop %s: offered to entries %s", drop.pk, [e.pk for e in offered])
    return offered


def _offer(drop: Drop, entry: WaitingEntry, room: services.Room, *, now) -> None:
    voucher = create_voucher(
        by=BY_THE_DROP,
        effect=VoucherEffect.PERCENT_OFF,
        value=0,
        channels=[VoucherChannel.ONLINE],
        valid_until=now + timedelta(hours=settings.MUSEUM_DROP_OFFER_HOURS),
        max_uses=entry.quantity,
        tag=f"drop-{drop.pk}",
        comment=f"Offered to entry {entry.pk} of the waiting list of {drop.name}.",
        **_scope(room),
    )
    entry.voucher, entry.offered_at = voucher, now
    entry.save(update_fields=["voucher", "offered_at"])
    mail_offer(entry)


def _scope(room: services.Room) -> dict:
    """What a voucher keeping places on the room's row is for: that visit alone."""
    if room.kind == "slot":
        slot = room.row
        return {
            "keep_slot": slot,
            "ticket_type": "general",
            "visit_from": slot.day_id,
            "visit_until": slot.day_id,
            "entry_from": slot.entry_time,
            "entry_until": slot.entry_time,
        }
    if room.kind == "day":
        day = room.row.date
        return {"keep_day": day, "ticket_type": "general", "visit_from": day, "visit_until": day}
    event_date = room.row
    return {
        "keep_event_date": event_date,
        "ticket_type": "event",
        "events": [event_date.event],
        "visit_from": event_date.date,
        "visit_until": event_date.date,
    }


def recount_and_offer_after_commit(drop: Drop) -> None:
    """Once the change that gave places back commits: count the drop's places again (the line
    lets the next one in) and offer them to the waiting list if the line is sold out; never
    failing the change, which has committed (the periodic job tries again within a minute)."""

    def tend() -> None:
        try:
            services.recount(drop)
            offer_freed_places(drop)
        except Exception:
            logger.warning("Drop %s: places given back offered later", drop.pk, exc_info=True)

    transaction.on_commit(tend)


def tend(now=None) -> int:
    """For each drop on, or closed less than a day ago: count its places again and offer those
    free to its waiting list. How many entries were offered."""
    now = now or timezone.now()
    drops = Drop.objects.filter(prequeue_opens_at__lte=now, closes_at__gt=now - timedelta(days=1))
    offered = 0
    for drop in drops:
        try:
            services.recount(drop)
            offered += len(offer_freed_places(drop))
        except queue.Unreachable:
            logger.warning("Drop %s: Redis away; its places are offered at a later run", drop.pk)
        except Exception:  # one drop's failure leaves the others tended
            logger.exception("Drop %s: not tended", drop.pk)
    return offered


def forget_waiting_lists(now=None) -> int:
    """A waiting list names people: its entries (and their emails) are kept while their drop
    may still offer them places and MUSEUM_PERSONAL_DATA_RETENTION_DAYS after it closed, as an
    order's buyer is after the visit (docs/security.md); then deleted. How many."""
    now = now or timezone.now()
    cutoff = now - timedelta(days=max(settings.MUSEUM_PERSONAL_DATA_RETENTION_DAYS, 1))
    entries = WaitingEntry.objects.filter(drop__closes_at__lt=cutoff)
    return entries.delete()[1].get(WaitingEntry._meta.label, 0)
