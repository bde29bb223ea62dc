"""Production installs the service's pins alone; development adds the test tools, same pins."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEST_TOOLS = {"pytest", "pytest-django", "schemathesis", "playwright", "granian", "hypothesis"}


def pins(lockfile: str) -> dict[str, str]:
    text = (ROOT / lockfile).read_text()
    return dict(re.findall(r"^([a-z0-9][a-z0-9._-]*)==(\S+)$", text, flags=re.MULTILINE))


def test_the_runtime_lock_holds_no_test_tool():
    runtime = pins("requirements.lock")
    assert "django" in runtime
    assert TEST_TOOLS.isdisjoint(runtime)


def test_development_runs_the_versions_production_runs():
    runtime, development = pins("requirements.lock"), pins("requirements-dev.lock")
    assert TEST_TOOLS <= development.keys()
    assert {name: development.get(name) for name in runtime} == runtime


def test_the_pre_commit_hooks_run_the_pinned_tools_of_make_lint():
    config = (ROOT / ".pre-commit-config.yaml").read_text()
    # Local hooks only: a commit never fetches a hook repository, and each runs .venv's pin.
    assert re.findall(r"^\s+- repo: (\S+)$", config, flags=re.MULTILINE) == ["local"]
    entries = re.findall(r"^\s+entry: (.+)$", config, flags=re.MULTILINE)
    assert [entry.split(".venv/bin/")[1].split()[0] for entry in entries] == [
        "ruff",
        "ruff",
        "mypy",
        "python",
        "python",
    ]
    assert any("makemigrations --check" in entry for entry in entries)
