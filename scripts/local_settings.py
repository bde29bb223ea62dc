"""Keep the settings `make run` serves with in `.env`, for the commands run in this checkout
later: manage.py reads the file (the environment wins over it). Other lines of the file are kept.

    python scripts/local_settings.py DEBUG=true MUSEUM_PUBLIC_URL=http://127.0.0.1:8000
"""

import sys
from pathlib import Path

from dotenv import set_key

LOCAL_SETTINGS = Path(__file__).resolve().parent.parent / ".env"


def main(assignments: list[str]) -> None:
    LOCAL_SETTINGS.touch(mode=0o600)
    for assignment in assignments:
        name, _, value = assignment.partition("=")
        set_key(LOCAL_SETTINGS, name, value, quote_mode="never")


if __name__ == "__main__":
    main(sys.argv[1:])
