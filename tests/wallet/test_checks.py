"""What an operator is told of the wallet's set-up: `manage.py check` warns of missing settings
and of a pass certificate about to expire, and /readyz's details say the same, without ever
making the service unready for it."""

import datetime as dt

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from django.core import checks as django_checks

TOKEN = "scrape-token-for-tests"


def certificate_until(path, days: int) -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Pass Type ID: test")])
    now = dt.datetime.now(dt.UTC)
    made = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=400))
        .not_valid_after(now + dt.timedelta(days=days))
        .sign(key, hashes.SHA256())
    )
    path.write_bytes(made.public_bytes(serialization.Encoding.PEM))
    return str(path)


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
    settings.MUSEUM_WALLET_APPLE_CERTIFICATE = certificate_until(tmp_path / "pass.pem", days)
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
