"""A certificate authority of the test's own, standing in for Apple's: a root, a "WWDR"
intermediate and a pass type certificate with its key (password-protected, as Apple's export
often is), generated at test time; and the settings pointing at them. A member and a paid-for
membership type, for either wallet's cards. For Google: its stand-in
on loopback (google_fake.py) with a service account's key made at test time, and the save
link's claims read as Google reads them."""

import base64
import datetime as dt
import json
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from django.utils import timezone
from google.auth import crypt, jwt

from museum.settings import walletpass_settings
from orders.models import MembershipType
from tests.certificates import certificate_pem, issued, key_pem, new_key
from tests.factories import MembershipFactory, MuseumDayFactory
from tests.wallet.apns import FakeApns, Server, server_certificate
from tests.wallet.google_fake import API_PATH, TOKEN_PATH, FakeGoogle, ServiceAccount
from wallet.google import SAVE_URL

PASS_TYPE_ID = "pass.example.museum.ticket"
TEAM_ID = "TEAMID1234"
KEY_PASSWORD = "correct horse"
APNS_KEY_ID = "KEYID12345"


@dataclass(frozen=True)
class Authority:
    ca: Path
    wwdr: Path
    certificate: Path
    key: Path
    wwdr_key: ec.EllipticCurvePrivateKey
    pass_key: ec.EllipticCurvePrivateKey

    def pass_certificate(self, *, days: int) -> bytes:
        """Another pass certificate for the same key, valid for `days` from now (PEM)."""
        made = issued(
            f"Pass Type ID: {PASS_TYPE_ID}",
            self.pass_key,
            issuer="Test WWDR",
            issuer_key=self.wwdr_key,
            days=days,
            since_days=400,
        )
        return certificate_pem(made)


@pytest.fixture(scope="session")
def test_authority(tmp_path_factory) -> Authority:
    folder = tmp_path_factory.mktemp("apple-wallet")
    ca_key, wwdr_key, pass_key = new_key(), new_key(), new_key()
    ca = issued("Test Root CA", ca_key, ca=True)
    wwdr = issued("Test WWDR", wwdr_key, issuer="Test Root CA", issuer_key=ca_key, ca=True)
    certificate = issued(
        f"Pass Type ID: {PASS_TYPE_ID}", pass_key, issuer="Test WWDR", issuer_key=wwdr_key
    )
    authority = Authority(
        ca=folder / "ca.pem",
        wwdr=folder / "wwdr.pem",
        certificate=folder / "pass.pem",
        key=folder / "pass-key.pem",
        wwdr_key=wwdr_key,
        pass_key=pass_key,
    )
    authority.ca.write_bytes(certificate_pem(ca))
    authority.wwdr.write_bytes(certificate_pem(wwdr))
    authority.certificate.write_bytes(certificate_pem(certificate))
    authority.key.write_bytes(key_pem(pass_key, KEY_PASSWORD))
    return authority


@pytest.fixture
def apple_wallet(settings, test_authority) -> Authority:
    """Apple Wallet configured with the test authority's pass certificate."""
    values = {
        "pass_type_id": PASS_TYPE_ID,
        "team_id": TEAM_ID,
        "certificate": str(test_authority.certificate),
        "key": str(test_authority.key),
        "key_password": KEY_PASSWORD,
        "wwdr": str(test_authority.wwdr),
    }
    settings.MUSEUM_WALLET_APPLE_PASS_TYPE_ID = PASS_TYPE_ID
    settings.MUSEUM_WALLET_APPLE_TEAM_ID = TEAM_ID
    settings.MUSEUM_WALLET_APPLE_CERTIFICATE = values["certificate"]
    settings.MUSEUM_WALLET_APPLE_KEY = values["key"]
    settings.MUSEUM_WALLET_APPLE_KEY_PASSWORD = KEY_PASSWORD
    settings.MUSEUM_WALLET_APPLE_WWDR_CERTIFICATE = values["wwdr"]
    # django_walletpass reads WALLETPASS again when the setting changes (its setting_changed).
    settings.WALLETPASS = walletpass_settings(**values)
    return test_authority


# Member cards and gift cards, in either wallet


@pytest.fixture
def untimed_today(db):
    """Today open without entry slots: a member card admits walk-ins at the door."""
    return MuseumDayFactory(date=timezone.localdate())


@pytest.fixture
def member(online_visitor):
    return MembershipFactory(
        buyer=online_visitor,
        holder_name="Zoë Álvarez",
        email="zoe.private@example.org",
        valid_until=dt.date(2031, 3, 14),
    )


@pytest.fixture
def individual(db):
    return MembershipType.objects.create(code="individual", name="Individual", price=Decimal("60"))


# Google Wallet

ISSUER = "3388000000012345678"
# Google's limit for a link is about 2,000 characters; the save link must stay well under it.
LONGEST_LINK = 1800


@pytest.fixture
def google(settings, httpserver, tmp_path) -> FakeGoogle:
    account = ServiceAccount.make(token_uri=httpserver.url_for(TOKEN_PATH))
    key_file = tmp_path / "google-wallet.json"
    key_file.write_text(json.dumps(account.key_json))
    settings.MUSEUM_WALLET_GOOGLE_ISSUER_ID = ISSUER
    settings.MUSEUM_WALLET_GOOGLE_SERVICE_ACCOUNT = str(key_file)
    settings.MUSEUM_WALLET_GOOGLE_API_URL = httpserver.url_for(API_PATH)
    settings.MUSEUM_PUBLIC_URL = "https://tickets.museum.example"
    # A zone with an offset, so that the pass's times are seen to carry it.
    settings.TIME_ZONE = "Europe/Amsterdam"
    fake = FakeGoogle(account)
    fake.install(httpserver)
    return fake


def claims_of(save_url: str, google: FakeGoogle) -> dict:
    """The save link's claims, once its RS256 signature verifies with the service account's
    certificate. Google's save JWT has no `exp` (its reference lists none), which jwt.decode's
    verification requires: the signature is checked by google-auth's verifier itself."""
    token = save_url.removeprefix(SAVE_URL)
    signed, _, signature = token.rpartition(".")
    assert jwt.decode_header(token) == {"alg": "RS256", "typ": "JWT", "kid": "test-key"}
    assert crypt.verify_signature(
        signed.encode(),
        base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4)),
        google.account.certificate_pem,
    )
    claims = jwt.decode(token, verify=False)
    assert claims["aud"] == "google"
    return claims


@pytest.fixture
def apns(apple_wallet, settings, tmp_path, monkeypatch):
    """The stand-in, trusted through SSL_CERT_FILE, and the museum's APNs key (a .p8, made
    here) pointing at it; `apns.public_key` verifies the pushes' JWTs."""
    ca, certificate, key = server_certificate(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(ca))
    signing = new_key()
    p8 = tmp_path / f"AuthKey_{APNS_KEY_ID}.p8"
    p8.write_bytes(key_pem(signing))
    state = FakeApns()
    server = Server(state, certificate, key)
    server.start()
    settings.MUSEUM_WALLET_APPLE_APNS_KEY = str(p8)
    settings.MUSEUM_WALLET_APPLE_APNS_KEY_ID = APNS_KEY_ID
    settings.MUSEUM_WALLET_APPLE_APNS_URL = state.url
    state.public_key = signing.public_key()
    yield state
    server.stop()
