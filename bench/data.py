"""A museum's worth of rows for the benchmark and the query-plan test.

10,000 special events on ~30,000 dates, 100,000 tickets, 10,000 members and two years of opening
hours (the past year and the coming one), as a museum's tables look after a few years: events run
from two years back to a year ahead, each on one to five dates within four weeks, so a week's list
reads a small part of the table, the way it does in production. PostgreSQL only prefers an index to
a sequential scan when a table is big enough for it to matter, so plans are only worth reading at
this volume.

The rows are written with COPY (a few seconds; bulk_create takes four times as long). The tickets
the benchmark uses up are kept apart by their email address: today's tickets for the door (check-in
admits each once), tickets whose image is not drawn yet (the first QR fetch draws it), tickets with
a drawn image (the repeated fetch), and the tickets the benchmark buys. Every other ticket has a
placeholder image row: in production each sold ticket's image is drawn for its confirmation email.
The members' memberships, bought by the benchmark's visitors, each have a member visit booked for
today (a member's card admits it at the door); the benchmark books their visits on timed days.
"""

import datetime as dt
import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from io import BytesIO

from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.db import connection, transaction
from django.utils import timezone
from PIL import Image

from events.models import EventDate, SpecialEvent
from hours.models import MuseumDay
from museum.accounts import partner_group, staff_group
from orders.models import (
    Membership,
    MembershipStatus,
    MembershipType,
    Order,
    SaleLimits,
    Ticket,
    TicketImage,
    TicketType,
)
from orders.services.limits import mailbox_of
from tickets.images import ticket_image

PASSWORD = "bench-password-not-a-secret"
VISITORS = [f"bench-visitor-{n:02d}" for n in range(16)]
STAFF = [f"bench-staff-{n:02d}" for n in range(4)]

DOOR_EMAIL = "door@bench.invalid"  # today's tickets, for check-in
UNDRAWN_EMAIL = "undrawn@bench.invalid"  # no image yet, for the first QR fetch
DRAWN_EMAIL = "drawn@bench.invalid"  # image drawn, for the repeated QR fetch
BOUGHT_EMAIL = "bought@bench.invalid"  # bought by the benchmark itself
MEMBER_EMAIL = "members@bench.invalid"  # today's member visits, for the member card's scan
MEMBERSHIP_TYPE = "bench-dual"  # the members' type: a visit admits two
SOLD_EMAIL = "visitor@bench.invalid"  # every other ticket

BATCH = 5000
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Volume:
    events: int = 10_000
    tickets: int = 100_000
    days_back: int = 365 * 2  # the first events ran this long ago
    days_ahead: int = 365  # opening hours and events reach this far
    door_tickets: int = 30_000
    undrawn_tickets: int = 5_000
    drawn_tickets: int = 200
    members: int = 10_000  # each with a member visit booked for today


def _quiet(stage: str, done: int, total: int) -> None:
    pass


def _copy(model, fields: list[str], rows: list[tuple], stage: str, progress: Progress) -> None:
    """Write rows with PostgreSQL's COPY."""
    table = connection.ops.quote_name(model._meta.db_table)
    columns = ", ".join(connection.ops.quote_name(model._meta.get_field(f).column) for f in fields)
    with connection.cursor() as cursor:
        for start in range(0, len(rows), BATCH):
            batch = rows[start : start + BATCH]
            with cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in batch:
                    copy.write_row(row)
            progress(stage, start + len(batch), len(rows))


def _uuid(rng: random.Random) -> str:
    # As text: COPY parses it, and making 100,000 UUID objects takes a second of its own.
    return f"{rng.getrandbits(128):032x}"


def _code(prefix: str, n: int) -> str:
    # The shape of tickets.services.new_confirmation_code, unique by construction (hexadecimal
    # digits are in its alphabet); the codes of tickets the benchmark buys are random as ever.
    digits = f"{n:011x}"
    return f"{prefix}-{digits[:6]}-{digits[6:]}"


def _placeholder_png() -> bytes:
    out = BytesIO()
    Image.new("L", (1, 1), 255).save(out, format="PNG")
    return out.getvalue()


