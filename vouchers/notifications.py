"""What a voucher's email says, in its language, in plain text and HTML: the code, what it
gives, and until when."""

import datetime as dt

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from museum import i18n
from museum.text import one_line
from orders.models import Voucher, VoucherEffect
from vouchers.models import VoucherEmail


def send_code(email: VoucherEmail) -> None:
    with i18n.speaking(email.language):
        voucher = email.voucher
        context = {
            "museum": one_line(settings.MUSEUM_NAME),
            "address": [part.strip() for part in settings.MUSEUM_ADDRESS.split(",") if part],
            "code": voucher.code,
            "gives": what_it_gives(voucher),
            "until": _last_day(voucher),
            "language": translation.get_language() or settings.LANGUAGE_CODE,
        }
        message = EmailMultiAlternatives(
            subject=_("Your voucher from %(museum)s") % context,
            body=render_to_string("vouchers/email/code.txt", context),
            to=[email.email],
        )
        message.attach_alternative(
            render_to_string("vouchers/email/code.html", context), "text/html"
        )
    message.send()


def what_it_gives(voucher: Voucher) -> str:
    """The voucher's effect in words, in the active language."""
    if voucher.effect == VoucherEffect.FREE:
        return _("Free entry")
    if voucher.effect == VoucherEffect.SET_PRICE:
        return _("Entry for %(price)s") % {"price": i18n.money(voucher.value)}
    if voucher.effect == VoucherEffect.AMOUNT_OFF:
        return _("%(amount)s off the entry") % {"amount": i18n.money(voucher.value)}
    return _("%(percent)s %% off the entry") % {"percent": f"{voucher.value.normalize():f}"}


def _last_day(voucher: Voucher) -> str:
    if voucher.valid_until is None:
        return ""
    # Valid until the moment given: its last day is the one before, when that moment is midnight.
    last = timezone.localtime(voucher.valid_until - dt.timedelta(microseconds=1))
    return i18n.day_in_words(last.date())
