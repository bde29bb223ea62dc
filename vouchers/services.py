"""Vouchers administered by staff: created one at a time, in batches or from a CSV file, changed,
deleted while never used, and mailed; every change audited.

A batch is one transaction and one INSERT of its codes (bulk_create): a code given twice, or one
another voucher or a gift card already has, makes none of them. The codes are kept upper-case
(orders.services.vouchers.normalized), generated without look-alike characters (`new_code`).
A change never writes the counters (`uses`, `discount_given`) of a voucher the sale counts (one
with a limit): the sale takes and gives those back with conditional UPDATEs of the row, which a
change waits for under the row's lock; a limit given or changed recounts them from the
voucher's tickets (orders.services.vouchers.recount). What any voucher gave is what its valid
tickets took (`given`): the API, the CSV file and the statistics say that.
"""

from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Count, F, QuerySet, Sum
from django.utils.translation import gettext as _

from audit.models import Action
from audit.services import changed_fields, record, values_of
from museum.exceptions import InvalidInput, MuseumProblem
from museum.money import ZERO
from orders.models import Ticket, Voucher, VoucherEffect
from orders.services.limits import mailbox_of
from orders.services.vouchers import (
    OTHER_CODES,
    given,
    keeping_changed,
    new_code,
    normalized,
    recount,
)
from vouchers.exceptions import UnknownVoucher, VoucherCodeTaken, VoucherUsed
from vouchers.tasks import mail_codes

# What staff set on a voucher, as the model names it (the counters are the sale's).
FIELDS = (
    "effect",
    "value",
    "stacks",
    "ticket_type",
    "visit_from",
    "visit_until",
    "entry_from",
    "entry_until",
    "channels",
    "valid_from",
    "valid_until",
    "max_uses",
    "budget",
    "keep_slot",
    "keep_day",
    "keep_event_date",
    "tag",
    "comment",
)
RELATIONS = ("categories", "events")
# What makes a voucher counted on its row by the sale (orders.models.Voucher.counted).
LIMITS = {"max_uses", "budget", "keep_slot", "keep_day", "keep_event_date"}
# The model's field each refusal names (by the API's name), for the admin's form.
MODEL_FIELDS = {
    "code": "code",
    "value": "value",
    "visitUntil": "visit_until",
    "validUntil": "valid_until",
    "maxUses": "max_uses",
    "budget": "budget",
    "keepSlot": "keep_slot",
    "channels": "channels",
}


def vouchers(*, tag: str | None = None, code: str | None = None) -> QuerySet[Voucher]:
    """Every voucher, newest first; of one tag, or whose code contains `code`; each with what
    its valid tickets took (`used`, `discounted`: orders.services.vouchers.given, for vouchers
    the sale counts on their row and for those it does not alike)."""
    found = Voucher.objects.order_by("-created_at", "-pk")
    if tag is not None:
        found = found.filter(tag=tag)
    if code:
        found = found.filter(code__contains=normalized(code))
    return given(found).prefetch_related("categories", "events")


def voucher_of(voucher_id: int) -> Voucher:
    voucher = vouchers().filter(pk=voucher_id).first()
    if voucher is None:
        raise UnknownVoucher()
    return voucher


def create_voucher(*, by, code: str = "", prefix: str = "", **fields: Any) -> Voucher:
    """One voucher of `code` (else a new one, `prefix` first) and `fields`."""
    made = create_vouchers(by=by, codes=[code] if code else None, count=1, prefix=prefix, **fields)
    return made[0]


def create_vouchers(
    *,
    by,
    codes: Sequence[str] | None = None,
    count: int = 0,
    prefix: str = "",
    emails: Sequence[str] = (),
    **fields: Any,
) -> list[Voucher]:
    """`codes` given, or `count` new ones with `prefix`, all with `fields`, all or none; each of
    `emails` (one an address) mailed one of them after the commit, in the museum's language.
    One audit record: of the first voucher, naming how many the batch made."""
    _check_batch(codes=codes, count=count, emails=emails)
    _check_fields({"effect": VoucherEffect.FREE, **fields})
    codes = _codes(codes, count=count or len(emails), prefix=prefix)
    return _create(by=by, specs=[({**fields, "code": c}, None) for c in codes], emails=emails)