def load_accounts() -> tuple[list, list]:
    """The benchmark's visitors and staff, all with PASSWORD (hashed once: PBKDF2 is slow)."""
    User = get_user_model()
    password = make_password(PASSWORD)
    for username in VISITORS + STAFF:
        User.objects.update_or_create(
            username=username,
            defaults={"password": password, "is_staff": username in STAFF, "is_active": True},
        )
    visitors = list(User.objects.filter(username__in=VISITORS).order_by("username"))
    staff = list(User.objects.filter(username__in=STAFF).order_by("username"))
    group = staff_group()  # what lets them check tickets in and write events
    for member in staff:
        member.groups.add(group)
    # Sales partners: the benchmark's purchases and orders are sold at once, as a partner's
    # (an online account's wait for a payment provider, which the benchmark has none of).
    partners = partner_group()
    for visitor in visitors:
        visitor.groups.add(partners)
    return visitors, staff


ONLINE = [f"bench-online-{n:02d}" for n in range(16)]


def partners_hold_enough() -> None:
    """The benchmark's partners may hold its thousands of orders for the confirm endpoint at
    once (a partner holds MUSEUM_PARTNER_MAX_HELD_PLACES unpaid by default), as staff would let
    a shop's account: their own limit."""
    for visitor in get_user_model().objects.filter(username__in=VISITORS):
        SaleLimits.objects.update_or_create(account=visitor, defaults={"max_held_places": 10**6})


def online_buyers() -> list:
    """Online accounts (not partners: their orders wait for a payment), made on first use, each
    with its own limits on places (as a shop's), so that the benchmark's thousands of held
    orders are within them; the museum's per-mailbox limits still apply to each order's email."""
    User = get_user_model()
    password = make_password(PASSWORD)
    buyers = []
    for username in ONLINE:
        buyer, _ = User.objects.get_or_create(username=username, defaults={"password": password})
        SaleLimits.objects.update_or_create(
            account=buyer, defaults={"max_held_places": 10**6, "max_places_per_day": 10**6}
        )
        buyers.append(buyer)
    return buyers


def load_hours(*, today: dt.date, days_ahead: int) -> None:
    """Tuesday to Sunday 10:00-18:00, Mondays closed, for the past year and days_ahead on; today
    open until midnight, whatever its weekday, so the door admits at whatever hour the benchmark
    runs."""
    days = []
    for offset in range(-365, days_ahead + 1):
        day = today + dt.timedelta(offset)
        closed = day.weekday() == 0 and day != today
        closes = dt.time.max if day == today else dt.time(18)
        days.append(
            MuseumDay(
                date=day,
                is_closed=closed,
                opens_at=None if closed else dt.time(10),
                closes_at=None if closed else closes,
            )
        )
    MuseumDay.objects.bulk_create(days, ignore_conflicts=True)


def load_events(
    *, today: dt.date, volume: Volume, rng: random.Random, progress: Progress
) -> list[tuple[str, Decimal, list[dt.date]]]:
    """(id, price, dates) of each event not cancelled, after writing every event and its dates."""
    now = timezone.now()
    events, dates, programme = [], [], []
    for n in range(volume.events):
        event_id, price = _uuid(rng), Decimal(rng.choice(["0", "7.50", "12", "25", "45"]))
        # One in fifty was cancelled: reads must skip it.
        cancelled = n % 50 == 0
        events.append(
            (
                event_id,
                f"Bench event {n:05d}",
                rng.choice(["Great Hall", "East Wing", "Garden", "Auditorium"]),
                "An evening with the collection. " * rng.randint(1, 8),
                price,
                None,  # capacity: unlimited, so the benchmark's purchases never sell out
                now,
                now,
                now if cancelled else None,
            )
        )
        opening = today + dt.timedelta(rng.randrange(-volume.days_back, volume.days_ahead))
        days = sorted({opening + dt.timedelta(rng.randrange(28)) for _ in range(rng.randint(1, 5))})
        dates += [(event_id, day, None, 0) for day in days]
        if not cancelled:
            programme.append((event_id, price, days))
    event_fields = ["id", "name", "location", "description", "price", "capacity"]
    event_fields += ["created_at", "updated_at", "cancelled_at"]
    _copy(SpecialEvent, event_fields, events, "events", progress)
    _copy(EventDate, ["event", "date", "capacity", "sold"], dates, "event dates", progress)
    return programme


