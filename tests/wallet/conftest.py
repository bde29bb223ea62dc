"""A certificate authority of the test's own, standing in for Apple's: a root, a "WWDR"
intermediate and a pass type certificate with its key (password-protected, as Apple's export
often is), generated at test time; and the settings pointing at them."""

from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from museum.settings import walletpass_settings
from tests.certificates import certificate_pem, issued, key_pem, new_key

PASS_TYPE_ID = "pass.example.museum.ticket"
TEAM_ID = "TEAMID1234"
KEY_PASSWORD = "correct horse"


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
