"""A clone with nothing beside it runs and tests: no file reaches outside the repository."""

import subprocess
import sys
import zipfile
from pathlib import Path

from scripts import conformance
from tests import contract, test_schema

ROOT = Path(__file__).resolve().parents[1]


def test_the_contract_is_read_from_the_repository():
    for path in (conformance.CONTRACT, test_schema.CONTRACT, contract.CONTRACT):
        assert path.is_file()
        assert path.resolve().is_relative_to(ROOT)
    assert (ROOT / "contract" / "LICENSE-museum-api.txt").is_file()


def test_no_tracked_file_reads_a_sibling_folder():
    tracked = subprocess.run(
        [
            "git",
            "grep",
            "-lE",
            r"\.\./shared|/ \"shared\"",
            "--",
            "*.py",
            "Makefile",
            ".ci",
            f":!{Path(__file__).relative_to(ROOT)}",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert tracked.stdout == ""


def test_pip_builds_the_project_as_its_dependencies_only(tmp_path):
    # Deployed from its checkout: the wheel carries the dependencies' list and no code of ours.
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--wheel-dir",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
    )
    (wheel,) = tmp_path.glob("museum-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert all(".dist-info/" in name for name in names)
    metadata = next(name for name in names if name.endswith("/METADATA"))
    assert "Requires-Dist: django" in zipfile.ZipFile(wheel).read(metadata).decode()
