"""Empty the cache every worker shares: after restoring a backup (docs/operations.md), so no
answer, count or credential kept from before the restore is served."""

from django.core.cache import cache
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Empty the shared cache (Redis): run it after restoring the database."

    def handle(self, *args, **options):
        cache.clear()
        self.stdout.write("Cache emptied.")
