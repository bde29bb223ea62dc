import logging
import time

from django.core.management.base import BaseCommand, CommandError
from django.db import InterfaceError, OperationalError, close_old_connections

from tickets.services import send_due_emails

logger = logging.getLogger(__name__)


class Command(BaseCommand):
    help = (
        "Send the confirmation emails that are due: new purchases' and retries. "
        "Once by default; with --loop, as a worker, every --interval seconds."
    )

    def add_arguments(self, parser):
        parser.add_argument("--loop", action="store_true", help="Keep running, as a worker.")
        parser.add_argument(
            "--interval", type=float, default=5.0, help="Seconds between rounds with --loop."
        )

    def handle(self, *args, loop, interval, **options):
        if interval <= 0:
            raise CommandError("--interval must be more than 0 seconds")
        while True:
            try:
                sent, not_sent = send_due_emails()
            except (OperationalError, InterfaceError) as exc:
                if not loop:
                    raise
                # The worker waits out a database outage instead of dying on it.
                logger.warning(
                    "Outbox round skipped: database unavailable (%s)", type(exc).__qualname__
                )
            else:
                if sent or not_sent or not loop:
                    self.stdout.write(f"Outbox: {sent} sent, {not_sent} not sent.")
            if not loop:
                return
            time.sleep(interval)
            # A worker has no request cycle: as Django does when a request starts, drop a
            # connection that failed or is too old, and have the next query check that a kept
            # one still works (CONN_HEALTH_CHECKS), so a database restart costs no round.
            close_old_connections()
