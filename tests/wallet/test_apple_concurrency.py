"""First downloads of one ticket's pass at the same moment, on a real PostgreSQL server: each
builds and signs its own, one is kept, and every one of them answers with the kept pass (its one
serial number and authentication token), never a 500."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection
from django_walletpass.models import Pass

from orders.models import Ticket
from tests.factories import TicketFactory
from wallet import apple

pytestmark = [pytest.mark.postgres_only, pytest.mark.django_db(transaction=True)]

DOWNLOADS = 4


def test_first_downloads_at_once_keep_one_pass(apple_wallet):
    ticket_id = TicketFactory().pk
    start = threading.Barrier(DOWNLOADS)

    def download(_):
        ticket = Ticket.objects.select_related("order", "event", "slot", "category").get(
            pk=ticket_id
        )
        start.wait()
        try:
            kept = apple.ticket_apple_pass(ticket=ticket)
            return kept.pazz_id, kept.pazz.authentication_token
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=DOWNLOADS) as pool:
        answers = list(pool.map(download, range(DOWNLOADS)))

    assert len(set(answers)) == 1
    assert Pass.objects.count() == 1
