"""What a gift card's order sends, in the card's language, in plain text and HTML: the card
issued, its value, code and last day, with the card as a PDF to print or give.

It goes through the one pipeline of every order's email (orders.tasks: enqueued in the
confirmation's transaction within the mailbox's daily limit, counted, claimed, retried), which
sends the orders of a gift card through here (registered from GiftCardsConfig.ready), after
the commit that issued the card.
"""

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string
from django.utils import translation
from django.utils.translation import gettext as _

from giftcards import cards
from giftcards.models import GiftCard
from museum import i18n
from museum.text import one_line
from orders.models import Order
from orders.wallet_links import links_for


def send_gift_card_email(*, order: Order) -> None:
    """Mail each card the order issued to the card's address, with its PDF; nothing for a card
    not issued (an order never paid has no email: orders.tasks sends only confirmed ones)."""
    for card in GiftCard.objects.filter(order=order, issued_at__isnull=False):
        with i18n.speaking(card.language):
            _send(card)


def _send(card: GiftCard) -> None:
    assert card.expires_on is not None
    context = {
        "museum": one_line(settings.MUSEUM_NAME),
        "address": [part.strip() for part in settings.MUSEUM_ADDRESS.split(",") if part.strip()],
        "value": i18n.money(card.value),
        "code": card.code,
        "until": i18n.day_in_words(card.expires_on),
        "language": translation.get_language() or settings.LANGUAGE_CODE,
        # "Add to ... Wallet" (orders.wallet_links): none while no wallet is set up.
        "wallet": links_for(gift_card=card),
    }
    message = EmailMultiAlternatives(
        subject=_("Your gift card from %(museum)s") % context,
        body=render_to_string("giftcards/email/issued.txt", context),
        to=[card.email],
    )
    html = render_to_string("giftcards/email/issued.html", context)
    message.attach_alternative(html, "text/html")
    message.attach(cards.filename(card), cards.card_pdf(card), "application/pdf")
    message.send()