def import_vouchers(*, by, rows: Sequence[dict[str, Any]]) -> list[Voucher]:
    """A CSV file's vouchers (vouchers.csv_files.read), each a voucher's `code`, fields and
    `row`, all or none: a refusal names the row."""
    specs = []
    for row in rows:
        fields = {name: value for name, value in row.items() if name not in ("code", "row")}
        try:
            _check_fields({"effect": VoucherEffect.FREE, **fields})
        except InvalidInput as problem:
            raise _in_row(problem, row["row"]) from None
        specs.append(({**fields, "code": normalized(row["code"])}, row["row"]))
    _check_codes([(spec["code"], row) for spec, row in specs])
    return _create(by=by, specs=specs, emails=())


def check_settings(fields: dict[str, Any], *, voucher: Voucher | None = None) -> None:
    """What a change or a new voucher would be refused for, asked before it is made (the
    admin's form): InvalidInput naming the field."""
    current = {name: getattr(voucher, name) for name in FIELDS} if voucher else {}
    _check_fields({"effect": VoucherEffect.FREE, **current, **fields})
    if voucher is not None:
        _check_counters(voucher, fields)


def check_code(code: str) -> str:
    """The code as kept, if no voucher nor gift card has it; else VoucherCodeTaken."""
    code = normalized(code)
    _check_codes([(code, None)])
    return code


def _in_row(problem: InvalidInput, row: int) -> InvalidInput:
    field, messages = next(iter(problem.errors.items()))
    return InvalidInput(f"row {row}.{field}", messages[0])


def _check_batch(*, codes, count: int, emails: Sequence[str]) -> None:
    limit = settings.MUSEUM_VOUCHER_BATCH_MAX
    n = len(codes) if codes is not None else count or len(emails)
    if not 1 <= n <= limit:
        raise InvalidInput("count", _("From 1 to %(limit)s codes a batch.") % {"limit": limit})
    if emails:
        if len(emails) > settings.MUSEUM_VOUCHER_BATCH_MAX_EMAILS:
            limit = settings.MUSEUM_VOUCHER_BATCH_MAX_EMAILS
            raise InvalidInput("emails", _("At most %(limit)s emails a batch.") % {"limit": limit})
        if len(emails) != n:
            raise InvalidInput("emails", _("One address for each code of the batch."))
        seen: dict[str, str] = {}
        for email in emails:
            mailbox = mailbox_of(email)
            if mailbox in seen:
                message = _("%(email)s reaches the mailbox of %(other)s: one code an address.")
                raise InvalidInput("emails", message % {"email": email, "other": seen[mailbox]})
            seen[mailbox] = email


def _check_fields(fields: dict[str, Any]) -> None:
    """The rules a voucher's settings keep together (the model's constraints, said first)."""
    if fields.get("effect") == VoucherEffect.PERCENT_OFF and (fields.get("value") or 0) > 100:
        raise InvalidInput("value", _("A percentage off is at most 100."))
    if fields.get("visit_from") and fields.get("visit_until"):
        if fields["visit_from"] > fields["visit_until"]:
            raise InvalidInput("visitUntil", _("The last visit date is before the first."))
    if fields.get("valid_from") and fields.get("valid_until"):
        if fields["valid_from"] >= fields["valid_until"]:
            raise InvalidInput("validUntil", _("The voucher would end before it starts."))
    if "channels" in fields and not fields["channels"]:
        raise InvalidInput("channels", _("At least one channel."))
    keeps = [name for name in ("keep_slot", "keep_day", "keep_event_date") if fields.get(name)]
    if len(keeps) > 1:
        raise InvalidInput("keepSlot", _("A voucher keeps places on one slot, day or event date."))
    if keeps and fields.get("max_uses") is None:
        raise InvalidInput("maxUses", _("A voucher that keeps places keeps one for each use."))


