import logging
import time

from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError, close_old_connections

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
            except DatabaseError as exc:
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
            # A worker outlives its database connections: as at the end of a request, close one
            # that is too old or that the server dropped (CONN_HEALTH_CHECKS), and reconnect.
            close_old_connections()
