"""The ticket image selector: one access rule, whether the image is drawn, kept, or neither."""

import uuid

import pytest

from museum.exceptions import NotFound
from orders.models import TicketImage
from tests.factories import TicketFactory, UserFactory, staff_member
from tickets.selectors import viewable_ticket_image


@pytest.fixture(params=["not drawn", "drawn", "drawn and kept"])
def ticket(request, db, settings):
    settings.MUSEUM_RESPONSE_CACHE_SECONDS = 600 if request.param == "drawn and kept" else 0
    ticket = TicketFactory()
    if request.param != "not drawn":
        TicketImage.objects.create(ticket=ticket, png=b"\x89PNG...", etag="abc")
    if request.param == "drawn and kept":
        viewable_ticket_image(ticket_id=ticket.pk, viewer=ticket.buyer)  # now in the cache
    return ticket


def test_the_buyer_and_staff_see_the_image(ticket):
    by_buyer = viewable_ticket_image(ticket_id=ticket.pk, viewer=ticket.buyer)
    by_staff = viewable_ticket_image(ticket_id=ticket.pk, viewer=staff_member())

    assert by_buyer == by_staff
    assert by_buyer.png.startswith(b"\x89PNG") and by_buyer.buyer_id == ticket.buyer_id
    assert TicketImage.objects.get(pk=ticket.pk).etag == by_buyer.etag


@pytest.mark.parametrize("make_viewer", [UserFactory, lambda: UserFactory(is_staff=True)])
def test_anyone_else_gets_not_found_and_nothing_is_drawn(ticket, make_viewer):
    images = TicketImage.objects.count()

    with pytest.raises(NotFound):
        viewable_ticket_image(ticket_id=ticket.pk, viewer=make_viewer())
    assert TicketImage.objects.count() == images


def test_an_unknown_ticket_is_not_found(db):
    with pytest.raises(NotFound):
        viewable_ticket_image(ticket_id=uuid.uuid4(), viewer=UserFactory())
