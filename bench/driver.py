"""The load: what each endpoint is sent, and wrk sending it to each server in turn."""

import datetime as dt
import json
import os
import random
import subprocess
import time
import urllib.request
import uuid
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import connection, transaction
from django.utils import timezone

from bench import FLOOR_PATH, data, servers
from bench.plans import authorization
from events.models import EventDate, SpecialEvent
from giftcards.services import sell_gift_card
from hours.models import EntrySlot, MuseumDay
from museum.authentication import verified_credential_key
from octo.keys import issue_api_key
from octo.models import ApiKey
from orders import tokens
from orders.models import Membership, Order, Ticket, Voucher, VoucherEffect
from orders.services.sale import place_order

LUA = Path(__file__).resolve().parent / "wrk.lua"
WARM_UP_SECONDS = 5
FLOOR_BESIDE_SECONDS = 1
# The service's own floor (bench/floor.py, through its middleware and settings) and the bare
# one (bench/bare/, a Django + DRF project with nothing of the museum's), each measured first
# and last.
FLOORS = ("floor", "floor-again")
BARE_FLOORS = ("bare", "bare-again")
P99_LIMIT_MS = 50


@dataclass
class Endpoint:
    key: str
    label: str
    lines: list[str]
    expected: set[int]
    target: float | None = None  # requests/s as a share of the bare floor's
    read: bool = False  # its p99 must stay under P99_LIMIT_MS
    bare: bool = False  # sent to the bare project's server, not the service's
    # Each line is meant to be sent once; sent again after a thread ran out, it gets these.
    again: set[int] = field(default_factory=set)
    path: Path | None = None


def request_line(
    method: str,
    path: str,
    username: str | None = None,
    etag=None,
    body=None,
    *,
    auth: str | None = None,
    after: str | None = None,
) -> str:
    """One request for wrk.lua: signed in as `username` (Basic) or with `auth` (an Authorization
    value); `after`, a uuid: sent only once an answer names it (wrk.lua)."""
    auth = auth or (authorization(username) if username else "-")
    body_text = json.dumps(body, separators=(",", ":")) if body is not None else "-"
    return "\t".join([method, path, auth, etag or "-", body_text] + ([after] if after else []))


def _visitors(count: int) -> list[str]:
    return [data.VISITORS[n % len(data.VISITORS)] for n in range(count)]


def _list_lines(today: dt.date) -> list[str]:
    lines = []
    for offset, username in zip(range(14), _visitors(14), strict=True):
        start, end = today + dt.timedelta(offset), today + dt.timedelta(offset + 7)
        listed = (
            SpecialEvent.objects.active().filter(dates__date__range=(start, end)).distinct().count()
        )
        if listed < 30:
            raise RuntimeError(f"only {listed} events from {start} to {end}; a page needs 30")
        query = f"startDate={start}&endDate={end}&limit=30"
        lines.append(request_line("GET", f"/v1.1/special-events?{query}", username))
    return lines


def _event_lines(today: dt.date, rng: random.Random) -> list[str]:
    upcoming = list(
        SpecialEvent.objects.active()
        .filter(dates__date__range=(today, today + dt.timedelta(30)))
        .values_list("pk", flat=True)
        .distinct()
    )
    picked = rng.sample(upcoming, min(len(upcoming), 2000))
    return [
        request_line("GET", f"/v1.1/special-events/{pk}", username)
        for pk, username in zip(picked, _visitors(len(picked)), strict=True)
    ]


def _buy_lines(today: dt.date, rng: random.Random) -> list[str]:
    event_dates = list(
        EventDate.objects.filter(date__gt=today, event__cancelled_at__isnull=True).values_list(
            "event_id", "date"
        )
    )
    # Untimed days: a timed one is the order endpoints' (and costs the slot's row too).
    open_days = list(
        MuseumDay.objects.filter(date__gt=today, is_closed=False, slots__isnull=True).values_list(
            "date", flat=True
        )
    )
    bodies = []
    for n in range(4000):
        body = {"ticketDate": None, "email": data.BOUGHT_EMAIL}
        if n % 2:
            event_id, day = rng.choice(event_dates)
            body.update(ticketType="event", eventId=str(event_id), ticketDate=day.isoformat())
        else:
            body.update(ticketType="general", ticketDate=rng.choice(open_days).isoformat())
        bodies.append(body)
    return [
        request_line("POST", "/v1.1/tickets", username, body=body)
        for body, username in zip(bodies, _visitors(len(bodies)), strict=True)
    ]


