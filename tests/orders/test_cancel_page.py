"""The order's cancel page, opened by the signed link of its email and PDF: the order's tickets
with what each brings back, cancelled through the API's service and rules (the deadline, no
ticket checked in), in the order's language, for that order alone."""

import datetime as dt

import pytest
from django.core import mail
from django.test import Client
from django.utils import timezone

from hours.models import MuseumDay
from orders import tokens
from orders.models import Order, OrderStatus, Refund
from orders.services.payments import start_payment
from orders.services.sale import place_order
from tests.conftest import run_task_worker
from tests.factories import MuseumDayFactory, partner_member, staff_member
from tests.orders.conftest import later


def an_order(day: dt.date, *lines, buyer=None, **extra) -> Order:
    if not MuseumDay.objects.filter(date=day).exists():
        MuseumDayFactory(date=day)
    return place_order(
        buyer=buyer or partner_member(),
        email="family@example.com",
        ticket_type="general",
        ticket_date=day,
        lines=[{"category": code, "quantity": n} for code, n in lines],
        **extra,
    )


def page_of(order: Order) -> str:
    return f"/orders/cancel/{tokens.sign_cancel_link(order_id=order.pk)}"


@pytest.fixture
def browser():
    """A visitor's browser, signed in to nothing, with Django's CSRF checks on."""
    return Client(enforce_csrf_checks=True)


def post(browser: Client, url: str, **form):
    """A form posted as the browser does: with the CSRF token its page carried."""
    browser.get(url)
    return browser.post(url, {"csrfmiddlewaretoken": browser.cookies["csrftoken"].value, **form})


def test_the_page_lists_the_tickets_with_what_each_brings_back(browser):
    order = an_order(later(), ("adult", 2), ("infant", 1))

    page = browser.get(page_of(order))

    text = page.content.decode()
    assert page.status_code == 200 and order.confirmation_code in text
    assert "no-store" in page["Cache-Control"]  # its codes admit at the door
    assert text.count("Cancel this ticket (€15.00 back)") == 2
    assert "Cancel this ticket</button>" in text  # the infant's: nothing to promise back
    assert "Cancel the whole order (€30.00 back)" in text


@pytest.mark.django_db(transaction=True)  # the task worker sends the email
def test_cancelling_one_ticket_refunds_it_and_mails_the_order_as_it_is_now(browser):
    order = an_order(later(), ("adult", 2))
    ticket = order.sold_tickets[0]

    answer = post(browser, page_of(order), ticket=str(ticket.pk))
    run_task_worker()

    assert answer.status_code == 200 and "Cancelled." in answer.content.decode()
    ticket.refresh_from_db()
    assert ticket.cancelled_at is not None and ticket.cancelled_by == order.buyer
    assert Refund.objects.get(ticket=ticket).source == "buyer"
    changed = mail.outbox[-1]
    assert changed.subject.startswith(f"Your order {order.confirmation_code} has changed")
    assert "Paid back: €15.00\nStill valid: €15.00\n" in changed.body


def test_the_whole_order_is_cancelled_in_one_go(browser):
    order = an_order(later(), ("adult", 1), ("child", 1))

    post(browser, page_of(order))

    assert Order.objects.get(pk=order.pk).status == OrderStatus.CANCELLED
    assert Refund.objects.filter(order=order).count() == 2


def test_the_page_speaks_the_orders_language(browser):
    order = an_order(later(), ("adult", 2), language="de")

    text = browser.get(page_of(order)).content.decode()

    assert '<html lang="de">' in text and "Erwachsener" in text


def test_past_the_deadline_nothing_is_offered_and_nothing_cancelled(browser):
    order = an_order(timezone.localdate(), ("adult", 1))  # its deadline was yesterday

    text = browser.get(page_of(order)).content.decode()
    refused = Client().post(page_of(order))  # from the page as it was before the deadline

    assert "can no longer be cancelled online" in text and "<button" not in text
    assert refused.status_code == 409
    assert Order.objects.get(pk=order.pk).status == OrderStatus.CONFIRMED


def test_a_desk_sale_is_held_to_the_buyers_rules_too(browser):
    """The desk's staff may cancel any order at any time; their sale's link may not."""
    clerk = staff_member()
    order = an_order(timezone.localdate(), ("adult", 1), buyer=clerk)
    start_payment(order_id=order.pk, by=clerk, provider_name="desk", method="cash")

    assert Client().post(page_of(order)).status_code == 409
    assert Order.objects.get(pk=order.pk).status == OrderStatus.CONFIRMED


def test_a_checked_in_ticket_is_not_cancelled(browser):
    order = an_order(later(), ("adult", 1))
    ticket = order.sold_tickets[0]
    ticket.checked_in_at = timezone.now()
    ticket.save(update_fields=["checked_in_at"])

    refused = post(browser, page_of(order), ticket=str(ticket.pk))

    assert refused.status_code == 409
    assert Order.objects.get(pk=order.pk).status == OrderStatus.CONFIRMED


def test_a_link_opens_its_own_order_alone(browser):
    order = an_order(later(), ("adult", 1))
    other = an_order(later(), ("adult", 1))
    forged = page_of(order).replace(order.pk.hex, other.pk.hex)

    assert browser.get(forged).status_code == 404
    assert browser.get("/orders/cancel/not-a-token").status_code == 404
    assert post(browser, page_of(order), ticket=str(other.sold_tickets[0].pk)).status_code == 404
    assert Order.objects.get(pk=other.pk).status == OrderStatus.CONFIRMED


def test_the_page_is_limited_per_address_like_the_apis_anonymous_requests(browser, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {
            **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
            "anon": "2/min",
        },
    }
    url = page_of(an_order(later(), ("adult", 1)))

    answers = [browser.get(url).status_code for _ in range(3)]

    assert answers == [200, 200, 429]


def test_a_post_without_the_csrf_token_is_refused(browser):
    order = an_order(later(), ("adult", 1))

    assert browser.post(page_of(order)).status_code == 403
    assert Order.objects.get(pk=order.pk).status == OrderStatus.CONFIRMED
