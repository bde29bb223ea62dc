from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from octo.keys import issue_api_key


class Command(BaseCommand):
    help = "Issue an OCTO API key to a sales partner's account; prints the key (shown only once)."

    def add_arguments(self, parser):
        parser.add_argument("partner", help="The partner account's username.")
        parser.add_argument("--name", default="OCTO", help="What the key is for.")

    def handle(self, *args, partner, name, **options):
        account = get_user_model().objects.filter(username__iexact=partner).first()
        if account is None:
            raise CommandError(f"No account named {partner!r}.")
        if not account.has_perm("orders.sell_on_account"):
            raise CommandError(f"{partner!r} is not a sales partner.")
        _, key = issue_api_key(account=account, name=name)
        self.stdout.write(key)
