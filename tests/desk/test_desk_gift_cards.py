"""The desk takes a split: a gift card first, the rest in cash or by card, shown as it is paid;
a card that holds too little for nothing sells nothing."""

from decimal import Decimal

from giftcards import services
from giftcards.models import GiftCard
from orders.models import Order, OrderStatus
from tests.desk.test_desk import sale
from tests.factories import MuseumDayFactory, partner_member
from tests.orders.conftest import later


def card_of(amount: str) -> GiftCard:
    buyer = partner_member(username="giver")
    return services.sell_gift_card(buyer=buyer, amount=Decimal(amount), email="g@example.com")


def test_a_gift_card_pays_first_and_cash_the_rest_with_its_change(desk):
    day = MuseumDayFactory(date=later())
    card = card_of("25")

    answer = desk.post(
        "/desk/sell/", sale(day.date, gift_card=card.code.lower(), tendered="20"), follow=True
    )

    page = answer.content.decode()
    order = Order.objects.exclude(ticket_type="giftcard").get()
    assert order.status == OrderStatus.CONFIRMED and order.total == Decimal("37.50")
    payments = list(order.payments.order_by("created_at"))
    assert [(p.provider, p.amount) for p in payments] == [("giftcard", 25), ("desk", 12.5)]
    assert "Gift card: €25.00 paid; left to pay: €12.50" in page
    assert "Change to give: €7.50" in page
    assert "Gift card €25.00 + Paid at the desk (cash) €12.50" in page
    assert card.balance() == 0


def test_a_card_holding_all_of_it_needs_no_cash(desk):
    day = MuseumDayFactory(date=later())
    card = card_of("50")

    desk.post("/desk/sell/", sale(day.date, gift_card=card.code, tendered=""), follow=True)

    order = Order.objects.exclude(ticket_type="giftcard").get()
    assert order.status == OrderStatus.CONFIRMED
    assert [p.provider for p in order.payments.all()] == ["giftcard"]
    assert card.balance() == Decimal("12.50")


def test_an_unknown_card_sells_nothing_and_says_why(desk):
    day = MuseumDayFactory(date=later())

    answer = desk.post("/desk/sell/", sale(day.date, gift_card="AAAA-BBBB-CCCC-DDDD"))

    assert answer.status_code == 200 and b"No gift card has this code." in answer.content
    assert not Order.objects.exists()


def test_the_desk_sells_a_gift_card_paid_in_cash_and_shows_its_code(desk):
    answer = desk.post(
        "/desk/gift-cards/sell/",
        {"amount": "40", "payment": "cash", "tendered": "50", "email": "gift@example.com"},
        follow=True,
    )

    card = GiftCard.objects.get()
    page = answer.content.decode()
    assert card.balance() == 40 and card.order.status == OrderStatus.CONFIRMED
    assert card.code in page and "Change to give: €10.00" in page
    assert [(p.provider, p.info) for p in card.order.payments.all()] == [("desk", "cash")]


def test_a_gift_card_out_of_range_sells_nothing(desk):
    answer = desk.post("/desk/gift-cards/sell/", {"amount": "1000", "payment": "card"})

    assert answer.status_code == 400 and not GiftCard.objects.exists()
