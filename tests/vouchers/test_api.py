"""Staff's API of vouchers: made one at a time and in batches (all or none), changed, deleted
while never used, exported and imported as CSV, counted per tag; every change audited, every
operation refused to anyone without the voucher permission it needs."""

import csv
import io
from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db.models import Sum
from django.utils import timezone

from audit.models import AuditRecord
from orders.models import Ticket, Voucher
from orders.services.vouchers import ALPHABET
from tests.conftest import assert_problem, client_for
from tests.factories import (
    MuseumDayFactory,
    SpecialEventFactory,
    TicketFactory,
    UserFactory,
    partner_member,
)
from tests.giftcards.test_gift_cards import buy_card
from tests.orders.conftest import later, order_body

VOUCHERS = "/v1.1/vouchers"


def make(client, **body):
    answer = client.post(VOUCHERS, {"effect": "free", **body}, format="json")
    assert answer.status_code == 201, answer.content
    return answer.json()


def test_staff_make_a_voucher_whose_code_is_kept_upper_case(staff_client):
    voucher = make(
        staff_client,
        code=" press-2030 ",
        effect="percent_off",
        value=50,
        categories=["adult"],
        maxUses=3,
        tag="press",
        channels=["online", "desk"],
    )

    assert voucher["code"] == "PRESS-2030"
    assert (voucher["effect"], voucher["value"], voucher["maxUses"]) == ("percent_off", 50, 3)
    assert voucher["categories"] == ["adult"] and voucher["channels"] == ["online", "desk"]
    assert (voucher["uses"], voucher["discountGiven"]) == (0, 0)
    record = AuditRecord.objects.get(object_type="orders.voucher", action="created")
    assert record.object_id == str(voucher["voucherId"]) and record.actor_name == "staff"
    assert record.changes["code"] == "PRESS-2030" and record.changes["max_uses"] == 3
    fetched = staff_client.get(f"{VOUCHERS}/{voucher['voucherId']}")
    assert fetched.status_code == 200 and fetched.json() == voucher


def test_a_voucher_without_a_code_gets_one_without_look_alike_characters(staff_client):
    voucher = make(staff_client, prefix="sch")

    code = voucher["code"]
    assert code.startswith("SCH") and len(code) == 13
    assert set(code[3:]) <= set(ALPHABET)


def test_a_code_taken_by_a_voucher_or_a_gift_card_is_refused(staff_client, visitor_client):
    make(staff_client, code="TAKEN")
    card_code = buy_card(visitor_client)["code"]

    again = staff_client.post(VOUCHERS, {"effect": "free", "code": "taken"}, format="json")
    card = staff_client.post(VOUCHERS, {"effect": "free", "code": card_code.lower()}, format="json")

    assert assert_problem(again, 409)["voucherCode"] == "TAKEN"
    assert assert_problem(card, 409)["code"] == "voucher_code_taken"
    assert Voucher.objects.count() == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"effect": "percent_off", "value": 101}, "value"),
        ({"visitFrom": "2030-05-02", "visitUntil": "2030-05-01"}, "visitUntil"),
        ({"validFrom": "2030-05-02T00:00:00Z", "validUntil": "2030-05-01T00:00:00Z"}, "validUntil"),
        ({"keepDay": "2030-05-01"}, "keepDay"),
        ({"channels": []}, "channels"),
        ({"channels": ["fax"]}, "channels"),
    ],
)
def test_settings_that_break_a_rule_are_refused(staff_client, body, field):
    answer = staff_client.post(VOUCHERS, {"effect": "free", **body}, format="json")

    problem = assert_problem(answer, 400)
    assert any(name.startswith(field) for name in problem["errors"]), problem
    assert not Voucher.objects.exists()


def test_staff_change_a_voucher_and_the_change_is_audited(staff_client):
    voucher = make(staff_client, code="SPRING", maxUses=5)
    event = SpecialEventFactory()

    answer = staff_client.patch(
        f"{VOUCHERS}/{voucher['voucherId']}",
        {"maxUses": 10, "tag": "spring", "events": [str(event.pk)]},
        format="json",
    )

    assert answer.status_code == 200, answer.content
    assert (answer.json()["maxUses"], answer.json()["tag"]) == (10, "spring")
    assert answer.json()["events"] == [str(event.pk)]
    record = AuditRecord.objects.get(object_type="orders.voucher", action="changed")
    assert record.changes["max_uses"] == [5, 10] and record.changes["tag"] == ["", "spring"]
    assert record.changes["events"] == [[], [str(event.pk)]]


