"""What a waiting list's offer says, in its entry's language, in plain text and HTML: the drop,
the visit and how many places are kept, the voucher's code, until when, and how to buy."""

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string
from django.utils import translation
from django.utils.translation import gettext as _

from drops.models import OfferEmail
from museum import i18n
from museum.text import one_line
from orders.models import Voucher


def send_offer(email: OfferEmail) -> None:
    entry = email.entry
    voucher = entry.voucher
    assert voucher is not None  # the task skips an offer withdrawn
    with i18n.speaking(email.language):
        context = {
            "museum": one_line(settings.MUSEUM_NAME),
            "address": [part.strip() for part in settings.MUSEUM_ADDRESS.split(",") if part],
            "drop": one_line(entry.drop.name),
            "quantity": entry.quantity,
            "visit": visit_in_words(voucher),
            "code": voucher.code,
            "until": i18n.moment_in_words(voucher.valid_until) if voucher.valid_until else "",
            "language": translation.get_language() or settings.LANGUAGE_CODE,
        }
        message = EmailMultiAlternatives(
            subject=_("Places kept for you: %(drop)s") % context,
            body=render_to_string("drops/email/offer.txt", context),
            to=[email.email],
        )
        message.attach_alternative(render_to_string("drops/email/offer.html", context), "text/html")
    message.send()


def visit_in_words(voucher: Voucher) -> str:
    """The visit whose places the offer keeps, in the active language."""
    if voucher.keep_slot is not None:
        slot = voucher.keep_slot
        return f"{i18n.day_in_words(slot.day_id)}, {i18n.time_in_words(slot.entry_time)}"
    if voucher.keep_event_date is not None:
        kept = voucher.keep_event_date
        return f"{one_line(kept.event.name)}, {i18n.day_in_words(kept.date)}"
    assert voucher.keep_day is not None  # an offer keeps places on one row
    return i18n.day_in_words(voucher.keep_day)
