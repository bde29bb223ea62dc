"""The README's quick start runs as written: its shell commands, against a live server prepared as
`make run` prepares it (opening hours, demo accounts, demo data), with only the server's address
changed. The docs tests' recording curl (tests/docs.py) logs each answer, so every step's status is
checked too."""

import json
import re
import subprocess
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

from orders.models import Order, OrderStatus
from scripts.test_tools import find_tool
from tests.docs import recording_curl

pytestmark = pytest.mark.django_db(transaction=True)

README = Path(settings.BASE_DIR) / "README.md"
HEADING = "## Quick start"
ADDRESS_LINE = "MUSEUM=http://127.0.0.1:8000"

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


@pytest.mark.needs_tool("curl")
def test_the_readme_quick_start_runs_as_written(live_server, tmp_path):
    # What `make run` does before it serves (Makefile), on the test database.
    call_command("seed_hours", days=90, verbosity=0)
    call_command("create_demo_accounts", verbosity=0)
    call_command("create_demo_data", verbosity=0)

    commands = quick_start_commands()
    assert commands.count(ADDRESS_LINE) == 1, "the quick start sets MUSEUM once"
    script = commands.replace(ADDRESS_LINE, f"MUSEUM={live_server.url}")
    log = tmp_path / "calls.jsonl"
    bin_folder = recording_curl(tmp_path / "bin", find_tool("curl"), log)
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

    assert result.returncode == 0, result.stdout + result.stderr
    steps = [json.loads(line)["call"] for line in log.read_text().splitlines()]
    assert len(steps) == len(EXPECTED), steps
    for step, (method, path, status) in zip(steps, EXPECTED, strict=True):
        assert (step["method"], step["status"]) == (method, status), step
        assert path in step["url"], (path, step["url"])

    order_id = re.search(r'"orderId": "([0-9a-f-]{36})"', result.stdout).group(1)
    order = Order.objects.get(pk=order_id)
    assert order.status == OrderStatus.CANCELLED
    assert order.tickets.count() == 3
    assert '"status": "held"' in result.stdout
    assert '"status": "confirmed"' in result.stdout
    assert result.stdout.rstrip().endswith("}")
    assert '"status": "cancelled"' in result.stdout.split('"status": "confirmed"')[-1]
    assert (work / "tickets.pdf").read_bytes().startswith(b"%PDF")
