from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models
from django.db.models import Q
from django.utils import timezone

# Values the audit log shows only to superusers, and that go when the order's personal data goes
# (orders/services/personal_data.py).
PERSONAL_FIELDS = frozenset({"email", "phone"})
ANONYMISED = "(removed)"
SYSTEM = "system"


class Action(models.TextChoices):
    CREATED = "created"
    CHANGED = "changed"
    DELETED = "deleted"
    CONFIRMED = "confirmed"
    PAID = "paid"
    CANCELLED = "cancelled"
    EXPIRED = "expired"
    REFUNDED = "refunded"
    # A voucher's uses taken by a confirmed order.
    REDEEMED = "redeemed"
    # What the desk hands back over the counter, in cash or on the card terminal.
    PAID_OUT = "paid_out", "paid out"
    CHECKED_IN = "checked_in", "checked in"


class AuditRecord(models.Model):
    """One change of the museum's data: what, which action, who, when and in which request."""

    at = models.DateTimeField(default=timezone.now, db_index=True)
    action = models.CharField(max_length=20, choices=Action.choices)
    # The model's label ("events.specialevent") and key: no foreign key, so a record outlives
    # its object and one table serves every app.
    object_type = models.CharField(max_length=60)
    object_id = models.CharField(max_length=64)
    object_repr = models.CharField("object", max_length=200, blank=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    # The account's name as it was, or "system" (commands, tasks, a provider's notification).
    actor_name = models.CharField("by", max_length=150)
    request_id = models.CharField(max_length=100, blank=True)
    # "changed": {"field": [before, after]}; other actions: {"field": value} of what matters.
    changes = models.JSONField(default=dict, blank=True, encoder=DjangoJSONEncoder)
    # Offered to the listeners (webhooks) once committed: a sweep finds the ones not yet offered.
    published = models.BooleanField(default=False)

    class Meta:
        ordering = ["-at", "-pk"]
        verbose_name = "audit record"
        indexes = [
            models.Index(fields=["object_type", "object_id", "at"], name="audit_object_history"),
            models.Index(fields=["id"], name="audit_unpublished", condition=Q(published=False)),
        ]

    def __str__(self):
        return f"{self.object_type} {self.object_id} {self.action} by {self.actor_name}"