def test_the_uses_limit_and_budget_are_never_set_below_what_was_used(staff_client):
    voucher = make(staff_client, code="USED", maxUses=5, budget=100)
    for discount in ("15", "15", "10"):
        TicketFactory(voucher_id=voucher["voucherId"], discount=Decimal(discount))
    path = f"{VOUCHERS}/{voucher['voucherId']}"

    fewer = staff_client.patch(path, {"maxUses": 2}, format="json")
    less = staff_client.patch(path, {"budget": 39.99}, format="json")
    enough = staff_client.patch(path, {"maxUses": 3, "budget": 40}, format="json")

    assert "maxUses" in assert_problem(fewer, 400)["errors"]
    assert "budget" in assert_problem(less, 400)["errors"]
    assert enough.status_code == 200 and enough.json()["uses"] == 3
    assert enough.json()["discountGiven"] == 40
    assert Voucher.objects.filter(uses=3, discount_given=40).exists()  # counted from its tickets


def test_a_voucher_is_deleted_only_while_never_used(staff_client):
    unused = make(staff_client, code="UNUSED")
    used = make(staff_client, code="USEDONCE")
    TicketFactory(voucher_id=used["voucherId"], discount=Decimal("5"))

    deleted = staff_client.delete(f"{VOUCHERS}/{unused['voucherId']}")
    kept = staff_client.delete(f"{VOUCHERS}/{used['voucherId']}")

    assert deleted.status_code == 204
    assert assert_problem(kept, 409)["code"] == "voucher_used"
    assert list(Voucher.objects.values_list("code", flat=True)) == ["USEDONCE"]
    assert AuditRecord.objects.filter(object_type="orders.voucher", action="deleted").count() == 1
    assert_problem(staff_client.get(f"{VOUCHERS}/{unused['voucherId']}"), 404)


def test_the_list_filters_by_tag_and_code_and_pages(staff_client, django_assert_max_num_queries):
    for n in range(12):
        make(staff_client, code=f"SCHOOL{n:02}", tag="schools", categories=["child"])
    make(staff_client, code="PRESS01", tag="press")

    with django_assert_max_num_queries(8):
        schools = staff_client.get(VOUCHERS, {"tag": "schools", "limit": 5})
    by_code = staff_client.get(VOUCHERS, {"code": "press"})
    unknown = staff_client.get(VOUCHERS, {"tags": "schools"})

    assert schools.status_code == 200 and schools["X-Total-Count"] == "12"
    assert len(schools.json()) == 5 and 'rel="next"' in schools["Link"]
    assert [v["code"] for v in by_code.json()] == ["PRESS01"]
    assert_problem(unknown, 400)


def test_only_staff_with_the_voucher_permissions_manage_vouchers(
    staff_client, visitor_client, anonymous_client, bare_staff, desk_client
):
    voucher = make(staff_client, code="STAFFONLY")
    path = f"{VOUCHERS}/{voucher['voucherId']}"
    bare = client_for(bare_staff)
    partner = client_for(partner_member(username="partner"))
    calls = [
        ("get", VOUCHERS, None),
        ("post", VOUCHERS, {"effect": "free"}),
        ("get", path, None),
        ("patch", path, {"tag": "x"}),
        ("delete", path, None),
        ("post", f"{VOUCHERS}/batch", {"effect": "free", "count": 2}),
        ("get", f"{VOUCHERS}/export.csv", None),
        ("get", f"{VOUCHERS}/stats", None),
    ]

    for method, url, body in calls:
        assert_problem(getattr(anonymous_client, method)(url, body, format="json"), 401)
        for client in (visitor_client, bare, partner):
            assert_problem(getattr(client, method)(url, body, format="json"), 403)
    assert Voucher.objects.count() == 1 and Voucher.objects.get().tag == ""


def test_a_batch_makes_its_codes_all_at_once_with_one_audit_record(
    staff_client, django_assert_max_num_queries
):
    with django_assert_max_num_queries(30):
        answer = staff_client.post(
            f"{VOUCHERS}/batch",
            {
                "count": 500,
                "prefix": "city-",
                "effect": "amount_off",
                "value": 5,
                "maxUses": 1,
                "tag": "city pass",
                "categories": ["adult", "child"],
            },
            format="json",
        )

    assert answer.status_code == 201, answer.content
    codes = answer.json()["codes"]
    assert answer.json()["count"] == 500 and len(set(codes)) == 500
    assert all(code.startswith("CITY-") for code in codes)
    made = Voucher.objects.filter(tag="city pass")
    assert made.count() == 500 and {v.value for v in made} == {Decimal("5.00")}
    assert Voucher.categories.through.objects.count() == 1000
    records = AuditRecord.objects.filter(object_type="orders.voucher")
    assert records.count() == 1 and records.get().changes["batch"] == 500


