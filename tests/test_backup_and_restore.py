"""docs/operations.md's backup and restore, as written: a dump restored into a new database,
served with the same secrets: tickets issued before the dump are admitted at the door, their
images and PDFs render, and a new sale works."""

import base64
import secrets
import subprocess
import uuid

import psycopg
import pytest
from django.db import connection

from tests.live_http import call, sign_in
from tests.servers import NODE_DAY, database_url, gunicorn_node, manage

pytestmark = [pytest.mark.postgres_only, pytest.mark.django_db(transaction=True)]

# The door's first step: the scanned QR code's signature, checked with the service's keys.
VERIFY = """
from orders.models import Ticket
from orders.tokens import InvalidTicketToken, verify_ticket_token
try:
    print(verify_ticket_token({token!r}).ticket_id == Ticket.objects.get().pk)
except InvalidTicketToken:
    print("forged")
"""
SIGN = """
from orders.models import Ticket
from orders.tokens import sign_ticket
ticket = Ticket.objects.get()
print(sign_ticket(ticket_id=ticket.pk, ticket_date=ticket.date))
"""
KEPT_KEY = base64.urlsafe_b64encode(secrets.token_bytes(32)).decode().rstrip("=")
OTHER_KEY = base64.urlsafe_b64encode(secrets.token_bytes(32)).decode().rstrip("=")


@pytest.fixture
def restored_database():
    url = database_url(connection.settings_dict)
    name = f"museum_ops_restore_{uuid.uuid4().hex[:8]}"
    admin = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as server:
        server.execute(f'CREATE DATABASE "{name}"')
    try:
        yield url.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with psycopg.connect(admin, autocommit=True) as server:
            server.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


def test_a_restored_dump_serves_the_tickets_issued_before_it(
    node_database, restored_database, tmp_path
):
    body = {
        "ticketType": "general",
        "ticketDate": NODE_DAY.isoformat(),
        "email": "family@example.com",
        "lines": [{"category": "adult", "quantity": 1}],
    }
    keys = {"MUSEUM_TICKET_SIGNING_KEYS": KEPT_KEY}
    environment = {"DATABASE_URL": node_database, **keys}
    with gunicorn_node(environment=environment, log=tmp_path / "a.log") as url:
        sign_in(url, username="visitor")
        order = call("POST", f"{url}/v1.1/orders", username="visitor", body=body).json()
    issued = manage(node_database, "shell", "-c", SIGN, environment=keys).stdout.split()[-1]
    dump = tmp_path / "museum.dump"
    subprocess.run(
        ["pg_dump", "--format=custom", "--no-owner", f"--file={dump}", node_database], check=True
    )
    subprocess.run(
        ["pg_restore", "--no-owner", f"--dbname={restored_database}", str(dump)], check=True
    )
    manage(restored_database, "migrate")
    manage(restored_database, "clear_cache")

    def verified(key: str) -> str:
        check = VERIFY.format(token=issued)
        answer = manage(
            restored_database,
            "shell",
            "-c",
            check,
            environment={**keys, "MUSEUM_TICKET_SIGNING_KEYS": key},
        )
        return answer.stdout.split()[-1]

    assert verified(KEPT_KEY) == "True"
    assert verified(OTHER_KEY) == "forged"  # why the keys are kept with the dump

    ticket_id = order["tickets"][0]["ticketId"]
    environment = {"DATABASE_URL": restored_database, **keys}
    with gunicorn_node(environment=environment, log=tmp_path / "b.log") as url:
        image = call("GET", f"{url}/v1.1/tickets/{ticket_id}/qr", username="visitor")
        assert image.status == 200 and image.content.startswith(b"\x89PNG")
        pdf = call("GET", f"{url}/v1.1/orders/{order['orderId']}/tickets.pdf", username="visitor")
        assert pdf.status == 200 and pdf.content.startswith(b"%PDF")
        assert call("POST", f"{url}/v1.1/orders", username="visitor", body=body).status == 201
