from django.contrib.auth.models import User
from django.core.management.base import BaseCommand

from museum.accounts import create_account

# Local trying-out only (`make run`); never run this against a production database.
# (username, password, role, what it opens): a visitor pays online (the demo provider), a partner
# on account.
DEMO_ACCOUNTS = [
    ("staff", "staff-demo-password", "staff", "Museum staff: /admin/, /desk/ and /door/"),
    ("desk", "desk-demo-password", "desk", "Front desk: sells at /desk/, checks in at /door/"),
    ("visitor", "visitor-demo-password", "visitor", "visitor: the API, pays online"),
    ("partner", "partner-demo-password", "partner", "sales partner: the API, paid on account"),
]


class Command(BaseCommand):
    help = (
        "Create the demo staff, front desk, visitor and sales partner accounts if missing; "
        "existing accounts are untouched. With --list, create nothing and print the demo "
        "accounts and the service's addresses (what `make run` prints last)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--list",
            action="store_true",
            dest="listing",
            help="Print the demo accounts; create nothing.",
        )
        parser.add_argument(
            "--url", default="http://127.0.0.1:8000", help="Where the service is served."
        )

    def handle(self, *args, listing, url, **options):
        if listing:
            self._list(url.rstrip("/"))
            return
        for username, password, role, _ in DEMO_ACCOUNTS:
            if User.objects.filter(username__iexact=username).exists():
                self.stdout.write(f"Demo {role} account {username!r} exists; left as it is.")
                continue
            create_account(
                username=username,
                password=password,
                staff=role == "staff",
                desk=role == "desk",
                partner=role == "partner",
            )
            self.stdout.write(
                self.style.SUCCESS(f"Demo {role} account: {username} / password: {password}")
            )

    def _list(self, url: str) -> None:
        present = {
            name.lower()
            for name in User.objects.filter(
                username__in=[account[0] for account in DEMO_ACCOUNTS]
            ).values_list("username", flat=True)
        }
        self.stdout.write(
            self.style.SUCCESS("Demo accounts")
            + " (this machine only; an account changed since keeps its own password):"
        )
        for username, password, _, opens in DEMO_ACCOUNTS:
            if username in present:
                self.stdout.write(f"  {username:<8} {password:<22} {opens}")
        self.stdout.write(
            f"The admin: {url}/admin/  the desk: {url}/desk/  the door: {url}/door/\n"
            f"The API: {url}/v1.1/ (Swagger UI: {url}/v1.1/docs/)"
        )
