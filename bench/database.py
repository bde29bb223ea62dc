"""The benchmark's own PostgreSQL database: created if missing, loaded once, reset per run."""

import datetime as dt
import sys
import time
from urllib.parse import urlsplit

import psycopg

# A database that fits in memory: random reads cost little more than sequential ones. With the
# default of 4, PostgreSQL reads all 10,000 events rather than look up the ~200 a week lists.
RANDOM_PAGE_COST = "1.1"
TABLES = [
    "orders_refund",
    "tickets_ticketimage",
    "tickets_ticket",
    "orders_order",
    "orders_membership",
    "orders_membershiptype",
    "hours_entryslot",
    "events_eventdate",
    "events_specialevent",
    "hours_museumday",
]


def _name(url: str) -> str:
    name = urlsplit(url).path.lstrip("/")
    # The benchmark empties its tables: never let a typo point it at a real database.
    if "bench" not in name:
        raise SystemExit(f"BENCH_DATABASE_URL must name a database with 'bench' in it, not {name}")
    return name


def create_if_missing(url: str) -> None:
    name = _name(url)
    server = urlsplit(url)._replace(path="/postgres").geturl()
    with psycopg.connect(server, autocommit=True) as connection:
        exists = connection.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [name]
        ).fetchone()
        if not exists:
            print(f"Creating database {name}")
            connection.execute(f'CREATE DATABASE "{name}"')
        connection.execute(f'ALTER DATABASE "{name}" SET random_page_cost = {RANDOM_PAGE_COST}')


def progress_bar(stage: str, done: int, total: int) -> None:
    width = 30
    filled = width * done // max(total, 1)
    bar = "#" * filled + "." * (width - filled)
    end = "\n" if done >= total else ""
    print(f"\r  {stage:<20} [{bar}] {done:>7,}/{total:,}", end=end, file=sys.stderr, flush=True)


def _loaded(volume) -> bool:
    from django.db.models import Max
    from django.utils import timezone

    from bench import data
    from events.models import SpecialEvent
    from hours.models import MuseumDay
    from orders.models import Order, Ticket

    today = timezone.localdate()
    last_day = MuseumDay.objects.aggregate(last=Max("date"))["last"]
    return (
        SpecialEvent.objects.count() == volume.events
        and Ticket.objects.filter(order__email=data.DOOR_EMAIL).count() == volume.door_tickets
        and Ticket.objects.filter(order__email=data.DRAWN_EMAIL, image__isnull=False).count()
        == volume.drawn_tickets
        and Order.objects.filter(email=data.MEMBER_EMAIL).count() == volume.members
        # Loaded long ago, the events would all be in the past.
        and last_day is not None
        and last_day >= today + dt.timedelta(volume.days_ahead - 30)
    )


def _empty() -> None:
    from django.db import connection

    _name(connection.settings_dict["NAME"])
    with connection.cursor() as cursor:
        cursor.execute(f"TRUNCATE {', '.join(TABLES)} RESTART IDENTITY CASCADE")


def prepare(*, reload: bool) -> None:
    """Migrate, load the volume unless it is there, and reset what the last run used up."""
    from django.core.management import call_command

    from bench import data

    call_command("migrate", verbosity=0)
    volume = data.Volume()
    if reload or not _loaded(volume):
        print("Loading the benchmark's rows (once; `--reload` loads again):", file=sys.stderr)
        started = time.monotonic()
        _empty()
        counts = data.load(volume=volume, progress=progress_bar)
        print(f"  loaded {counts} in {time.monotonic() - started:.0f} s", file=sys.stderr)
    refresh()


# Of each timed day's slots' (unlimited) places, those kept for members.
MEMBER_PLACES = 20


def refresh() -> None:
    """Forget the tickets and member visits the last run bought; today's door tickets and member
    visits are today's again, and the members' memberships valid from a month ago."""
    from django.db import connection
    from django.db.models import Q
    from django.utils import timezone

    from bench import data
    from giftcards.models import GiftCard, Transaction
    from hours.models import EntrySlot
    from hours.services import add_entry_slots
    from octo.models import Booking
    from orders.models import Membership, Order, Payment, Refund, SaleDocument, Ticket, Voucher

    # What the runs bought: the partners' (BOUGHT_EMAIL), and the online accounts' orders paid
    # by gift card, the cards and their ledgers, and every document issued for them.
    bought = Order.objects.filter(Q(email=data.BOUGHT_EMAIL) | Q(buyer__username__in=data.ONLINE))
    Booking.objects.filter(order__in=bought).delete()  # the OCTO bookings made
    Transaction.objects.filter(Q(order__in=bought) | Q(card__order__in=bought)).delete()
    GiftCard.objects.filter(order__in=bought).delete()
    SaleDocument.objects.filter(order__in=bought, corrects__isnull=False).delete()
    SaleDocument.objects.filter(order__in=bought).delete()
    Refund.objects.filter(order__in=bought).delete()
    Payment.objects.filter(order__in=bought).delete()
    Ticket.objects.filter(order__in=bought).delete()
    bought.delete()
    Voucher.objects.filter(tag="bench").update(uses=0, discount_given=0)
    # A month of timed days, unlimited, for the order endpoints (each day once: seeding keeps
    # the slots a day has).
    today = timezone.localdate()
    start = today + dt.timedelta(3)
    add_entry_slots(
        start=start,
        end=today + dt.timedelta(33),
        minutes=30,
        capacity=None,
        member_places=MEMBER_PLACES,
    )
    # Slots made by a run before members were benchmarked keep none.
    EntrySlot.objects.filter(day_id__gte=start).update(member_places=MEMBER_PLACES)
    Ticket.objects.filter(order__email__in=[data.DOOR_EMAIL, data.MEMBER_EMAIL]).update(date=today)
    # A booked member visit is the membership's order of the day: the card admits today's.
    Order.objects.filter(email=data.MEMBER_EMAIL).update(date=today)
    Membership.objects.filter(membership_type__code=data.MEMBERSHIP_TYPE).update(
        valid_from=today - dt.timedelta(30), valid_until=today + dt.timedelta(335)
    )
    reset_used_up()
    # What autovacuum does in production soon enough: fresh statistics for the planner, and the
    # visibility map that lets an index-only scan skip the table.
    with connection.cursor() as cursor:
        for table in TABLES:
            cursor.execute(f"VACUUM (ANALYZE) {table}")


def reset_used_up() -> None:
    """No door ticket or member visit checked in, no image of the tickets whose first fetch
    draws it."""
    from bench import data
    from orders.models import Ticket, TicketImage

    Ticket.objects.filter(
        order__email__in=[data.DOOR_EMAIL, data.MEMBER_EMAIL], checked_in_at__isnull=False
    ).update(checked_in_at=None, checked_in_by=None)
    TicketImage.objects.filter(ticket__order__email=data.UNDRAWN_EMAIL).delete()