ORDER_FIELDS = [
    "id",
    "buyer",
    "email",
    "phone",
    "status",
    "confirmation_code",
    "ticket_type",
    "date",
    "event",
    "total",
    "created_at",
    "confirmed_at",
    "confirmation_sent_at",
    "confirmation_task_id",
    "channel",
    "name",
    "language",
    "mailbox",
]
TICKET_FIELDS = [
    "id",
    "buyer",
    "ticket_type",
    "date",
    "event",
    "museum_day",
    "event_date",
    "order",
    "held",
    "price",
    "confirmation_code",
    "purchased_at",
    "member",
]


def load_tickets(
    *,
    today: dt.date,
    volume: Volume,
    programme: list,
    visitors: list,
    rng: random.Random,
    progress: Progress,
) -> None:
    now = timezone.now()
    days = list(MuseumDay.objects.filter(is_closed=False).values_list("date", flat=True))
    future_days = [day for day in days if day > today]
    general = Decimal("15.00")
    # The row that counts each event ticket (a general ticket's day is its date).
    slots = {
        (str(event_id).replace("-", ""), day): pk
        for event_id, day, pk in EventDate.objects.values_list("event_id", "date", "pk")
    }

    orders = []

    def ticket(n: int, day: dt.date, email: str, event_id=None, price=general) -> tuple:
        kind = TicketType.EVENT if event_id else TicketType.GENERAL
        buyer = visitors[n % len(visitors)].pk
        counted = (None, slots[event_id, day]) if event_id else (day, None)
        # Each in an order of one, keyed as the ticket (as the migration that made orders did).
        key = _uuid(rng)
        orders.append(
            (key, buyer, email, "", "confirmed", _code("order", n), kind, day, event_id, price)
            + (now, now, now, "", "on_account", "", "en", mailbox_of(email))
        )
        return (
            key,
            buyer,
            kind,
            day,
            event_id,
            *counted,
            key,
            False,  # held: sold, not held
            price,
            _code(f"ticket-{kind}", n),
            now,
            False,  # member: a visitor's, not a member's free place
        )

    tickets = [ticket(n, today, DOOR_EMAIL) for n in range(volume.door_tickets)]
    for email, count in (
        (UNDRAWN_EMAIL, volume.undrawn_tickets),
        (DRAWN_EMAIL, volume.drawn_tickets),
    ):
        start = len(tickets)
        tickets += [ticket(n, rng.choice(future_days), email) for n in range(start, start + count)]
    while len(tickets) < volume.tickets:
        n = len(tickets)
        if n % 2:
            event_id, price, event_days = rng.choice(programme)
            tickets.append(ticket(n, rng.choice(event_days), SOLD_EMAIL, event_id, price))
        else:
            tickets.append(ticket(n, rng.choice(days), SOLD_EMAIL))
    _copy(Order, ORDER_FIELDS, orders, "orders", progress)
    _copy(Ticket, TICKET_FIELDS, tickets, "tickets", progress)


MEMBERSHIP_FIELDS = [
    "id",
    "membership_type",
    "buyer",
    "holder_name",
    "email",
    "language",
    "status",
    "valid_from",
    "valid_until",
    "card_code",
    "created_at",
    "activated_at",
]


def membership_type() -> MembershipType:
    """The members' type (a dual: each visit admits two), made once."""
    found, _ = MembershipType.objects.get_or_create(
        code=MEMBERSHIP_TYPE,
        defaults={"name": "Bench dual", "price": Decimal("90.00"), "admits": 2},
    )
    return found


