"""The API's JSON parser: DRF's, with two holes closed that hostile bodies found.

Ours: a subclass of DRF's parser, because DRF's own lets both holes through.
"""

import codecs
import json
from decimal import Decimal

from rest_framework.exceptions import ParseError

# get_encoding is DRF's documented charset check (it refuses bytes-to-bytes codecs); its stubs
# predate it.
from rest_framework.parsers import JSONParser, get_encoding  # type: ignore[attr-defined]
from rest_framework.utils.json import strict_constant


class MuseumJSONParser(JSONParser):
    """Strict JSON: no NaN or Infinity, numbers with a fraction kept exact, nesting bounded.

    - Python's decoder recurses once per nested array or object, so a few thousand `[` in a
      small body raise RecursionError, which DRF does not catch: that was a 500.
    - A float would turn `1e-400` into 0 and `19.999999999999999999` into 20 before any field saw
      the number; as a Decimal the amount is checked as the client wrote it.
    """

    def parse(self, stream, media_type=None, parser_context=None):
        encoding = get_encoding(parser_context or {})
        try:
            text = codecs.getreader(encoding)(stream).read()
            return json.loads(text, parse_constant=strict_constant, parse_float=Decimal)
        # ArithmeticError: Decimal refuses an exponent beyond its range (1e99999999999999999999).
        except (ValueError, ArithmeticError) as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
        except RecursionError:
            raise ParseError("JSON parse error - the document is nested too deeply.") from None
