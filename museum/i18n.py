"""The languages the museum speaks: what a client may ask for, and Django's code for each.

A client names a language as MUSEUM_LANGUAGES does ("en", "de"...); Django's code for the museum's
own language keeps its regional variant (en -> en-gb, settings.LANGUAGES), for its formats.
"""

from contextlib import AbstractContextManager

from django.conf import settings
from django.utils import translation


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
