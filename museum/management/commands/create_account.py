import getpass
import sys

from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from museum.accounts import create_account


class Command(BaseCommand):
    help = "Create a visitor account, or a staff account with --staff. Asks for the password."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--email", default="")
        parser.add_argument("--staff", action="store_true", help="May manage events and hours.")
        parser.add_argument(
            "--password-stdin",
            action="store_true",
            help="Read the password from standard input instead of asking (for scripts).",
        )

    def handle(self, *args, username, email, staff, password_stdin, **options):
        if User.objects.filter(username=username).exists():
            raise CommandError(f"An account named {username!r} already exists.")
        password = sys.stdin.readline().rstrip("\n") if password_stdin else self._ask_password()
        try:
            validate_password(password, User(username=username, email=email))
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        create_account(username=username, password=password, email=email, staff=staff)
        role = "staff" if staff else "visitor"
        self.stdout.write(self.style.SUCCESS(f"Created {role} account {username!r}."))

    def _ask_password(self) -> str:
        password = getpass.getpass("Password: ")
        if password != getpass.getpass("Password (again): "):
            raise CommandError("The passwords do not match.")
        return password
