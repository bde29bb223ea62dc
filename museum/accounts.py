"""Accounts and roles: the one place that knows what each role may do.

A role is a group with a fixed set of Django permissions. `is_staff` only lets an account sign
in to the admin (and, through its login, the door page); what it may do there, in the API and
at the door is what its permissions say.
"""

from django.contrib.auth.models import Group, Permission, User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q

STAFF_GROUP = "Museum staff"
DOOR_GROUP = "Door staff"
PARTNER_GROUP = "Sales partners"
DESK_GROUP = "Front desk"

# Staff run the programme, the opening hours and the tickets: no user management, no deleting
# orders (the record of what was sold and sent). Deleting museum days is
# there because "Apply a weekly pattern" removes the days a pattern closes (a day with tickets
# sold is protected by its tickets).
STAFF_PERMISSIONS = [
    *(f"events.{action}_specialevent" for action in ("view", "add", "change", "delete")),
    *(f"events.{action}_eventdate" for action in ("view", "add", "change", "delete")),
    *(f"hours.{action}_museumday" for action in ("view", "add", "change", "delete")),
    "orders.view_ticket",
    "orders.check_in_ticket",
    # Orders: seen and cancelled past the visitor's deadline; refunds are a record, only read.
    # Categories and prices are changed, never deleted (tickets keep theirs): untick Active.
    "orders.view_order",
    "orders.cancel_any_order",
    "orders.view_refund",
    # The front desk takes cash or card-terminal payments; a failed refund is tried again.
    "orders.take_desk_payment",
    "orders.sell_at_desk",
    "orders.view_payment",
    # Receipts, invoices and credit notes: issued by the services, never changed, only read.
    "orders.view_saledocument",
    "orders.change_refund",
    "orders.view_salelimits",
    "orders.add_salelimits",
    "orders.change_salelimits",
    *(f"orders.{action}_visitorcategory" for action in ("view", "add", "change")),
    # Membership types are priced and described here; memberships, their sales and members'
    # walk-ins are sold and written by the services, only read (and sold and renewed for
    # members at the desk).
    *(f"orders.{action}_membershiptype" for action in ("view", "add", "change")),
    "orders.view_membership",
    "orders.view_membershipsale",
    "orders.view_memberentry",
    "orders.sell_memberships",
    *(f"hours.{action}_entryslot" for action in ("view", "add", "change")),
    # Who changed what; webhook subscriptions (everyone's) and their deliveries, sent again.
    "audit.view_auditrecord",
    *(f"webhooks.{action}_subscription" for action in ("view", "add", "change", "delete")),
    "webhooks.view_delivery",
    "webhooks.change_delivery",
    # The background tasks (confirmation emails, periodic jobs) and how they ended.
    "django_tasks_database.view_dbtaskresult",
    # OCTO (docs/octo.md): partners' API keys (issued and revoked, never deleted), their
    # commission, how categories show as OCTO units, and the bookings, only read.
    *(f"octo.{action}_apikey" for action in ("view", "add", "change")),
    *(f"octo.{action}_partnerterms" for action in ("view", "add", "change")),
    *(f"octo.{action}_categoryunit" for action in ("view", "add", "change")),
    "octo.view_booking",
    # Gift cards (docs/money.md): each card and its ledger, written only by the services;
    # a balance changed by hand, with a reason the ledger and the audit log keep.
    "giftcards.view_giftcard",
    "giftcards.view_transaction",
    "giftcards.change_balance",
    # Vouchers (docs/vouchers.md): made, changed, deleted while never used; their counters are
    # the sale's.
    *(f"orders.{action}_voucher" for action in ("view", "add", "change", "delete")),
    # Donations (docs/money.md): the funds described here, changed, never deleted; donations
    # written by the sale, only read, refunded by staff (an action, orders.cancel_any_order).
    *(f"orders.{action}_fund" for action in ("view", "add", "change")),
    "orders.view_donation",
    # Groups (docs/groups.md): requests answered through the services (the desk), only read
    # here; group rates, chaperone rules, tour programmes and guides (their week, their
    # exceptions) described here; a tour's guides assigned through the services.
    "groups.answer_group_requests",
    "groups.view_grouprequest",
    *(
        f"groups.{action}_{model}"
        for action in ("view", "add", "change", "delete")
        for model in ("grouprate", "chaperonerule", "guideavailability", "guideabsence")
    ),
    *(
        f"groups.{action}_{model}"
        for action in ("view", "add", "change")
        for model in ("tourprogramme", "guide")
    ),
    "groups.view_guideassignment",
    # Drops (docs/operations.md, "A blockbuster drop"): set up, changed and deleted here; their
    # waiting lists, written by the services, only read.
    *(f"drops.{action}_drop" for action in ("view", "add", "change", "delete")),
    "drops.view_waitingentry",
]
# Temporary door staff check tickets in, and nothing else.
DOOR_PERMISSIONS = ["orders.check_in_ticket"]
# Resellers and the museum's trusted systems collect the money themselves: their orders are
# confirmed at once, paid on account, and invoiced monthly. No staff rights.
# They hear of their orders and of the programme through webhooks they manage themselves.
PARTNER_PERMISSIONS = ["orders.sell_on_account", "webhooks.manage_own_webhooks"]

