"""The languages the museum speaks: what a client may ask for, and Django's code for each; and
how dates, times and money are worded in the active one (what a visitor's PDF, email and ticket
image print, inside `speaking(order.language)`).

A client names a language as MUSEUM_LANGUAGES does ("en", "de"...); Django's code for the museum's
own language keeps its regional variant (en -> en-gb, settings.LANGUAGES), for its formats.
"""

from contextlib import AbstractContextManager
from datetime import date, datetime, time
from decimal import Decimal

from babel.numbers import format_currency
from django.conf import settings
from django.utils import timezone, translation
from django.utils.formats import date_format, time_format
from django.utils.translation import gettext as _


def museum_language_code() -> str:
    """The museum's own language as a client names it ("en"): a model field's default."""
    return settings.MUSEUM_LANGUAGE


def offered(code: str) -> str | None:
    """The offered language a client's code names ("de", "en-GB", "en"), or None."""
    generic = code.strip().lower().replace("_", "-").split("-")[0]
    return generic if generic in settings.MUSEUM_LANGUAGES else None


def current() -> str:
    """The active language, as a client names it: "en" while Django speaks en-gb."""
    return offered(translation.get_language() or settings.LANGUAGE_CODE) or settings.MUSEUM_LANGUAGE


def django_code(language: str) -> str:
    """Django's code for an offered language: the museum's own keeps its regional variant."""
    return settings.LANGUAGE_CODE if language == settings.MUSEUM_LANGUAGE else language


def speaking(language: str | None) -> AbstractContextManager:
    """Translate and format in this offered language (an order's), or the museum's if none."""
    return translation.override(django_code(offered(language or "") or settings.MUSEUM_LANGUAGE))


def museum_language() -> AbstractContextManager:
    """The museum's own language: what its texts are written in when no language is named (the
    API's one `name` of an event writes the museum's text; translations are added in the admin)."""
    return translation.override(settings.LANGUAGE_CODE)


# Dates, times and money in the active language: Django's formats for its dates and times, the
# CLDR's (Babel) for money, as Django's own number formatting knows no currency symbols.


def day_in_words(day: date) -> str:
    """The weekday and date: 'Wednesday 12 Jun 2030' (en-gb), 'Mittwoch, 12. Juni 2030' (de)."""
    # Translators: how a weekday joins its date; German and Spanish put a comma between.
    return _("%(weekday)s %(date)s") % {
        "weekday": date_format(day, "l"),
        "date": date_format(day, "DATE_FORMAT"),
    }


def time_in_words(moment: time) -> str:
    return time_format(moment, "TIME_FORMAT")


def moment_in_words(moment: datetime) -> str:
    """An instant in the museum's zone: 'Tuesday 11 Jun 2030, 10:30'."""
    local = timezone.localtime(moment)
    return f"{day_in_words(local.date())}, {time_in_words(local.time())}"


def money(amount: Decimal) -> str:
    """An amount in MUSEUM_CURRENCY the active language's way: '€37.50' (en-gb), '37,50 €' (de)."""
    locale = translation.to_locale(translation.get_language() or settings.LANGUAGE_CODE)
    return format_currency(amount, settings.MUSEUM_CURRENCY, locale=locale)
