"""The API's JSON renderer: DRF's, except that text a client sent can never crash it; the PNG
renderer of the views that answer an image (a ticket's, a member's card); and the negotiation that
picks a renderer.

Ours: subclasses of DRF's renderer and negotiation, each changing one behaviour DRF has no
setting for.
"""

from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer, JSONRenderer


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


class PNGRenderer(BaseRenderer):
    """Lets a client ask for image/png; problems on this view are still JSON.

    The image itself goes out as an HttpResponse in its own type whatever the client accepted;
    this renderer only ever renders a problem, which the exception handler types as
    application/problem+json.
    """

    media_type = "image/png"
    format = "png"
    charset = None
    render_style = "binary"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if isinstance(data, bytes):
            return data
        return MuseumJSONRenderer().render(data, accepted_media_type, renderer_context)


class MuseumContentNegotiation(DefaultContentNegotiation):
    """DRF's negotiation, except that it never answers 406, and answers `*/*` without parsing.

    A client whose Accept names nothing the view renders gets the view's first renderer, as RFC
    9110 section 12.5.1 allows: a client generated from the contract sends the media types of the
    operation's responses, e.g. only `application/problem+json` for a 204 DELETE, and must get
    its answer. DRF negotiates before it authenticates, so a 406 would also have hidden the 401
    or 403 such a client is owed. Errors are problem+json whatever was negotiated
    (museum.errors.problem_exception_handler sets the type).

    A request with no Accept header, or `*/*`, gets the view's first renderer: what DRF's own
    search over the parsed header returns, found in a fraction of its time on every request.
    """

    def select_renderer(self, request, renderers, format_suffix=None):
        if not format_suffix and request.META.get("HTTP_ACCEPT", "*/*") == "*/*":
            return renderers[0], renderers[0].media_type
        try:
            return super().select_renderer(request, renderers, format_suffix)
        except NotAcceptable:
            return renderers[0], renderers[0].media_type
