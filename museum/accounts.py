"""Staff and visitor accounts: one place that knows what makes an account staff."""

from django.contrib.auth.models import Group, Permission, User
from django.db import transaction

STAFF_GROUP = "Museum staff"
# Staff run the programme, the opening hours and the tickets in the admin.
STAFF_APPS = ["events", "hours", "tickets"]


def staff_group() -> Group:
    group, created = Group.objects.get_or_create(name=STAFF_GROUP)
    if created:
        group.permissions.set(Permission.objects.filter(content_type__app_label__in=STAFF_APPS))
    return group


@transaction.atomic
def create_account(*, username: str, password: str, email: str = "", staff: bool = False) -> User:
    """A visitor reads and buys; a staff account also manages events and uses the admin."""
    user = User.objects.create_user(username=username, password=password, email=email)
    if staff:
        user.is_staff = True
        user.save(update_fields=["is_staff"])
        user.groups.add(staff_group())
    return user
