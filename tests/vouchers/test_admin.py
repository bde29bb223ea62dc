"""Vouchers in the admin: made and changed through the API's services (the same rules, the row's
lock, the audit record), the counters never written by a form; the selected exported as CSV,
a CSV file imported, the statistics per tag."""

from decimal import Decimal

from django.core.files.uploadedfile import SimpleUploadedFile

from audit.models import Action, AuditRecord
from orders.models import Voucher
from tests.factories import TicketFactory

ADMIN = "/admin/orders/voucher/"


def form_data(**fields) -> dict:
    return {
        "code": "",
        "effect": "free",
        "value": "0",
        "tag": "",
        "comment": "",
        "channels": ["online", "desk", "partner", "octo"],
        "ticket_type": "",
        **fields,
    }


def test_staff_make_a_voucher_in_the_admin_through_the_service(desk_client):
    answer = desk_client.post(f"{ADMIN}add/", form_data(code="lender-1", max_uses="2", tag="loan"))

    assert answer.status_code == 302, answer.content.decode()[:3000]
    voucher = Voucher.objects.get()
    assert (voucher.code, voucher.max_uses, voucher.tag) == ("LENDER-1", 2, "loan")
    record = AuditRecord.objects.get(object_type="orders.voucher")
    assert record.action == Action.CREATED and record.actor.username == "desk"


def test_a_change_in_the_admin_keeps_the_counters_the_sale_wrote(desk_client):
    voucher = Voucher.objects.create(code="COUNTED", effect="free", max_uses=10)
    page = desk_client.get(f"{ADMIN}{voucher.pk}/change/")
    assert page.status_code == 200
    # A sale takes uses between the form's reading and its saving.
    for _ in range(4):
        TicketFactory(voucher=voucher, discount=Decimal("12"))
    Voucher.objects.filter(pk=voucher.pk).update(uses=4, discount_given=Decimal("48"))

    answer = desk_client.post(
        f"{ADMIN}{voucher.pk}/change/", form_data(code="COUNTED", max_uses="12", tag="more")
    )

    assert answer.status_code == 302, answer.content.decode()[:3000]
    voucher.refresh_from_db()
    assert (voucher.uses, voucher.discount_given) == (4, Decimal("48.00"))
    assert (voucher.max_uses, voucher.tag) == (12, "more")
    record = AuditRecord.objects.get(object_type="orders.voucher", action=Action.CHANGED)
    assert record.changes["max_uses"] == [10, 12]


def test_the_services_rules_are_the_forms_errors(desk_client):
    used = Voucher.objects.create(code="USED", effect="free", max_uses=5, uses=3)
    for _ in range(3):
        TicketFactory(voucher=used)
    Voucher.objects.create(code="TAKEN", effect="free")

    percent = desk_client.post(f"{ADMIN}add/", form_data(effect="percent_off", value="150"))
    taken = desk_client.post(f"{ADMIN}add/", form_data(code="taken"))
    fewer = desk_client.post(f"{ADMIN}{used.pk}/change/", form_data(code="USED", max_uses="2"))

    for answer in (percent, taken, fewer):
        assert answer.status_code == 200 and "errorlist" in answer.content.decode()
    assert "used 3 times" in fewer.content.decode()
    used.refresh_from_db()
    assert Voucher.objects.count() == 2 and used.max_uses == 5


def test_a_used_voucher_is_not_deleted_in_the_admin(desk_client):
    voucher = Voucher.objects.create(code="GONE", effect="free")
    used = Voucher.objects.create(code="KEPT", effect="free")
    TicketFactory(voucher=used)

    desk_client.post(f"{ADMIN}{voucher.pk}/delete/", {"post": "yes"})
    desk_client.post(f"{ADMIN}{used.pk}/delete/", {"post": "yes"})

    assert list(Voucher.objects.values_list("code", flat=True)) == ["KEPT"]
    assert AuditRecord.objects.filter(action=Action.DELETED).count() == 1


def test_export_import_and_stats_pages(desk_client):
    Voucher.objects.create(code="A-1", effect="free", tag="press")
    Voucher.objects.create(code="A-2", effect="free", tag="press")
    chosen = list(Voucher.objects.values_list("pk", flat=True))

    exported = desk_client.post(ADMIN, {"action": "export_csv", "_selected_action": chosen})
    assert exported["Content-Type"] == "text/csv; charset=utf-8"
    Voucher.objects.all().delete()
    upload = SimpleUploadedFile("vouchers.csv", exported.content, "text/csv")
    imported = desk_client.post(f"{ADMIN}import/", {"file": upload})
    again = desk_client.post(
        f"{ADMIN}import/",
        {"file": SimpleUploadedFile("v.csv", exported.content, "text/csv")},
    )
    stats = desk_client.get(f"{ADMIN}stats/")
    csv = desk_client.get(f"{ADMIN}stats/", {"format": "csv"})

    assert imported.status_code == 302
    assert sorted(Voucher.objects.values_list("code", flat=True)) == ["A-1", "A-2"]
    assert again.status_code == 200 and "Another voucher has A-1." in again.content.decode()
    assert stats.status_code == 200 and "press" in stats.content.decode()
    assert csv.content.decode().splitlines()[1] == "press,2,0,0,0.00"