def test_a_duplicate_code_in_a_batch_or_one_taken_makes_none(staff_client):
    make(staff_client, code="OLD-1")
    codes = [f"NEW-{n}" for n in range(499)]

    twice = staff_client.post(
        f"{VOUCHERS}/batch", {"effect": "free", "codes": [*codes, "new-7"]}, format="json"
    )
    taken = staff_client.post(
        f"{VOUCHERS}/batch", {"effect": "free", "codes": [*codes, "old-1"]}, format="json"
    )

    assert assert_problem(twice, 409)["voucherCode"] == "NEW-7"
    assert assert_problem(taken, 409)["voucherCode"] == "OLD-1"
    assert list(Voucher.objects.values_list("code", flat=True)) == ["OLD-1"]


def test_a_batch_is_refused_past_its_limits(staff_client, settings):
    settings.MUSEUM_VOUCHER_BATCH_MAX_EMAILS = 2
    emails = ["a@example.com", "b@example.com", "c@example.com"]

    too_many = staff_client.post(
        f"{VOUCHERS}/batch", {"effect": "free", "count": 1001}, format="json"
    )
    none = staff_client.post(f"{VOUCHERS}/batch", {"effect": "free", "count": 0}, format="json")
    mails = staff_client.post(
        f"{VOUCHERS}/batch", {"effect": "free", "emails": emails}, format="json"
    )
    one_mailbox = staff_client.post(
        f"{VOUCHERS}/batch",
        {"effect": "free", "emails": ["Ada@example.com", "ada+2@example.com"]},
        format="json",
    )

    assert_problem(too_many, 400)
    assert_problem(none, 400)
    assert "emails" in assert_problem(mails, 400)["errors"]
    assert "emails" in assert_problem(one_mailbox, 400)["errors"]
    assert not Voucher.objects.exists()


def test_the_stats_count_codes_uses_and_discount_per_tag(staff_client):
    for code in ("P1", "P2", "P3"):
        make(staff_client, code=code, tag="press")
    make(staff_client, code="S1", tag="schools")
    for code, discount in [("P1", "12"), ("P1", "12"), ("P2", "12.50")]:
        TicketFactory(voucher=Voucher.objects.get(code=code), discount=Decimal(discount))
    TicketFactory(voucher=Voucher.objects.get(code="S1"), cancelled_at=timezone.now())

    answer = staff_client.get(f"{VOUCHERS}/stats")
    press = staff_client.get(f"{VOUCHERS}/stats", {"tag": "press"})

    assert answer.status_code == 200
    assert answer.json() == [
        {"tag": "press", "issued": 3, "used": 2, "uses": 3, "discount": 36.5},
        {"tag": "schools", "issued": 1, "used": 0, "uses": 0, "discount": 0},
    ]
    assert press.json() == answer.json()[:1]


def exported(client, **query) -> list[dict]:
    answer = client.get(f"{VOUCHERS}/export.csv", query)
    assert answer.status_code == 200, answer.content
    assert answer["Content-Type"] == "text/csv; charset=utf-8"
    return list(csv.DictReader(io.StringIO(answer.content.decode())))


def test_vouchers_go_out_as_csv_and_come_back_the_same(staff_client):
    event = SpecialEventFactory()
    make(
        staff_client,
        code="ROUND-1",
        effect="set_price",
        value=4.5,
        stacks=True,
        ticketType="event",
        events=[str(event.pk)],
        categories=["adult", "child"],
        visitFrom="2030-05-01",
        visitUntil="2030-06-30",
        entryFrom="10:00",
        channels=["desk", "octo"],
        validUntil="2030-07-01T00:00:00Z",
        maxUses=40,
        budget=200,
        tag="round",
        comment='A "quoted", comma\nand a line',
    )
    make(staff_client, code="ROUND-2", tag="round")
    make(staff_client, code="OTHER", tag="other")
    before = {v["code"]: v for v in staff_client.get(VOUCHERS, {"tag": "round"}).json()}
    file = exported(staff_client, tag="round")
    assert [row["code"] for row in file] == ["ROUND-1", "ROUND-2"]
    assert file[0]["categories"] == "adult child" and file[0]["budget"] == "200.00"
    text = staff_client.get(f"{VOUCHERS}/export.csv", {"tag": "round"}).content
    Voucher.objects.filter(tag="round").delete()

    answer = staff_client.post(f"{VOUCHERS}/import", text, content_type="text/csv")

    assert answer.status_code == 201, answer.content
    assert answer.json() == {"count": 2, "codes": ["ROUND-1", "ROUND-2"]}
    after = {v["code"]: v for v in staff_client.get(VOUCHERS, {"tag": "round"}).json()}
    skip = {"voucherId", "createdAt"}
    assert {c: {k: v for k, v in b.items() if k not in skip} for c, b in before.items()} == {
        c: {k: v for k, v in a.items() if k not in skip} for c, a in after.items()
    }


