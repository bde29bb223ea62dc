"""What a membership sends, in its language, as plain text: its order's email (the membership
active with its period and card code and its card, a gift's code and its gift card, or the
purchase cancelled and what goes back), the email of a gift redeemed, and the reminders to renew.

A membership's order is mailed by the one pipeline of every order (orders.tasks: enqueued when
the order is confirmed or changed, claimed, retried), which sends it from here; a redemption and
the reminders are sent once by their own task (orders.tasks.send_membership_email).
"""

from decimal import Decimal

from django.conf import settings
from django.core.mail import EmailMessage
from django.utils.translation import gettext as _

from museum import i18n
from museum.i18n import day_in_words, money
from museum.text import one_line
from orders import membership_cards, receipts, wallet_links
from orders.exceptions import NoGiftCard, NoMembershipCard
from orders.models import Membership, MembershipSaleKind, Order, OrderStatus
from orders.selectors import refuse_unless_card_printable

ACTIVATED, REMINDER, CANCELLED = "activated", "reminder", "cancelled"


def card_path(membership: Membership) -> str:
    """Where the API serves the membership's card (a PNG; `card.pdf` beside it)."""
    return f"/v1.1/memberships/{membership.pk}/card.png"


def renewal_url(membership: Membership) -> str:
    """The renewal link of a reminder: the API's renewal of the membership (POST, signed in as
    its owner), which a museum's shop page links to; the desk renews it too."""
    return f"{settings.MUSEUM_PUBLIC_URL}/v1.1/memberships/{membership.pk}/renew"


def attach_card(message: EmailMessage, membership: Membership) -> None:
    """The one place a member's email gets the card: the card-sized PDF of a membership whose
    card may be printed (none for one pending or cancelled)."""
    try:
        pdf = membership_cards.card_pdf(membership)
    except NoMembershipCard:
        return
    message.attach(membership_cards.filename(membership, "pdf"), pdf, "application/pdf")


def attach_gift_card(message: EmailMessage, membership: Membership) -> None:
    """The one place the giver's email gets the gift card: the A6 PDF of a gift whose card may be
    printed (none before its order is paid, once cancelled or redeemed)."""
    try:
        pdf = membership_cards.gift_card_pdf(membership)
    except NoGiftCard:
        return
    message.attach(membership_cards.gift_filename(membership), pdf, "application/pdf")


def send_membership_order_email(*, order: Order) -> None:
    """Mail a membership's order as it is now: what it sold (active, a gift's code), or that it
    is cancelled and what goes back. orders.notifications sends every order's email through
    here when the order sells memberships."""
    sales = list(order.membership_sales.select_related("membership__membership_type"))
    with i18n.speaking(order.language):
        words = {"code": order.confirmation_code, "museum": one_line(settings.MUSEUM_NAME)}
        if order.status == OrderStatus.CANCELLED:
            subject = _("Your order %(code)s is cancelled") % words
            back = sum((refund.amount for refund in order.refunds.all()), Decimal("0"))
            body = _("Your membership purchase %(code)s at %(museum)s is cancelled.") % words
            if back:
                body += "\n\n" + _(
                    "We are paying %(amount)s back the way you paid; banks take a few days to "
                    "show it."
                ) % {"amount": money(back)}
        else:
            subject = _("Your membership at %(museum)s") % words
            body = "\n\n".join(_sold(sale.membership, kind=sale.kind) for sale in sales)
        message = EmailMessage(subject=subject, body=body, to=[order.email])
        for sale in sales:
            if order.status != OrderStatus.CONFIRMED:
                continue
            if sale.kind == MembershipSaleKind.GIFT:
                attach_gift_card(message, sale.membership)
            else:
                attach_card(message, sale.membership)
        receipts.attach_documents(message, order)
        message.send()


def _sold(membership: Membership, *, kind: str) -> str:
    name = one_line(membership.membership_type.name)
    if kind == MembershipSaleKind.GIFT:
        return _(
            "Thank you for giving a %(type)s membership. Its gift code is %(gift)s: whoever you "
            "give it to redeems it with this code, and the membership is valid from that day."
        ) % {"type": name, "gift": membership.gift_code}
    return _active(membership)


def _active(membership: Membership) -> str:
    return _card_words(membership) + _wallet_words(membership)


def _wallet_words(membership: Membership) -> str:
    """The card's "Add to ... Wallet" links (orders.wallet_links), a line each, while it has a
    card (refuse_unless_card_printable); none while no wallet is set up."""
    try:
        refuse_unless_card_printable(membership)
    except NoMembershipCard:
        return ""
    found = wallet_links.links_for(membership=membership)
    return "".join(f"\n{label}: {url}" for label, url in found)


def _card_words(membership: Membership) -> str:
    return _(
        "%(holder)s's %(type)s membership is valid from %(start)s until %(end)s. Its card "
        "code is %(card)s; the card: %(url)s"
    ) % {
        "holder": one_line(membership.holder_name),
        "type": one_line(membership.membership_type.name),
        "start": day_in_words(membership.valid_from) if membership.valid_from else "",
        "end": day_in_words(membership.valid_until) if membership.valid_until else "",
        "card": membership.card_code,
        "url": settings.MUSEUM_PUBLIC_URL + card_path(membership),
    }


def send_membership_notice(*, membership: Membership, kind: str) -> None:
    """Mail the membership's holder, in its language: it is active (a gift redeemed), a
    reminder to renew it before its last day, or it was cancelled (a redeemed gift)."""
    with i18n.speaking(membership.language):
        museum = one_line(settings.MUSEUM_NAME)
        if kind == CANCELLED:
            subject = _("Your membership at %(museum)s is cancelled") % {"museum": museum}
            body = _(
                "%(holder)s's %(type)s membership (card code %(card)s) was cancelled: its card "
                "no longer admits."
            ) % {
                "holder": one_line(membership.holder_name),
                "type": one_line(membership.membership_type.name),
                "card": membership.card_code,
            }
            EmailMessage(subject=subject, body=body, to=[membership.email]).send()
            return
        if kind == REMINDER:
            subject = _("Your membership at %(museum)s ends on %(end)s") % {
                "museum": museum,
                "end": day_in_words(membership.valid_until) if membership.valid_until else "",
            }
            body = _(
                "%(holder)s's %(type)s membership ends on %(end)s. Renew it to keep visiting as "
                "a member: %(url)s (or at the front desk)."
            ) % {
                "holder": one_line(membership.holder_name),
                "type": one_line(membership.membership_type.name),
                "end": day_in_words(membership.valid_until) if membership.valid_until else "",
                "url": renewal_url(membership),
            }
            EmailMessage(subject=subject, body=body, to=[membership.email]).send()
            return
        subject = _("Your membership at %(museum)s") % {"museum": museum}
        message = EmailMessage(subject=subject, body=_active(membership), to=[membership.email])
        attach_card(message, membership)
        message.send()
