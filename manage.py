#!/usr/bin/env python
"""Django's command-line utility for administrative tasks.

In a checkout, `make run` leaves the settings it served with in `.env` (DEBUG, the public URL);
the commands read it, so `.venv/bin/python manage.py ...` there works as typed and mails the same
links as the server. The environment wins over the file. The server in production (gunicorn,
museum/wsgi.py) never reads it.
"""

import os
import sys
from pathlib import Path


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "museum.settings")
    local_settings = Path(__file__).resolve().parent / ".env"
    if local_settings.is_file():
        from dotenv import load_dotenv

        load_dotenv(local_settings, override=False)
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as missing:
        # A setting the command needs is missing or wrong: one line naming it, not a traceback.
        sys.exit(f"manage.py: {missing}")


if __name__ == "__main__":
    main()
