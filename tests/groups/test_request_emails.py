"""A group's emails: each step mails the group in its language, by the task queue after the
commit (a step refused mails nothing), each claimed once; staff are told of a new request and
an expired one; the approval carries the invoice and its terms, an offer a signed link that
accepts it; every email to the group counts toward its mailbox's daily limit."""

import datetime as dt

import pytest
from django.core import mail
from django.utils import timezone

from groups import links
from groups.models import GroupEmail, GroupRequest, GroupStatus
from groups.services import approval, numbers, requests
from orders.exceptions import SoldOut
from tests.conftest import run_task_worker
from tests.factories import MuseumDayFactory, OrderFactory, staff_member
from tests.groups.conftest import ahead, school

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def museum(settings):
    settings.MUSEUM_NAME = "Stadtmuseum Test"
    settings.MUSEUM_GROUP_STAFF_EMAIL = "groups@museum.example"


@pytest.fixture
def desk(db):
    return staff_member(username="groups-desk")


@pytest.fixture
def asked(pupil, teacher, chaperones, group_day) -> GroupRequest:
    return requests.request_group(account=None, **school(group_day.date))


def sent_to(address: str) -> list:
    return [message for message in mail.outbox if message.to == [address]]


def test_a_request_received_is_mailed_to_the_group_in_its_language_and_to_staff(asked, group_day):
    assert not mail.outbox  # after the commit, by the task queue

    run_task_worker()

    [group_mail] = sent_to("weber@schiller.example")
    assert group_mail.subject == f"Ihre Gruppenanfrage {asked.code}"
    weekday = ["Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag"]
    assert weekday[group_day.date.weekday()] in group_mail.body  # German dates
    assert "Frau Weber" in group_mail.body and "28" in group_mail.body
    [staff_mail] = sent_to("groups@museum.example")
    assert asked.code in staff_mail.subject and "Schiller-Gymnasium" in staff_mail.subject
    assert "weber@schiller.example" in staff_mail.body

    run_task_worker()
    assert len(mail.outbox) == 2  # each claimed once


def test_no_staff_email_without_the_setting(settings, pupil, teacher, group_day):
    settings.MUSEUM_GROUP_STAFF_EMAIL = ""

    requests.request_group(account=None, **school(group_day.date))
    run_task_worker()

    assert [message.to for message in mail.outbox] == [["weber@schiller.example"]]


def test_a_request_refused_mails_nothing(pupil, teacher, group_day):
    with pytest.raises(SoldOut):
        requests.request_group(account=None, **school(group_day.date, lines={"pupil": 41}))

    run_task_worker()

    assert not mail.outbox and not GroupEmail.objects.exists()


def test_the_approval_says_confirmed_with_the_invoice_its_deposit_and_balance(asked, desk):
    run_task_worker()
    mail.outbox.clear()

    approved = approval.approve(request_id=asked.pk, by=desk)
    run_task_worker()

    # Beside the order's own email with its tickets (orders.tasks), the group's: confirmed.
    [message] = [m for m in sent_to("weber@schiller.example") if "bestätigt" in m.subject]
    order = approved.order
    assert approved.date.strftime("%Y") in message.subject
    assert order.confirmation_code in message.body
    assert "50,40" in message.body and "117,60" in message.body  # deposit, balance (German)
    assert str(approved.deposit_due.day) in message.body
    [(name, pdf, kind)] = message.attachments
    assert kind == "application/pdf" and pdf.startswith(b"%PDF") and name.startswith("I")
    assert not sent_to("groups@museum.example")  # staff made it


def test_changed_numbers_are_mailed_with_the_invoice_issued_anew(asked, desk):
    approval.approve(request_id=asked.pk, by=desk)
    run_task_worker()
    mail.outbox.clear()

    numbers.change_numbers(request_id=asked.pk, by=desk, lines={"pupil": 30, "teacher": 3})
    run_task_worker()

    [message] = [m for m in sent_to("weber@schiller.example") if "geändert" in m.subject]
    assert "30 " in message.body and "3 " in message.body
    names = sorted(name for name, _, _ in message.attachments)
    assert len(names) == 3  # the first invoice, its credit note, the new invoice


def test_an_offer_links_to_a_page_that_accepts_it(asked, desk, client):
    other_day = MuseumDayFactory(date=ahead(31), capacity=40).date
    requests.offer_time(request_id=asked.pk, by=desk, date=other_day, message="Der 30. ist voll.")
    run_task_worker()

    [offer] = [m for m in sent_to("weber@schiller.example") if "Der 30. ist voll." in m.body]
    link = links.accept_url(GroupRequest.objects.get(pk=asked.pk))
    assert link in offer.body and link in offer.alternatives[0][0]
    path = link.removeprefix("http://127.0.0.1:8000")

    shown = client.get(path)
    assert shown.status_code == 200 and '<html lang="de">' in shown.content.decode()
    assert "Der 30. ist voll." in shown.content.decode()
    accepted = client.post(path)
    assert accepted.status_code == 200
    assert GroupRequest.objects.get(pk=asked.pk).status == GroupStatus.REQUESTED
    assert client.post(path).status_code == 409  # accepted once
    assert client.get(path[:-3] + "xyz").status_code == 404


