"""Receipts, invoices and credit notes: issued once, in the transaction that confirms an order or
records its refunds, numbered from gapless series, and never edited (docs/money.md).

A confirmed order with a price gets a receipt, or an invoice when its buyer is a business (the
order carries invoice details, or it is a sales partner's, paid on account). Refunds of lines of
an order that has one get a credit note of their own series, for exactly what goes back: the
refunded lines with their kept rate and tax (a partial refund split by the line's rate), its
amounts negative.

A document keeps what it says as it was said (its lines, payments, totals per rate, the buyer's
details, in the order's language): nothing is read from the live order again. Its number is taken
under the row lock of its series (a prefix and the museum's year), as late as possible in the
transaction, so the lock is short and a rollback gives the number back: no gap, no duplicate.
"""

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from museum import i18n
from museum.money import ZERO
from museum.text import one_line
from orders.models import (
    Channel,
    DocumentKind,
    Donation,
    Fee,
    MembershipSale,
    MembershipSaleKind,
    NumberSeries,
    Order,
    OrderStatus,
    PaymentState,
    Refund,
    SaleDocument,
    Ticket,
)
from orders.providers import DESK, ON_ACCOUNT
from orders.services.taxes import (
    Taxed,
    donations_of,
    fees_of,
    of_gross,
    order_taxes,
    totals_by_rate,
)

# The payments a confirmation's receipt lists: those that took the money, and the one whose
# success confirms the order now (orders.services.payments.payment_succeeded writes its state
# after the confirmation it causes).
PAYING = (PaymentState.CONFIRMED, PaymentState.CREATED, PaymentState.PENDING)


def prefix_of(kind: str) -> str:
    """The series prefix of a kind of document (its settings)."""
    return {
        DocumentKind.RECEIPT: settings.MUSEUM_RECEIPT_PREFIX,
        DocumentKind.INVOICE: settings.MUSEUM_INVOICE_PREFIX,
        DocumentKind.CREDIT_NOTE: settings.MUSEUM_CREDIT_NOTE_PREFIX,
    }[DocumentKind(kind)]


# One statement that gives the series' next number and locks its row until the transaction ends
# (as SELECT ... FOR UPDATE would), creating the series on its first use: taken on every
# confirmation with a price, so one round trip. A first use racing another waits for the other's
# insert to commit (or roll back) and then updates (or inserts): PostgreSQL's and SQLite's upsert.
_meta = NumberSeries._meta
_table, _last = _meta.db_table, _meta.get_field("last").column
_prefix, _year = _meta.get_field("prefix").column, _meta.get_field("year").column
_TAKE = (
    f'INSERT INTO "{_table}" ("{_prefix}", "{_year}", "{_last}") VALUES (%s, %s, 1) '
    f'ON CONFLICT ("{_prefix}", "{_year}") DO UPDATE SET "{_last}" = "{_table}"."{_last}" + 1 '
    f'RETURNING "{_last}"'
)


def take_number(*, kind: str, year: int) -> str:
    """The next number of the kind's series for `year`, under the series row's lock until the
    caller's transaction ends: "R2026-000001"."""
    prefix = prefix_of(kind)
    with connection.cursor() as cursor:
        cursor.execute(_TAKE, [prefix, year])
        [last] = cursor.fetchone()
    return f"{prefix}{year}-{last:06d}"


@dataclass(frozen=True)
class Line:
    """One line of a document: `quantity` things at `unit` each, their amounts summed (each
    thing's tax is its own, rounded once when it was sold)."""

    description: str
    quantity: int
    unit: Decimal
    rate: Decimal
    net: Decimal
    tax: Decimal
    gross: Decimal
    # A donation, shown apart from what was sold (and under it the charity statement).
    donation: bool = False

    def kept(self) -> dict:
        kept = {
            "description": self.description,
            "quantity": self.quantity,
            "unit": str(self.unit),
            "rate": str(self.rate),
            "net": str(self.net),
            "tax": str(self.tax),
            "gross": str(self.gross),
        }
        return {**kept, "donation": True} if self.donation else kept


def issue_receipt(order: Order, *, terms: Sequence[dict] = ()) -> SaleDocument | None:
    """The confirmed order's receipt (or invoice), issued in the confirming transaction once its
    lines exist (one an order: a database constraint); None for a free order. `terms`: when its
    invoice is to be paid (a group's deposit and balance)."""
    if order.status != OrderStatus.CONFIRMED or order.total <= 0:
        return None
    with transaction.atomic(savepoint=False):
        return _issue_for(order, terms=terms)


