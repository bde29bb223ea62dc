"""Certificates the tests make for themselves, so nothing secret is committed: the stand-ins for
Apple's certificate authority and a pass certificate, the TLS certificates of the loopback
servers (APNs' stand-in, nginx), and their keys as PEM."""

import datetime as dt
import ipaddress

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

# A certificate for the loopback servers the tests start, by address and by name.
LOOPBACK = (x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost"))


def new_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def issued(
    subject: str,
    key,
    *,
    issuer: str | None = None,
    issuer_key=None,
    ca: bool = False,
    days: int = 30,
    names: tuple[x509.GeneralName, ...] = (),
    since_days: int = 1,
) -> x509.Certificate:
    """A certificate for `key`'s public half, valid from `since_days` ago for `days` from now,
    issued by `issuer` with `issuer_key` (self-signed without them)."""
    now = dt.datetime.now(dt.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(_name(issuer or subject))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=since_days))
        .not_valid_after(now + dt.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if names:
        builder = builder.add_extension(x509.SubjectAlternativeName(list(names)), critical=False)
    return builder.sign(issuer_key or key, hashes.SHA256())


def certificate_pem(certificate: x509.Certificate) -> bytes:
    return certificate.public_bytes(serialization.Encoding.PEM)


def key_pem(key, password: str | None = None) -> bytes:
    """The private key as PKCS#8 PEM, encrypted with `password` if given."""
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(password.encode())
        if password
        else serialization.NoEncryption(),
    )


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
