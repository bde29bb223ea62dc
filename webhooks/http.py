"""Sending a webhook without server-side request forgery.

The receiver's host is resolved once; an address that is not public (`is_public`) is refused
(unless the host is in MUSEUM_WEBHOOK_ALLOWED_HOSTS), and the request connects to an address
that passed, with the
name in the Host header and TLS (SNI and the certificate's check), so a DNS answer that changes
between the check and the connection (rebinding) never reaches another address. No redirect is
followed; everything waits at most TIMEOUT seconds.
"""

import ipaddress
import socket
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import urllib3
from django.conf import settings

TIMEOUT = 10
ANSWER_BYTES = 500


class Refused(Exception):
    """The URL may not be called: its scheme, or where its host's addresses lead."""


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes
    duration_ms: int


def _allowed_host(host: str) -> bool:
    return host.lower() in {name.lower() for name in settings.MUSEUM_WEBHOOK_ALLOWED_HOSTS}


# RFC 6052's well-known prefix: a NAT64 gateway connects to the IPv4 address in the last 32 bits.
NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


def _ipv4_inside(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses a connection to `ip` reaches: mapped, 6to4, Teredo (server and
    client) or NAT64; none for any other IPv6 address."""
    if ip.ipv4_mapped is not None:
        return [ip.ipv4_mapped]
    if ip.sixtofour is not None:
        return [ip.sixtofour]
    if ip.teredo is not None:
        return list(ip.teredo)
    if ip in NAT64:
        return [ipaddress.IPv4Address(int(ip) & 0xFFFF_FFFF)]
    return []


def is_public(address: str) -> bool:
    """Whether `address` is a global unicast address (IANA's special-purpose registries, as
    ipaddress knows them): not private, shared (carrier-grade NAT, cloud metadata), loopback,
    link-local, multicast, reserved or unspecified. An IPv6 address that carries an IPv4 one is
    judged by the IPv4 one, where the connection ends up."""
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and (inside := _ipv4_inside(ip)):
        return all(is_public(str(v4)) for v4 in inside)
    # is_global leaves multicast in, and, for IPv6, the reserved ::/8 (IPv4-compatible forms).
    return ip.is_global and not ip.is_multicast and not ip.is_reserved


def check_url(url: str) -> tuple[str, str, int, str]:
    """(scheme, host, port, path with query) of a URL that may be called; else Refused."""
    parts = urlsplit(url)
    allowed = {"https", "http"} if settings.MUSEUM_WEBHOOK_ALLOW_HTTP else {"https"}
    if parts.scheme not in allowed:
        raise Refused(f"The URL must be {' or '.join(sorted(allowed))}.")
    if not parts.hostname or parts.username or parts.password:
        raise Refused("The URL needs a host and no user or password.")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise Refused("The URL's port is not a number.") from None
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return parts.scheme, parts.hostname, port, path


def addresses(host: str, port: int) -> list[str]:
    """The host's addresses that may be connected to; Refused if none."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise Refused(f"{host} does not resolve.") from None
    resolved = list(dict.fromkeys(str(info[4][0]) for info in found))
    usable = resolved if _allowed_host(host) else [a for a in resolved if is_public(a)]
    if not usable:
        raise Refused(f"{host} resolves to an address that is not public: {', '.join(resolved)}.")
    return usable


def check_receiver(url: str) -> None:
    """Refused unless `url` may be called now."""
    _, host, port, _ = check_url(url)
    addresses(host, port)


def post(url: str, *, body: bytes, headers: dict[str, str]) -> Answer:
    """POST `body` to `url`, connecting to an address that passed the check."""
    scheme, host, port, path = check_url(url)
    address = addresses(host, port)[0]
    default_port = 443 if scheme == "https" else 80
    host_header = host if port == default_port else f"{host}:{port}"
    if ":" in host and not host.startswith("["):
        host_header = f"[{host}]" if port == default_port else f"[{host}]:{port}"
    timeout = urllib3.Timeout(total=TIMEOUT)
    pool: urllib3.HTTPConnectionPool
    if scheme == "https":
        pool = urllib3.HTTPSConnectionPool(
            address,
            port,
            timeout=timeout,
            retries=False,
            server_hostname=host,
            assert_hostname=host,
            cert_reqs="CERT_REQUIRED",
        )
    else:
        pool = urllib3.HTTPConnectionPool(address, port, timeout=timeout, retries=False)
    started = time.monotonic()
    try:
        response = pool.urlopen(
            "POST",
            path,
            body=body,
            headers={**headers, "Host": host_header},
            redirect=False,
            retries=False,
            preload_content=False,
            assert_same_host=False,
        )
        try:
            answer = response.read(ANSWER_BYTES)
        finally:
            response.release_conn()
    finally:
        pool.close()
    return Answer(
        status=response.status,
        headers={k.lower(): v for k, v in response.headers.items()},
        body=answer,
        duration_ms=int((time.monotonic() - started) * 1000),
    )
