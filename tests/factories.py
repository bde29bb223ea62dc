import datetime as dt
from decimal import Decimal

import factory
from django.contrib.auth.models import User
from django.utils import timezone

from events.models import EventDate, SpecialEvent
from hours.models import MuseumDay
from museum.accounts import door_group, partner_group, staff_group
from orders.codes import new_confirmation_code
from orders.models import (
    Membership,
    MembershipStatus,
    MembershipType,
    Order,
    OrderStatus,
    Ticket,
)
from orders.services.limits import mailbox_of

PASSWORD = "correct horse battery staple"


def days_from_today(days: int) -> dt.date:
    """A date in the museum's time zone, `days` after its today."""
    return timezone.localdate() + dt.timedelta(days=days)


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        django_get_or_create = ["username"]

    username = factory.Sequence(lambda n: f"visitor{n}")
    email = factory.LazyAttribute(lambda user: f"{user.username}@example.com")
    password = factory.django.Password(PASSWORD)


def staff_member(**kwargs) -> User:
    """A member of the Museum staff group, as `create_account --staff` makes."""
    user = UserFactory(is_staff=True, **kwargs)
    user.groups.add(staff_group())
    return user


def partner_member(**kwargs) -> User:
    """A sales partner, as `create_account --partner` makes: sells on account."""
    user = UserFactory(**kwargs)
    user.groups.add(partner_group())
    return user


def door_member(**kwargs) -> User:
    """A member of the Door staff group, as `create_account --door` makes."""
    user = UserFactory(is_staff=True, **kwargs)
    user.groups.add(door_group())
    return user


class SpecialEventFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = SpecialEvent
        skip_postgeneration_save = True

    name = factory.Sequence(lambda n: f"Event {n:04d}")
    location = "Great Hall"
    description = "A special event."
    price = Decimal("12.50")

    @factory.post_generation
    def dates(event, create, extracted, **kwargs):
        for day in extracted or [dt.date(2030, 1, 1)]:
            EventDate.objects.create(event=event, date=day)


class MuseumDayFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = MuseumDay
        django_get_or_create = ["date"]

    date = dt.date(2030, 1, 1)
    opens_at = dt.time(9)
    # Open until midnight: a test that sells or admits for today does so at any hour it runs
    # (today's sale and the door end at closing). Tests of closing set their own hours.
    closes_at = dt.time.max


class OrderFactory(factory.django.DjangoModelFactory):
    """An order made directly, past the sale's rules: the one a TicketFactory ticket belongs to."""

    class Meta:
        model = Order

    buyer = factory.SubFactory(UserFactory)
    email = "ada@example.com"
    mailbox = factory.LazyAttribute(lambda order: mailbox_of(order.email))
    status = OrderStatus.CONFIRMED
    confirmation_code = factory.Sequence(lambda n: f"order-{n:06d}-00000")
    ticket_type = "general"
    date = dt.date(2030, 1, 1)
    total = Decimal("15")
    confirmed_at = factory.LazyFunction(timezone.now)


class TicketFactory(factory.django.DjangoModelFactory):
    """A general-entry ticket made directly, past the purchase rules, for tests of what follows;
    in an order of one, which keeps the buyer's `email` and `phone`."""

    class Meta:
        model = Ticket

    class Params:
        email = "ada@example.com"
        phone = ""

    buyer = factory.SubFactory(UserFactory)
    ticket_type = "general"
    date = dt.date(2030, 1, 1)
    event = None
    # The row that counts the ticket, as a purchase sets it (made if missing, its count not
    # moved: these tickets are made past the rules).
    museum_day = factory.LazyAttribute(
        lambda ticket: (
            MuseumDayFactory(date=ticket.date) if ticket.ticket_type == "general" else None
        )
    )
    event_date = factory.LazyAttribute(
        lambda ticket: (
            EventDate.objects.get_or_create(event=ticket.event, date=ticket.date)[0]
            if ticket.ticket_type == "event"
            else None
        )
    )
    price = Decimal("15")
    confirmation_code = factory.Sequence(lambda n: f"ticket-general-{n:06d}-00000")
    order = factory.SubFactory(
        OrderFactory,
        buyer=factory.SelfAttribute("..buyer"),
        email=factory.SelfAttribute("..email"),
        phone=factory.SelfAttribute("..phone"),
        ticket_type=factory.SelfAttribute("..ticket_type"),
        date=factory.SelfAttribute("..date"),
        event=factory.SelfAttribute("..event"),
        total=factory.SelfAttribute("..price"),
    )


class MembershipTypeFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = MembershipType
        django_get_or_create = ["code"]

    code = "family"
    name_en = "Family"
    name_fr = "Famille"
    price = Decimal("120")
    admits = 6


class MembershipFactory(factory.django.DjangoModelFactory):
    """A membership made directly, past the sale's rules: active for a year from today."""

    class Meta:
        model = Membership

    membership_type = factory.SubFactory(MembershipTypeFactory)
    buyer = factory.SubFactory(UserFactory)
    holder_name = "Ada Lovelace"
    email = "ada@example.com"
    language = "en"
    status = MembershipStatus.ACTIVE
    valid_from = factory.LazyFunction(timezone.localdate)
    valid_until = factory.LazyFunction(lambda: days_from_today(364))
    card_code = factory.LazyFunction(lambda: new_confirmation_code("member"))
    activated_at = factory.LazyFunction(timezone.now)
