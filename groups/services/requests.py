"""A group's request: it holds its places at once, in the sale's own locked count
(hours.locking through orders.services.places), so that staff's approval never finds the slot
sold out; staff answer it (orders.services... through groups.services.approval), offer another
time (the places move there) or decline it; unanswered by `expires_at` it expires and gives its
places back. Each step is audited and mailed to the group (groups.tasks.mail_group)."""

from collections.abc import Mapping, Sequence
from datetime import date, datetime, time, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from audit.models import Action
from audit.services import record
from groups.exceptions import (
    GroupRequestAnswered,
    GroupRequestExpired,
    GroupTooLarge,
    TooManyGroupRequests,
    UnknownGroupRequest,
)
from groups.models import GroupLine, GroupRequest, GroupStatus, TourProgramme
from groups.models.requests import HOLDING
from groups.tasks import mail_group
from museum import i18n
from museum.exceptions import InvalidInput
from orders.codes import new_confirmation_code
from orders.exceptions import DateInPast, SoldOut
from orders.models import VisitorCategory
from orders.services import gates, places
from orders.services.holds import release_expired_holds
from orders.services.limits import mailbox_of


def counted(lines: Mapping[str, int]) -> dict[VisitorCategory, int]:
    """People per visitor category from {category code: how many}: each an active category,
    at least one person, at most MUSEUM_GROUP_MAX_PEOPLE in all."""
    wanted = {code: n for code, n in lines.items() if n}
    if not wanted:
        raise InvalidInput("lines", _("Name at least one person."))
    if any(n < 0 for n in wanted.values()):
        raise InvalidInput("lines", _("A number of people is never negative."))
    found = {c.category: c for c in VisitorCategory.objects.filter(category__in=list(wanted))}
    for code in wanted:
        category = found.get(code)
        if category is None or not category.active:
            raise InvalidInput(
                "lines", _("No visitor category is called %(code)s.") % {"code": code}
            )
    size = sum(wanted.values())
    if size > settings.MUSEUM_GROUP_MAX_PEOPLE:
        most = settings.MUSEUM_GROUP_MAX_PEOPLE
        raise GroupTooLarge(
            _("A group may bring at most %(max)s people.") % {"max": most}, max=most
        )
    return {found[code]: n for code, n in wanted.items()}


def checked_tour(tour_id: int | None, *, language: str, kind: str) -> TourProgramme | None:
    """The active tour programme asked for, which must speak the group's language and suit its
    kind of organisation."""
    if tour_id is None:
        return None
    tour = TourProgramme.objects.filter(pk=tour_id, active=True).first()
    if tour is None:
        raise InvalidInput("tourId", _("No guided tour has this key."))
    if tour.languages and language not in tour.languages:
        raise InvalidInput("tourId", _("This tour is not given in the group's language."))
    if tour.audiences and kind not in tour.audiences:
        raise InvalidInput("tourId", _("This tour is not offered to this kind of group."))
    return tour


