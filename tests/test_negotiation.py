"""Our content negotiation answers as DRF's does, and a client asking for what we lack gets 406."""

import pytest
from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from museum.renderers import MuseumContentNegotiation, MuseumJSONRenderer
from tickets.views import PNGRenderer

RENDERER_LISTS = [[MuseumJSONRenderer()], [MuseumJSONRenderer(), PNGRenderer()]]


def request_accepting(accept: str | None) -> Request:
    headers = {} if accept is None else {"HTTP_ACCEPT": accept}
    return Request(APIRequestFactory().get("/v1.1/museum-hours", **headers))


def answer(negotiation, accept, renderers):
    try:
        renderer, media_type = negotiation.select_renderer(request_accepting(accept), renderers)
    except NotAcceptable:
        return "406"
    return type(renderer), media_type


@pytest.mark.parametrize("renderers", RENDERER_LISTS)
@pytest.mark.parametrize(
    "accept", [None, "*/*", "application/json", "image/png", "image/*", "text/html", ""]
)
def test_the_same_renderer_as_drfs_negotiation(accept, renderers):
    assert answer(MuseumContentNegotiation(), accept, renderers) == answer(
        DefaultContentNegotiation(), accept, renderers
    )


def test_asking_only_for_html_is_406(visitor_client):
    response = visitor_client.get("/v1.1/museum-hours", HTTP_ACCEPT="text/html")

    assert response.status_code == 406
