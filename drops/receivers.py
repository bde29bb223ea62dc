"""What a drop hears: staff changing it (its settings rewritten where the line reads them, the
kept drops forgotten on every node) and places given back on its rows (counted again, so that
the line lets the next one in, or the waiting list is offered them)."""

import logging

from django.db import transaction
from django.db.models.signals import m2m_changed, post_delete, post_save

from drops import queue, services, waiting_list
from drops.models import Drop
from museum.response_cache import group_changed
from orders.signals import places_given_back

logger = logging.getLogger("museum.drops")


def connect() -> None:
    services.ACTIVE.changes_with(Drop)
    for through in (Drop.days.through, Drop.slots.through, Drop.event_dates.through):
        m2m_changed.connect(_covers_changed, sender=through, dispatch_uid=f"drops:{through}")
    post_save.connect(_saved, sender=Drop, dispatch_uid="drops:saved")
    post_delete.connect(_deleted, sender=Drop, dispatch_uid="drops:deleted")
    places_given_back.connect(_given_back, dispatch_uid="drops:given-back")


def _covers_changed(sender, instance, action, **kwargs) -> None:
    if action.startswith("post_") and isinstance(instance, Drop):
        services.ACTIVE.forget()
        _saved(Drop, instance)


def _saved(sender, instance: Drop, **kwargs) -> None:
    # The public's availability of its places changes with it (services.held_for_the_line).
    group_changed("slots")

    def configure() -> None:
        try:
            services.configure(instance)
        except queue.Unreachable:
            logger.warning(
                "Drop %s: Redis away; its settings are written at its next poll", instance.pk
            )

    transaction.on_commit(configure)


def _deleted(sender, instance: Drop, **kwargs) -> None:
    pk = instance.pk

    def forget() -> None:
        try:
            queue.forget(pk)
        except queue.Unreachable:
            pass  # nothing reads a deleted drop's keys

    transaction.on_commit(forget)


def _given_back(sender, *, day, slot_id, event_id, n, **kwargs) -> None:
    drop = services.covering_row(day=day, slot_id=slot_id, event_id=event_id)
    if drop is not None:
        waiting_list.recount_and_offer_after_commit(drop)
