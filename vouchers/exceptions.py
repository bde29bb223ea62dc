"""The refusals of voucher administration: each a kind and a reason."""

from django.utils.translation import gettext_lazy as _

from museum.exceptions import MuseumProblem, NotFound


class UnknownVoucher(NotFound):
    default_code = "unknown_voucher"
    default_detail = _("No voucher has this key.")


class VoucherCodeTaken(MuseumProblem):
    """A code given twice, or one another voucher or a gift card already has: `voucherCode` names it
    (and `row`, in a CSV file)."""

    default_code = "voucher_code_taken"
    title = _("Voucher code taken")
    default_detail = _("This code is already taken.")


class VoucherUsed(MuseumProblem):
    """A voucher that reduced a ticket stays: its tickets name it."""

    default_code = "voucher_used"
    title = _("Voucher used")
    default_detail = _("This voucher has been used: it cannot be deleted, only ended.")
