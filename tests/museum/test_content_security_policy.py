"""The admin and the door pages carry a Content-Security-Policy that allows our own files only."""

from tests.factories import MuseumDayFactory, TicketFactory, days_from_today, staff_member

POLICY = "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"  # noqa: E501


def directives(response) -> set[str]:
    return {part.strip() for part in response["Content-Security-Policy"].split(";")}


def test_the_admin_login_and_the_door_carry_the_policy(client, db):
    login = client.get("/admin/login/?next=/door/")
    client.force_login(staff_member(username="desk"))
    door = client.get("/door/")
    admin = client.get("/admin/")

    for page in (login, door, admin):
        assert page.status_code == 200
        assert directives(page) == set(POLICY.split("; "))


def test_the_door_page_has_no_inline_script_or_style(client, db):
    client.force_login(staff_member(username="desk"))

    html = client.get("/door/").content.decode()

    assert "<script>" not in html and "<style>" not in html and "style=" not in html
    assert '<script src="/static/tickets/door.js">' in html


def test_the_api_docs_keep_their_inline_script(client, db):
    docs = client.get("/v1.1/docs/")

    assert docs.status_code == 200
    assert "Content-Security-Policy" not in docs


def test_admin_pages_style_through_the_stylesheet_not_inline(admin_client):
    # The policy refuses style attributes: a colour or a size given inline would be dropped.
    day = MuseumDayFactory(date=days_from_today(1), is_closed=True)
    ticket = TicketFactory()

    days = admin_client.get("/admin/hours/museumday/").content.decode()
    page = admin_client.get(f"/admin/orders/ticket/{ticket.pk}/change/").content.decode()

    assert day.is_closed and 'class="museum-closed"' in days and "style=" not in days
    assert 'class="museum-ticket-image"' in page and "style=" not in page
