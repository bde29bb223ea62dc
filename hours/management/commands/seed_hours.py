from datetime import date

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from hours.services import (
    DEFAULT_PATTERN,
    MAX_DAYS,
    apply_weekly_pattern,
    parse_weekly_pattern,
)

# Shorter ranges finish before progress would tell anyone anything.
PROGRESS_FROM_DAYS = 100
PROGRESS_STEPS = 10


class Command(BaseCommand):
    help = (
        "Create the museum's opening days from a weekly pattern. Days that already follow the "
        "pattern are left as they are; days staff edited are kept unless --overwrite-staff-edits. "
        "A day the pattern closes is removed, or closed if tickets are sold for it."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--start", type=date.fromisoformat, help="First day, YYYY-MM-DD (default: today)."
        )
        parser.add_argument("--days", type=int, default=90, help="How many days (default: 90).")
        parser.add_argument(
            "--pattern",
            default=DEFAULT_PATTERN,
            help=f'Weekly hours; weekdays not named are closed (default: "{DEFAULT_PATTERN}").',
        )
        parser.add_argument(
            "--capacity",
            type=int,
            help="General-entry tickets per new day (default: unlimited).",
        )
        parser.add_argument(
            "--slot-minutes",
            type=int,
            help="Timed entry: split each open day without slots into slots this long.",
        )
        parser.add_argument(
            "--slot-capacity",
            type=int,
            help="Tickets per entry slot (default: unlimited); needs --slot-minutes.",
        )
        parser.add_argument(
            "--slot-member-places",
            type=int,
            default=0,
            help="Of each slot's tickets, places kept for members until "
            "MUSEUM_MEMBER_PLACES_RELEASE_HOURS before the slot (default: none).",
        )
        parser.add_argument(
            "--overwrite-staff-edits",
            action="store_true",
            help="Also reset days that staff changed in the admin.",
        )

    def handle(self, *args, start, days, pattern, capacity, overwrite_staff_edits, **options):
        if not 1 <= days <= MAX_DAYS:
            raise CommandError(f"--days must be between 1 and {MAX_DAYS}")
        if capacity is not None and capacity < 0:
            raise CommandError("--capacity cannot be negative")
        slot_minutes, slot_capacity = options["slot_minutes"], options["slot_capacity"]
        if slot_minutes is not None and not 5 <= slot_minutes <= 24 * 60:
            raise CommandError("--slot-minutes must be between 5 and 1440")
        if slot_capacity is not None and (slot_minutes is None or slot_capacity < 0):
            raise CommandError("--slot-capacity needs --slot-minutes and cannot be negative")
        member_places = options["slot_member_places"]
        if member_places and (slot_minutes is None or member_places < 0):
            raise CommandError("--slot-member-places needs --slot-minutes and cannot be negative")
        if slot_capacity is not None and member_places > slot_capacity:
            raise CommandError("--slot-member-places cannot be more than --slot-capacity")
        try:
            weekly = parse_weekly_pattern(pattern)
        except ValueError as exc:
            raise CommandError(f"--pattern: {exc}") from None
        start = start or timezone.localdate()
        summary = apply_weekly_pattern(
            start=start,
            days=days,
            pattern=weekly,
            capacity=capacity,
            overwrite_staff_edits=overwrite_staff_edits,
            slot_minutes=slot_minutes,
            slot_capacity=slot_capacity,
            slot_member_places=member_places,
            on_progress=self._progress(days) if options["verbosity"] >= 1 else None,
        )
        self.stdout.write(
            self.style.SUCCESS(f"Opening hours from {start} for {days} days: {summary}.")
        )
        if summary.tickets_warning:
            self.stdout.write(self.style.WARNING(summary.tickets_warning))

    def _progress(self, days: int):
        if days < PROGRESS_FROM_DAYS:
            return None
        step = -(-days // PROGRESS_STEPS)  # rounded up: at most PROGRESS_STEPS lines

        def report(done: int) -> None:
            if done % step == 0 or done == days:
                self.stdout.write(f"  {done}/{days} days")

        return report
