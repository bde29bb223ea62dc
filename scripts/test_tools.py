"""The system commands some tests run, from Debian's packages: `make test` runs this first to
install the missing ones (as root, with apt-get). Elsewhere it says what to install, and the tests
that need a missing command are skipped, saying so (failed under CI): `needs_tool` in
tests/conftest.py."""

import os
import shutil
import subprocess
import sys

# The command a test runs, and the Debian package that has it.
PACKAGES = {
    "chromium": "chromium",  # tests/browser/: Playwright drives it
    "curl": "curl",  # tests/test_readme_quick_start.py
    "java": "default-jre-headless",  # OpenAPI Generator's jar (tests/test_generated_*.py)
    "msgmerge": "gettext",  # `manage.py makemessages` (tests/orders/test_i18n.py)
    "nginx": "nginx",  # tests/test_nginx.py
    "openssl": "openssl",  # verifying an Apple Wallet pass's signature (tests/wallet/)
    "pdfinfo": "poppler-utils",  # reading the tickets' PDF back
    "pdftoppm": "poppler-utils",
    "pdftotext": "poppler-utils",
    "redis-server": "redis-server",  # a Redis of a test's own, that the test stops
    "xgettext": "gettext",
}
# nginx is in /usr/sbin, which is not on a Debian user's PATH unless the user is root.
SBIN = ["/usr/local/sbin", "/usr/sbin", "/sbin"]


def find_tool(command: str) -> str | None:
    """The path of `command`, on PATH or in the sbin folders."""
    path = os.pathsep.join([os.environ.get("PATH", os.defpath), *SBIN])
    return shutil.which(command, path=path)


def install_command(packages: list[str]) -> str:
    return f"apt-get install {' '.join(packages)}"


def missing_packages() -> list[str]:
    return sorted({PACKAGES[command] for command in PACKAGES if find_tool(command) is None})


def main() -> int:
    missing = missing_packages()
    if not missing:
        return 0
    if os.geteuid() == 0 and shutil.which("apt-get"):
        apt = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        for command in (["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", *missing]):
            if subprocess.run(command, env=apt, check=False).returncode != 0:
                break
        missing = missing_packages()
        if not missing:
            return 0
    print(
        f"Missing Debian packages: {' '.join(missing)}. The tests that run their commands are "
        f"skipped (failed when CI is set).\nInstall them, as root: {install_command(missing)}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
