"""Confirmation codes read as people type them: the desk's search and the door share read_code."""

import pytest

from orders.codes import TypedCode, read_code

BOTH = TypedCode(
    ticket_codes=("ticket-general-01x2y3-z4910", "ticket-event-01x2y3-z4910"),
    order_code="order-01x2y3-z4910",
    member_code="member-01x2y3-z4910",
)


@pytest.mark.parametrize(
    "typed",
    [
        "01x2y3-z4910",
        "  01X2Y3-Z4910 ",
        "01x2y3 z4910",
        "01x2y3z4910",
        "O1X2Y3 Z49IO",  # O for 0, I for 1
        "0lx2y3-z491o",  # l for 1, o for 0
        "0 1 x 2 y 3 z 4 9 1 0",
    ],
)
def test_a_code_without_its_prefix_may_be_a_ticket_an_order_or_a_membership(typed):
    assert read_code(typed) == BOTH


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("ORDER 01X2Y3 Z4910", TypedCode(order_code="order-01x2y3-z4910")),
        ("order-O1x2y3-z49lO", TypedCode(order_code="order-01x2y3-z4910")),
        ("Ticket General 01x2y3z4910", TypedCode(ticket_codes=("ticket-general-01x2y3-z4910",))),
        ("ticket-event-01x2y3-z4910", TypedCode(ticket_codes=("ticket-event-01x2y3-z4910",))),
        ("ticket 01x2y3-z4910", TypedCode(ticket_codes=BOTH.ticket_codes)),
        ("Member 01X2Y3 Z4910", TypedCode(member_code="member-01x2y3-z4910")),
        ("member-01x2y3-z4910", TypedCode(member_code="member-01x2y3-z4910")),
    ],
)
def test_a_prefix_says_what_the_code_is(typed, expected):
    assert read_code(typed) == expected


@pytest.mark.parametrize("typed", ["", "not a ticket", "01x2y3-z491", "01x2y3-z4910u", "Ada"])
def test_text_not_shaped_like_a_code_is_none(typed):
    assert read_code(typed) is None


def test_a_code_typed_whole_with_letters_outside_the_alphabet_is_looked_up_as_it_is():
    assert read_code("ticket-general-uuuuuu-uuuuu") == TypedCode(
        ticket_codes=("ticket-general-uuuuuu-uuuuu",)
    )
