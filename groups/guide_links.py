"""The signed token in a guide's confirm and decline links: the assignment, the guide asked and
when they were asked. Asking again (another guide, or the same one anew) writes a new `asked_at`,
so every link of an earlier ask stops working; an answer writes `answered_at`, so a link works
once (groups.services.guides.answer)."""

from dataclasses import dataclass
from datetime import datetime

from django.core import signing

from groups.models import GuideAssignment

# Its own salt: no other signed value of the service (a cancel link, a ticket) reads as one.
SALT = "groups.guide-answer"


@dataclass(frozen=True)
class GuideLink:
    assignment_id: int
    guide_id: int
    asked_at: datetime


def answer_token(assignment: GuideAssignment) -> str:
    assert assignment.asked_at is not None and assignment.guide_id is not None
    payload = [assignment.pk, assignment.guide_id, assignment.asked_at.isoformat()]
    return signing.dumps(payload, salt=SALT, compress=True)


def read_token(token: str) -> GuideLink | None:
    """What a token says, or None when the museum did not sign it."""
    try:
        assignment_id, guide_id, asked_at = signing.loads(token, salt=SALT)
        return GuideLink(int(assignment_id), int(guide_id), datetime.fromisoformat(asked_at))
    except (signing.BadSignature, ValueError, TypeError):
        return None
