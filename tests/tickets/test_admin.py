import datetime as dt

import pytest
from django.utils import timezone

from orders.models import Ticket
from tests.factories import TicketFactory, UserFactory

TICKETS = "/admin/orders/ticket/"


def ticket(code: str, *, days: int = 0, **fields) -> Ticket:
    return TicketFactory(
        date=timezone.localdate() + dt.timedelta(days=days),
        email=f"{code}@example.com",
        confirmation_code=f"ticket-general-{code}",
        **fields,
    )


def shown(client, **query) -> set[str]:
    response = client.get(TICKETS, query)
    return {
        t.confirmation_code.removeprefix("ticket-general-")
        for t in response.context["cl"].result_list
    }


@pytest.fixture
def tickets(db):
    ticket("valid")
    ticket("entered", checked_in_at=timezone.now(), checked_in_by=UserFactory(username="ruth"))
    ticket("cancelled", cancelled_at=timezone.now())
    ticket("tomorrow", days=1)
    ticket("yesterday", days=-1)


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ("valid", {"valid", "tomorrow", "yesterday"}),
        ("checked_in", {"entered"}),
        ("cancelled", {"cancelled"}),
    ],
)
def test_the_status_filter_tells_valid_checked_in_and_cancelled_apart(
    desk_client, tickets, status, expected
):
    assert shown(desk_client, status=status) == expected


@pytest.mark.parametrize(
    ("when", "expected"),
    [
        ("today", {"valid", "entered", "cancelled"}),
        ("upcoming", {"tomorrow"}),
        ("past", {"yesterday"}),
    ],
)
def test_the_date_filter_counts_from_the_museums_today(desk_client, tickets, when, expected):
    assert shown(desk_client, when=when) == expected


def test_the_list_says_who_checked_a_ticket_in_and_when(desk_client, tickets):
    page = desk_client.get(TICKETS, {"status": "checked_in"}).content.decode()

    assert '<td class="field-status">Checked in</td>' in page
    assert '<td class="field-checked_in_by nowrap">ruth</td>' in page


def test_tickets_cannot_be_deleted_in_the_admin(desk_client, tickets):
    entered = Ticket.objects.get(confirmation_code="ticket-general-entered")

    assert "delete_selected" not in desk_client.get(TICKETS).content.decode()
    assert desk_client.get(f"{TICKETS}{entered.pk}/delete/").status_code == 403


def test_the_list_costs_a_few_queries(desk_client, tickets, django_assert_max_num_queries):
    with django_assert_max_num_queries(9):
        assert desk_client.get(TICKETS).status_code == 200


@pytest.fixture
def adas_ticket(db):
    return TicketFactory(confirmation_code="ticket-general-abcdef-12345")


def test_staff_find_a_ticket_by_code_or_email_and_see_its_image(admin_client, adas_ticket):
    by_code = admin_client.get("/admin/orders/ticket/", {"q": "abcdef-12345"})
    by_email = admin_client.get("/admin/orders/ticket/", {"q": "ada@example"})
    page = admin_client.get(f"/admin/orders/ticket/{adas_ticket.pk}/change/")

    assert adas_ticket.confirmation_code in by_code.content.decode()
    assert adas_ticket.confirmation_code in by_email.content.decode()
    assert b"data:image/png;base64," in page.content
