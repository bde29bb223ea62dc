"""Text shown on one line (an event's name on its ticket, in an email's subject) stays one line.

The rule for what staff and clients may write is here, used by the model fields (so the admin's
forms) and by the API's serializers alike; `one_line` shows text stored before the rule existed.
"""

import re

from django.core.exceptions import ValidationError
from django.utils.deconstruct import deconstructible
from django.utils.translation import gettext as _

# Unicode's control characters (category Cc: C0 with CR, LF and TAB, DEL, C1 with NEL) and its
# line and paragraph separators (Zl, Zp): every character that starts a new line somewhere
# (str.splitlines, email headers, Pillow's text drawing) or draws nothing at all. Format
# characters (Cf) stay allowed: names in many scripts need the zero-width joiners.
BREAKING = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
# Multi-line text may keep its line breaks and tabs, as a textarea sends them.
BREAKING_BUT_LINES = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029]")


def one_line(text: str) -> str:
    """The text with each control character or line break shown as a space."""
    return BREAKING.sub(" ", text)


@deconstructible
class NoControlCharacters:
    """Refuses control characters and line breaks; `lines=True` allows LF, CR and TAB."""

    def __init__(self, *, lines: bool = False):
        self.lines = lines

    def __call__(self, value: str) -> None:
        found = (BREAKING_BUT_LINES if self.lines else BREAKING).search(value)
        if found:
            message = (
                _(
                    "Contains the control character %(character)s; only line breaks, tabs and "
                    "printable characters are allowed."
                )
                if self.lines
                else _(
                    "Contains the control character %(character)s; only printable characters "
                    "are allowed."
                )
            )
            raise ValidationError(
                message % {"character": f"U+{ord(found.group()):04X}"},
                code="control_character",
            )

    def __eq__(self, other):
        return isinstance(other, NoControlCharacters) and self.lines == other.lines


one_line_text = NoControlCharacters()
multiline_text = NoControlCharacters(lines=True)