def _codes(given: Sequence[str] | None, *, count: int, prefix: str) -> list[str]:
    """The batch's codes: those given, normalized and each refused if taken; else `count` new
    ones (a new code that happens to be taken is drawn again)."""
    if given is not None:
        named = [normalized(code) for code in given]
        _check_codes([(code, None) for code in named])
        return named
    codes: set[str] = set()
    while len(codes) < count:
        drawn = {new_code(prefix) for _ in range(count - len(codes))} - codes
        taken = set(Voucher.objects.filter(code__in=drawn).values_list("code", flat=True))
        # A gift card's code is 16 characters of its own shape: never one of these but by a
        # chance too small to ask the database 1000 times about.
        codes |= drawn - taken
    return sorted(codes)


def _check_codes(codes: Sequence[tuple[str, int | None]]) -> None:
    """Refuse a code given twice, empty, or another voucher's or a gift card's, naming it (and
    its row in a file)."""
    rows: dict[str, int | None] = {}
    for code, row in codes:
        if not code:
            raise InvalidInput(_where(row, "code"), _("A code may not be empty."))
        if code in rows:
            message = _("%(code)s is given twice.") % {"code": code}
            raise VoucherCodeTaken(message, voucherCode=code, **_row(row))
        rows[code] = row
    taken = Voucher.objects.filter(code__in=rows).order_by("code").values_list("code", flat=True)
    for code in taken[:1]:
        message = _("Another voucher has %(code)s.") % {"code": code}
        raise VoucherCodeTaken(message, voucherCode=code, **_row(rows[code]))
    for code, row in rows.items():
        if (problem := _other_code(code)) is not None:
            message = _("%(code)s is not free: %(what)s") % {"code": code, "what": problem.detail}
            raise VoucherCodeTaken(message, voucherCode=code, **_row(row))


def _where(row: int | None, field: str) -> str:
    return field if row is None else f"row {row}.{field}"


def _row(row: int | None) -> dict:
    return {} if row is None else {"row": row}


def _other_code(code: str) -> MuseumProblem | None:
    """What another kind of code `code` is (a gift card's), as the sale's `find` says it."""
    for recognise in OTHER_CODES:
        if (problem := recognise(code)) is not None:
            return problem
    return None


def _create(*, by, specs: Sequence[tuple[dict[str, Any], int | None]], emails: Sequence[str]):
    """The vouchers of `specs` (fields with a code, and its row), in one INSERT, their scopes in
    one more each, and their emails, all or none; one audit record."""
    vouchers = [
        Voucher(**{name: value for name, value in spec.items() if name not in RELATIONS})
        for spec, _row in specs
    ]
    with transaction.atomic():
        try:
            with transaction.atomic():
                made = Voucher.objects.bulk_create(vouchers)
        except IntegrityError:
            # Another batch took one of the codes since they were checked.
            raise VoucherCodeTaken() from None
        for relation in RELATIONS:
            through = getattr(Voucher, relation).through
            column = getattr(Voucher, relation).field.m2m_reverse_field_name()
            through.objects.bulk_create(
                through(voucher_id=voucher.pk, **{column: target})
                for voucher, (spec, _row) in zip(made, specs, strict=True)
                for target in spec.get(relation, ())
            )
        if any(voucher.keeps_places for voucher in made):
            keeping_changed()  # bulk_create sends no signal for the sale's kept rows to hear
        if emails:
            mail_codes(vouchers=made, emails=emails)
        record(action=Action.CREATED, obj=made[0], by=by, changes=_described(made, specs))
    return made


def _described(made: Sequence[Voucher], specs) -> dict[str, Any]:
    first, spec = made[0], specs[0][0]
    changes = {"code": first.code, **values_of(first, FIELDS)}
    for relation in RELATIONS:
        if spec.get(relation):
            changes[relation] = [target.pk for target in spec[relation]]
    if len(made) > 1:
        changes["batch"] = len(made)
        changes["codes"] = [first.code, made[-1].code]
    return changes


