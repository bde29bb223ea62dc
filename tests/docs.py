"""The documents' shell examples, read and run as a newcomer would: each ```sh block of README.md
and docs/*.md, in order, in one bash session per document (what a block sets, the next one
uses), in a checkout of its own that `make run` serves (tests/test_docs.py).

What the docs write, and what is checked:
- A comment line `# 201 {"webhookId": "...", "active": true, ...}` under a command states the
  status and the fields of the answer to the last request before it. `...` is anything: a value
  (`"..."`), the rest of an object or list (`, ...}`, `, ...]`), or part of a string
  (`"whsec_..."`). Lines that go on with `#` and two spaces belong to it. Without a JSON body
  after the status (`# 302 to the order's page`), only the status is checked.
- A request without `-f` (`curl -sS ...`) must state its status that way: curl does not fail on
  an error status, so nothing else would notice one.
- `<!-- docs-test: skip: <reason> -->` on the line before a block marks one that cannot run
  here (production hosts, a load generator); the reason is printed after the test run.
- Every other command must succeed: the session runs with `set -euo pipefail`.

The requests go through a `curl` on PATH that runs the real one and records each request's
method, status, URL and answer; the expectations are checked against that record after the
session, so a failure names the document, the line and both answers.
"""

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
SKIP_MARK = re.compile(r"<!-- docs-test: skip: (.+?) -->\n\Z")
EXPECTATION = re.compile(r"^# (\d{3})(?: (.*))?$")
CONTINUATION = re.compile(r"^#\s{2,}(.*)$")
# What a shell example starts with, to find one left in a block not marked ```sh.
SHELL_COMMAND = re.compile(r"^(curl|\.venv/bin/|python3? manage\.py|make )", re.MULTILINE)
END_OF_EXPECTATION = "__DOCS_EXPECTATION__"
# A JSON value standing for `...` once the documented answer is parsed.
ANYTHING = "__docs_anything__"


@dataclass
class Block:
    path: Path
    line: int  # of the opening fence, 1-based
    language: str
    text: str
    skip_reason: str | None


@dataclass
class Expectation:
    block: Block
    line: int
    status: int
    body: str  # the documented answer, or "" when only the status is given


def blocks(path: Path) -> list[Block]:
    text = path.read_text()
    found = []
    for match in FENCE.finditer(text):
        mark = SKIP_MARK.search(text[: match.start()])
        found.append(
            Block(
                path=path,
                line=text.count("\n", 0, match.start()) + 1,
                language=match.group(1),
                text=match.group(2),
                skip_reason=mark.group(1) if mark else None,
            )
        )
    return found


def unmarked_shell_examples(path: Path) -> list[Block]:
    """Blocks that hold a shell command but are not ```sh (so they would never run)."""
    return [b for b in blocks(path) if b.language == "" and SHELL_COMMAND.search(b.text)]


def session_script(
    document_blocks: list[Block], log: Path, address: str
) -> tuple[str, list[Expectation]]:
    """The bash script of a document's runnable blocks, and the expectations it records."""
    expectations: list[Expectation] = []
    script = ["set -euo pipefail"]
    for block in document_blocks:
        if block.language != "sh" or block.skip_reason:
            continue
        script.append(f"echo 'docs-test: {block.path.name}, line {block.line}' >&2")
        lines = block.text.replace("http://127.0.0.1:8000", address).splitlines()
        index = 0
        while index < len(lines):
            match = EXPECTATION.match(lines[index])
            if not match:
                script.append(lines[index])
                index += 1
                continue
            line = block.line + 1 + index
            body = [match.group(2) or ""]
            index += 1
            while index < len(lines) and (more := CONTINUATION.match(lines[index])):
                body.append(more.group(1))
                index += 1
            expectations.append(Expectation(block, line, int(match.group(1)), "\n".join(body)))
            record = json.dumps({"expectation": len(expectations) - 1})
            script.append(f"echo '{record}' >> {log}")
    return "\n".join(script) + "\n", expectations


def recording_curl(folder: Path, real_curl: str, log: Path) -> Path:
    """A `curl` that runs the real one and appends each request and its answer to `log`."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "curl"
    script.write_text(f"#!{sys.executable}\n{_RECORDER.format(real=real_curl, log=log)}")
    script.chmod(0o755)
    return folder


_RECORDER = """
import json, subprocess, sys

MARK = b"\\n__docs_curl__ "
args = sys.argv[1:]
to_file = any(a == "--output" or (a[:1] == "-" and a[:2] != "--" and "o" in a[1:]) for a in args)
fails = any(a == "--fail" or (a[:1] == "-" and a[:2] != "--" and "f" in a[1:]) for a in args)
written_out = "%{{stderr}}\\n__docs_curl__ %{{method}} %{{http_code}} %{{url_effective}}"
done = subprocess.run(["{real}", *args, "-w", written_out], capture_output=True)
errors, _, written = done.stderr.rpartition(MARK)
method, status, url = written.decode().split(" ", 2)
sys.stdout.buffer.write(done.stdout)
sys.stderr.buffer.write(errors)
call = {{"method": method, "status": int(status), "url": url, "fails": fails}}
call["body"] = None if to_file else done.stdout.decode(errors="replace")
with open("{log}", "a") as log:
    log.write(json.dumps({{"call": call}}) + "\\n")
