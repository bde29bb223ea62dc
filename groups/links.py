"""The signed link in an offer's email that opens its accept page without an account: the
request's id signed with a salt of its own (it opens nothing else), and bound to the time
offered, so a link to an earlier offer no longer opens after staff offer another time."""

from django.conf import settings
from django.core import signing
from django.urls import reverse

from groups.models import GroupRequest

ACCEPT_LINK_SALT = "museum.groups.accept-offer"


def _offer(group: GroupRequest) -> str:
    hour = group.entry_time.strftime("%H%M") if group.entry_time else ""
    return f"{group.pk}.{group.date:%Y%m%d}{hour}"


def sign_accept_link(group: GroupRequest) -> str:
    return signing.Signer(salt=ACCEPT_LINK_SALT).sign(_offer(group))


def group_of_accept_link(token: str) -> GroupRequest | None:
    """The request whose offer this link accepts, if this museum signed it and the offer it
    names is still the request's time; else None."""
    try:
        offer = signing.Signer(salt=ACCEPT_LINK_SALT).unsign(token)
        key = int(offer.split(".", 1)[0])
    except (signing.BadSignature, ValueError):
        return None
    group = GroupRequest.objects.select_related("tour").filter(pk=key).first()
    if group is None or _offer(group) != offer:
        return None
    return group


def accept_url(group: GroupRequest) -> str:
    path = reverse("group-accept-page", kwargs={"token": sign_accept_link(group)})
    return settings.MUSEUM_PUBLIC_URL + path
