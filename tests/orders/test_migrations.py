"""The sale in one app: a database as the orders and tickets apps' own migrations left it
(commit 2b15825, kept in tests/orders/legacy_migrations) migrates forward with every kind of
order and ticket in it, keeps every row where it was, and migrates back and forward again."""

import datetime as dt
import uuid
from decimal import Decimal

import pytest
from django.contrib.auth.models import Group
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.recorder import MigrationRecorder

from audit.models import AuditRecord
from orders.models import Ticket

# The apps whose migrations build on the sale's come after 2b15825: none of theirs while the
# database is as the old migrations left it.
LEGACY = {
    "orders": "tests.orders.legacy_migrations.orders",
    "tickets": "tests.orders.legacy_migrations.tickets",
    **{
        app: None
        for (app, _), migration in MigrationLoader(None).disk_migrations.items()
        if app != "orders" and any(parent == "orders" for parent, _ in migration.dependencies)
    },
}
LEGACY_LEAVES = [("orders", "0008_order_language"), ("tickets", "0012_ticket_cancelled_by")]
SQUASHED = ("orders", "0001_squashed_0008_order_language")
DAY, EVENT_DAY = dt.date(2030, 1, 7), dt.date(2030, 1, 9)


def migrate(targets):
    """Migrate to `targets` (None: every app's latest) with the migration modules set now; the
    models as the migrations up to `targets` leave them (a later migration's columns are not
    there yet)."""
    executor = MigrationExecutor(connection)
    targets = targets or executor.loader.graph.leaf_nodes()
    executor.migrate(targets)
    executor.loader.build_graph()
    ContentType.objects.clear_cache()
    if any(name is None for _, name in targets):
        return None
    # Every app at its latest but those migrated to a target, and those whose latest needs more
    # of a target's app than the target (giftcards, above orders: migrated back with it).
    graph = executor.loader.graph
    allowed = {node for target in targets for node in graph.forwards_plan(target)}
    moved = {app for app, _ in targets}
    nodes = {
        app: name
        for app, name in graph.leaf_nodes()
        if all(node in allowed for node in graph.forwards_plan((app, name)) if node[0] in moved)
    } | dict(targets)
    return executor.loader.project_state(list(nodes.items())).apps


def before_the_sale():
    """The database without the sale's tables or any record of their migrations, tickets' too."""
    migrate([("orders", None)])
    MigrationRecorder(connection).migration_qs.filter(app="tickets").delete()


def a_sale_of_every_kind(old):
    """Orders of every status and channel, general, timed and event tickets, checked in and
    cancelled, payments, refunds, kept documents and audit records, as 2b15825 wrote them."""
    User = old.get_model("auth", "User")
    buyer = User.objects.create(username="ada")
    staff = User.objects.create(username="desk1")
    door = old.get_model("auth", "Group").objects.create(name="Door (old)")
    ticket_type = old.get_model("contenttypes", "ContentType").objects.get(
        app_label="tickets", model="ticket"
    )
    door.permissions.add(
        old.get_model("auth", "Permission").objects.get(
            content_type=ticket_type, codename="check_in_ticket"
        )
    )
    staff.groups.add(door)
    day = old.get_model("hours", "MuseumDay").objects.create(
        date=DAY, opens_at=dt.time(9), closes_at=dt.time(17), sold=4
    )
    slot = old.get_model("hours", "EntrySlot").objects.create(
        day=day, entry_time=dt.time(10), sold=1
    )
    event = old.get_model("events", "SpecialEvent").objects.create(
        name="Tour", location="Hall", description="", price=Decimal("20")
    )
    event_date = old.get_model("events", "EventDate").objects.create(
        event=event, date=EVENT_DAY, sold=1
    )
    adult = old.get_model("orders", "VisitorCategory").objects.get(category="adult")
    Order = old.get_model("orders", "Order")
    Ticket = old.get_model("tickets", "Ticket")
    kinds = {
        "confirmed": {"status": "confirmed", "channel": "on_account"},
        "held": {"status": "held", "hold_expires_at": dt.datetime(2030, 1, 1, tzinfo=dt.UTC)},
        "expired": {"status": "expired"},
        "cancelled": {"status": "cancelled"},
        "paid": {"status": "confirmed", "channel": "online"},
    }
    orders = {}
    for n, (kind, fields) in enumerate(kinds.items()):
        on_event = kind == "paid"
        order = Order.objects.create(
            buyer=buyer,
            email="ada@example.com",
            confirmation_code=f"order-{n}",
            ticket_type="event" if on_event else "general",
            date=EVENT_DAY if on_event else DAY,
            event=event if on_event else None,
            slot=slot if kind == "confirmed" else None,
            total=Decimal("15"),
            language="de",
            **fields,
        )
        orders[kind] = order
        Ticket.objects.create(
            id=uuid.UUID(int=n + 1),
            buyer=buyer,
            order=order,
            category=adult,
            ticket_type="event" if on_event else "general",
            date=order.date,
            event=order.event,
            event_date=event_date if on_event else None,
            museum_day=None if on_event else day,
            slot=order.slot,
            price=Decimal("15"),
            confirmation_code=f"ticket-{n}",
            held=kind == "held",
            cancelled_at=None if kind in ("confirmed", "held", "paid") else dt.datetime.now(dt.UTC),
            checked_in_at=dt.datetime.now(dt.UTC) if kind == "confirmed" else None,
            checked_in_by=staff if kind == "confirmed" else None,
        )
    paid = orders["paid"]
    payment = old.get_model("orders", "Payment").objects.create(
        order=paid,
        provider="stripe",
        reference="pi_1",
        amount=Decimal("15"),
        currency="EUR",
        state="confirmed",
        taken_by=buyer,
    )
    cancelled_ticket = Ticket.objects.get(order=orders["cancelled"])
    old.get_model("orders", "Refund").objects.create(
        order=orders["cancelled"],
        ticket=cancelled_ticket,
        payment=payment,
        amount=Decimal("15"),
        state="done",
        source="buyer",
        cancelled_by=buyer,
    )
    old.get_model("orders", "TicketsPdf").objects.create(order=paid, pdf=b"%PDF", etag="e1")
    old.get_model("tickets", "TicketImage").objects.create(
        ticket=Ticket.objects.get(order=paid), png=b"\x89PNG", etag="i1"
    )
    old.get_model("audit", "AuditRecord").objects.create(
        action="check_in",
        object_type="tickets.ticket",
        object_id=str(uuid.UUID(int=1)),
        actor=staff,
        actor_name="desk1",
    )


