"""The museum's own exceptions: a broken rule said in the domain's words, never in HTTP's.

Services and selectors raise them; each face turns them into its own answer through one mapping:
museum/errors.py into problem+json (the `kind` picks the status), the admin into a form error,
the door into a verdict. So no service imports DRF or raises Http404.
"""

from typing import Any

from django.utils.translation import gettext_lazy as _


class MuseumProblem(Exception):
    """A broken rule of the museum: a machine-readable code, a title and a message for people,
    and in `extra` the fields a client needs (e.g. `available`, `deadline`). Subclasses set
    `kind`, `default_code`, `title` and `default_detail`."""

    # What sort of problem: "invalid" (the request itself), "not_found", "forbidden", "conflict"
    # (with the museum's state), "payment_required", "too_many" (a limit on what one may take),
    # "provider_down" (a payment provider failed us), "unavailable" (a part of ours is away for
    # a moment; `retry_after` seconds, if set, say when to ask again). The faces decide what
    # each means to them.
    kind = "conflict"
    default_code = "conflict"
    title = _("Conflict")
    default_detail = _("The request conflicts with the museum's rules.")

    def __init__(self, detail: str | None = None, **extra: Any):
        self.detail = detail or self.default_detail
        self.code = self.default_code
        self.extra = extra
        super().__init__(self.detail)


class NotFound(MuseumProblem):
    """What was asked for does not exist, or the one asking may not know that it does."""

    kind = "not_found"
    default_code = "not_found"
    title = _("Not Found")
    default_detail = _("Not found.")


class NotAllowed(MuseumProblem):
    kind = "forbidden"
    default_code = "permission_denied"
    title = _("Forbidden")
    default_detail = _("You do not have permission to perform this action.")


class InvalidInput(MuseumProblem):
    """A value of the request breaks a rule its shape could not say: `field` names it, as a
    serializer's error would (e.g. `lines.0.category`)."""

    kind = "invalid"
    default_code = "validation_error"
    title = _("Validation failed")

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.errors = {field: [message]}
