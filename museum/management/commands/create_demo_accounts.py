from django.contrib.auth.models import User
from django.core.management.base import BaseCommand

from museum.accounts import create_account

# Local trying-out only (`make run`); never run this against a production database.
DEMO_ACCOUNTS = [
    ("staff", "staff-demo-password", True),
    ("visitor", "visitor-demo-password", False),
]


class Command(BaseCommand):
    help = "Create the demo staff and visitor accounts if missing; existing accounts are untouched."

    def handle(self, *args, **options):
        for username, password, staff in DEMO_ACCOUNTS:
            role = "staff" if staff else "visitor"
            if User.objects.filter(username__iexact=username).exists():
                self.stdout.write(f"Demo {role} account {username!r} exists; left as it is.")
                continue
            create_account(username=username, password=password, staff=staff)
            self.stdout.write(
                self.style.SUCCESS(f"Demo {role} account: {username} / password: {password}")
            )
