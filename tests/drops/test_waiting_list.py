"""A drop's waiting list: joined by those the line told it is sold out, offered the places that
come back in the order it was joined, each offer a voucher that keeps its places for a few hours,
buys them without an admission (and no more), and goes to the next entry once it runs out."""

import datetime as dt

import pytest
from django.core import mail
from django.utils import timezone

from drops import services, waiting_list
from drops.models import OfferEmail, WaitingEntry
from hours.models import EntrySlot
from orders.models import Voucher
from tests.conftest import assert_problem, client_for, run_task_worker
from tests.drops.conftest import buyers, make_drop
from tests.factories import partner_member

pytestmark = pytest.mark.django_db

TEN, HALF_PAST = dt.time(10), dt.time(10, 30)


def order_body(day, quantity: int, entry_time: dt.time, **extra) -> dict:
    return {
        "ticketType": "general",
        "ticketDate": day.date.isoformat(),
        "entryTime": entry_time.strftime("%H:%M"),
        "email": "buyer@example.com",
        "lines": [{"category": "adult", "quantity": quantity}],
        **extra,
    }


def sold_out(day, orders: dict[dt.time, list[int]]) -> tuple[list[str], object]:
    """The day's places sold by a sales partner before the drop, in orders of these sizes per
    slot (every slot's 4 places), then the drop, whose line is told it is sold out; the orders'
    ids in the order given."""
    partner = client_for(partner_member(username="partner"))
    ids = []
    for entry_time, sizes in orders.items():
        for size in sizes:
            answer = partner.post("/v1.1/orders", order_body(day, size, entry_time), format="json")
            assert answer.status_code == 201, answer.content
            ids.append(answer.json()["orderId"])
    drop = make_drop(day, opens_in=-dt.timedelta(minutes=1))
    # Whoever comes now is told the places are gone.
    assert join_line(buyers(1, "late")[0], drop).json()["state"] == "sold_out"
    return ids, drop


def join_line(user, drop):
    return client_for(user).post(f"/v1.1/drops/{drop.pk}/queue", {}, format="json")


def join_list(user, drop, quantity: int = 1, **headers):
    client = client_for(user)
    path = f"/v1.1/drops/{drop.pk}/waiting-list"
    return client.post(path, {"quantity": quantity}, format="json", **headers)


def on_the_list(drop, people, quantities=None) -> list[WaitingEntry]:
    for person, quantity in zip(people, quantities or [1] * len(people), strict=True):
        assert join_line(person, drop).json()["state"] == "sold_out"
        answer = join_list(person, drop, quantity)
        assert answer.status_code == 201, answer.content
    return list(WaitingEntry.objects.order_by("joined_at", "pk"))


def cancel(order_id: str, capture) -> None:
    """The partner cancels the order; once it commits its places are given back to the drop."""
    partner = client_for(partner_member(username="partner"))
    with capture(execute=True):
        answer = partner.post(f"/v1.1/orders/{order_id}/cancel", {}, format="json")
    assert answer.status_code == 200, answer.content


def offered(entries) -> list[int | None]:
    """Each entry's offer: the places its voucher keeps, or None."""
    return [
        entry.voucher.max_uses if entry.voucher else None
        for entry in WaitingEntry.objects.select_related("voucher")
        .filter(pk__in=[e.pk for e in entries])
        .order_by("joined_at", "pk")
    ]