# The front desk sells, takes the money, finds, moves, reprints and cancels orders, and admits;
# it sells and renews memberships, finds a member and prints their card.
DESK_PERMISSIONS = [
    "orders.sell_at_desk",
    "orders.sell_memberships",
    "orders.view_membership",
    "orders.take_desk_payment",
    "orders.view_order",
    "orders.cancel_any_order",
    "orders.view_payment",
    "orders.view_refund",
    "orders.view_saledocument",
    "orders.view_visitorcategory",
    "orders.view_fund",
    "orders.view_donation",
    "orders.check_in_ticket",
    "orders.view_membership",
    "orders.sell_memberships",
    # Groups' requests answered, their visits and payments, their tours' guides.
    "groups.answer_group_requests",
    "groups.view_grouprequest",
    "groups.view_guideassignment",
]

ROLES = {
    STAFF_GROUP: STAFF_PERMISSIONS,
    DESK_GROUP: DESK_PERMISSIONS,
    DOOR_GROUP: DOOR_PERMISSIONS,
    PARTNER_GROUP: PARTNER_PERMISSIONS,
}


class UsernameTaken(ValidationError):
    """Another account has this username, perhaps spelled in another case."""

    def __init__(self, username: str):
        super().__init__(
            f"An account named {username!r} already exists (usernames are compared "
            "without regard to case).",
            code="username_taken",
        )


def permissions(names: list[str]) -> list[Permission]:
    """The Permission rows for `app_label.codename` names; every name must exist."""
    wanted = Q()
    for name in names:
        app_label, codename = name.split(".")
        wanted |= Q(content_type__app_label=app_label, codename=codename)
    found = list(Permission.objects.filter(wanted).select_related("content_type"))
    missing = set(names) - {f"{p.content_type.app_label}.{p.codename}" for p in found}
    if missing:
        raise LookupError(f"Unknown permissions: {', '.join(sorted(missing))}")
    return found


def role_group(name: str) -> Group:
    """The role's group, created if missing, with exactly the role's permissions."""
    group, _ = Group.objects.get_or_create(name=name)
    group.permissions.set(permissions(ROLES[name]))
    return group


def staff_group() -> Group:
    return role_group(STAFF_GROUP)


def door_group() -> Group:
    return role_group(DOOR_GROUP)


def partner_group() -> Group:
    return role_group(PARTNER_GROUP)


def desk_group() -> Group:
    return role_group(DESK_GROUP)


def sync_role_groups() -> None:
    """Create or update every role's group (run after each migrate)."""
    for name in ROLES:
        role_group(name)


def check_username_free(username: str, *, exclude_pk: int | None = None) -> None:
    # The database's unique index on LOWER(username) backs this up (museum migration 0002).
    taken = User.objects.filter(username__iexact=username)
    if exclude_pk is not None:
        taken = taken.exclude(pk=exclude_pk)
    if taken.exists():
        raise UsernameTaken(username)


@transaction.atomic
def create_account(
    *,
    username: str,
    password: str,
    email: str = "",
    staff: bool = False,
    door: bool = False,
    partner: bool = False,
    desk: bool = False,
) -> User:
    """A visitor reads and buys, paying online; a sales partner buys on account; staff also run
    the programme; the front desk sells, takes the money and admits; door staff only check
    tickets in.

    Staff, the front desk and door staff get `is_staff`, which lets them sign in through the
    admin's login (to the admin, the desk and the door page).
    """
    if staff + door + partner + desk > 1:
        raise ValueError("An account has one role: staff, front desk, door staff or partner.")
    check_username_free(username)
    user = User.objects.create_user(username=username, password=password, email=email)
    if staff or door or desk:
        user.is_staff = True
        user.save(update_fields=["is_staff"])
        user.groups.add(staff_group() if staff else desk_group() if desk else door_group())
    elif partner:
        user.groups.add(partner_group())
    return user