def _slot_times(today: dt.date) -> dict[dt.date, list[str]]:
    """Each timed day from three days on (a visitor may still cancel) and its entry times."""
    times: dict[dt.date, list[str]] = {}
    slots = EntrySlot.objects.filter(day_id__gte=today + dt.timedelta(3)).order_by("entry_time")
    for day, entry in slots.values_list("day_id", "entry_time"):
        times.setdefault(day, []).append(f"{entry:%H:%M}")
    if not times:
        raise RuntimeError("no timed days: bench.database.refresh() adds their slots")
    return times


def _slots_lines(today: dt.date) -> list[str]:
    return [
        request_line("GET", f"/v1.1/museum-hours/{day}/slots", username)
        for day in _slot_times(today)
        for username in data.VISITORS[:8]
    ]


def _order_body(day: dt.date, entry_time: str, *, hold: bool = False) -> dict:
    """A family of two adults and two children in one slot."""
    return {
        "ticketType": "general",
        "ticketDate": day.isoformat(),
        "entryTime": entry_time,
        "email": data.BOUGHT_EMAIL,
        "lines": [{"category": "adult", "quantity": 2}, {"category": "child", "quantity": 2}],
        "hold": hold,
    }


def _order_lines(today: dt.date, rng: random.Random) -> list[str]:
    times = _slot_times(today)
    days = list(times)
    lines = []
    for username in _visitors(4000):
        day = rng.choice(days)
        body = _order_body(day, rng.choice(times[day]))
        lines.append(request_line("POST", "/v1.1/orders", username, body=body))
    return lines


def _group_request_lines(today: dt.date, rng: random.Random) -> list[str]:
    """A school's request of 25 people (22 children, 3 adults) on a timed day, each line from
    its own mailbox (a mailbox has at most MUSEUM_GROUP_OPEN_REQUESTS waiting)."""
    times = _slot_times(today)
    days = list(times)
    lines = []
    for n, username in enumerate(_visitors(4000)):
        day = rng.choice(days)
        body = {
            "organisation": f"Bench school {n}",
            "organisationKind": "school",
            "contactName": "Bench Teacher",
            "email": f"teacher{n}-{rng.randrange(10**9)}@bench.example",
            "date": day.isoformat(),
            "entryTime": rng.choice(times[day]),
            "lines": [{"category": "child", "quantity": 22}, {"category": "adult", "quantity": 3}],
        }
        lines.append(request_line("POST", "/v1.1/group-requests", username, body=body))
    return lines


# The codes the voucher purchases name, 10 % off: a promotion code anyone may use, and one with
# a limit every sale counts on its row (a million uses).
BENCH_VOUCHERS = {"order-voucher": ("BENCH10", None), "order-voucher-counted": ("BENCH10C", 10**6)}


def _voucher_order_lines(today: dt.date, rng: random.Random, *, key: str) -> list[str]:
    """The order endpoint's family, each ticket 10 % off with one code."""
    code, max_uses = BENCH_VOUCHERS[key]
    Voucher.objects.update_or_create(
        code=code,
        defaults={
            "effect": VoucherEffect.PERCENT_OFF,
            "value": Decimal("10"),
            "tag": "bench",
            "max_uses": max_uses,
        },
    )
    times = _slot_times(today)
    days = list(times)
    lines = []
    for username in _visitors(4000):
        day = rng.choice(days)
        body = {**_order_body(day, rng.choice(times[day])), "voucher": code}
        lines.append(request_line("POST", "/v1.1/orders", username, body=body))
    return lines


def _placed_orders(
    today: dt.date, rng: random.Random, *, hold: bool, count: int
) -> list[tuple[uuid.UUID, str]]:
    """(order id, buyer's username) of `count` orders placed now, through the service."""
    times = _slot_times(today)
    days = list(times)
    buyers = {u.username: u for u in get_user_model().objects.filter(username__in=data.VISITORS)}
    if hold:
        data.partners_hold_enough()
    placed = []
    for username in _visitors(count):
        day = rng.choice(days)
        body = _order_body(day, rng.choice(times[day]), hold=hold)
        order = place_order(
            buyer=buyers[username],
            email=body["email"],
            ticket_type="general",
            ticket_date=day,
            entry_time=dt.time.fromisoformat(body["entryTime"]),
            lines=body["lines"],
            hold=hold,
        )
        placed.append((order.pk, username))
    return placed