def test_an_import_is_all_or_none_and_names_the_row(staff_client):
    make(staff_client, code="THERE")
    bad_value = "code,effect,value,maxUses\nA1,free,,1\nA2,percent_off,150,1\n"
    bad_uses = "code,effect,maxUses\nB1,free,many\n"
    taken = "code,effect\nC1,free\nthere,free\n"
    unknown = "code,effect,colour\nD1,free,red\n"

    value = staff_client.post(f"{VOUCHERS}/import", bad_value, content_type="text/csv")
    uses = staff_client.post(f"{VOUCHERS}/import", bad_uses, content_type="text/csv")
    clash = staff_client.post(f"{VOUCHERS}/import", taken, content_type="text/csv")
    column = staff_client.post(f"{VOUCHERS}/import", unknown, content_type="text/csv")

    assert list(assert_problem(value, 400)["errors"]) == ["row 3.value"]
    assert list(assert_problem(uses, 400)["errors"]) == ["row 2.maxUses"]
    assert (assert_problem(clash, 409)["voucherCode"], clash.json()["row"]) == ("THERE", 3)
    assert list(assert_problem(column, 400)["errors"]) == ["file"]
    assert list(Voucher.objects.values_list("code", flat=True)) == ["THERE"]


def test_an_import_takes_the_file_as_a_form_part_too(staff_client):
    upload = SimpleUploadedFile("v.csv", b"code,effect,tag\nFORM-1,free,form\n", "text/csv")

    answer = staff_client.post(f"{VOUCHERS}/import", {"file": upload}, format="multipart")

    assert answer.status_code == 201, answer.content
    assert Voucher.objects.get().code == "FORM-1"


def test_staff_without_add_permission_cannot_import(staff_client):
    viewer = UserFactory(username="viewer")
    viewer.user_permissions.add(*_permissions("view_voucher"))

    read = client_for(viewer).get(VOUCHERS)
    write = client_for(viewer).post(
        f"{VOUCHERS}/import", "code,effect\nX,free\n", content_type="text/csv"
    )

    assert read.status_code == 200
    assert_problem(write, 403)


def _permissions(*codenames):
    from django.contrib.auth.models import Permission

    return Permission.objects.filter(content_type__app_label="orders", codename__in=codenames)


def test_the_stats_agree_with_the_discount_of_the_tickets_sold(staff_client, visitor_client):
    MuseumDayFactory(date=later())
    make(staff_client, code="KIDS-FREE", tag="kids", categories=["child"])
    make(staff_client, code="THREE-OFF", effect="amount_off", value=3, tag="promo", maxUses=10)
    make(staff_client, code="HALF", effect="percent_off", value=50, tag="promo", budget=100)
    orders = []
    for code, lines in [
        ("kids-free", [("adult", 1), ("child", 2)]),
        ("three-off", [("adult", 2)]),
        ("half", [("adult", 1), ("child", 1)]),
        ("half", [("adult", 3)]),
    ]:
        body = order_body(later(), *lines, voucher=code)
        answer = visitor_client.post("/v1.1/orders", body, format="json")
        assert answer.status_code == 201, answer.content
        orders.append(answer.json())
    cancelled = visitor_client.post(f"/v1.1/orders/{orders[3]['orderId']}/cancel")
    assert cancelled.status_code == 200, cancelled.content

    stats = {row["tag"]: row for row in staff_client.get(f"{VOUCHERS}/stats").json()}

    valid = Ticket.objects.filter(cancelled_at__isnull=True, voucher__isnull=False)
    for tag in ("kids", "promo"):
        tickets = valid.filter(voucher__tag=tag)
        given = tickets.aggregate(total=Sum("discount"))["total"]
        assert stats[tag]["uses"] == tickets.count()
        assert Decimal(str(stats[tag]["discount"])) == given
    assert (stats["kids"]["uses"], stats["promo"]["uses"]) == (2, 4)
    # The sale's counters of the vouchers with a limit say the same, the cancelled given back.
    for voucher in Voucher.objects.filter(tag="promo"):
        tickets = valid.filter(voucher=voucher)
        given = tickets.aggregate(total=Sum("discount"))["total"]
        assert (voucher.uses, voucher.discount_given) == (tickets.count(), given)
    assert stats["promo"]["issued"] == 2 and stats["promo"]["used"] == 2