def request_group(
    *,
    account,
    organisation: str,
    organisation_kind: str,
    contact_name: str,
    email: str,
    date: date,
    lines: Mapping[str, int],
    entry_time: time | None = None,
    phone: str = "",
    language: str = "",
    alternatives: Sequence[Mapping] = (),
    age_group: str = "",
    accessibility: str = "",
    tour_id: int | None = None,
    comment: str = "",
    address: str = "",
    vat_id: str = "",
) -> GroupRequest:
    """A group's request, holding its places on its day (and slot) until staff answer it or
    MUSEUM_GROUP_REQUEST_HOLD_DAYS pass; SoldOut (with what is `available`) when they are not
    there. `account` None: sent through the public form."""
    language = i18n.offered(language) or i18n.current()
    if date < timezone.localdate():
        raise DateInPast()
    counts = counted(lines)
    tour = checked_tour(tour_id, language=language, kind=organisation_kind)
    slot = places.slot_for(ticket_date=date, entry_time=entry_time)
    mailbox = mailbox_of(email)
    size = sum(counts.values())

    def hold() -> GroupRequest:
        # Counted without a lock: two requests of one mailbox at the same instant may both
        # pass, one over the limit, which bounds nothing that matters (each is answered).
        waiting = GroupRequest.objects.filter(mailbox=mailbox, status__in=HOLDING)
        if waiting.count() >= settings.MUSEUM_GROUP_OPEN_REQUESTS:
            raise TooManyGroupRequests(limit=settings.MUSEUM_GROUP_OPEN_REQUESTS)
        places.take(ticket_date=date, event_id=None, slot=slot, n=size)
        group = GroupRequest.objects.create(
            code=new_confirmation_code("group"),
            account=account,
            organisation=organisation,
            organisation_kind=organisation_kind,
            contact_name=contact_name,
            email=email,
            mailbox=mailbox,
            phone=phone,
            address=address,
            vat_id=vat_id,
            language=language,
            date=date,
            entry_time=slot.entry_time if slot else entry_time,
            slot=slot,
            alternatives=list(alternatives),
            age_group=age_group,
            accessibility=accessibility,
            tour=tour,
            comment=comment,
            places=size,
            expires_at=hold_until(date),
        )
        GroupLine.objects.bulk_create(
            GroupLine(request=group, category=category, quantity=n)
            for category, n in counts.items()
        )
        record(action=Action.CREATED, obj=group, by=account, changes=_audited(group, counts))
        mail_group(group, "received")
        return group

    # A drop's places are its line's: a request for them would skip it (orders.services.gates).
    entry = gates.Entry(
        buyer=account,
        seller=None,
        octo=False,
        ticket_type="general",
        ticket_date=date,
        event_id=None,
        entry_time=entry_time,
        earliest_slot=False,
        quantity=size,
        voucher=None,
        admission=None,
    )
    with gates.passing(entry):
        return holding(hold, day=date)


def holding(step, *, day: date):
    """Run `step` (which counts places) in a transaction; sold out, it gives back what holds and
    requests that ran out on the day held, and if there were any runs once more."""
    try:
        with transaction.atomic():
            return step()
    except SoldOut:
        freed = release_expired_holds(ticket_date=day) + expire_requests(on=day)
        if not freed:
            raise
    with transaction.atomic():
        return step()


def hold_until(day: date) -> datetime:
    """When a request made now stops holding its places: MUSEUM_GROUP_REQUEST_HOLD_DAYS from now,
    or the start of its day if sooner."""
    now = timezone.now()
    day_starts = timezone.make_aware(datetime.combine(day, time.min))
    return max(min(now + timedelta(days=settings.MUSEUM_GROUP_REQUEST_HOLD_DAYS), day_starts), now)


def locked(request_id: int) -> GroupRequest:
    """The request, its row locked for the caller's transaction, with its lines."""
    group = GroupRequest.objects.select_for_update(of=("self",)).filter(pk=request_id).first()
    if group is None:
        raise UnknownGroupRequest()
    return group


def refuse_unless_waiting(group: GroupRequest, *, now: datetime) -> None:
    """Only a request waiting for an answer (requested or offered) is answered, and only before
    it runs out."""
    if group.status not in HOLDING:
        raise GroupRequestAnswered(status=group.status)
    if group.ran_out(now):
        raise GroupRequestExpired()


def give_back(group: GroupRequest) -> None:
    """The places the locked request holds go back to the sale."""
    places.give_back_on(day=group.date, slot_id=group.slot_id, n=group.places)
    group.places = 0


def move(group: GroupRequest, *, day: date, entry_time: time | None) -> None:
    """The locked request's places move to `day` (and its slot at `entry_time`): taken there
    first, given back here after (SoldOut leaves them where they were)."""
    if day < timezone.localdate():
        raise DateInPast()
    slot = places.slot_for(ticket_date=day, entry_time=entry_time)
    if day == group.date and (slot.pk if slot else None) == group.slot_id:
        return
    n = group.places
    places.take(ticket_date=day, event_id=None, slot=slot, n=n)
    give_back(group)
    group.date, group.slot, group.places = day, slot, n
    group.entry_time = slot.entry_time if slot else entry_time


