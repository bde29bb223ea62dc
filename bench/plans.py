"""The query plans of the service's reads, taken from real requests.

Each read goes through the URL with Django's test client, its SQL is captured, and PostgreSQL
EXPLAINs every statement: what is planned is exactly what the views send. A check-in changes its
tickets, so it runs in a transaction that is rolled back.
"""

import base64
import datetime as dt
import json
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from bench import data
from events.models import EventDate
from orders import tokens
from orders.models import Order, Ticket

# A sequential scan of these is a read that does not scale with the museum's history.
LARGE_TABLES = {
    "events_specialevent",
    "events_eventdate",
    "tickets_ticket",
    "tickets_ticketimage",
}


@dataclass
class Plan:
    read: str
    sql: str
    text: str
    seq_scans: set[str] = field(default_factory=set)


def authorization(username: str) -> str:
    credentials = f"{username}:{data.PASSWORD}".encode()
    return "Basic " + base64.b64encode(credentials).decode()


def _reads() -> list[tuple[str, str, str, dict, str]]:
    """(name, method, path, parameters or body, username) of each read worth planning."""
    today = timezone.localdate()
    week = {"startDate": today.isoformat(), "endDate": (today + dt.timedelta(7)).isoformat()}
    event_id = (
        EventDate.objects.filter(date__range=(today, today + dt.timedelta(7)))
        .filter(event__cancelled_at__isnull=True)
        .values_list("event_id", flat=True)
        .first()
    )
    drawn = Ticket.objects.filter(order__email=data.DRAWN_EMAIL, image__isnull=False).first()
    if drawn is None:
        raise RuntimeError("no drawn ticket image in the benchmark's data (python -m bench.data)")
    owner = get_user_model().objects.get(pk=drawn.buyer_id).username
    door = list(
        Ticket.objects.filter(order__email=data.DOOR_EMAIL, date=today, checked_in_at=None)[:2]
    )
    token = tokens.sign_ticket(ticket_id=door[0].pk, ticket_date=door[0].date)
    visit = Order.objects.filter(email=data.MEMBER_EMAIL, date=today).first()
    if visit is None or visit.membership_id is None:
        raise RuntimeError("no member visit today in the benchmark's data (python -m bench.data)")
    card = tokens.sign_member_card(membership_id=visit.membership_id, issued_on=today)
    visitor, staff = data.VISITORS[0], data.STAFF[0]
    check_in = "/v1.1/tickets/check-in"
    return [
        ("list events (a week, 30)", "get", "/v1.1/special-events", {**week, "limit": 30}, visitor),
        ("get event", "get", f"/v1.1/special-events/{event_id}", {}, visitor),
        ("museum hours (30)", "get", "/v1.1/museum-hours", {"limit": 30}, visitor),
        ("ticket image (stored)", "get", f"/v1.1/tickets/{drawn.pk}/qr", {}, owner),
        ("check-in by QR token", "post", check_in, {"code": token}, staff),
        ("check-in by code", "post", check_in, {"code": door[1].confirmation_code}, staff),
        ("check-in by member card", "post", check_in, {"code": card}, staff),
    ]


def _seq_scans(node: dict) -> set[str]:
    found = {node["Relation Name"]} if node["Node Type"] == "Seq Scan" else set()
    for child in node.get("Plans", []):
        found |= _seq_scans(child)
    return found


def _explain(read: str, sql: str) -> Plan:
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (FORMAT JSON) " + sql)
        [[document]] = cursor.fetchall()
        cursor.execute("EXPLAIN " + sql)
        text = "\n".join(line for (line,) in cursor.fetchall())
    tree = document if isinstance(document, list) else json.loads(document)
    return Plan(read=read, sql=sql, text=text, seq_scans=_seq_scans(tree[0]["Plan"]))


def explain_reads() -> list[Plan]:
    """The plan of every statement each read sends (PostgreSQL only)."""
    client, plans = Client(), []
    for read, method, path, params, username in _reads():
        with transaction.atomic():
            with CaptureQueriesContext(connection) as sent:
                if method == "get":
                    response = client.get(path, params, HTTP_AUTHORIZATION=authorization(username))
                else:
                    response = client.post(
                        path,
                        params,
                        content_type="application/json",
                        HTTP_AUTHORIZATION=authorization(username),
                    )
            if response.status_code != 200:
                raise AssertionError(f"{read}: {response.status_code} {response.content[:200]!r}")
            statements = [
                query["sql"]
                for query in sent.captured_queries
                if query["sql"].split(None, 1)[0] in {"SELECT", "UPDATE"}
            ]
            plans += [_explain(read, sql) for sql in statements]
            transaction.set_rollback(True)
    return plans


def _scans(text: str) -> list[str]:
    scans = []
    for line in text.splitlines():
        node = line.strip().removeprefix("->").strip()
        if " Scan " in node or node.startswith(("Seq Scan", "Index Scan", "Index Only Scan")):
            scans.append(node.split("  (")[0])
    return scans


def summary(plans: list[Plan]) -> str:
    """One Markdown line per statement: what it reads, and how."""
    lines = []
    for plan in plans:
        statement = plan.sql.split(None, 1)[0]
        scanned = [scan for scan in _scans(plan.text) if not scan.startswith("Bitmap Index")]
        tables = sorted({scan.rsplit(" on ", 1)[-1].split()[0] for scan in scanned})
        verdict = (
            "**sequential scan of a large table**"
            if plan.seq_scans & LARGE_TABLES
            else "no sequential scan of a large table"
        )
        scans = "; ".join(f"`{scan}`" for scan in _scans(plan.text))
        lines.append(f"- {plan.read}, {statement} ({', '.join(tables)}): {verdict} — {scans}")
    return "\n".join(lines)


def report(plans: list[Plan]) -> str:
    lines = []
    for plan in plans:
        verdict = "SEQ SCAN of " + ", ".join(sorted(plan.seq_scans)) if plan.seq_scans else "ok"
        lines += [f"== {plan.read}: {verdict}", plan.sql[:160] + " ...", plan.text, ""]
    return "\n".join(lines)
