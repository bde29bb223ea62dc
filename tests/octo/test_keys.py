"""Partners' API keys: issued by staff in the admin or by the command, shown once, kept hashed."""

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.test import APIClient

from octo.keys import digest_of
from octo.models import ApiKey
from tests.factories import staff_member


def test_staff_issue_a_key_in_the_admin_and_see_it_once(client, partner):
    client.force_login(staff_member(username="staff"))
    answer = client.post(
        "/admin/octo/apikey/add/", {"account": partner.pk, "name": "Tiqets"}, follow=True
    )
    [shown] = [str(m) for m in answer.context["messages"] if "shown only now" in str(m)]
    key = shown.rsplit(" ", 1)[1]
    stored = ApiKey.objects.get()
    assert (stored.account, stored.name, stored.digest) == (partner, "Tiqets", digest_of(key))
    assert key not in client.get(f"/admin/octo/apikey/{stored.pk}/change/").content.decode()

    bearer = APIClient(HTTP_AUTHORIZATION=f"Bearer {key}")
    assert bearer.get("/octo/supplier").status_code == 200

    client.post(
        "/admin/octo/apikey/",
        {"action": "revoke", "_selected_action": [stored.pk]},
        follow=True,
    )
    assert bearer.get("/octo/supplier").status_code == 401


def test_the_command_issues_a_key_to_a_partner_only(partner):
    out = io.StringIO()
    call_command("create_api_key", "reseller", "--name", "Shop", stdout=out)
    key = out.getvalue().strip()
    assert ApiKey.objects.get(name="Shop").digest == digest_of(key)
    with pytest.raises(CommandError):
        call_command("create_api_key", "staff", stdout=io.StringIO())  # nobody of that name
    staff_member(username="staff")
    with pytest.raises(CommandError):
        call_command("create_api_key", "staff", stdout=io.StringIO())  # not a partner


def test_a_key_of_an_account_that_is_not_a_partner_is_forbidden(partner):
    out = io.StringIO()
    call_command("create_api_key", "reseller", stdout=out)
    partner.groups.clear()
    answer = APIClient(HTTP_AUTHORIZATION=f"Bearer {out.getvalue().strip()}").get("/octo/supplier")
    assert (answer.status_code, answer.json()["error"]) == (403, "FORBIDDEN")
