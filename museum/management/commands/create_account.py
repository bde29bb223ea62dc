import getpass
import sys

from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from museum.accounts import check_username_free, create_account


class Command(BaseCommand):
    help = (
        "Create a visitor account (pays online), a staff account with --staff, a front desk "
        "account with --desk, a door-only account with --door, or a sales partner's (sells on "
        "account) with --partner. Asks for the password."
    )

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--email", default="")
        role = parser.add_mutually_exclusive_group()
        role.add_argument(
            "--staff", action="store_true", help="Runs events, opening hours and tickets."
        )
        role.add_argument(
            "--desk",
            action="store_true",
            help="The Front desk group: sells, takes cash or card, finds, moves, reprints and "
            "cancels orders at /desk/, and checks tickets in.",
        )
        role.add_argument(
            "--door", action="store_true", help="Checks tickets in at the door; nothing else."
        )
        role.add_argument(
            "--partner",
            action="store_true",
            help="A reseller or trusted system: orders paid on account, invoiced monthly.",
        )
        parser.add_argument(
            "--password-stdin",
            action="store_true",
            help="Read the password from standard input instead of asking (for scripts).",
        )

    def handle(self, *args, username, email, staff, desk, door, partner, password_stdin, **options):
        try:
            check_username_free(username)
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        password = sys.stdin.readline().rstrip("\n") if password_stdin else self._ask_password()
        try:
            validate_password(password, User(username=username, email=email))
            create_account(
                username=username,
                password=password,
                email=email,
                staff=staff,
                door=door,
                partner=partner,
                desk=desk,
            )
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        roles = {"staff": staff, "front desk": desk, "door staff": door, "sales partner": partner}
        role = next((name for name, chosen in roles.items() if chosen), "visitor")
        self.stdout.write(self.style.SUCCESS(f"Created {role} account {username!r}."))

    def _ask_password(self) -> str:
        password = getpass.getpass("Password: ")
        if password != getpass.getpass("Password (again): "):
            raise CommandError("The passwords do not match.")
        return password
