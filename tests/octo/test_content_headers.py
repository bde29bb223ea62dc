"""Content headers: with `octo/content` an answer says the language it speaks (Content-Language)
and those it could (Available-Languages, the museum's), and Accept-Language picks one of them."""

import pytest

CONTENT = {"HTTP_OCTO_CAPABILITIES": "octo/content"}
MUSEUMS = "en-GB, de, fr, nl, es"


@pytest.mark.parametrize(
    ("asked", "speaks"),
    [
        ("de", "de"),
        ("fr-CA, fr;q=0.8, en;q=0.5", "fr"),
        ("nl-BE", "nl"),
        ("es-ES;q=0.9, ja", "es"),
        ("ja", "en-GB"),  # none of the museum's: its own
        ("*", "en-GB"),
        ("", "en-GB"),
    ],
)
def test_accept_language_picks_one_of_the_museums_languages(octo, asked, speaks):
    answer = octo.get("/octo/products", HTTP_ACCEPT_LANGUAGE=asked, **CONTENT)

    assert answer.status_code == 200
    assert answer["Content-Language"] == speaks
    assert answer["Available-Languages"] == MUSEUMS
    assert answer["Octo-Capabilities"] == "octo/content"
    assert {product["locale"] for product in answer.json()} == {speaks}


def test_the_titles_speak_the_content_language(octo):
    answer = octo.get("/octo/products/general", HTTP_ACCEPT_LANGUAGE="de", **CONTENT)

    assert answer["Content-Language"] == "de"
    assert answer.json()["title"] != "General entry"


def test_an_error_carries_them_too(octo):
    answer = octo.get("/octo/products/nothing", HTTP_ACCEPT_LANGUAGE="fr", **CONTENT)

    assert answer.json()["error"] == "INVALID_PRODUCT_ID"
    assert (answer["Content-Language"], answer["Available-Languages"]) == ("fr", MUSEUMS)


def test_without_the_capability_no_available_languages(octo):
    answer = octo.get("/octo/products", HTTP_ACCEPT_LANGUAGE="de")

    assert "Available-Languages" not in answer