def offer_time(
    *, request_id, by, date: date, entry_time: time | None = None, message: str = ""
) -> GroupRequest:
    """Staff offer the group another time: its places move there (held anew for the hold's
    length) and the group is asked to accept it."""

    def offer() -> GroupRequest:
        now = timezone.now()
        group = locked(request_id)
        refuse_unless_waiting(group, now=now)
        before = (group.status, str(group.date), _time(group.entry_time))
        move(group, day=date, entry_time=entry_time)
        group.status, group.message = GroupStatus.OFFERED, message
        group.expires_at = hold_until(group.date)
        group.answered_at, group.answered_by = now, by
        group.save()
        after = (group.status, str(group.date), _time(group.entry_time))
        changes = {
            k: [b, a] for k, b, a in zip(("status", "date", "time"), before, after, strict=True)
        }
        record(action=Action.CHANGED, obj=group, by=by, changes=changes)
        mail_group(group, "offered")
        return group

    return holding(offer, day=date)


def accept_offer(*, request_id) -> GroupRequest:
    """The group accepts the time offered: its request waits for staff's approval there."""
    with transaction.atomic():
        group = locked(request_id)
        if group.status != GroupStatus.OFFERED:
            raise GroupRequestAnswered(status=group.status)
        if group.ran_out():
            raise GroupRequestExpired()
        group.status = GroupStatus.REQUESTED
        group.save(update_fields=["status"])
        record(
            action=Action.CHANGED,
            obj=group,
            changes={"status": [GroupStatus.OFFERED, GroupStatus.REQUESTED]},
        )
        return group


def decline(*, request_id, by, reason: str) -> GroupRequest:
    """Staff decline the request, saying why: its places go back."""
    if not reason.strip():
        raise InvalidInput("reason", _("Say why the request is declined."))
    with transaction.atomic():
        group = locked(request_id)
        if group.status not in HOLDING:
            raise GroupRequestAnswered(status=group.status)
        before = group.status
        give_back(group)
        group.status, group.message = GroupStatus.DECLINED, reason
        group.answered_at, group.answered_by = timezone.now(), by
        group.save()
        record(
            action=Action.CANCELLED,
            obj=group,
            by=by,
            changes={"status": [before, group.status], "reason": reason},
        )
        mail_group(group, "declined")
        return group


def expire_requests(*, on: date | None = None, limit: int = 500) -> int:
    """Requests that waited past `expires_at` unanswered (on the day `on`, or all) give their
    places back and are told; how many."""
    now = timezone.now()
    due = GroupRequest.objects.filter(status__in=HOLDING, expires_at__lte=now)
    if on is not None:
        due = due.filter(date=on)
    expired = 0
    for pk in due.order_by("expires_at").values_list("pk", flat=True)[:limit]:
        with transaction.atomic():
            # Claimed once: an answer may have come first.
            group = (
                GroupRequest.objects.select_for_update()
                .filter(pk=pk, status__in=HOLDING, expires_at__lte=now)
                .first()
            )
            if group is None:
                continue
            before = group.status
            give_back(group)
            group.status = GroupStatus.EXPIRED
            group.save(update_fields=["status", "places"])
            record(action=Action.EXPIRED, obj=group, changes={"status": [before, group.status]})
            mail_group(group, "expired")
            expired += 1
    return expired


def _time(value: time | None) -> str | None:
    return f"{value:%H:%M}" if value else None


def _audited(group: GroupRequest, counts: Mapping[VisitorCategory, int]) -> dict:
    return {
        "status": group.status,
        "date": group.date,
        "time": _time(group.entry_time),
        "people": {category.category: n for category, n in counts.items()},
        "places": group.places,
        "tour": group.tour_id,
        "email": group.email,
    }
