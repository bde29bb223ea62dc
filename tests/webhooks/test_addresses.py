"""Which addresses a webhook may be sent to: global unicast ones only, whatever form the URL
writes them in, and the IPv4 address inside an IPv6 one too. Nothing here connects anywhere: a
refused address is refused before any connection, and an accepted one is only resolved (every
host below is a literal or localhost)."""

import pytest

from webhooks.http import Refused, check_receiver, post

# Each reaches no public receiver; a URL's host may write an address in many ways.
HELD = [
    "127.0.0.1",
    "127.1",  # short forms
    "127.0.1",
    "2130706433",  # decimal
    "0x7f000001",  # hexadecimal
    "0x7f.0.0.1",
    "0177.0.0.1",  # octal
    "017700000001",
    "127.000.000.001",
    "0",
    "0.0.0.0",
    "localhost",
    "LOCALHOST",
    "[::1]",
    "[0:0:0:0:0:0:0:1]",
    "[::]",
    "[::ffff:127.0.0.1]",  # IPv4-mapped
    "[::ffff:7f00:1]",
    "[::ffff:10.0.0.1]",
    "[::ffff:169.254.169.254]",
    "[::127.0.0.1]",  # IPv4-compatible (deprecated)
    "10.0.0.1",
    "172.16.0.1",
    "192.168.1.1",
    "169.254.169.254",  # link-local: the usual cloud metadata address
    "[fe80::1]",
    "[fc00::1]",  # unique local
    "[fd12:3456::1]",
    "224.0.0.1",  # multicast
    "[ff02::1]",
    "[ff0e::1]",
    "240.0.0.1",  # reserved
    "255.255.255.255",
    "192.0.2.1",  # documentation
]

# Let through before, though no public receiver is there.
NOT_GLOBAL = [
    "100.100.100.200",  # a cloud's metadata service, in the shared range
    "100.64.0.1",  # carrier-grade NAT (RFC 6598)
    "[2002:7f00:1::]",  # 6to4 for 127.0.0.1
    "[2002:a00:1::]",  # 6to4 for 10.0.0.1
    "[64:ff9b::7f00:1]",  # NAT64 for 127.0.0.1
    "[64:ff9b::a9fe:a9fe]",  # NAT64 for 169.254.169.254
    "[2001:0:4136:e378:8000:63bf:80ff:fffe]",  # Teredo for the client 127.0.0.1
]

# Public receivers, however their address is written.
PUBLIC = [
    "8.8.8.8",
    "[2606:4700:4700::1111]",
    "[::ffff:8.8.8.8]",
    "[2002:808:808::1]",  # 6to4 for 8.8.8.8
    "[64:ff9b::808:808]",  # NAT64 for 8.8.8.8
    "[2001:0:4136:e378:8000:63bf:f7f7:f7f7]",  # Teredo: server 65.54.227.120, client 8.8.8.8
]


@pytest.fixture
def nothing_allowed(settings):
    settings.MUSEUM_WEBHOOK_ALLOWED_HOSTS = []
    settings.MUSEUM_WEBHOOK_ALLOW_HTTP = False


@pytest.mark.parametrize("host", HELD + NOT_GLOBAL)
def test_a_receiver_that_is_not_public_is_refused_however_written(
    db, visitor_client, nothing_allowed, host
):
    url = f"https://{host}/h"
    body = {"url": url, "eventTypes": ["order.confirmed"]}

    refused = visitor_client.post("/v1.1/webhooks", body, format="json")

    # Refused as not public, or (for forms a URL should not use) as no valid URL.
    assert refused.status_code == 400 and list(refused.json()["errors"]) == ["url"]
    # A delivery checks again, and connects to nothing it refused.
    with pytest.raises(Refused, match="not public"):
        post(url, body=b"{}", headers={})


@pytest.mark.parametrize(
    "url", ["https://100.100.100.200/h", "https://100.64.0.1/h", "https://[2002:7f00:1::]/h"]
)
def test_the_metadata_service_shared_addresses_and_6to4_are_not_public(
    db, visitor_client, nothing_allowed, url
):
    body = {"url": url, "eventTypes": ["order.confirmed"]}

    refused = visitor_client.post("/v1.1/webhooks", body, format="json")

    assert refused.status_code == 400
    assert "resolves to an address that is not public" in refused.json()["errors"]["url"][0]


def test_the_held_forms_are_all_still_here():
    assert len(HELD) == 34 and len(set(HELD)) == 34


@pytest.mark.parametrize("host", PUBLIC)
def test_a_public_receiver_passes_in_every_form(nothing_allowed, host):
    check_receiver(f"https://{host}/h")  # resolves the literal; connects to nothing


@pytest.mark.parametrize("host", NOT_GLOBAL)
def test_an_internal_receiver_named_in_the_allowed_hosts_passes(settings, host):
    settings.MUSEUM_WEBHOOK_ALLOWED_HOSTS = [host.strip("[]")]

    check_receiver(f"https://{host}/h")