sys.exit(done.returncode)
"""


def problems(log: Path, expectations: list[Expectation]) -> list[str]:
    """What differs between the documented answers and the recorded ones."""
    found = []
    last_call = None
    stated = True
    for line in log.read_text().splitlines() if log.exists() else []:
        entry = json.loads(line)
        if "call" in entry:
            if not stated:
                found.append(_unstated(last_call))
            last_call, stated = entry["call"], entry["call"]["fails"]
            continue
        stated = True
        expected = expectations[entry["expectation"]]
        where = f"{expected.block.path.name}, line {expected.line}"
        if last_call is None:
            found.append(f"{where}: an answer stated before any request")
        elif problem := _differs(expected, last_call):
            found.append(f"{where}: {last_call['method']} {last_call['url']}{problem}")
    if not stated:
        found.append(_unstated(last_call))
    return found


def _differs(expected: Expectation, call: dict) -> str:
    if call["status"] != expected.status:
        return f" answered {call['status']}, the doc says {expected.status}\n{call['body']}"
    if not expected.body.lstrip().startswith(("{", "[")):
        return ""
    try:
        documented = documented_answer(expected.body)
    except ValueError as unreadable:
        return f": the documented answer is not JSON with `...`: {unreadable}"
    try:
        actual = json.loads(call["body"] or "")
    except ValueError:
        return f" answered no JSON:\n{call['body']}"
    if differences := differ(documented, actual, "answer"):
        return ": " + "; ".join(differences) + f"\n{actual}"
    return ""


def _unstated(call: dict) -> str:
    return (
        f"{call['method']} {call['url']} is sent without -f and no `# <status>` line says "
        f"what it answers (it answered {call['status']})"
    )


def documented_answer(text: str):
    """The documented answer as JSON, with ANYTHING where it says `...`."""
    out, in_string, escaped = [], False, False
    index = 0
    while index < len(text):
        char = text[index]
        if in_string:
            in_string = escaped or char != '"'
            escaped = not escaped and char == "\\"
        elif char == '"':
            in_string = True
        elif text.startswith("...", index):
            out.append(json.dumps(ANYTHING))
            index += 3
            continue
        out.append(char)
        index += 1
    source = "".join(out)
    anything = re.escape(json.dumps(ANYTHING))
    # `{...}` is any object; `, ...}` the rest of one (an object's keys are checked one by one).
    source = re.sub(rf"\{{\s*{anything}\s*\}}", lambda _: json.dumps(ANYTHING), source)
    source = re.sub(rf",\s*{anything}\s*\}}", lambda _: "}", source)
    return json.loads(source)


def differ(documented, actual, where: str) -> list[str]:
    """How `actual` differs from the documented answer, each difference named by its path."""
    if documented == ANYTHING or documented == "...":
        return []
    if isinstance(documented, str) and "..." in documented:
        pattern = ".*".join(re.escape(part) for part in documented.split("..."))
        if isinstance(actual, str) and re.fullmatch(pattern, actual, re.DOTALL):
            return []
    elif isinstance(documented, dict):
        return _differ_object(documented, actual, where)
    elif isinstance(documented, list):
        return _differ_list(documented, actual, where)
    elif documented == actual and isinstance(documented, bool) == isinstance(actual, bool):
        return []
    return [f"{where} is {actual!r}, the doc says {documented!r}"]


def _differ_object(documented: dict, actual, where: str) -> list[str]:
    if not isinstance(actual, dict):
        return [f"{where} is {actual!r}, the doc shows an object"]
    found = []
    for key, value in documented.items():
        if key not in actual:
            found.append(f"{where} has no {key!r}")
        else:
            found += differ(value, actual[key], f"{where}.{key}")
    return found


def _differ_list(documented: list, actual, where: str) -> list[str]:
    if not isinstance(actual, list):
        return [f"{where} is {actual!r}, the doc shows a list"]
    open_ended = bool(documented) and documented[-1] == ANYTHING
    items = documented[:-1] if open_ended else documented
    if len(actual) < len(items) or (not open_ended and len(actual) != len(items)):
        return [f"{where} has {len(actual)} items, the doc shows {len(documented)}"]
    found = []
    for position, (value, item) in enumerate(zip(items, actual, strict=False)):
        found += differ(value, item, f"{where}[{position}]")
    return found


# The blocks marked as not run, with their reasons: printed after the run (tests/conftest.py).
NOT_RUN: list[str] = []
