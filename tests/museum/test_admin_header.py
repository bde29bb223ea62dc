"""The admin's header: links to the desk and the door for those who may use them, and "View site"
leading to the staff pages, not to the API's documentation at the root address."""

import re

import pytest

from museum.accounts import create_account
from tests.factories import PASSWORD


def header(client, username: str, **role) -> str:
    client.force_login(create_account(username=username, password=PASSWORD, **role))
    page = client.get("/admin/").content.decode()
    return re.search(r'<div id="user-tools">.*?</div>', page, re.S).group(0)


@pytest.mark.parametrize(
    ("role", "view_site", "desk_link"),
    [
        ({"desk": True}, "/desk/", True),
        ({"staff": True}, "/desk/", True),
        ({"door": True}, "/door/", False),
    ],
)
def test_the_header_links_the_staff_pages_each_account_may_use(
    client, db, role, view_site, desk_link
):
    tools = header(client, "someone", **role)

    assert f'<a href="{view_site}">View site</a>' in tools
    assert ('<a href="/desk/">Desk (sell tickets)</a>' in tools) == desk_link
    assert '<a href="/door/">Door (check tickets in)</a>' in tools  # each of them checks in
    assert "/v1.1/docs/" not in tools and 'href="/"' not in tools


def test_an_account_without_staff_pages_has_no_view_site(client, db):
    user = create_account(username="bare", password=PASSWORD)
    user.is_staff = True
    user.save()
    client.force_login(user)

    tools = re.search(
        r'<div id="user-tools">.*?</div>', client.get("/admin/").content.decode(), re.S
    )

    assert "View site" not in tools.group(0) and "/desk/" not in tools.group(0)


def test_the_payments_list_has_the_on_account_statements_button(desk_client):
    page = desk_client.get("/admin/orders/payment/").content.decode()

    assert '<a href="/admin/orders/payment/on-account/">Sold on account</a>' in page
    assert desk_client.get("/admin/orders/payment/on-account/").status_code == 200