def _order_action_lines(today, rng, *, action: str, hold: bool) -> list[str]:
    # Enough orders that each request of every server's turns meets one not yet confirmed or
    # cancelled (a repeat is a cheaper answer): three servers × 8 s at up to ~500 a second.
    with transaction.atomic():  # one commit for all, not one each
        placed = _placed_orders(today, rng, hold=hold, count=12_000)
    return [
        request_line("POST", f"/v1.1/orders/{pk}/{action}", username) for pk, username in placed
    ]


def _gift_card_payment_lines(today: dt.date, rng: random.Random) -> list[str]:
    """A held online order of four tickets paid whole by a gift card: its own card each, sold
    before the run by a partner (so issued at once), the order by one of the online accounts
    (an online order waits for its payment; the benchmark's visitors are partners)."""
    online = data.online_buyers()
    partner = get_user_model().objects.get(username=data.VISITORS[0])
    times = _slot_times(today)
    days = list(times)
    lines = []
    with transaction.atomic():  # one commit for all, not one each
        for n in range(6_000):
            buyer = online[n % len(online)]
            day = rng.choice(days)
            body = _order_body(day, rng.choice(times[day]), hold=False)
            order = place_order(
                buyer=buyer,
                # A mailbox each: the museum's per-mailbox limits count by it.
                email=f"online-{n}@bench.invalid",
                ticket_type="general",
                ticket_date=day,
                entry_time=dt.time.fromisoformat(body["entryTime"]),
                lines=body["lines"],
            )
            card = sell_gift_card(buyer=partner, amount=Decimal("100"), email=data.BOUGHT_EMAIL)
            payment = {"provider": "giftcard", "code": card.code}
            path = f"/v1.1/orders/{order.pk}/payments"
            lines.append(request_line("POST", path, buyer.username, body=payment))
    return lines


def _qr_lines(email: str, *, conditional: bool = False) -> list[str]:
    users = dict(get_user_model().objects.values_list("pk", "username"))
    tickets = Ticket.objects.filter(order__email=email).values_list("pk", "buyer_id", "image__etag")
    return [
        request_line("GET", f"/v1.1/tickets/{pk}/qr", users[buyer], conditional and f'"{etag}"')
        for pk, buyer, etag in tickets
    ]


def _check_in_lines() -> list[str]:
    door = Ticket.objects.filter(order__email=data.DOOR_EMAIL).values_list("pk", "date")
    return [
        request_line(
            "POST",
            "/v1.1/tickets/check-in",
            data.STAFF[n % len(data.STAFF)],
            body={"code": tokens.sign_ticket(ticket_id=pk, ticket_date=day)},
        )
        for n, (pk, day) in enumerate(door)
    ]


def _members() -> list[tuple[uuid.UUID, str, int]]:
    """(membership id, its buyer's username, people its visit admits) of the members."""
    return [
        (pk, username, admits)
        for pk, username, admits in Membership.objects.filter(
            membership_type__code=data.MEMBERSHIP_TYPE
        )
        .order_by("card_code")
        .values_list("pk", "buyer__username", "membership_type__admits")
    ]


