"""What a wallet pass costs (issue 53): an Apple pass built and signed the first time a ticket's
pass is asked for, the same pass answered again from the kept one while the ticket is unchanged,
and its download through the API, in one process on SQLite with a certificate authority of the
run's own (tests/certificates.py: nothing secret is needed). Writes the figures to
docs/performance.md between the "wallet results" markers with --write-docs.

    make passes       # .venv/bin/python -m bench.wallet --write-docs: under a minute

No server: what is measured is the service's own work for a pass (its content, the signature,
the kept row), which a worker pays whatever serves it.
"""

import argparse
import base64
import datetime
import io
import os
import platform
import resource
import secrets
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "performance.md"
BEGIN, END = "<!-- wallet results: begin -->", "<!-- wallet results: end -->"
HEADING = "## Wallet passes: `python -m bench.wallet`"
PASS_TYPE_ID, TEAM_ID = "pass.example.museum.bench", "BENCHTEAM1"
VISITOR = ("visitor", "visitor-demo-password")  # create_demo_accounts'


def authority(folder: Path) -> dict[str, str]:
    """A root, a WWDR stand-in and a pass certificate with its key: the Apple settings."""
    from cryptography.hazmat.primitives.asymmetric import rsa

    from tests.certificates import certificate_pem, issued, key_pem, new_key

    # Apple's pass certificates are for RSA keys of 2,048 bits: a signature costs what theirs do.
    root_key, wwdr_key = new_key(), new_key()
    pass_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    wwdr = issued("Bench WWDR", wwdr_key, issuer="Bench Root", issuer_key=root_key, ca=True)
    certificate = issued(PASS_TYPE_ID, pass_key, issuer="Bench WWDR", issuer_key=wwdr_key)
    files = {
        "MUSEUM_WALLET_APPLE_WWDR_CERTIFICATE": ("wwdr.pem", certificate_pem(wwdr)),
        "MUSEUM_WALLET_APPLE_CERTIFICATE": ("pass.pem", certificate_pem(certificate)),
        "MUSEUM_WALLET_APPLE_KEY": ("pass-key.pem", key_pem(pass_key)),
    }
    settings = {
        "MUSEUM_WALLET_APPLE_PASS_TYPE_ID": PASS_TYPE_ID,
        "MUSEUM_WALLET_APPLE_TEAM_ID": TEAM_ID,
    }
    for name, (filename, pem) in files.items():
        (folder / filename).write_bytes(pem)
        settings[name] = str(folder / filename)
    return settings


def timed(action, times: int) -> list[float]:
    """Milliseconds each of `times` calls of `action` took."""
    spent = []
    for _ in range(times):
        started = time.perf_counter()
        action()
        spent.append((time.perf_counter() - started) * 1000)
    return spent