def assert_the_sale_is_whole(apps):
    Order, Ticket = apps.get_model("orders", "Order"), apps.get_model("orders", "Ticket")
    Refund, Payment = apps.get_model("orders", "Refund"), apps.get_model("orders", "Payment")
    TicketImage = apps.get_model("orders", "TicketImage")
    TicketsPdf = apps.get_model("orders", "TicketsPdf")
    assert Order.objects.count() == 5 and Ticket.objects.count() == 5
    tickets = {t.confirmation_code: t for t in Ticket.objects.select_related("order", "category")}
    assert tickets["ticket-0"].checked_in_by.username == "desk1"
    assert tickets["ticket-0"].slot.entry_time == dt.time(10)
    assert tickets["ticket-4"].event_date.date == EVENT_DAY
    assert tickets["ticket-1"].held and tickets["ticket-1"].order.status == "held"
    assert {t.order.language for t in tickets.values()} == {"de"}
    assert Refund.objects.get().ticket == tickets["ticket-3"]
    assert Payment.objects.get().order == tickets["ticket-4"].order
    assert TicketImage.objects.get().ticket == tickets["ticket-4"]
    assert bytes(TicketsPdf.objects.get().pdf) == b"%PDF"


@pytest.mark.django_db(transaction=True)
def test_a_database_of_2b15825_migrates_forward_and_back_with_every_kind_of_sale(settings):
    before_the_sale()
    settings.MIGRATION_MODULES = LEGACY
    old = migrate(LEGACY_LEAVES)
    # The content types as 2b15825's post_migrate had made them: the ticket's in its own app.
    ContentType.objects.filter(app_label="orders", model__in=["ticket", "ticketimage"]).update(
        app_label="tickets"
    )
    a_sale_of_every_kind(old)

    settings.MIGRATION_MODULES = {}
    assert_the_sale_is_whole(migrate(None))
    assert ContentType.objects.get_for_model(Ticket).app_label == "orders"
    desk1 = Group.objects.get(name="Door (old)").user_set.get()
    assert desk1.has_perm("orders.check_in_ticket")
    assert AuditRecord.objects.get().object_type == "orders.ticket"

    squashed = migrate([SQUASHED])
    assert ContentType.objects.get(model="ticket").app_label == "tickets"
    assert AuditRecord.objects.get().object_type == "tickets.ticket"
    assert_the_sale_is_whole(squashed)

    latest = migrate(None)
    assert ContentType.objects.get(model="ticket").app_label == "orders"
    assert AuditRecord.objects.get().object_type == "orders.ticket"
    assert_the_sale_is_whole(latest)


@pytest.mark.django_db(transaction=True)
def test_a_database_the_tickets_migrations_had_only_begun_on_is_refused(settings):
    before_the_sale()
    settings.MIGRATION_MODULES = LEGACY
    migrate([("orders", "0008_order_language"), ("tickets", "0011_contact_data_on_the_order")])
    settings.MIGRATION_MODULES = {}
    with pytest.raises(RuntimeError, match="only partly applied"):
        migrate(None)
    # Finished by the release that has them all, it migrates.
    settings.MIGRATION_MODULES = LEGACY
    migrate(LEGACY_LEAVES)
    settings.MIGRATION_MODULES = {}
    migrate(None)
    assert ContentType.objects.get_for_model(Ticket).app_label == "orders"


@pytest.mark.django_db(transaction=True)
def test_orders_get_their_mailbox_and_keep_one_payment_in_progress():
    old = migrate([("orders", "0002_tickets_join_the_sale")])
    buyer = old.get_model("auth", "User").objects.create(username="ada")
    Order, Payment = old.get_model("orders", "Order"), old.get_model("orders", "Payment")
    started = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
    orders = [
        Order.objects.create(
            buyer=buyer,
            email=email,
            status="held",
            hold_expires_at=started,
            confirmation_code=f"order-{n}",
            ticket_type="general",
            date=DAY,
            total=Decimal("15"),
        )
        for n, email in enumerate(['"Ada+Tickets"@Example.com', "a.da@gmail.com"])
    ]
    for order, minutes in [(orders[0], 0), (orders[0], 5), (orders[1], 0)]:
        payment = Payment.objects.create(
            order=order,
            provider="stripe",
            amount=15,
            currency="EUR",
            state="pending",
            taken_by=buyer,
        )
        Payment.objects.filter(pk=payment.pk).update(
            created_at=started + dt.timedelta(minutes=minutes)
        )

    new = migrate(None)

    mailboxes = new.get_model("orders", "Order").objects.order_by("confirmation_code")
    assert list(mailboxes.values_list("mailbox", flat=True)) == ["ada@example.com", "ada@gmail.com"]
    states = new.get_model("orders", "Payment").objects.order_by(
        "order__confirmation_code", "created_at"
    )
    assert list(states.values_list("state", flat=True)) == ["failed", "pending", "pending"]