def reissue_invoice(order: Order, *, terms: Sequence[dict] = ()) -> SaleDocument | None:
    """The locked order's invoice issued anew after its lines changed (a group's numbers, before
    its final date): a credit note cancels the current one in full, then a new invoice states
    the order as it is now (None if it now costs nothing). Issued documents are never edited."""
    with transaction.atomic(savepoint=False):
        current = (
            SaleDocument.objects.filter(order=order, kind=DocumentKind.INVOICE)
            .filter(replaced_by__isnull=True)
            .defer("pdf")
            .order_by("-issued_at", "-pk")
            .first()
        )
        now = timezone.now()
        if current is not None:
            _issue(
                order,
                kind=DocumentKind.CREDIT_NOTE,
                lines=[_negated(line) for line in current.lines],
                payments=[],
                now=now,
                company=current.company,
                address=current.address,
                vat_id=current.vat_id,
                corrects=current,
                language=current.language,
            )
        if order.total <= 0:
            return None
        return _issue_for(order, terms=terms, replaces=current)


def _negated(kept: dict) -> Line:
    """An issued document's line, as a credit note cancelling it has it."""
    return Line(
        description=kept["description"],
        quantity=kept["quantity"],
        unit=-Decimal(kept["unit"]),
        rate=Decimal(kept["rate"]),
        net=-Decimal(kept["net"]),
        tax=-Decimal(kept["tax"]),
        gross=-Decimal(kept["gross"]),
        donation=kept.get("donation", False),
    )


def _issue_for(
    order: Order, *, terms: Sequence[dict] = (), replaces: SaleDocument | None = None
) -> SaleDocument:
    with i18n.speaking(order.language):
        if order.sells_gift_cards:
            lines = [_gift_card_line(order)]
        else:
            lines = _grouped(_line_of(order, line, amount=None) for line in _sold_lines(order))
            lines += _grouped(_line_of(order, fee) for fee in fees_of(order))
            lines += _grouped(_line_of(order, gift) for gift in _donations_of(order))
    kind, company, address, vat_id = _addressee(order)
    now = timezone.now()
    payments = _payments_of(order, total=sum((line.gross for line in lines), ZERO), now=now)
    return _issue(
        order,
        kind=kind,
        lines=lines,
        payments=payments,
        now=now,
        company=company,
        address=address,
        vat_id=vat_id,
        terms=terms,
        replaces=replaces,
    )


def issue_credit_note(order: Order, refunds: Sequence[Refund]) -> SaleDocument | None:
    """A credit note for the order's `refunds` of its lines (tickets, membership sales), if it
    has a receipt or invoice: each line credited with its kept rate and tax, a partial refund
    split by that rate. Refunds of no line (a payment paid back whole, what a payment paid over
    the total) credit nothing: they were never part of the sale. None if nothing is credited."""
    credited = [
        refund
        for refund in refunds
        if (refund.ticket_id or refund.membership_sale_id or refund.donation_id)
        and refund.amount > 0
    ]
    if not credited:
        return None
    with transaction.atomic(savepoint=False):
        corrected = (
            SaleDocument.objects.filter(order=order, corrects__isnull=True)
            .order_by("-issued_at", "-pk")
            .defer("pdf")
            .first()
        )
        if corrected is None:
            return None  # sold before documents were issued, or free
        with i18n.speaking(corrected.language):
            lines = _grouped(_refunded_line(order, refund) for refund in credited)
        now = timezone.now()
        paid_back = _paid_back(credited, now=now)
        return _issue(
            order,
            kind=DocumentKind.CREDIT_NOTE,
            lines=lines,
            payments=paid_back,
            now=now,
            company=corrected.company,
            address=corrected.address,
            vat_id=corrected.vat_id,
            corrects=corrected,
            language=corrected.language,
        )