def update_voucher(*, voucher_id: int, by, **changes: Any) -> Voucher:
    """Change what staff set (never the counters), under the row's lock; a maximum of uses or a
    budget below what was already used or given is refused."""
    with transaction.atomic():
        voucher = Voucher.objects.select_for_update().filter(pk=voucher_id).first()
        if voucher is None:
            raise UnknownVoucher()
        before = values_of(voucher, FIELDS)
        plain = {name: value for name, value in changes.items() if name not in RELATIONS}
        _check_fields({**{name: getattr(voucher, name) for name in FIELDS}, **plain})
        _check_counters(voucher, plain)
        for name, value in plain.items():
            setattr(voucher, name, value)
        voucher.save(update_fields=list(plain))
        if LIMITS & set(plain):
            # Given a limit, it counts from what its tickets took (a limit taken off: no more).
            recount(voucher.pk)
        diff = changed_fields(before, voucher, plain)
        for relation in RELATIONS:
            if relation in changes:
                old = set(getattr(voucher, relation).values_list("pk", flat=True))
                new = {target.pk for target in changes[relation]}
                getattr(voucher, relation).set(changes[relation])
                if old != new:
                    diff[relation] = [sorted(map(str, old)), sorted(map(str, new))]
        if diff:
            record(action=Action.CHANGED, obj=voucher, by=by, changes=diff)
    return voucher_of(voucher.pk)


def _check_counters(voucher: Voucher, changes: dict[str, Any]) -> None:
    """A maximum of uses or a budget is never set below what the voucher's valid tickets
    took."""
    if changes.get("max_uses") is None and changes.get("budget") is None:
        return
    took = (
        given(Voucher.objects.filter(pk=voucher.pk))
        .values("used", "discounted")  # type: ignore[misc]  # annotations, unseen by the plugin
        .get()
    )
    if changes.get("max_uses") is not None and changes["max_uses"] < took["used"]:
        message = _("It has been used %(uses)s times.") % {"uses": took["used"]}
        raise InvalidInput("maxUses", message)
    if changes.get("budget") is not None and changes["budget"] < took["discounted"]:
        message = _("It has given %(given)s.") % {"given": took["discounted"]}
        raise InvalidInput("budget", message)


def delete_voucher(*, voucher_id: int, by) -> None:
    """Delete a voucher never used: one whose tickets (held, sold or cancelled) name it stays,
    to be ended (`validUntil`) instead."""
    with transaction.atomic():
        voucher = Voucher.objects.select_for_update().filter(pk=voucher_id).first()
        if voucher is None:
            raise UnknownVoucher()
        if voucher.uses or voucher.tickets.exists():
            raise VoucherUsed()
        record(action=Action.DELETED, obj=voucher, by=by, changes={"code": voucher.code})
        voucher.delete()


def stats(*, tag: str | None = None) -> list[dict[str, Any]]:
    """Per tag: the codes issued, those used, their uses (tickets held or sold with them, not
    cancelled) and the discount they gave: what the tickets say (orders.services.vouchers.given,
    which a counted voucher's counters equal), in two statements."""
    chosen = Voucher.objects.all() if tag is None else Voucher.objects.filter(tag=tag)
    rows = {
        row["tag"]: {**row, "used": 0, "uses": 0, "discount": ZERO}
        for row in chosen.values("tag").annotate(issued=Count("pk")).order_by()
    }
    valid = Ticket.objects.filter(cancelled_at__isnull=True, voucher__in=chosen)
    per_tag = (
        valid.values(tag=F("voucher__tag"))
        .annotate(
            used=Count("voucher", distinct=True),
            uses=Count("pk"),
            discount=Sum("discount", default=ZERO),
        )
        .order_by()
    )
    for row in per_tag:
        rows[row["tag"]].update(row)
    return [rows[name] for name in sorted(rows)]
