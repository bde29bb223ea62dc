"""A certificate authority of the test's own, standing in for Apple's: a root, a "WWDR"
intermediate and a pass type certificate with its key (password-protected, as Apple's export
often is), generated at test time; and the settings pointing at them."""

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from museum.settings import walletpass_settings
from tests.wallet.apns import FakeApns, Server, server_certificate

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


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _certificate(subject, subject_key, issuer, issuer_key, *, ca: bool) -> x509.Certificate:
    now = dt.datetime.now(dt.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(_name(issuer))
        .public_key(subject_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        .sign(issuer_key, hashes.SHA256())
    )


def _pem(certificate: x509.Certificate) -> bytes:
    return certificate.public_bytes(serialization.Encoding.PEM)


@pytest.fixture(scope="session")
def test_authority(tmp_path_factory) -> Authority:
    folder = tmp_path_factory.mktemp("apple-wallet")
    ca_key, wwdr_key, pass_key = (ec.generate_private_key(ec.SECP256R1()) for _ in range(3))
    ca = _certificate("Test Root CA", ca_key, "Test Root CA", ca_key, ca=True)
    wwdr = _certificate("Test WWDR", wwdr_key, "Test Root CA", ca_key, ca=True)
    certificate = _certificate(
        f"Pass Type ID: {PASS_TYPE_ID}", pass_key, "Test WWDR", wwdr_key, ca=False
    )
    authority = Authority(
        ca=folder / "ca.pem",
        wwdr=folder / "wwdr.pem",
        certificate=folder / "pass.pem",
        key=folder / "pass-key.pem",
    )
    authority.ca.write_bytes(_pem(ca))
    authority.wwdr.write_bytes(_pem(wwdr))
    authority.certificate.write_bytes(_pem(certificate))
    authority.key.write_bytes(
        pass_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(KEY_PASSWORD.encode()),
        )
    )
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


@pytest.fixture
def apns(apple_wallet, settings, tmp_path, monkeypatch):
    """The stand-in, trusted through SSL_CERT_FILE, and the museum's APNs key (a .p8, made
    here) pointing at it; `apns.public_key` verifies the pushes' JWTs."""
    ca, certificate, key = server_certificate(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(ca))
    signing = ec.generate_private_key(ec.SECP256R1())
    p8 = tmp_path / f"AuthKey_{APNS_KEY_ID}.p8"
    p8.write_bytes(
        signing.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    state = FakeApns()
    server = Server(state, certificate, key)
    server.start()
    settings.MUSEUM_WALLET_APPLE_APNS_KEY = str(p8)
    settings.MUSEUM_WALLET_APPLE_APNS_KEY_ID = APNS_KEY_ID
    settings.MUSEUM_WALLET_APPLE_APNS_URL = state.url
    state.public_key = signing.public_key()
    yield state
    server.stop()