def _issue(
    order: Order,
    *,
    kind: str,
    lines: list[Line],
    payments: list[dict],
    now,
    corrects: SaleDocument | None = None,
    replaces: SaleDocument | None = None,
    terms: Sequence[dict] = (),
    language: str = "",
    **buyer,
) -> SaleDocument:
    """Write the document; its number is the last thing taken, just before the row."""
    taxes = totals_by_rate((line.rate, line.gross, line.tax) for line in lines)
    statement = ""
    if any(line.donation for line in lines):
        statement = charity_statement(language or order.language)
    number = take_number(kind=kind, year=timezone.localdate(now).year)
    return SaleDocument.objects.create(
        order=order,
        kind=kind,
        number=number,
        issued_at=now,
        language=language or order.language,
        currency=settings.MUSEUM_CURRENCY,
        buyer_name=order.name,
        lines=[line.kept() for line in lines],
        payments=payments,
        taxes=[
            {"rate": str(t.rate), "net": str(t.net), "tax": str(t.tax), "gross": str(t.gross)}
            for t in taxes
        ],
        total=sum((t.gross for t in taxes), ZERO),
        tax=sum((t.tax for t in taxes), ZERO),
        corrects=corrects,
        replaces=replaces,
        terms=list(terms),
        charity_statement=statement,
        **buyer,
    )


def charity_statement(language: str) -> str:
    """The museum's charity statement in `language` (MUSEUM_CHARITY_STATEMENT_<LANGUAGE>), else in
    its own (MUSEUM_CHARITY_STATEMENT); "" if it states none."""
    return settings.MUSEUM_CHARITY_STATEMENTS.get(language) or settings.MUSEUM_CHARITY_STATEMENT


def _addressee(order: Order) -> tuple[str, str, str, str]:
    """The document's kind and its buyer's company, address and VAT id: an invoice to the
    sales partner's account for an order paid on account (the order's invoice details giving
    its address and VAT id), or to the company the order names; else a receipt."""
    details = (order.invoice_address, order.invoice_vat_id)
    if order.channel == Channel.ON_ACCOUNT:
        partner = order.buyer
        name = partner.get_full_name() or partner.get_username()
        return DocumentKind.INVOICE, name, *details
    if order.invoice_company:
        return DocumentKind.INVOICE, order.invoice_company, *details
    return DocumentKind.RECEIPT, "", "", ""


def _sold_lines(order: Order) -> list[Ticket | MembershipSale]:
    """What the confirmed order sold: its lines not cancelled (a ticket cancelled while the
    order was held was never paid for), in the order the visitor categories are listed."""
    if order.sells_memberships:
        sales = MembershipSale.objects.filter(order=order, cancelled_at__isnull=True)
        return list(sales.select_related("membership__membership_type").order_by("pk"))
    # As the confirmation read them (orders.services.payments.confirm_held, a new order's sale).
    tickets = getattr(order, "sold_tickets", None)
    if tickets is None:
        tickets = list(order.tickets.select_related("category"))
    valid = [ticket for ticket in tickets if ticket.cancelled_at is None or _billed(order, ticket)]
    return sorted(valid, key=_ticket_order)


def _billed(order: Order, ticket: Ticket) -> bool:
    """Whether a cancelled ticket is still billed: a group's, taken off after its numbers were
    final, keeps its price (one taken off before costs nothing: groups.services.numbers)."""
    return order.channel == Channel.INVOICE and ticket.price > 0


def _donations_of(order: Order) -> list[Donation]:
    """The confirmed order's donations (none refunded yet: a refund comes after the receipt),
    as the sale kept them, or read once (and kept for its answer)."""
    return [donation for donation in donations_of(order) if donation.cancelled_at is None]


def _gift_card_line(order: Order) -> Line:
    """A gift card order's one line: its cards' value, untaxed (a multi-purpose voucher, whose
    tax is that of what it later pays for: orders.services.taxes.order_taxes)."""
    [total] = order_taxes(order)
    return Line(
        description=_("Gift card"),
        quantity=1,
        unit=total.gross,
        rate=total.rate,
        net=total.net,
        tax=total.tax,
        gross=total.gross,
    )


def _ticket_order(ticket: Ticket) -> tuple:
    category = ticket.category
    return (category.ordering, category.category) if category else (float("inf"), "")


def _line_of(
    order: Order, line: Ticket | MembershipSale | Donation | Fee, *, amount: Taxed | None = None
) -> Line:
    """One thing sold, described in the active language, at its kept amounts (or `amount`)."""
    taxed = amount or Taxed(line.tax_rate, line.price - line.tax, line.tax, line.price)
    return Line(
        description=_describe(order, line),
        quantity=1,
        unit=taxed.gross,
        rate=taxed.rate,
        net=taxed.net,
        tax=taxed.tax,
        gross=taxed.gross,
        donation=isinstance(line, Donation),
    )


