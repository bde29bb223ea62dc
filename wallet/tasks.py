"""Keeping the passes in the visitors' wallets true: after a change of a pass's owner commits (an
order moved, cancelled, confirmed or paid; a membership renewed, cancelled, expired, its card
replaced or its gift redeemed; a gift card spent, credited or adjusted: wallet/receivers.py), a
task builds the owner's kept passes again, pushes each Apple pass that changed to the devices
registered for it, and saves each of its Google objects again through Google's REST API.

Everything here runs on the task queue, after the sale's commit and outside any transaction: a
pass is signed, APNs and Google are called with no row locked, and an outage of either never
fails a sale. A push that APNs could not take now (down, 5xx, 429), or an object Google could not
(unreachable, timed out, 5xx, 429), is tried again (for the devices it missed), after
museum.lost_work.RETRY's wait, until its last attempt; an object Google refuses (another 4xx)
is logged and given up. Work lost with its worker is not tried again (no row of ours keeps its
claim): a device sees the change when it next asks, a Google pass when its link is next asked
for.
"""

import functools
import logging
import operator
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Exists, Model, Q
from django.utils import timezone
from django_tasks import task

from audit.models import Action
from giftcards.models import GiftCard
from museum.lost_work import RETRY
from orders.models import Membership, Order
from wallet import apple, google, push
from wallet.exceptions import WalletRefused, WalletUnavailable
from wallet.models import OWNERS_RELATED, ApplePass, GoogleObject

logger = logging.getLogger("wallet.push")


@dataclass(frozen=True)
class Owner:
    """What owns kept passes, by the audit log's name for it (its model's label): the changes
    that may change what they show, and which they are (ApplePass and GoogleObject name their
    owner by the same fields, so one filter finds either's)."""

    model: type[Model]
    changes: frozenset[str]
    passes: Callable[[str], Q]


OWNERS: dict[str, Owner] = {
    Order._meta.label_lower: Owner(
        Order,
        frozenset({Action.CHANGED, Action.CANCELLED, Action.CONFIRMED, Action.PAID}),
        lambda pk: Q(ticket__order_id=pk),
    ),
    # Confirmed: activated, or a gift redeemed by its holder; changed: renewed, card replaced.
    Membership._meta.label_lower: Owner(
        Membership,
        frozenset({Action.CONFIRMED, Action.CHANGED, Action.CANCELLED, Action.EXPIRED}),
        lambda pk: Q(membership_id=pk),
    ),
    # Changed: a move on its ledger (spent, credited back, adjusted or taken back by staff).
    GiftCard._meta.label_lower: Owner(
        GiftCard, frozenset({Action.CHANGED}), lambda pk: Q(gift_card_id=pk)
    ),
}


def has_kept_passes(owner_type: str, owner_id: str) -> bool:
    """Whether the owner has a pass that a task would refresh: an Apple pass with pushes set up,
    a Google object with Google set up. One query, none without either."""
    owner = OWNERS[owner_type]
    kept = []
    if push.configured():
        kept.append(Exists(ApplePass.objects.filter(owner.passes(owner_id))))
    if google.is_configured():
        kept.append(Exists(GoogleObject.objects.filter(owner.passes(owner_id))))
    if not kept:
        return False
    anywhere = functools.reduce(operator.or_, kept)
    return owner.model._default_manager.filter(anywhere, pk=owner_id).exists()


@task()
def refresh_passes(*, owner_type: str, owner_id: str, changed_at: str) -> str:
    """Build again the owner's kept passes: push the Apple passes that changed, save its Google
    objects again."""
    passes = OWNERS[owner_type].passes(owner_id)
    done = []
    if push.configured():
        done.append(_push_changed(passes, changed=datetime.fromisoformat(changed_at)))
    if google.is_configured():
        kept = GoogleObject.objects.filter(passes).select_related(*OWNERS_RELATED)
        done += [update_with_retry(kept=one, attempt=1) for one in kept]
    return "; ".join(done) or "not configured"


def _push_changed(passes: Q, *, changed: datetime) -> str:
    pushed = 0
    for before in ApplePass.objects.filter(passes).select_related(*OWNERS_RELATED):
        current = apple.rebuilt(before)
        # Changed by this build, or by a device's or the visitor's download since the change:
        # either way the devices registered may still hold the pass as it was.
        if current.pazz.updated_at >= changed:
            push_with_retry(pass_id=current.pazz_id, attempt=1)
            pushed += 1
    return f"{pushed} passes pushed"


@task()
def push_pass_update(*, pass_id: int, attempt: int, push_tokens: list[str]) -> str:
    """Another attempt at a pass's push, to the devices an earlier one missed."""
    if not push.configured():
        return "not configured"
    return push_with_retry(pass_id=pass_id, attempt=attempt, only=push_tokens)


def push_with_retry(*, pass_id: int, attempt: int, only: list[str] | None = None) -> str:
    """Push the pass (attempt number `attempt`), and enqueue the next attempt for the devices
    APNs could not take it for."""
    later = push.push_pass(pass_id=pass_id, only=only)
    if not later:
        return "pushed"
    run_after = RETRY.next_run(attempt, now=timezone.now())
    if run_after is None:
        logger.error("Push of pass %s given up after %d attempts", pass_id, attempt)
        return "given up"
    push_pass_update.using(run_after=run_after).enqueue(
        pass_id=pass_id, attempt=attempt + 1, push_tokens=later
    )
    return f"{len(later)} devices again at {run_after.isoformat()}"


@task()
def update_google_object(*, object_id: str, attempt: int) -> str:
    """Another attempt at saving a kept Google object again, as its owner shows it now."""
    if not google.is_configured():
        return "not configured"
    kept = GoogleObject.objects.select_related(*OWNERS_RELATED).filter(object_id=object_id)
    found = kept.first()
    if found is None:  # its owner deleted since
        return "gone"
    return update_with_retry(kept=found, attempt=attempt)


def update_with_retry(*, kept: GoogleObject, attempt: int) -> str:
    """Save the object again (attempt number `attempt`), and enqueue the next attempt if Google
    could not take it now."""
    try:
        google.update_object(kept)
    except WalletRefused:
        logger.error("Google Wallet object %s refused: not updated", kept.object_id)
        return f"{kept.object_id} refused"
    except WalletUnavailable:
        run_after = RETRY.next_run(attempt, now=timezone.now())
        if run_after is None:
            logger.error("Update of %s given up after %d attempts", kept.object_id, attempt)
            return f"{kept.object_id} given up"
        update_google_object.using(run_after=run_after).enqueue(
            object_id=kept.object_id, attempt=attempt + 1
        )
        return f"{kept.object_id} again at {run_after.isoformat()}"
    return f"{kept.object_id} updated"