def load_members(
    *, today: dt.date, volume: Volume, visitors: list, rng: random.Random, progress: Progress
) -> None:
    """Active memberships bought by the visitors in turn (a visitor books its own memberships'
    visits), each with a member visit booked for today: a free order of one or two member
    places, which its card admits at the door. bench.database.refresh() keeps them valid and
    today's."""
    now, type_id = timezone.now(), membership_type().pk
    memberships, orders, tickets = [], [], []
    # Past the other tickets' numbers: confirmation codes are unique.
    first = 10 * volume.tickets
    for n in range(volume.members):
        membership_id, order_id = _uuid(rng), _uuid(rng)
        buyer = visitors[n % len(visitors)].pk
        memberships.append(
            (
                membership_id,
                type_id,
                buyer,
                f"Bench Member {n:05d}",
                f"member-{n:05d}@bench.invalid",
            )
            + ("en", MembershipStatus.ACTIVE, today - dt.timedelta(30))
            + (today + dt.timedelta(335), _code("member", n), now, now)
        )
        orders.append(
            (order_id, buyer, MEMBER_EMAIL, "", "confirmed", _code("order", first + n))
            + (TicketType.GENERAL, today, None, Decimal("0.00"), now, now, now, "", "on_account")
            + ("", "en", mailbox_of(MEMBER_EMAIL), membership_id)
        )
        for place in range(1 + n % 2):  # an individual's visit, or both the dual admits
            number = first + 2 * n + place
            tickets.append(
                (_uuid(rng), buyer, TicketType.GENERAL, today, None, today, None, order_id)
                + (False, Decimal("0.00"), _code("ticket-general", number), now, True)
            )
    _copy(Membership, MEMBERSHIP_FIELDS, memberships, "memberships", progress)
    _copy(Order, ORDER_FIELDS + ["membership"], orders, "member visits", progress)
    _copy(Ticket, TICKET_FIELDS, tickets, "member tickets", progress)


def load_images(*, volume: Volume, progress: Progress) -> None:
    """Placeholder images for the tickets sold earlier; real ones for the repeated QR fetch."""
    png, now = _placeholder_png(), timezone.now()
    etag = hashlib.sha256(png).hexdigest()[:32]
    sold = Ticket.objects.filter(order__email__in=[SOLD_EMAIL, DOOR_EMAIL]).values_list(
        "pk", flat=True
    )
    rows = [(pk, png, etag, now) for pk in sold]
    fields = ["ticket", "png", "etag", "rendered_at"]
    _copy(TicketImage, fields, rows, "placeholder images", progress)
    drawn = list(Ticket.objects.select_related("event", "order").filter(order__email=DRAWN_EMAIL))
    for done, ticket in enumerate(drawn, 1):
        ticket_image(ticket=ticket)
        progress("ticket images", done, len(drawn))


@transaction.atomic
def load(
    *, volume: Volume = Volume(), seed: int = 2030, progress: Progress = _quiet
) -> dict[str, int]:
    """Load the whole volume into empty tables; then ANALYZE, so the planner sees it."""
    rng = random.Random(seed)
    today = timezone.localdate()
    visitors, _ = load_accounts()
    load_hours(today=today, days_ahead=volume.days_ahead)
    programme = load_events(today=today, volume=volume, rng=rng, progress=progress)
    load_tickets(
        today=today,
        volume=volume,
        programme=programme,
        visitors=visitors,
        rng=rng,
        progress=progress,
    )
    load_members(today=today, volume=volume, visitors=visitors, rng=rng, progress=progress)
    load_images(volume=volume, progress=progress)
    analyze()
    return counts()


def analyze() -> None:
    """Fresh planner statistics: the plans are read right after loading."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            for model in (
                SpecialEvent,
                EventDate,
                MuseumDay,
                Order,
                Ticket,
                TicketImage,
                Membership,
            ):
                cursor.execute(f"ANALYZE {connection.ops.quote_name(model._meta.db_table)}")


def counts() -> dict[str, int]:
    return {
        "museum days": MuseumDay.objects.count(),
        "events": SpecialEvent.objects.count(),
        "event dates": EventDate.objects.count(),
        "tickets": Ticket.objects.count(),
        "ticket images": TicketImage.objects.count(),
        "memberships": Membership.objects.count(),
    }
