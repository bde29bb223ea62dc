from django.conf import settings
from django.db import models


class IdempotencyKey(models.Model):
    """A client's Idempotency-Key and the answer it got, replayed for a retry of the request."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="idempotency_keys"
    )
    key = models.CharField(max_length=255)
    created_at = models.DateTimeField()
    # Filled in together with the answer: until then the key is free for the next attempt.
    request_method = models.CharField(max_length=10, blank=True)
    request_path = models.CharField(max_length=2000, blank=True)
    request_sha256 = models.CharField(max_length=64, blank=True)
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    response_content_type = models.CharField(max_length=100, blank=True)
    response_body = models.TextField(blank=True)
    # A 201's Location, replayed with its body.
    response_location = models.CharField(max_length=300, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "key"], name="idempotency_key_once_per_user"),
        ]
        indexes = [models.Index(fields=["created_at"], name="idempotency_key_created")]

    def __str__(self):
        return self.key


class PeriodicTask(models.Model):
    """A task the worker runs every so often, and its next run, waiting in the task queue."""

    path = models.CharField(max_length=200, unique=True)  # the task's module path
    next_run_id = models.CharField(max_length=64)  # the waiting run's TaskResult id
    next_run_at = models.DateTimeField()

    def __str__(self):
        return self.path