def _describe(order: Order, line: Ticket | MembershipSale | Donation | Fee) -> str:
    if isinstance(line, Fee):
        return line.description
    if isinstance(line, Donation):
        return _("Donation: %(fund)s") % {"fund": one_line(line.fund.name)}
    if isinstance(line, MembershipSale):
        membership_type = one_line(line.membership.membership_type.name)
        words = {
            MembershipSaleKind.GIFT: _("Gift membership: %(type)s"),
            MembershipSaleKind.RENEWAL: _("Membership renewal: %(type)s"),
        }.get(MembershipSaleKind(line.kind), _("Membership: %(type)s"))
        return words % {"type": membership_type}
    if line.member:
        who = _("Member")
    elif line.category is not None:
        who = one_line(line.category.name)
    else:
        who = _("Visitor")
    what = one_line(order.event.name) if order.event_id and order.event else _("General entry")
    return _("%(who)s, %(what)s, %(day)s") % {
        "who": who,
        "what": what,
        "day": i18n.day_in_words(line.date),
    }


def _grouped(lines: Iterable[Line]) -> list[Line]:
    """Equal things (description, unit price, rate, tax each) on one line, first seen first."""
    counts: Counter = Counter()
    firsts: dict[tuple, Line] = {}
    for line in lines:
        key = (line.description, line.unit, line.rate, line.tax, line.gross)
        counts[key] += 1
        firsts.setdefault(key, line)
    return [
        Line(
            description=line.description,
            quantity=counts[key],
            unit=line.unit,
            rate=line.rate,
            net=line.net * counts[key],
            tax=line.tax * counts[key],
            gross=line.gross * counts[key],
            donation=line.donation,
        )
        for key, line in firsts.items()
    ]


def _refunded_line(order: Order, refund: Refund) -> Line:
    """A refunded line as a credit note has it: negative, its kept tax if refunded whole, else
    the amount refunded split by the line's rate."""
    line: Ticket | MembershipSale | Donation = (
        refund.ticket or refund.membership_sale or refund.donation  # type: ignore[assignment]
    )
    if refund.amount == line.price:
        whole = Taxed(line.tax_rate, line.price - line.tax, line.tax, line.price)
    else:
        whole = of_gross(gross=refund.amount, rate=line.tax_rate)
    credit = Taxed(whole.rate, -whole.net, -whole.tax, -whole.gross)
    return _line_of(order, line, amount=credit)


def _payments_of(order: Order, *, total: Decimal, now) -> list[dict]:
    """The payments that paid the document's `total`, oldest first, each for what it paid of it
    (a payment over the total, for tickets cancelled while the order was held, gets the rest
    back at once). A partner's order is paid on account as it is confirmed, by one payment of
    its total (orders.services.payments.record_on_account_payment): known without a read."""
    if order.channel == Channel.ON_ACCOUNT:
        date = timezone.localdate(order.confirmed_at or now).isoformat()
        return [{"provider": ON_ACCOUNT, "method": "", "amount": str(total), "date": date}]
    left, paid = total, []
    for payment in order.payments.filter(state__in=PAYING).order_by("created_at", "pk"):
        amount = min(payment.amount, left)
        if amount <= 0:
            continue
        left -= amount
        paid.append(
            {
                "provider": payment.provider,
                "method": payment.info if payment.provider == DESK else "",
                "amount": str(amount),
                "date": timezone.localdate(payment.confirmed_at or now).isoformat(),
            }
        )
    return paid


def _paid_back(refunds: Sequence[Refund], *, now) -> list[dict]:
    """What goes back, per way it goes (a payment's provider and method, or by hand), negative."""
    ways: dict[tuple[str, str], Decimal] = {}
    for refund in refunds:
        payment = refund.payment
        provider = payment.provider if payment else ""
        way = (provider, payment.info if payment and provider == DESK else "")
        ways[way] = ways.get(way, ZERO) - refund.amount
    day = timezone.localdate(now).isoformat()
    return [
        {"provider": provider, "method": method, "amount": str(amount), "date": day}
        for (provider, method), amount in ways.items()
    ]
