"""What the wallet hears from the sale, which may not import it (docs/architecture.md): the
audit log's records, sent once their change commits (audit.services.recorded). An order moved,
cancelled (whole or a ticket), confirmed or paid may change what its tickets' passes show; if
any of its tickets has a pass, a task builds them again and pushes those that changed
(wallet/tasks.py). Tickets never added to a wallet cost one query and no task."""

import logging

from audit.models import Action, AuditRecord
from audit.services import recorded
from orders.models import Order
from wallet import push
from wallet.models import ApplePass
from wallet.tasks import refresh_ticket_passes

logger = logging.getLogger("wallet.push")

PASS_CHANGES = {Action.CHANGED, Action.CANCELLED, Action.CONFIRMED, Action.PAID}
ORDER = Order._meta.label_lower


def connect() -> None:
    recorded.connect(_recorded, dispatch_uid="wallet:passes")


def _recorded(sender, record: AuditRecord, **kwargs) -> None:
    if record.object_type != ORDER or record.action not in PASS_CHANGES:
        return
    # After the commit: the change stands whatever fails here, and its passes are then built
    # again when a device or the visitor asks for them.
    try:
        if (
            push.configured()
            and ApplePass.objects.filter(ticket__order_id=record.object_id).exists()
        ):
            refresh_ticket_passes.enqueue(
                order_id=record.object_id, changed_at=record.at.isoformat()
            )
    except Exception:
        logger.warning("Passes of order %s not refreshed", record.object_id, exc_info=True)
