"""Webhook subscriptions: made, changed and removed by partners (the API) and staff (the admin)."""

import base64
import secrets
import time
import uuid
from collections.abc import Collection
from datetime import timedelta

from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from audit.models import Action
from audit.services import changed_fields, record
from museum.exceptions import InvalidInput, NotFound
from webhooks.http import Refused, check_receiver
from webhooks.messages import known_types
from webhooks.models import Subscription

# How long the previous secret still signs after a rotation.
SECRET_OVERLAP = timedelta(hours=24)
SUBSCRIBED_TYPES_KEY = "webhooks:subscribed-types"
AUDITED = ["url", "event_types", "active", "disabled_reason"]


def new_secret() -> str:
    """whsec_ and 32 random bytes in base64, as Standard Webhooks' libraries read it."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


# Every audit record asks which types are wanted (webhooks.fanout.on_recorded): each process keeps
# the answer this long rather than pay a cache round trip per write. A change in this process
# forgets it at once; another process sees it within these seconds, and a record whose fan-out it
# did not enqueue meanwhile is offered by the sweep (webhooks.tasks, every minute).
KEPT_SECONDS = 10
_kept: tuple[float, frozenset[str]] | None = None


def subscribed_types() -> frozenset[str]:
    """The event types some active subscription wants."""
    global _kept
    now = time.monotonic()
    if _kept is not None and now < _kept[0]:
        return _kept[1]
    types = cache.get(SUBSCRIBED_TYPES_KEY)
    if types is None:
        types = set()
        for wanted in Subscription.objects.filter(active=True).values_list(
            "event_types", flat=True
        ):
            types.update(wanted)
        cache.set(SUBSCRIBED_TYPES_KEY, types, KEPT_SECONDS)
    _kept = (now + KEPT_SECONDS, frozenset(types))
    return _kept[1]


def forget_subscribed_types(**kwargs) -> None:
    """Ask again next time, in every process (the shared cache) and in this one."""
    global _kept
    _kept = None
    cache.delete(SUBSCRIBED_TYPES_KEY)


def _changed() -> None:
    transaction.on_commit(forget_subscribed_types)


def _checked(url: str, event_types: list[str]) -> None:
    try:
        check_receiver(url)
    except Refused as refusal:
        raise InvalidInput("url", str(refusal)) from None
    known = known_types()
    unknown = set(event_types) - set(known)
    if unknown or not event_types:
        raise InvalidInput("eventTypes", f"Choose one or more of {', '.join(known)}.")


@transaction.atomic
def create_subscription(*, owner, url: str, event_types: list[str]) -> Subscription:
    _checked(url, event_types)
    subscription = Subscription.objects.create(
        owner=owner, url=url, event_types=sorted(set(event_types)), secret=new_secret()
    )
    record(action=Action.CREATED, obj=subscription, changes={"url": url, "types": event_types})
    _changed()
    return subscription


def speaks_only(subscription: Subscription, types: Collection[str] | None) -> bool:
    """Whether every type the subscription hears is among `types` (None: any): the Museum API
    shows only subscriptions to its own types, OCTO's (octo/webhooks.py) only OCTO's."""
    return types is None or set(subscription.event_types) <= set(types)


def subscription_of(
    *,
    subscription_id: uuid.UUID,
    owner,
    lock: bool = False,
    types: Collection[str] | None = None,
) -> Subscription:
    found = Subscription.objects.filter(pk=subscription_id, owner=owner)
    subscription = (found.select_for_update() if lock else found).first()
    if subscription is None or not speaks_only(subscription, types):
        raise NotFound()
    return subscription


@transaction.atomic
def update_subscription(
    *,
    subscription_id: uuid.UUID,
    owner,
    url: str | None = None,
    event_types: list[str] | None = None,
    active: bool | None = None,
    rotate_secret: bool = False,
    types: Collection[str] | None = None,
) -> Subscription:
    """Change what is given; `active` True turns a disabled subscription on again. A rotated
    secret is the new one; the old one still signs for SECRET_OVERLAP."""
    subscription = subscription_of(
        subscription_id=subscription_id, owner=owner, lock=True, types=types
    )
    before = {name: getattr(subscription, name) for name in AUDITED}
    if url is not None or event_types is not None:
        _checked(url or subscription.url, event_types or subscription.event_types)
    if url is not None:
        subscription.url = url
    if event_types is not None:
        subscription.event_types = sorted(set(event_types))
    if active is not None:
        subscription.active = active
        if active:
            subscription.disabled_reason, subscription.failing_since = "", None
    changes = changed_fields(before, subscription, AUDITED)
    if rotate_secret:
        subscription.previous_secret = subscription.secret
        subscription.previous_until = timezone.now() + SECRET_OVERLAP
        subscription.secret = new_secret()
        changes["secret"] = "rotated"
    subscription.save()
    record(action=Action.CHANGED, obj=subscription, changes=changes)
    _changed()
    return subscription


@transaction.atomic
def delete_subscription(
    *, subscription_id: uuid.UUID, owner, types: Collection[str] | None = None
) -> None:
    subscription = subscription_of(
        subscription_id=subscription_id, owner=owner, lock=True, types=types
    )
    record(action=Action.DELETED, obj=subscription)
    subscription.delete()
    _changed()


def disable(subscription: Subscription, *, reason: str) -> None:
    """Turn the subscription off, saying why (a 410, or failing for days)."""
    with transaction.atomic():
        Subscription.objects.filter(pk=subscription.pk).update(
            active=False, disabled_reason=reason[:200]
        )
        subscription.active, subscription.disabled_reason = False, reason[:200]
        record(
            action=Action.CHANGED,
            obj=subscription,
            changes={"active": [True, False], "disabled_reason": reason},
        )
        _changed()


def signing_secrets(subscription: Subscription) -> list[str]:
    """The secrets that sign a message now: the current one, and the previous during overlap."""
    current = [subscription.secret]
    until = subscription.previous_until
    if subscription.previous_secret and until and until > timezone.now():
        current.append(subscription.previous_secret)
    return current
