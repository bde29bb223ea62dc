"""deploy/nginx/museum.conf, as written, in front of gunicorn's sync workers: three slow clients
(a byte every two seconds) hold nginx, never a worker, so every other request is answered; TLS
ends at nginx, the client's address is the one nginx saw, static files and the body limit are
nginx's. nginx is Debian's package (`make test` installs it)."""

import json
import os
import socket
import ssl
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.conf import settings

from scripts.test_tools import find_tool
from tests.certificates import certificate_pem, issued, key_pem, new_key
from tests.servers import free_port, gunicorn_node, wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.needs_tool("nginx")]

SLOW_CLIENTS = 3
PROBES = 18
UNVERIFIED = ssl._create_unverified_context()  # the test's own self-signed certificate


def self_signed(folder: Path) -> tuple[Path, Path]:
    key = new_key()
    cert, private = folder / "cert.pem", folder / "key.pem"
    cert.write_bytes(certificate_pem(issued("127.0.0.1", key, days=1)))
    private.write_bytes(key_pem(key))
    return cert, private


@contextmanager
def nginx(folder: Path, *, upstream: str, static: Path) -> Iterator[int]:
    """deploy/nginx/museum.conf with this machine's ports and paths; yields its HTTPS port."""
    port = free_port()
    cert, key = self_signed(folder)
    site = (Path(settings.BASE_DIR) / "deploy/nginx/museum.conf").read_text()
    for ours, theirs in {
        "server 127.0.0.1:8000;": f"server {upstream};",
        "listen 443 ssl http2;": f"listen 127.0.0.1:{port} ssl http2;",
        "listen [::]:443 ssl http2;": "",
        "listen 80;": f"listen 127.0.0.1:{free_port()};",
        "listen [::]:80;": "",
        "/etc/ssl/museum/fullchain.pem": str(cert),
        "/etc/ssl/museum/privkey.pem": str(key),
        "/srv/museum/staticfiles/": f"{static}/",
    }.items():
        assert ours in site
        site = site.replace(ours, theirs)
    (folder / "site.conf").write_text(site)
    # What Debian's /etc/nginx/nginx.conf gives a site, in this test's own folder.
    main = f"""
{"user root;" if os.geteuid() == 0 else ""}
daemon off;
pid {folder}/nginx.pid;
error_log {folder}/error.log;
events {{ worker_connections 256; }}
http {{
    include /etc/nginx/mime.types;
    access_log {folder}/access.log;
    client_body_temp_path {folder}/body;
    proxy_temp_path {folder}/proxy;
    fastcgi_temp_path {folder}/fastcgi;
    uwsgi_temp_path {folder}/uwsgi;
    scgi_temp_path {folder}/scgi;
    include {folder}/site.conf;
}}
"""
    (folder / "nginx.conf").write_text(main)
    server = subprocess.Popen(
        [
            find_tool("nginx"),
            "-p",
            str(folder),
            "-c",
            str(folder / "nginx.conf"),
        ],
        stderr=subprocess.PIPE,
    )
    try:
        wait_until(lambda: server.poll() is None and answers(port), what="nginx")
        yield port
    finally:
        server.terminate()
        server.wait(timeout=10)


def answers(port: int) -> bool:
    try:
        return get(port, "/healthz", timeout=2)[0] == 200
    except OSError:
        return False


def get(port: int, path: str, *, timeout: float, headers: dict | None = None, data=None):
    request = urllib.request.Request(
        f"https://127.0.0.1:{port}{path}", headers=headers or {}, data=data
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout, context=UNVERIFIED) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def slow_client(port: int, stop: threading.Event) -> None:
    """A request sent a byte every two seconds, as a client on a bad line (or an attacker)."""
    request = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: " + b"x" * 100
    with socket.create_connection(("127.0.0.1", port)) as raw:
        with UNVERIFIED.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            for byte in request:
                if stop.wait(2):
                    return
                tls.sendall(bytes([byte]))


def test_behind_nginx_slow_clients_block_no_request(node_database, tmp_path):
    static = tmp_path / "static"
    static.mkdir()
    (static / "museum.txt").write_text("from disk")
    environment = {
        "DATABASE_URL": node_database,
        "MUSEUM_NUM_PROXIES": "1",
        "LOG_FORMAT": "json",
        "LOG_LEVEL": "INFO",
    }
    log = tmp_path / "gunicorn.log"
    with (
        gunicorn_node(environment=environment, log=log, workers=2, threads=1) as url,
        nginx(tmp_path, upstream=url.removeprefix("http://"), static=static) as port,
    ):
        stop = threading.Event()
        slow = [
            threading.Thread(target=slow_client, args=(port, stop)) for _ in range(SLOW_CLIENTS)
        ]
        for client in slow:
            client.start()
        try:
            answered = []
            for _ in range(PROBES):
                started = time.monotonic()
                status = get(port, "/healthz", timeout=3)[0]
                answered.append((status, time.monotonic() - started < 3))
                time.sleep(0.3)  # probes spread over the slow clients' time, as a balancer's
        finally:
            stop.set()
            for client in slow:
                client.join()
        assert answered == [(200, True)] * PROBES

        # The client's address is the one nginx saw, whatever the client claims.
        status, headers, _ = get(
            port, "/healthz", timeout=5, headers={"X-Forwarded-For": "6.6.6.6"}
        )
        assert status == 200
        request_id = headers["X-Request-ID"]
        assert get(port, "/static/museum.txt", timeout=5)[2] == b"from disk"
        assert get(port, "/v1.1/orders", timeout=5, data=b"x" * (2 << 20))[0] == 413

    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    [line] = [line for line in lines if line.get("request_id") == request_id]
    assert line["client"] == "127.0.0.1"
    assert len(request_id) == 32  # nginx's own $request_id
