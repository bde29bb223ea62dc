"""OCTO's refusals, each with its error code and the field OCTO adds (octo/views.py answers
them as `{"error", "errorMessage", ...}`, status 400 but for UNAUTHORIZED)."""

from django.utils.translation import gettext_lazy as _

from museum.exceptions import MuseumProblem


class OctoError(MuseumProblem):
    kind = "invalid"
    default_code = "BAD_REQUEST"
    default_detail = _(
        "The request body is not formatted correctly, you have missing required fields or any "
        "of the data types are incorrect"
    )


class BadRequest(OctoError):
    pass


class InvalidProduct(OctoError):
    default_code = "INVALID_PRODUCT_ID"
    default_detail = _("The productId was missing or invalid")


class InvalidOption(OctoError):
    default_code = "INVALID_OPTION_ID"
    default_detail = _("The optionId was missing or invalid")


class InvalidUnit(OctoError):
    default_code = "INVALID_UNIT_ID"
    default_detail = _("The unitId was missing or invalid")


class InvalidAvailability(OctoError):
    default_code = "INVALID_AVAILABILITY_ID"
    default_detail = _("The availabilityId was missing or invalid")


class InvalidBooking(OctoError):
    default_code = "INVALID_BOOKING_UUID"
    default_detail = _("The uuid was already used, missing or invalid")


class Unprocessable(OctoError):
    default_code = "UNPROCESSABLE_ENTITY"
    default_detail = _("The request body is technically correct but cannot be processed.")