def test_places_that_come_back_are_offered_in_the_order_the_list_was_joined(
    drops_redis, drop_day, django_capture_on_commit_callbacks
):
    orders, drop = sold_out(drop_day, {TEN: [1, 1, 2], HALF_PAST: [4]})
    entries = on_the_list(drop, buyers(3))

    cancel(orders[0], django_capture_on_commit_callbacks)
    assert offered(entries) == [1, None, None]
    cancel(orders[1], django_capture_on_commit_callbacks)
    assert offered(entries) == [1, 1, None]
    cancel(orders[3], django_capture_on_commit_callbacks)  # four at half past ten
    assert offered(entries) == [1, 1, 1]

    first = WaitingEntry.objects.select_related("voucher__keep_slot").get(pk=entries[0].pk)
    voucher = first.voucher
    assert voucher.keep_slot.entry_time == TEN and voucher.tag == f"drop-{drop.pk}"
    assert voucher.channels == ["online"] and voucher.value == 0
    assert (voucher.visit_from, voucher.visit_until) == (drop_day.date, drop_day.date)
    expected = first.offered_at + dt.timedelta(hours=4)  # MUSEUM_DROP_OFFER_HOURS
    assert voucher.valid_until == expected
    # The three places the offers keep are not the public's; three more came back with them.
    assert services.places_left(drop) == 3


def test_an_entry_is_not_offered_more_places_than_there_are_nor_passed_over(
    drops_redis, drop_day, django_capture_on_commit_callbacks
):
    orders, drop = sold_out(drop_day, {TEN: [1, 1, 2], HALF_PAST: [4]})
    entries = on_the_list(drop, buyers(2), quantities=[2, 1])

    cancel(orders[0], django_capture_on_commit_callbacks)
    # One place: not enough for the first entry's two, and the second waits behind it.
    assert offered(entries) == [None, None]
    cancel(orders[1], django_capture_on_commit_callbacks)
    assert offered(entries) == [2, None]
    assert Voucher.objects.get().keep_slot.entry_time == TEN


def test_an_offer_that_runs_out_unused_goes_to_the_next_entry(
    drops_redis, drop_day, django_capture_on_commit_callbacks
):
    orders, drop = sold_out(drop_day, {TEN: [1, 1, 2], HALF_PAST: [4]})
    entries = on_the_list(drop, buyers(2))
    cancel(orders[0], django_capture_on_commit_callbacks)
    assert offered(entries) == [1, None]
    assert waiting_list.tend() == 0  # the place is kept for the first

    # Its hours pass unused (the database's clock reads when a voucher runs out, not the
    # test's: its end is moved to the past instead).
    Voucher.objects.update(valid_until=timezone.now() - dt.timedelta(seconds=1))
    assert waiting_list.tend() == 1

    assert offered(entries) == [1, 1]
    assert WaitingEntry.objects.get(pk=entries[1].pk).voucher.keep_slot.entry_time == TEN


def test_the_offer_buys_its_places_without_an_admission_and_no_more(
    drops_redis, drop_day, django_capture_on_commit_callbacks
):
    orders, drop = sold_out(drop_day, {TEN: [1, 1, 2], HALF_PAST: [4]})
    holder = buyers(1)[0]
    on_the_list(drop, [holder], quantities=[2])
    cancel(orders[2], django_capture_on_commit_callbacks)  # two at ten: offered
    cancel(orders[0], django_capture_on_commit_callbacks)  # one more at ten: the list is done
    entry = client_for(holder).get(f"/v1.1/drops/{drop.pk}/waiting-list").json()
    code = entry["offer"]["voucherCode"]
    assert entry["offer"]["quantity"] == 2
    buy = client_for(holder).post

    # Without the code the waiting room stands in front of the sale, for the holder too.
    plain = buy("/v1.1/orders", order_body(drop_day, 1, TEN), format="json")
    assert assert_problem(plain, 403)["code"] == "queue_token_required"
    # The code is the holder's alone, as an admission is.
    lent = client_for(buyers(1, "friend")[0]).post(
        "/v1.1/orders", order_body(drop_day, 2, TEN, voucher=code), format="json"
    )
    assert assert_problem(lent, 403)["code"] == "queue_token_required"
    # A place is free beside the two it keeps, but the code buys its own two alone.
    three = buy("/v1.1/orders", order_body(drop_day, 3, TEN, voucher=code), format="json")
    assert assert_problem(three, 409)["code"] == "voucher_used_up"
    bought = buy("/v1.1/orders", order_body(drop_day, 2, TEN, voucher=code), format="json")
    assert bought.status_code == 201, bought.content
    assert bought.json()["total"] == 30  # nothing off: it only lets its holder buy
    again = buy("/v1.1/orders", order_body(drop_day, 1, TEN, voucher=code), format="json")
    assert assert_problem(again, 409)["code"] == "voucher_used_up"
    assert EntrySlot.objects.get(day=drop_day, entry_time=TEN).sold == 3