def _member_visit_lines(today: dt.date, rng: random.Random) -> list[str]:
    """A member visit booked by its membership's buyer in a timed day's slot: one or as many as
    the membership admits, free, confirmed at once. Each membership and day once (a membership
    has one member visit a day; sent again, 409), days and members spread at random."""
    times = _slot_times(today)
    days, members = list(times), _members()
    pairs = rng.sample(range(len(members) * len(days)), min(12_000, len(members) * len(days)))
    lines = []
    for pair in pairs:
        membership_id, username, admits = members[pair % len(members)]
        day = days[pair // len(members)]
        body = {
            "ticketType": "general",
            "ticketDate": day.isoformat(),
            "entryTime": rng.choice(times[day]),
            "email": data.BOUGHT_EMAIL,
            "membership": str(membership_id),
            "lines": [{"category": "member", "quantity": rng.randint(1, admits)}],
        }
        lines.append(request_line("POST", "/v1.1/orders", username, body=body))
    return lines


def _member_card_lines(today: dt.date) -> list[str]:
    """A member's card (its signed token, as the card's QR carries it) scanned at the door,
    which admits the membership's visit booked for today."""
    visits = Order.objects.filter(email=data.MEMBER_EMAIL).order_by("confirmation_code")
    return [
        request_line(
            "POST",
            "/v1.1/tickets/check-in",
            data.STAFF[n % len(data.STAFF)],
            body={"code": tokens.sign_member_card(membership_id=membership_id, issued_on=today)},
        )
        for n, membership_id in enumerate(visits.values_list("membership_id", flat=True))
    ]


# The benchmark's partners' API keys for OCTO (octo.keys), issued afresh each run.
OCTO_KEY_NAME = "bench"
OCTO_PARTNERS = 4


def _octo_keys() -> list[str]:
    """A key for each of the first visitors (sales partners, as OCTO's resellers are), issued
    through octo's own service; the last run's keys deleted."""
    ApiKey.objects.filter(name=OCTO_KEY_NAME).delete()
    partners = get_user_model().objects.filter(username__in=data.VISITORS[:OCTO_PARTNERS])
    return [f"Bearer {issue_api_key(account=p, name=OCTO_KEY_NAME)[1]}" for p in partners]


def _octo_availability_lines(today: dt.date, keys: list[str]) -> list[str]:
    """General entry's slots on one timed day, each day asked by each partner."""
    return [
        request_line(
            "POST",
            "/octo/availability",
            body={
                "productId": "general",
                "optionId": "DEFAULT",
                "localDateStart": day.isoformat(),
                "localDateEnd": day.isoformat(),
            },
            auth=key,
        )
        for day in _slot_times(today)
        for key in keys
    ]


def _octo_booking_lines(today: dt.date, rng: random.Random, keys: list[str]) -> list[str]:
    """A reservation of one adult's place in a slot (a new uuid each), and its confirmation,
    which wrk.lua sends once the reservation's answer names its uuid."""
    times = _slot_times(today)
    days = list(times)
    contact = {"fullName": "Bench Reseller", "emailAddress": data.BOUGHT_EMAIL}
    lines = []
    for n in range(12_000):
        key, day = keys[n % len(keys)], rng.choice(days)
        start = dt.datetime.combine(day, dt.time.fromisoformat(rng.choice(times[day])))
        booking = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        reserve = {
            "uuid": booking,
            "productId": "general",
            "optionId": "DEFAULT",
            "availabilityId": timezone.make_aware(start).isoformat(),
            "unitItems": [{"unitId": "adult"}],
            "contact": contact,
        }
        confirm = {"contact": contact}
        lines.append(request_line("POST", "/octo/bookings", body=reserve, auth=key))
        path = f"/octo/bookings/{booking}/confirm"
        lines.append(request_line("POST", path, body=confirm, auth=key, after=booking))
    return lines


def endpoints(wanted: Collection[str] = ()) -> list[Endpoint]:
    """Every endpoint; only those `wanted` (all if none) and the floors get their requests, so
    that measuring a few does not wait for the others' (the confirm and cancel endpoints place
    24,000 orders)."""
    today, rng = timezone.localdate(), random.Random(7)

    def lines(key: str, make: Callable[[], list[str]]) -> list[str]:
        return make() if not wanted or key in wanted else []

    floor = [request_line("GET", FLOOR_PATH)] * 64
    hours = [request_line("GET", "/v1.1/museum-hours", username) for username in data.VISITORS] * 4
    # The cheapest authenticated operation: what every API request pays before its own work
    # (the remembered credential, the account, the throttle), with no query of its own.
    signed_in = [request_line("GET", "/v1.1/tickets/signing-key", u) for u in data.VISITORS] * 4
    keys = _octo_keys() if not wanted or {"octo-availability", "octo-book"} & set(wanted) else []
    return [
        Endpoint("bare", f"GET {FLOOR_PATH} (bare project)", floor, {200}, bare=True),
        Endpoint("floor", f"GET {FLOOR_PATH} (own floor)", floor, {200}, 0.85),
        Endpoint("signed-in", "GET /v1.1/tickets/signing-key (signed in)", signed_in, {200}),
        Endpoint("hours", "GET /v1.1/museum-hours", hours, {200}, 0.35, read=True),
        Endpoint(
            "list",
            "GET /v1.1/special-events (30)",
            lines("list", lambda: _list_lines(today)),
            {200},
            0.25,
            True,
        ),
        Endpoint(
            "get",
            "GET /v1.1/special-events/{id}",
            lines("get", lambda: _event_lines(today, rng)),
            {200},
            0.35,
            True,
        ),
        Endpoint(
            "qr",
            "GET /v1.1/tickets/{id}/qr (stored)",
            lines("qr", lambda: _qr_lines(data.DRAWN_EMAIL)),
            {200},
            0.35,
            True,
        ),
        Endpoint(
            "qr-304",
            "GET /v1.1/tickets/{id}/qr (If-None-Match)",
            lines("qr-304", lambda: _qr_lines(data.DRAWN_EMAIL, conditional=True)),
            {304},
            0.35,
            read=True,
        ),
        Endpoint(
            "qr-first",
            "GET /v1.1/tickets/{id}/qr (first: draws)",
            lines("qr-first", lambda: _qr_lines(data.UNDRAWN_EMAIL)),
            {200},
            again={200},
        ),
        Endpoint(
            "check-in",
            "POST /v1.1/tickets/check-in",
            lines("check-in", _check_in_lines),
            {200},
            0.12,
            again={409},
        ),
        Endpoint(
            "buy", "POST /v1.1/tickets", lines("buy", lambda: _buy_lines(today, rng)), {201}, 0.06
        ),
        Endpoint(
            "slots",
            "GET /v1.1/museum-hours/{date}/slots",
            lines("slots", lambda: _slots_lines(today)),
            {200},
            0.35,
            True,
        ),
        Endpoint(
            "order",
            "POST /v1.1/orders (4 tickets)",
            lines("order", lambda: _order_lines(today, rng)),
            {201},
            0.04,
        ),
        Endpoint(
            "order-voucher",
            "POST /v1.1/orders (4 tickets, a promotion code)",
            lines("order-voucher", lambda: _voucher_order_lines(today, rng, key="order-voucher")),
            {201},
        ),
        Endpoint(
            "order-voucher-counted",
            "POST /v1.1/orders (4 tickets, a code with a limit)",
            lines(
                "order-voucher-counted",
                lambda: _voucher_order_lines(today, rng, key="order-voucher-counted"),
            ),
            {201},
        ),
        Endpoint(
            "group-request",
            "POST /v1.1/group-requests (25 people, holding their places)",
            lines("group-request", lambda: _group_request_lines(today, rng)),
            {201},
            again={201},
        ),
        Endpoint(
            "confirm",
            "POST /v1.1/orders/{id}/confirm",
            lines(
                "confirm",
                lambda: _order_action_lines(today, rng, action="confirm", hold=True),
            ),
            {200},
            0.05,
            again={200},
        ),
        Endpoint(
            "cancel",
            "POST /v1.1/orders/{id}/cancel",
            lines(
                "cancel",
                lambda: _order_action_lines(today, rng, action="cancel", hold=False),
            ),
            {200},
            0.04,
            again={409},
        ),
        # Issue 38 asks for their ratios to the floors, with no target.
        Endpoint(
            "octo-availability",
            "POST /octo/availability (a day's slots)",
            lines("octo-availability", lambda: _octo_availability_lines(today, keys)),
            {200},
        ),
        Endpoint(
            "octo-book",
            "POST /octo/bookings, then …/confirm",
            lines("octo-book", lambda: _octo_booking_lines(today, rng, keys)),
            {200},
            # A reservation sent again answers its booking, and confirming it again too.
            again={200},
        ),
        Endpoint(
            "giftcard-pay",
            "POST /v1.1/orders/{id}/payments (gift card)",
            lines("giftcard-pay", lambda: _gift_card_payment_lines(today, rng)),
            {201},
            # Paid once: the order has nothing left to pay.
            again={409},
        ),
        Endpoint(
            "member-visit",
            "POST /v1.1/orders (member visit)",
            lines("member-visit", lambda: _member_visit_lines(today, rng)),
            {201},
            again={409},
        ),
        Endpoint(
            "member-card-scan",
            "POST /v1.1/tickets/check-in (member card)",
            lines("member-card-scan", lambda: _member_card_lines(today)),
            {200},
            again={409},
        ),
        Endpoint("floor-again", f"GET {FLOOR_PATH} (own floor, again, last)", floor, {200}, 0.85),
        Endpoint(
            "bare-again", f"GET {FLOOR_PATH} (bare project, again, last)", floor, {200}, bare=True
        ),
    ]


def write_requests(work: Path, wanted: Collection[str] = ()) -> list[Endpoint]:
    """Each endpoint's requests, one file each for wrk.lua (empty for those not `wanted`)."""
    rng = random.Random(11)
    found = endpoints(wanted)
    for endpoint in found:
        # Kept in order: each sent once, in turn (a booking's confirmation after its reservation).
        if endpoint.key not in {
            "qr-first",
            "check-in",
            "confirm",
            "cancel",
            "octo-book",
            "member-visit",
            "member-card-scan",
        }:
            rng.shuffle(endpoint.lines)
        endpoint.path = work / f"requests-{endpoint.key}.tsv"
        endpoint.path.write_text("\n".join(endpoint.lines) + "\n")
    connection.close()
    return found


def forget_credentials() -> None:
    """Start from no remembered sign-in, so each account's first request pays PBKDF2 now."""
    for username in data.VISITORS + data.STAFF:
        cache.delete(verified_credential_key(authorization(username).encode()))


def _sign_in_everyone(address: str) -> None:
    """One request per account: the only ones that pay for PBKDF2 (then cached in Redis, which
    every server shares). One after the other: the service checks one password at a time per
    client address and answers 429 to a second check from the same address meanwhile."""
    for username in data.VISITORS + data.STAFF:
        request = urllib.request.Request(
            f"{address}/v1.1/museum-hours", headers={"Authorization": authorization(username)}
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            assert response.status == 200, (username, response.status)


def _wrk(args, requests: Path, seconds: int, address: str) -> dict:
    command = ["wrk", f"-t{args.threads}", f"-c{args.connections}", f"-d{seconds}s"]
    command += ["--timeout", "5s", "-s", str(LUA), address + "/"]
    env = {**os.environ, "BENCH_REQUESTS": str(requests), "BENCH_THREADS": str(args.threads)}
    finished = subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=seconds + 60, check=True
    )
    last = [line for line in finished.stdout.splitlines() if line.startswith("{")][-1]
    return json.loads(last)


def _drain(address: str) -> None:
    """Let the server finish what the last run left queued (an image takes ~60 ms to draw)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        started = time.monotonic()
        with urllib.request.urlopen(f"{address}{FLOOR_PATH}", timeout=10):
            pass
        if time.monotonic() - started < 0.05:
            return
        time.sleep(0.2)


# Reads every visitor shares, answered from the response cache (museum/response_cache.py).
CACHED_READS = ("hours", "list", "get")


def _prime_cached_responses(address: str, found: list[Endpoint]) -> None:
    """Ask once for every page and event the measurement will read, as earlier visitors would
    have: between two edits a museum's pages are answered from the shared cache, and that is
    the state measured. (What an answer built afresh costs: docs/performance.md.)"""

    def ask(line: str) -> None:
        method, path, auth, _, _ = line.split("\t")
        request = urllib.request.Request(address + path, headers={"Authorization": auth})
        with urllib.request.urlopen(request, timeout=60) as response:
            assert response.status == 200, (path, response.status)

    distinct = {line for e in found if e.key in CACHED_READS for line in e.lines}
    with ThreadPoolExecutor(4) as pool:  # credentials are remembered by now: no sign-in waits
        list(pool.map(ask, sorted(distinct)))


def _write_warm_up(work: Path, found: list[Endpoint]) -> Path:
    """A bit of every endpoint, so that what a worker keeps once (caches, allocator arenas,
    Pillow's buffers) is there before its memory is first read. Requests meant to be sent once
    come from the end of their lists: the measurement takes them from the beginning."""
    lines = []
    for endpoint in found:
        lines += endpoint.lines[-150:] if endpoint.again else endpoint.lines[:64]
    random.Random(5).shuffle(lines)
    path = work / "requests-warm-up.tsv"
    path.write_text("\n".join(lines) + "\n")
    return path


class Tally:
    """One endpoint on one server, summed over its slices of time."""

    def __init__(self, endpoint: Endpoint):
        self.endpoint = endpoint
        self.requests = self.wrapped = 0
        self.seconds = 0.0
        self.statuses: dict[int, int] = {}
        self.socket_errors = {"connect": 0, "read": 0, "write": 0, "timeout": 0}
        self.p50s: list[tuple[int, float]] = []
        self.p99 = self.max = 0.0
        self.rss_growth = 0.0
        # The floors, measured by the same server right before each of this endpoint's turns.
        self.floor_requests, self.floor_seconds = 0, 0.0
        self.bare_requests, self.bare_seconds = 0, 0.0

    def add(self, raw: dict) -> None:
        self.requests += raw["requests"]
        self.seconds += raw["duration_us"] / 1e6
        self.wrapped += raw["wrapped"]
        for status, count in raw["statuses"].items():
            self.statuses[int(status)] = self.statuses.get(int(status), 0) + count
        for kind, count in raw["socket_errors"].items():
            self.socket_errors[kind] += count
        latency = raw["latency_us"]
        self.p50s.append((raw["requests"], latency["p50"] / 1000))
        # Percentiles of separate runs do not add up: the worst slice's p99 stands for all.
        self.p99, self.max = max(self.p99, latency["p99"] / 1000), max(self.max, latency["max"])

    def add_floor(self, raw: dict) -> None:
        self.floor_requests += raw["requests"]
        self.floor_seconds += raw["duration_us"] / 1e6

    def add_bare(self, raw: dict) -> None:
        self.bare_requests += raw["requests"]
        self.bare_seconds += raw["duration_us"] / 1e6

    def figures(self) -> dict:
        e = self.endpoint
        expected = e.expected | (e.again if self.wrapped else set())
        weight = sum(n for n, _ in self.p50s) or 1
        return {
            "key": e.key,
            "label": e.label,
            "floor_beside_rps": (
                round(self.floor_requests / self.floor_seconds, 1) if self.floor_seconds else None
            ),
            "bare_beside_rps": (
                round(self.bare_requests / self.bare_seconds, 1) if self.bare_seconds else None
            ),
            "requests": self.requests,
            "rps": round(self.requests / self.seconds, 1) if self.seconds else 0.0,
            "p50_ms": round(sum(n * p50 for n, p50 in self.p50s) / weight, 2),
            "p99_ms": round(self.p99, 2),
            "max_ms": round(self.max / 1000, 2),
            "statuses": self.statuses,
            "errors": sum(self.socket_errors.values())
            + sum(n for s, n in self.statuses.items() if s not in expected),
            "socket_errors": self.socket_errors,
            "wrapped": self.wrapped,
            "target": e.target,
            "read": e.read,
            "once": bool(e.again),
            "rss_growth_mib": round(self.rss_growth, 1),
        }


def _mean_rps(by_key: dict[str, dict], keys: tuple[str, ...]) -> float | None:
    measured = [by_key[key]["rps"] for key in keys if key in by_key]
    return sum(measured) / len(measured) if measured else None


def _ratio(rps: float, reference: float | None) -> float | None:
    return round(rps / reference, 3) if reference else None


def _judge(figures: list[dict]) -> None:
    by_key = {f["key"]: f for f in figures}
    floor, bare = _mean_rps(by_key, FLOORS), _mean_rps(by_key, BARE_FLOORS)
    for f in figures:
        # The floors beside it: a machine that slows down during the run slows all alike.
        f["ratio"] = _ratio(f["rps"], f.get("floor_beside_rps") or floor)
        f["bare_ratio"] = _ratio(f["rps"], f.get("bare_beside_rps") or bare)
        misses = []
        target, ratio = f["target"], f["bare_ratio"]
        if target is not None and ratio is not None and ratio < target:
            misses.append(f"ratio < {target}")
        if f["read"] and f["p99_ms"] >= P99_LIMIT_MS:
            misses.append(f"p99 >= {P99_LIMIT_MS} ms")
        if f["errors"]:
            misses.append("errors")
        f["misses"] = misses


def written(endpoint: Endpoint) -> Path:
    if endpoint.path is None:
        raise RuntimeError(f"{endpoint.key}: its requests were never written to a file")
    return endpoint.path


class Fresh:
    """Hands out the requests meant to be sent once, a new stretch for every run."""

    def __init__(self, work: Path):
        self.work = work
        self.used: dict[str, int] = {}

    def path(self, endpoint: Endpoint, requests_expected: int) -> Path:
        if not endpoint.again:
            return written(endpoint)
        start = self.used.get(endpoint.key, 0)
        stretch = endpoint.lines[start : start + max(requests_expected, 200)]
        path = self.work / f"requests-{endpoint.key}-now.tsv"
        path.write_text("\n".join(stretch or endpoint.lines[-200:]) + "\n")
        return path

    def spent(self, endpoint: Endpoint, raw: dict) -> None:
        if endpoint.again:
            # Each wrk thread takes every n-th line, at its own pace: the next run starts after
            # the furthest line any of them sent, answered or still in flight.
            self.used[endpoint.key] = self.used.get(endpoint.key, 0) + raw["furthest"] + 1


@dataclass
class Running:
    """A server configuration under measurement: the service's, and the bare project's."""

    process: Any
    address: str
    bare_process: Any
    bare_address: str


def _measure(
    args, running: dict[str, Running], chosen: list[Endpoint], floor: Endpoint
) -> dict[str, list[Tally]]:
    """Each endpoint on every server in turn, in slices, so that load from elsewhere on the
    machine falls on all servers alike; before each slice, the same server's bare floor and
    (for an API endpoint) its own floor for FLOOR_BESIDE_SECONDS each, the references for that
    endpoint's ratios."""
    tallies: dict[str, list[Tally]] = {name: [] for name in running}
    fresh = Fresh(args.work)
    slice_seconds = max(1, round(args.seconds / args.slices))  # wrk takes whole seconds
    for endpoint in chosen:
        for name in running:
            tallies[name].append(Tally(endpoint))
        for _ in range(args.slices):
            for name, server in running.items():
                _drain(server.address)
                tally = tallies[name][-1]
                if endpoint.key not in BARE_FLOORS:
                    beside = _wrk(args, written(floor), FLOOR_BESIDE_SECONDS, server.bare_address)
                    tally.add_bare(beside)
                if endpoint.key not in FLOORS + BARE_FLOORS:
                    beside = _wrk(args, written(floor), FLOOR_BESIDE_SECONDS, server.address)
                    tally.add_floor(beside)
                address = server.bare_address if endpoint.bare else server.address
                process = server.bare_process if endpoint.bare else server.process
                before = sum(servers.worker_memory(process.pid).values())
                path = fresh.path(endpoint, requests_expected=int(3000 * slice_seconds))
                raw = _wrk(args, path, slice_seconds, address)
                fresh.spent(endpoint, raw)
                tally.add(raw)
                tally.rss_growth += sum(servers.worker_memory(process.pid).values()) - before
        for name in running:
            f = tallies[name][-1].figures()
            print(
                f"   {name:<18} {endpoint.label:<44} {f['rps']:>8.1f} req/s  "
                f"p50 {f['p50_ms']:>6.1f} ms  p99 {f['p99_ms']:>7.1f} ms  errors {f['errors']}",
                flush=True,
            )
    return tallies


def run_servers(args, found: list[Endpoint]) -> list[dict]:
    """Start every server (each on its own port), warm each up, then measure them in turns."""
    wanted = [key for key in args.endpoints.split(",") if key]
    chosen = [e for e in found if not wanted or e.key in wanted]
    warm_up = _write_warm_up(args.work, found)
    names = [n.strip() for n in args.servers.split(",") if n.strip()]
    skipped = [name for name in names if not servers.available(name)]
    names = [name for name in names if name not in skipped]
    env = {**os.environ, **args.service_env}
    forget_credentials()
    connection.close()
    floor = next(e for e in found if e.key == "floor")
    with ExitStack() as stack:
        running: dict[str, Running] = {}
        memory: dict[str, dict] = {}
        for offset, name in enumerate(names):
            port, bare_port = servers.PORT + offset, servers.BARE_PORT + offset
            log = args.work / f"server-{name.replace(' ', '-')}.log"
            print(f"== {name}: {' '.join(servers.command(name, port)[1:])}", flush=True)
            process = stack.enter_context(servers.running(name, port=port, env=env, log=log))
            address = f"http://{servers.HOST}:{port}"
            memory[name] = {"boot": servers.worker_memory(process.pid)}
            if offset == 0:
                _sign_in_everyone(address)
                _prime_cached_responses(address, found)
            _wrk(args, warm_up, WARM_UP_SECONDS, address)
            bare_log = args.work / f"server-{name.replace(' ', '-')}-bare.log"
            bare = stack.enter_context(
                servers.running(name, port=bare_port, env=env, log=bare_log, module=servers.BARE)
            )
            bare_address = f"http://{servers.HOST}:{bare_port}"
            _wrk(args, written(floor), WARM_UP_SECONDS, bare_address)
            running[name] = Running(process, address, bare, bare_address)
        for name, server in running.items():
            memory[name]["start"] = servers.worker_memory(server.process.pid)
        tallies = _measure(args, running, chosen, floor)
        for name, server in running.items():
            memory[name]["end"] = servers.worker_memory(server.process.pid)
    results = []
    for name in names:
        figures = [tally.figures() for tally in tallies[name]]
        _judge(figures)
        command = " ".join(servers.command(name, servers.PORT + names.index(name)))
        bare_command = " ".join(
            servers.command(name, servers.BARE_PORT + names.index(name), servers.BARE)
        )
        results.append(
            {
                "server": name,
                "command": command,
                "bare_command": bare_command,
                "endpoints": figures,
                "memory": memory[name],
                "ok": not any(f["misses"] for f in figures),
            }
        )
    for name in skipped:
        print(f"== {name}: not installed, skipped")
    return results
