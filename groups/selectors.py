"""Who may see which group requests, and the one asked for: the account's own, and every one for
staff who answer them (`groups.answer_group_requests`)."""

from django.db.models import Prefetch, QuerySet

from groups.models import GroupLine, GroupRequest
from museum.exceptions import NotFound

ANSWER_GROUP_REQUESTS = "groups.answer_group_requests"


def may_answer(user) -> bool:
    return bool(user and user.is_authenticated and user.has_perm(ANSWER_GROUP_REQUESTS))


def with_details(requests: QuerySet[GroupRequest]) -> QuerySet[GroupRequest]:
    """Loaded as the API answers them: their tour, order and lines with their categories."""
    return requests.select_related("tour", "order").prefetch_related(
        Prefetch("lines", queryset=GroupLine.objects.select_related("category"))
    )


def viewable_groups(*, viewer, status: str | None = None) -> QuerySet[GroupRequest]:
    """The requests `viewer` may see, newest first, of one `status` if given."""
    requests = GroupRequest.objects.all()
    if not may_answer(viewer):
        requests = requests.filter(account=viewer)
    if status:
        requests = requests.filter(status=status)
    return with_details(requests).order_by("-created_at", "-pk")


def viewable_group(*, request_id: int, viewer) -> GroupRequest:
    """The request, if `viewer` may see it: another's is not found."""
    group = viewable_groups(viewer=viewer).filter(pk=request_id).first()
    if group is None:
        raise NotFound()
    return group


def own_group(*, request_id: int, viewer) -> GroupRequest:
    """The request, if it is `viewer`'s own (staff's answers to it are not)."""
    group = GroupRequest.objects.filter(pk=request_id, account=viewer).first()
    if group is None:
        raise NotFound()
    return group


def group_of(*, request_id: int) -> GroupRequest:
    """The request, whoever's it is (for staff whose permission is not to answer requests)."""
    group = GroupRequest.objects.filter(pk=request_id).first()
    if group is None:
        raise NotFound()
    return group
