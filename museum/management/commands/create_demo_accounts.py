from django.contrib.auth.models import User
from django.core.management.base import BaseCommand

from museum.accounts import create_account

# Local trying-out only (`make run`); never run this against a production database.
# (username, password, role): a visitor pays online (the demo provider), a partner on account.
DEMO_ACCOUNTS = [
    ("staff", "staff-demo-password", "staff"),
    ("visitor", "visitor-demo-password", "visitor"),
    ("partner", "partner-demo-password", "partner"),
]


class Command(BaseCommand):
    help = (
        "Create the demo staff, visitor and sales partner accounts if missing; existing accounts "
        "are untouched."
    )

    def handle(self, *args, **options):
        for username, password, role in DEMO_ACCOUNTS:
            if User.objects.filter(username__iexact=username).exists():
                self.stdout.write(f"Demo {role} account {username!r} exists; left as it is.")
                continue
            create_account(
                username=username,
                password=password,
                staff=role == "staff",
                partner=role == "partner",
            )
            self.stdout.write(
                self.style.SUCCESS(f"Demo {role} account: {username} / password: {password}")
            )
