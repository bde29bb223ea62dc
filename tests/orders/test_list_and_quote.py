"""What a shop builds on: its orders found and listed, what a confirmation page shows, and a
price before ordering, worked out by the sale's own code."""

import datetime as dt
from decimal import Decimal

import pytest

from orders.models import Order, OrderStatus
from tests.conftest import assert_problem, client_for
from tests.factories import MuseumDayFactory, SpecialEventFactory, UserFactory
from tests.orders.conftest import later, order_body

ORDERS = "/v1.1/orders"


def place(client, body):
    answer = client.post(ORDERS, body, format="json")
    assert answer.status_code == 201, answer.content
    return answer.json()


def test_an_order_says_what_a_confirmation_page_shows(visitor_client):
    event = SpecialEventFactory(name="Night tour", price=Decimal("20"), dates=[later()])
    body = order_body(later(), ("adult", 1), ticketType="event", eventId=str(event.pk))

    order = place(visitor_client, body)

    assert order["eventName"] == "Night tour" and order["email"] == "family@example.com"
    created = dt.datetime.fromisoformat(order["createdAt"])
    assert created == Order.objects.get().created_at
    deadline = dt.datetime.fromisoformat(order["cancellableUntil"])
    assert deadline.date() == later() - dt.timedelta(days=1)  # 24 hours before the day begins
    assert order["pdfUrl"] == f"{ORDERS}/{order['orderId']}/tickets.pdf"
    [ticket] = order["tickets"]
    assert ticket["status"] == "valid"
    assert ticket["imageUrl"] == f"/v1.1/tickets/{ticket['ticketId']}/qr"
    assert visitor_client.get(ticket["imageUrl"]).status_code == 200
    assert visitor_client.get(order["pdfUrl"]).status_code == 200


def test_the_list_shows_the_accounts_own_orders_newest_first_and_staff_all(
    visitor_client, staff_client
):
    day = MuseumDayFactory(date=later())
    first = place(visitor_client, order_body(day.date))
    second = place(visitor_client, order_body(day.date, hold=True))
    theirs = place(client_for(UserFactory(username="other")), order_body(day.date))

    mine = visitor_client.get(ORDERS)
    everyone = staff_client.get(ORDERS)

    assert [o["orderId"] for o in mine.json()] == [second["orderId"], first["orderId"]]
    assert mine["X-Total-Count"] == "2"
    assert {o["orderId"] for o in everyone.json()} == {
        first["orderId"],
        second["orderId"],
        theirs["orderId"],
    }


def test_the_list_filters_by_visit_dates_status_and_any_code(visitor_client):
    soon, later_on = MuseumDayFactory(date=later()), MuseumDayFactory(date=later(10))
    held = place(visitor_client, order_body(soon.date, ("adult", 2), hold=True))
    sold = place(visitor_client, order_body(later_on.date))
    ticket_code = held["tickets"][1]["confirmationCode"]

    def listed(**query):
        answer = visitor_client.get(ORDERS, query)
        assert answer.status_code == 200, answer.content
        return [o["orderId"] for o in answer.json()]

    assert listed(startDate=later_on.date.isoformat()) == [sold["orderId"]]
    assert listed(endDate=soon.date.isoformat()) == [held["orderId"]]
    assert listed(status=OrderStatus.HELD) == [held["orderId"]]
    assert listed(confirmationCode=ticket_code) == [held["orderId"]]
    assert listed(confirmationCode=sold["confirmationCode"]) == [sold["orderId"]]
    assert listed(confirmationCode="order-nobody-00000") == []


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"status": "paid"}, "status"),
        ({"startDate": "tomorrow"}, "startDate"),
        ({"startDate": "2030-02-02", "endDate": "2030-02-01"}, "endDate"),
        ({"limit": 31}, "limit"),
        ({"buyer": "someone"}, "buyer"),
    ],
)
def test_a_bad_filter_is_a_400_naming_it(visitor_client, query, field):
    assert field in assert_problem(visitor_client.get(ORDERS, query), 400)["errors"]


