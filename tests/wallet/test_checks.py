"""What an operator is told of the wallet's set-up: `manage.py check` warns of missing settings
and of a pass certificate about to expire, and /readyz's details say the same, without ever
making the service unready for it."""

import datetime as dt

import pytest
from django.core import checks as django_checks

from tests.certificates import key_pem, new_key

TOKEN = "scrape-token-for-tests"


def wallet_warnings() -> list[str]:
    return [m.msg for m in django_checks.run_checks() if m.id == "wallet.W001"]


@pytest.fixture
def scraper(settings, anonymous_client):
    settings.MUSEUM_METRICS_TOKEN = TOKEN
    anonymous_client.credentials(HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    return anonymous_client


def test_without_any_apple_setting_nothing_is_said_but_not_configured(db, scraper):
    assert wallet_warnings() == []
    assert scraper.get("/readyz").json()["wallet_apple"] == "not configured"


def test_a_partial_set_up_names_what_is_missing(db, settings, scraper):
    settings.MUSEUM_WALLET_APPLE_PASS_TYPE_ID = "pass.example.museum.ticket"
    settings.MUSEUM_WALLET_APPLE_TEAM_ID = "TEAMID1234"

    [warning] = wallet_warnings()

    assert "MUSEUM_WALLET_APPLE_CERTIFICATE" in warning
    assert "MUSEUM_WALLET_APPLE_TEAM_ID" not in warning
    assert "MUSEUM_WALLET_APPLE_CERTIFICATE" in scraper.get("/readyz").json()["wallet_apple"]


@pytest.mark.parametrize(
    ("days", "said"),
    [(365, None), (31, None), (29, "certificate expires on"), (-1, "certificate expired on")],
)
def test_the_pass_certificate_is_warned_of_30_days_before_it_expires(
    db, settings, apple_wallet, tmp_path, scraper, days, said
):
    renewed = tmp_path / "pass.pem"
    renewed.write_bytes(apple_wallet.pass_certificate(days=days))
    settings.MUSEUM_WALLET_APPLE_CERTIFICATE = str(renewed)
    expires = (dt.datetime.now(dt.UTC) + dt.timedelta(days=days)).date().isoformat()

    warnings = wallet_warnings()
    ready = scraper.get("/readyz")

    if said is None:
        assert warnings == []
        assert ready.json()["wallet_apple"] == "ok"
    else:
        assert warnings == [f"Apple Wallet passes: {said} {expires}."]
        assert ready.json()["wallet_apple"] == f"{said} {expires}"
    # Passes are optional: the wallet is never why the service is unready.
    assert ready.json()["tasks"] != "ok" or ready.status_code == 200


def test_a_wrong_key_password_is_said_at_the_start(db, settings, apple_wallet, scraper):
    settings.MUSEUM_WALLET_APPLE_KEY_PASSWORD = "wrong horse"

    said = "key unreadable, or MUSEUM_WALLET_APPLE_KEY_PASSWORD wrong for it"
    assert wallet_warnings() == [f"Apple Wallet passes: {said}."]
    assert scraper.get("/readyz").json()["wallet_apple"] == said


def test_a_key_that_is_not_the_certificates_is_said(db, settings, apple_wallet, tmp_path):
    other = tmp_path / "other-key.pem"
    other.write_bytes(key_pem(new_key()))
    settings.MUSEUM_WALLET_APPLE_KEY = str(other)
    settings.MUSEUM_WALLET_APPLE_KEY_PASSWORD = ""

    assert wallet_warnings() == ["Apple Wallet passes: key is not the pass certificate's."]


def test_an_unreadable_wwdr_certificate_is_said(db, settings, apple_wallet, tmp_path):
    broken = tmp_path / "wwdr.pem"
    broken.write_text("not a certificate")
    settings.MUSEUM_WALLET_APPLE_WWDR_CERTIFICATE = str(broken)

    assert wallet_warnings() == ["Apple Wallet passes: WWDR certificate unreadable."]


def test_anyone_but_the_scraper_is_told_nothing_of_the_wallet(db, anonymous_client):
    assert "wallet_apple" not in anonymous_client.get("/readyz").json()


def google_warnings() -> list[str]:
    return [m.msg for m in django_checks.run_checks() if m.id == "wallet.W002"]


@pytest.mark.parametrize(
    ("issuer", "key", "said"),
    [
        ("", "", "not configured"),
        ("3388000000012345678", "", "missing MUSEUM_WALLET_GOOGLE_SERVICE_ACCOUNT"),
        ("3388000000012345678", '{"type": "service_account"}', "service account key unreadable"),
        ("3388000000012345678", "not json", "service account key unreadable"),
        (
            "3388000000012345678",
            '{"client_email": "w@example.iam.gserviceaccount.com", "private_key": "-"}',
            "ok",
        ),
    ],
)
def test_google_wallets_set_up_is_told_alike(db, settings, tmp_path, scraper, issuer, key, said):
    settings.MUSEUM_WALLET_GOOGLE_ISSUER_ID = issuer
    settings.MUSEUM_WALLET_GOOGLE_SERVICE_ACCOUNT = ""
    if key:
        (tmp_path / "key.json").write_text(key)
        settings.MUSEUM_WALLET_GOOGLE_SERVICE_ACCOUNT = str(tmp_path / "key.json")

    assert scraper.get("/readyz").json()["wallet_google"] == said
    quiet = said in ("ok", "not configured")
    assert google_warnings() == ([] if quiet else [f"Google Wallet passes: {said}."])
