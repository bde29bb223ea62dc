"""What the wallet hears from the sale, which may not import it (docs/architecture.md): the
audit log's records, sent once their change commits (audit.services.recorded). A change of an
owner of passes (an order's tickets, a membership, a gift card: wallet.tasks.OWNERS says which
changes of which) may change what its passes show; if it has a kept pass, a task builds them
again, pushes the Apple passes that changed and saves its Google objects again
(wallet/tasks.py). An owner never added to a wallet costs one query and no task."""

import logging

from audit.models import AuditRecord
from audit.services import recorded
from wallet.tasks import OWNERS, has_kept_passes, refresh_passes

logger = logging.getLogger("wallet.push")


def connect() -> None:
    recorded.connect(_recorded, dispatch_uid="wallet:passes")


def _recorded(sender, record: AuditRecord, **kwargs) -> None:
    owner = OWNERS.get(record.object_type)
    if owner is None or record.action not in owner.changes:
        return
    # After the commit: the change stands whatever fails here, and its passes are then built
    # again when a device or the visitor asks for them.
    try:
        if has_kept_passes(record.object_type, record.object_id):
            refresh_passes.enqueue(
                owner_type=record.object_type,
                owner_id=record.object_id,
                changed_at=record.at.isoformat(),
            )
    except Exception:
        logger.warning(
            "Passes of %s %s not refreshed", record.object_type, record.object_id, exc_info=True
        )
