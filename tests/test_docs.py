"""The docs run as written: every shell example of README.md and docs/*.md (tests/docs.py says
how each is read and checked), in a checkout of its own as a newcomer has it after `make run`
on a free port: its SQLite file, its demo data, its task worker and the `.env` it leaves. Only
the server's address differs from the page (the port the test picked for 8000)."""

import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.conf import settings

from scripts.test_tools import find_tool
from tests import docs
from tests.servers import _healthy, free_port, stop_process_group, wait_until

ROOT = Path(settings.BASE_DIR)
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# What a clone does not have: the tools' and the run's own files.
NOT_IN_A_CLONE = shutil.ignore_patterns(
    ".git", ".venv", ".env", "*.sqlite3*", "*.mo", "__pycache__", ".*_cache", ".hypothesis",
    ".schemathesis", "staticfiles", "media", "test-artifacts", "tickets.pdf",
)  # fmt: skip
NEWCOMER_PATH = "/usr/local/bin:/usr/bin:/bin"
# `make run` migrates a new SQLite file, seeds 90 days and the demo data before it serves.
READY_SECONDS = 300


@dataclass
class Served:
    checkout: Path
    url: str
    log: Path


@pytest.fixture(scope="module")
def served_checkout(tmp_path_factory):
    home = tmp_path_factory.mktemp("newcomer")
    checkout = home / "museum"
    shutil.copytree(ROOT, checkout, ignore=NOT_IN_A_CLONE, symlinks=True)
    # The installed environment is the suite's own (`make test` installed it): the same pins.
    (checkout / ".venv").symlink_to(ROOT / ".venv")
    port = free_port()
    log = home / "make-run.log"
    with open(log, "wb") as output:
        server = subprocess.Popen(
            ["make", "run", f"PORT={port}"],
            cwd=checkout,
            env={"PATH": NEWCOMER_PATH, "HOME": str(home)},
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # the server, its reloader and the worker: one group to stop
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until(
            lambda: server.poll() is None and _healthy(url), what="make run", timeout=READY_SECONDS
        )
        yield Served(checkout=checkout, url=url, log=log)
    finally:
        stop_process_group(server)


@pytest.mark.needs_tool("curl")
@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.name)
def test_the_shell_examples_run_as_written(served_checkout, document, tmp_path):
    assert not docs.unmarked_shell_examples(document), "a shell example not marked ```sh"
    document_blocks = docs.blocks(document)
    docs.NOT_RUN.extend(
        f"{document.name}, line {block.line}: {block.skip_reason}"
        for block in document_blocks
        if block.language == "sh" and block.skip_reason
    )
    answers = tmp_path / "answers.jsonl"
    script, expectations = docs.session_script(document_blocks, answers, served_checkout.url)
    folder = docs.recording_curl(tmp_path / "bin", find_tool("curl"), answers)

    session = subprocess.Popen(
        ["bash", "-c", script],
        cwd=served_checkout.checkout,
        env={"PATH": f"{folder}:{NEWCOMER_PATH}", "HOME": str(tmp_path)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        output, errors = session.communicate(timeout=600)
    finally:
        stop_process_group(session, grace=5)  # and what a block started in the background

    assert session.returncode == 0, f"{errors[-4000:]}\n{output[-2000:]}"
    assert not (found := docs.problems(answers, expectations)), "\n\n".join(found)


def test_make_run_mails_links_to_its_own_port(served_checkout):
    port = served_checkout.url.rsplit(":", 1)[1]
    # The demo orders' confirmation emails, printed by the console backend before it serves.
    links = re.findall(r"http://127\.0\.0\.1:(\d+)/", served_checkout.log.read_text())
    assert links
    assert set(links) == {port}


def test_a_command_without_the_settings_it_needs_names_them_in_one_line(served_checkout):
    # DEBUG=false in the environment wins over the checkout's .env: a production shell.
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=served_checkout.checkout,
        env={"PATH": NEWCOMER_PATH, "HOME": str(served_checkout.checkout), "DEBUG": "false"},
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "manage.py: SECRET_KEY is not set. Set it (production), or DEBUG=true for local work "
        "(make run keeps DEBUG=true in .env)."
    ]


def test_the_check_tells_each_way_an_answer_can_differ(tmp_path):
    """The checker itself: a wrong status, a wrong or missing field, and a request sent without
    -f whose status no line states are each told; what the doc leaves open (`...`) is not."""
    block = docs.Block(Path("guide.md"), 1, "sh", "", None)
    stated = [
        docs.Expectation(block, 3, 201, '{"id": "...", "secret": "whsec_...", "tags": ["a", ...]}'),
        docs.Expectation(block, 5, 200, ""),
        docs.Expectation(block, 7, 200, '{"status": "held", "total": 15, ...}'),
    ]
    calls = [
        {"status": 201, "body": '{"id": 7, "secret": "whsec_x", "tags": ["a", "b"], "more": 1}'},
        {"status": 404, "body": "{}"},
        {"status": 200, "body": '{"status": "confirmed"}'},
        {"status": 200, "body": "{}", "fails": False},
    ]
    log = tmp_path / "answers.jsonl"
    lines = []
    for number, call in enumerate(calls):
        call = {"method": "GET", "url": f"/{number}", "fails": True, **call}
        lines.append(json.dumps({"call": call}))
        if number < len(stated):
            lines.append(json.dumps({"expectation": number}))
    log.write_text("\n".join(lines) + "\n")

    found = docs.problems(log, stated)

    assert [problem.splitlines()[0] for problem in found] == [
        "guide.md, line 5: GET /1 answered 404, the doc says 200",
        "guide.md, line 7: GET /2: answer.status is 'confirmed', the doc says 'held'; "
        "answer has no 'total'",
        "GET /3 is sent without -f and no `# <status>` line says what it answers (it answered 200)",
    ]
