"""`needs_tool` (tests/conftest.py): a test whose command is missing is skipped, saying how to
install it, except under CI, where it fails; with the command there, it runs."""

import pytest

pytest_plugins = ["pytester"]

READS_A_PDF = """
import pytest

@pytest.mark.needs_tool("pdftotext")
def test_reads_a_pdf():
    pass
"""


@pytest.fixture
def run(pytester):
    pytester.makeconftest("from tests.conftest import pytest_runtest_setup  # noqa: F401")
    pytester.makeini("[pytest]\nmarkers = needs_tool\n")
    pytester.makepyfile(READS_A_PDF)
    # pytest-django would set up the project's settings again; the test file needs no database.
    return lambda: pytester.runpytest("-p", "no:django", "-rs")


@pytest.fixture
def without_poppler(pytester, monkeypatch):
    monkeypatch.setenv("PATH", str(pytester.mkdir("empty")))


def test_a_missing_tool_skips_the_test_with_the_command_that_installs_it(
    run, without_poppler, monkeypatch
):
    monkeypatch.delenv("CI", raising=False)

    result = run()

    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*needs pdftotext: apt-get install poppler-utils, as root*"])


def test_under_ci_a_missing_tool_fails_the_test(run, without_poppler, monkeypatch):
    monkeypatch.setenv("CI", "true")

    result = run()

    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*needs pdftotext: apt-get install poppler-utils*CI is set*"])


def test_a_present_tool_runs_the_test(run, monkeypatch):
    monkeypatch.setenv("CI", "true")

    run().assert_outcomes(passed=1)
