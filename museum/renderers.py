"""The API's JSON renderer: DRF's, except that text a client sent can never crash it."""

from rest_framework.renderers import JSONRenderer


class AsciiJSONRenderer(JSONRenderer):
    ensure_ascii = True


class MuseumJSONRenderer(JSONRenderer):
    """UTF-8 JSON, or \\u-escaped JSON when the data holds text that UTF-8 cannot carry.

    A lone surrogate (a JSON string such as "\\ud800") is not text: fields refuse it, but some of
    DRF's messages quote the value they refuse ('"\\ud800" is not a valid choice.'), and DRF's
    renderer then failed to encode its own answer, a 500. Escaped, as JSON allows, it is a 400.
    """

    def render(self, data, accepted_media_type=None, renderer_context=None):
        try:
            return super().render(data, accepted_media_type, renderer_context)
        except UnicodeEncodeError:
            return AsciiJSONRenderer().render(data, accepted_media_type, renderer_context)