def test_a_page_of_orders_costs_the_same_few_queries_however_many_tickets(
    visitor_client, django_assert_max_num_queries
):
    day = MuseumDayFactory(date=later())
    for _ in range(5):
        place(visitor_client, order_body(day.date, ("adult", 2), ("child", 2)))

    # The account and its permissions (whether it sees every order), the count, the page with
    # its slots and events, its tickets with theirs, its refunds.
    with django_assert_max_num_queries(7):
        assert len(visitor_client.get(ORDERS).json()) == 5


def test_prices_per_category_for_general_entry_and_for_an_event(visitor_client):
    MuseumDayFactory(date=later())
    event = SpecialEventFactory(price=Decimal("9.99"), dates=[later()])

    general = visitor_client.get("/v1.1/prices", {"ticketDate": later().isoformat()}).json()
    at_event = visitor_client.get(
        "/v1.1/prices", {"ticketDate": later().isoformat(), "eventId": str(event.pk)}
    ).json()

    assert {p["category"]: p["price"] for p in general}["child"] == 7.5
    # A child pays half of 9.99: 4.995, rounded half up to the cent.
    assert {p["category"]: p["price"] for p in at_event}["child"] == 5.0
    assert {p["currency"] for p in at_event} == {"EUR"}


def test_prices_refuse_a_past_day_an_unknown_event_and_a_day_it_does_not_run(visitor_client):
    event = SpecialEventFactory(dates=[later()])
    url = "/v1.1/prices"
    yesterday = (later() - dt.timedelta(days=10)).isoformat()

    assert assert_problem(visitor_client.get(url, {"ticketDate": yesterday}), 400)
    unknown = {"ticketDate": later().isoformat(), "eventId": "7b9a1f6e-0000-4000-8000-000000000000"}
    assert assert_problem(visitor_client.get(url, unknown), 404)["code"] == "unknown_event"
    other_day = {"ticketDate": later(5).isoformat(), "eventId": str(event.pk)}
    assert assert_problem(visitor_client.get(url, other_day), 400)["code"] == "event_not_on_date"


def test_a_dry_run_quotes_what_the_order_would_cost_and_takes_nothing(visitor_client):
    day = MuseumDayFactory(date=later(), capacity=10)
    body = order_body(day.date, ("adult", 2), ("child", 1), dryRun=True)

    quote = visitor_client.post(ORDERS, body, format="json")

    assert quote.status_code == 200
    assert quote.json() == {
        "lines": [
            {"category": "adult", "quantity": 2, "price": 15.0, "discount": 0},
            {"category": "child", "quantity": 1, "price": 7.5, "discount": 0},
        ],
        "total": 37.5,
        "taxes": [{"rate": 0, "net": 37.5, "tax": 0, "gross": 37.5}],
        "currency": "EUR",
    }
    assert not Order.objects.exists()
    day.refresh_from_db()
    assert day.sold == 0
    placed = place(visitor_client, order_body(day.date, ("adult", 2), ("child", 1)))
    assert placed["total"] == quote.json()["total"]


def test_a_201_says_where_what_it_made_is_read_and_a_replay_says_it_again(
    visitor_client, staff_client
):
    day = MuseumDayFactory(date=later())
    ticket_body = {"ticketType": "general", "ticketDate": day.date.isoformat(), "email": "a@b.org"}

    order = visitor_client.post(ORDERS, order_body(day.date), format="json")
    bought = visitor_client.post(
        "/v1.1/tickets", ticket_body, format="json", HTTP_IDEMPOTENCY_KEY="once"
    )
    replayed = visitor_client.post(
        "/v1.1/tickets", ticket_body, format="json", HTTP_IDEMPOTENCY_KEY="once"
    )
    event = staff_client.post(
        "/v1.1/special-events",
        {
            "name": "Tour",
            "location": "Hall",
            "eventDescription": "A tour.",
            "dates": [later().isoformat()],
            "price": 5,
        },
        format="json",
    )

    assert order["Location"] == f"{ORDERS}/{order.json()['orderId']}"
    assert visitor_client.get(order["Location"]).json()["orderId"] == order.json()["orderId"]
    ticket_order = visitor_client.get(bought["Location"]).json()
    assert [t["ticketId"] for t in ticket_order["tickets"]] == [bought.json()["ticketId"]]
    assert replayed["Idempotent-Replayed"] == "true"
    assert replayed["Location"] == bought["Location"]
    assert event["Location"] == f"/v1.1/special-events/{event.json()['eventId']}"