def test_a_link_to_an_earlier_offer_opens_nothing(asked, desk, client):
    first, second = (MuseumDayFactory(date=ahead(n), capacity=40).date for n in (31, 32))
    requests.offer_time(request_id=asked.pk, by=desk, date=first)
    earlier = links.accept_url(GroupRequest.objects.get(pk=asked.pk))
    requests.offer_time(request_id=asked.pk, by=desk, date=second)

    assert client.get(earlier.removeprefix("http://127.0.0.1:8000")).status_code == 404


def test_a_decline_tells_the_reason(asked, desk):
    run_task_worker()
    mail.outbox.clear()

    requests.decline(request_id=asked.pk, by=desk, reason="Wegen Umbau geschlossen")
    run_task_worker()

    [declined] = sent_to("weber@schiller.example")
    assert declined.subject == f"Ihre Gruppenanfrage {asked.code} wurde abgelehnt"
    assert "Grund: Wegen Umbau geschlossen" in declined.body


def test_a_visit_cancelled_is_told_with_its_credit_note(asked, desk):
    approval.approve(request_id=asked.pk, by=desk)
    run_task_worker()
    mail.outbox.clear()

    numbers.cancel_group(request_id=asked.pk, by=desk, reason="Bus strike")
    run_task_worker()

    [told] = [m for m in sent_to("weber@schiller.example") if "abgesagt" in m.subject]
    assert "Grund: Bus strike" in told.body
    names = [name for name, _, _ in told.attachments]
    assert any(name.startswith("C") for name in names)  # the credit note


def test_an_expired_request_tells_the_group_and_staff(asked):
    run_task_worker()
    mail.outbox.clear()
    GroupRequest.objects.filter(pk=asked.pk).update(expires_at=timezone.now())

    requests.expire_requests()
    run_task_worker()

    assert len(sent_to("weber@schiller.example")) == 1
    [staff_mail] = sent_to("groups@museum.example")
    assert asked.code in staff_mail.subject


def test_reminders_say_what_falls_due(asked, desk):
    from groups.services import money

    approval.approve(request_id=asked.pk, by=desk)
    run_task_worker()
    mail.outbox.clear()
    GroupRequest.objects.filter(pk=asked.pk).update(deposit_due=timezone.localdate())

    money.remind_groups()
    run_task_worker()

    [reminder] = sent_to("weber@schiller.example")
    assert "50,40" in reminder.body and GroupEmail.objects.filter(kind="deposit_reminder").exists()


def test_a_mailbox_past_its_daily_limit_gets_no_more_but_staff_are_told(
    settings, pupil, teacher, group_day
):
    settings.MUSEUM_MAX_EMAILS_PER_ADDRESS_PER_DAY = 1
    order = OrderFactory(email="weber@schiller.example", mailbox="weber@schiller.example")
    order.emails.create(kind="confirmation")

    requests.request_group(account=None, **school(group_day.date, email="Weber+1@Schiller.example"))
    run_task_worker()

    assert [message.to for message in mail.outbox] == [["groups@museum.example"]]
    skipped = GroupEmail.objects.get(to_staff=False)
    assert skipped.sent_at is None and skipped.skipped


def test_group_emails_count_toward_the_limit_themselves(settings, pupil, teacher):
    settings.MUSEUM_MAX_EMAILS_PER_ADDRESS_PER_DAY = 2
    settings.MUSEUM_GROUP_STAFF_EMAIL = ""
    for days in (40, 41, 42):
        day = MuseumDayFactory(date=ahead(days), capacity=40).date
        requests.request_group(account=None, **school(day, lines={"pupil": 5}))
        run_task_worker()

    assert len(mail.outbox) == 2
    assert GroupEmail.objects.filter(skipped="").count() == 2


def test_a_group_email_sent_yesterday_no_longer_counts(settings, pupil, teacher, group_day):
    settings.MUSEUM_MAX_EMAILS_PER_ADDRESS_PER_DAY = 1
    settings.MUSEUM_GROUP_STAFF_EMAIL = ""
    requests.request_group(account=None, **school(group_day.date, lines={"pupil": 5}))
    run_task_worker()
    GroupEmail.objects.update(sent_at=timezone.now() - dt.timedelta(days=1, minutes=1))

    day = MuseumDayFactory(date=ahead(40), capacity=40).date
    requests.request_group(account=None, **school(day, lines={"pupil": 5}))
    run_task_worker()

    assert len(mail.outbox) == 2
