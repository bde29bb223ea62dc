"""The README's quick start runs as written: its shell commands, against a live server prepared as
`make run` prepares it (opening hours, demo accounts, demo data), with only the server's address
changed. A curl on PATH records each answer's status, so every step's status is checked too."""

import re
import subprocess
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

from orders.models import Order, OrderStatus
from scripts.test_tools import find_tool

pytestmark = pytest.mark.django_db(transaction=True)

README = Path(settings.BASE_DIR) / "README.md"
HEADING = "## Quick start"
ADDRESS_LINE = "MUSEUM=http://127.0.0.1:8000"
STATUS_PREFIX = "quick-start-status:"

# The steps, in the README's order: categories, hours, the day's slots, the order (held), the held
# order, the payment started, the demo page's "Pay", the paid order, the PDF, the order again (a
# ticket's id), one ticket cancelled, the order.
EXPECTED = [
    ("GET", "/v1.1/visitor-categories", 200),
    ("GET", "/v1.1/museum-hours", 200),
    ("GET", "/slots", 200),
    ("POST", "/v1.1/orders", 201),
    ("GET", "/v1.1/orders/", 200),
    ("POST", "/payments", 201),
    ("POST", "/payments/demo/", 302),
    ("GET", "/v1.1/orders/", 200),
    ("GET", "/tickets.pdf", 200),
    ("GET", "/v1.1/orders/", 200),
    ("POST", "/cancel", 200),
    ("POST", "/cancel", 200),
]


def quick_start_commands() -> str:
    """The ```sh blocks under the quick-start heading, up to the next section, in order."""
    text = README.read_text()
    start = text.index(HEADING)
    end = text.find("\n## ", start + len(HEADING))
    section = text[start : end if end != -1 else None]
    blocks = re.findall(r"^```sh\n(.*?)^```$", section, flags=re.MULTILINE | re.DOTALL)
    assert blocks, "no ```sh blocks under the quick start"
    return "\n".join(blocks)


def recording_curl(folder: Path) -> Path:
    """A `curl` that runs the real one and adds a line with the method, status and URL to stderr."""
    real = find_tool("curl")
    folder.mkdir()
    script = folder / "curl"
    script.write_text(
        "#!/bin/sh\n"
        f"exec {real} -w '%{{stderr}}{STATUS_PREFIX} %{{method}} %{{http_code}} "
        '%{url_effective}\\n\' "$@"\n'
    )
    script.chmod(0o755)
    return folder


@pytest.mark.needs_tool("curl")
def test_the_readme_quick_start_runs_as_written(live_server, tmp_path):
    # What `make run` does before it serves (Makefile), on the test database.
    call_command("seed_hours", days=90, verbosity=0)
    call_command("create_demo_accounts", verbosity=0)
    call_command("create_demo_data", verbosity=0)

    commands = quick_start_commands()
    assert commands.count(ADDRESS_LINE) == 1, "the quick start sets MUSEUM once"
    script = commands.replace(ADDRESS_LINE, f"MUSEUM={live_server.url}")
    bin_folder = recording_curl(tmp_path / "bin")
    work = tmp_path / "work"
    work.mkdir()

    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=work,
        env={"PATH": f"{bin_folder}:/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
    )

    steps = [
        line.split()[1:] for line in result.stderr.splitlines() if line.startswith(STATUS_PREFIX)
    ]
    assert result.returncode == 0, result.stdout + result.stderr
    assert len(steps) == len(EXPECTED), steps
    for (method, status, url), (expected_method, path, expected_status) in zip(
        steps, EXPECTED, strict=True
    ):
        assert (method, int(status)) == (expected_method, expected_status), (method, status, url)
        assert path in url, (path, url)

    order_id = re.search(r'"orderId": "([0-9a-f-]{36})"', result.stdout).group(1)
    order = Order.objects.get(pk=order_id)
    assert order.status == OrderStatus.CANCELLED
    assert order.tickets.count() == 3
    assert '"status": "held"' in result.stdout
    assert '"status": "confirmed"' in result.stdout
    assert result.stdout.rstrip().endswith("}")
    assert '"status": "cancelled"' in result.stdout.split('"status": "confirmed"')[-1]
    assert (work / "tickets.pdf").read_bytes().startswith(b"%PDF")