def test_joining_needs_the_line_to_have_said_sold_out(drops_redis, drop_day):
    drop = make_drop(drop_day, opens_in=-dt.timedelta(minutes=1))
    in_line, stranger = buyers(2)
    assert join_line(in_line, drop).json()["state"] in {"waiting", "admitted"}

    for person in (in_line, stranger):
        assert assert_problem(join_list(person, drop), 409)["code"] == "not_sold_out"
    missing = client_for(stranger).get(f"/v1.1/drops/{drop.pk}/waiting-list")
    assert assert_problem(missing, 404)["code"] == "not_on_waiting_list"
    assert not WaitingEntry.objects.exists()


def test_one_entry_per_account_with_its_place_language_and_address(drops_redis, drop_day):
    _, drop = sold_out(drop_day, {TEN: [4], HALF_PAST: [4]})
    first, second = buyers(2)
    on_the_list(drop, [first])
    assert join_line(second, drop).json()["state"] == "sold_out"

    made = join_list(second, drop, 3, HTTP_ACCEPT_LANGUAGE="de")
    again = join_list(second, drop, 1)
    too_many = join_list(buyers(1, "greedy")[0], drop, drop.max_tickets + 1)

    assert made.status_code == 201 and again.status_code == 200
    assert again.json() == made.json()
    assert made.json()["position"] == 2 and made.json()["quantity"] == 3
    assert made.json()["offer"] is None
    entry = WaitingEntry.objects.get(account=second)
    assert (entry.email, entry.language) == (second.email, "de")
    assert_problem(too_many, 400)
    assert WaitingEntry.objects.count() == 2


@pytest.mark.django_db(transaction=True)
def test_the_offer_is_mailed_once_in_the_entrys_language(drops_redis, drop_day):
    orders, drop = sold_out(drop_day, {TEN: [1, 3], HALF_PAST: [4]})
    person = buyers(1)[0]
    assert join_line(person, drop).json()["state"] == "sold_out"
    assert join_list(person, drop, 1, HTTP_ACCEPT_LANGUAGE="de").status_code == 201

    partner = client_for(partner_member(username="partner"))
    assert partner.post(f"/v1.1/orders/{orders[0]}/cancel", {}, format="json").status_code == 200
    voucher = Voucher.objects.get()
    run_task_worker()
    run_task_worker()

    # The partner's orders' emails aside, one to the entry's address.
    [message] = [message for message in mail.outbox if message.to == [person.email]]
    assert voucher.code in message.body
    until = timezone.localtime(voucher.valid_until)
    assert f"{until.day}. " in message.body  # German dates: "Mittwoch, 12. Juni 2030"
    assert "Gültig bis" in message.alternatives[0][0]
    assert OfferEmail.objects.get().sent_at is not None


def test_a_waiting_list_is_forgotten_a_retention_period_after_its_drop(
    drops_redis, drop_day, settings
):
    from drops.waiting_list import forget_waiting_lists

    settings.MUSEUM_PERSONAL_DATA_RETENTION_DAYS = 30
    drop = make_drop(drop_day, opens_in=-dt.timedelta(minutes=1))
    WaitingEntry.objects.create(
        drop=drop, account=buyers(1)[0], email="a@example.com", language="de", quantity=1
    )
    after = drop.closes_at + dt.timedelta(days=30)
    assert forget_waiting_lists(now=after - dt.timedelta(minutes=1)) == 0
    assert forget_waiting_lists(now=after + dt.timedelta(minutes=1)) == 1
    assert not WaitingEntry.objects.exists()