def summary(spent: list[float]) -> tuple[float, float]:
    """Median and 99th percentile, in ms."""
    ordered = sorted(spent)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def measure(builds: int, answers: int) -> dict:
    from django.core.management import call_command
    from django.test import Client
    from django_walletpass.models import Pass

    from orders.models import OrderStatus, Ticket
    from wallet import apple
    from wallet.models import ApplePass

    for command, *args in (
        ("migrate", "--noinput"),
        ("seed_hours", "--days", "30"),
        ("create_demo_accounts",),
        ("create_demo_data",),
    ):
        call_command(command, *args, verbosity=0, stdout=io.StringIO())
    ticket = (
        Ticket.objects.filter(
            order__status=OrderStatus.CONFIRMED, order__buyer__username=VISITOR[0]
        )
        .select_related("order", "event", "slot", "category")
        .first()
    )
    assert ticket is not None, "create_demo_data sold the visitor no ticket"

    def first_build():
        Pass.objects.all().delete()  # its ApplePass with it: the next ask builds and signs
        apple.ticket_apple_pass(ticket=ticket)

    apple.ticket_apple_pass(ticket=ticket)  # warm: imports, the logo's images
    built = timed(first_build, builds)
    kept = timed(lambda: apple.ticket_apple_pass(ticket=ticket), answers)
    size = len(bytes(ApplePass.objects.get().pkpass))

    credentials = base64.b64encode(":".join(VISITOR).encode()).decode()
    client = Client(headers={"Authorization": f"Basic {credentials}", "Accept": apple.PKPASS})
    url = f"/v1.1/tickets/{ticket.pk}/wallet/apple"
    assert client.get(url).status_code == 200  # signs in once; remembered after

    def download():
        response = client.get(url)
        assert response.status_code == 200, response.status_code

    downloads = timed(download, answers)
    modified = client.get(url)["Last-Modified"]

    def revalidate():
        response = client.get(url, headers={"If-Modified-Since": modified})
        assert response.status_code == 304, response.status_code

    revalidations = timed(revalidate, answers)
    return {
        "build": summary(built),
        "kept": summary(kept),
        "download": summary(downloads),
        "revalidate": summary(revalidations),
        "size": size,
        "builds": builds,
        "answers": answers,
        "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def table(result: dict) -> str:
    rows = [
        ("built and signed (first ask, or after a change)", result["build"], result["builds"]),
        ("answered from the kept pass (unchanged)", result["kept"], result["answers"]),
        ("`GET /v1.1/tickets/{id}/wallet/apple`, kept, 200", result["download"], result["answers"]),
        ("the same with `If-Modified-Since`, 304", result["revalidate"], result["answers"]),
    ]
    lines = ["| what | p50 ms | p99 ms | times |", "|---|---:|---:|---:|"]
    lines += [f"| {what} | {p50:.2f} | {p99:.2f} | {times:,} |" for what, (p50, p99), times in rows]
    return "\n".join(lines)


def write_docs(markdown: str, result: dict, machine: str) -> None:
    from bench import report

    today = datetime.date.today().isoformat()
    text = "\n".join(
        [
            HEADING,
            "",
            f"Measured {today} on {machine}, in one process (`bench/wallet.py`), SQLite, the "
            "demo data's ticket of the demo visitor, a pass certificate of the run's own CA "
            "for an RSA key of 2,048 bits, as Apple's are. A ticket's .pkpass is "
            f"{result['size']:,} bytes. The process's peak memory: {result['maxrss_mb']:.0f} MB.",
            "",
            markdown,
            "",
            "A pass is signed once per change of what it shows: a device's and a visitor's later "
            "asks cost its content, fingerprint and kept row, and a revalidation the same without "
            "sending it. The API's figures include the sign-in (remembered) and the ticket's "
            "visibility read. Most of a signature's cost is reading the key: django-walletpass "
            "reads it for every pass, and cryptography checks an RSA key each time it is read "
            "(about 50 ms here); the signature itself is a few milliseconds.",
        ]
    )
    report.write_docs(DOCS, text, begin=BEGIN, end=END)
    print(f"wrote {DOCS.relative_to(ROOT)}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write-docs", action="store_true", help="update docs/performance.md")
    parser.add_argument("--builds", type=int, default=200)
    parser.add_argument("--answers", type=int, default=1000)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory(prefix="museum-wallet-bench-") as directory:
        folder = Path(directory)
        os.environ.update(authority(folder))
        os.environ.update(
            {
                "DJANGO_SETTINGS_MODULE": "museum.settings",
                "DEBUG": "false",  # production's settings, as make bench's servers
                "SECRET_KEY": secrets.token_urlsafe(50),
                "ALLOWED_HOSTS": "testserver",
                "SECURE_SSL_REDIRECT": "false",
                "DATABASE_URL": f"sqlite:///{folder / 'wallet.sqlite3'}",
                "MUSEUM_PUBLIC_URL": "https://museum.example.org",
                "LOG_LEVEL": "WARNING",
                # One visitor asks a thousand times: what is measured is the pass, not the limit.
                "MUSEUM_THROTTLE_USER_RATE": "100000/s",
            }
        )
        for name in ("REDIS_URL", "MUSEUM_WALLET_APPLE_KEY_PASSWORD"):
            os.environ.pop(name, None)
        import django

        # Whitenoise's word that no collected static files exist: none are served here.
        warnings.filterwarnings("ignore", message="No directory at")
        django.setup()
        result = measure(args.builds, args.answers)
    machine = f"{platform.machine()}, nproc {os.cpu_count()}, Python {platform.python_version()}"
    markdown = table(result)
    print(markdown)
    if args.write_docs:
        write_docs(markdown, result, machine)


if __name__ == "__main__":
    main()
