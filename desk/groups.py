"""The front desk's groups: the queue of requests waiting for an answer (oldest first, with
their expiry and the places they hold), a request's page to approve it, offer another time or
decline it, and today's and the upcoming group visits with what each still owes; per visit, a
no-show, a bank transfer recorded, the numbers changed.

Beside desk/views.py, whose guard and pages it shares: a thin face over the groups' services
(groups.services: approval, requests, numbers, money, day), whose refusals show as the form's
errors. Seeing needs the desk's `orders.sell_at_desk`; answering and changing the numbers,
`groups.answer_group_requests`; recording a payment, `orders.take_desk_payment`.
"""

from collections.abc import Callable

from django import forms
from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import redirect
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from desk.views import TIME_INPUT, _page, desk_only, words
from groups import reports
from groups.models import GroupRequest, GroupStatus
from groups.models.requests import HOLDING
from groups.services import approval, day, money, numbers, requests
from museum.exceptions import MuseumProblem
from museum.forms import DATE_INPUT
from orders.providers import TAKE_DESK_PAYMENT
from orders.services.pricing import active_categories

ANSWER = "groups.answer_group_requests"


class ApproveForm(forms.Form):
    date = forms.DateField(
        label=gettext_lazy("Another day"),
        required=False,
        widget=DATE_INPUT,
        help_text=gettext_lazy("Empty: the day asked for."),
    )
    entry_time = forms.TimeField(
        label=gettext_lazy("Entry time"), required=False, widget=TIME_INPUT
    )


class OfferForm(forms.Form):
    date = forms.DateField(label=gettext_lazy("Day offered"), widget=DATE_INPUT)
    entry_time = forms.TimeField(
        label=gettext_lazy("Entry time"), required=False, widget=TIME_INPUT
    )
    message = forms.CharField(
        label=gettext_lazy("Message to the group"), required=False, widget=forms.Textarea
    )


class DeclineForm(forms.Form):
    reason = forms.CharField(label=gettext_lazy("Reason"), widget=forms.Textarea)


class CancelForm(forms.Form):
    reason = forms.CharField(label=gettext_lazy("Reason"), required=False, widget=forms.Textarea)


class GroupPaymentForm(forms.Form):
    amount = forms.DecimalField(
        label=gettext_lazy("Amount"), max_digits=10, decimal_places=2, min_value=0.01
    )
    method = forms.ChoiceField(
        label=gettext_lazy("Paid by"),
        choices=[
            ("bank_transfer", gettext_lazy("Bank transfer")),
            ("cash", gettext_lazy("Cash")),
            ("card", gettext_lazy("Card terminal")),
        ],
        initial="bank_transfer",
    )


class NumbersForm(forms.Form):
    """How many of each visitor category, the group's lines as they are to start with."""

    def __init__(self, *args, group: GroupRequest, **kwargs):
        super().__init__(*args, **kwargs)
        now = {line.category.category: line.quantity for line in group.lines.all()}
        self.categories = list(active_categories())
        for category in self.categories:
            self.fields[f"qty_{category.category}"] = forms.IntegerField(
                label=category.name,
                min_value=0,
                max_value=settings.MUSEUM_GROUP_MAX_PEOPLE,
                initial=now.get(category.category, 0),
                required=False,
            )

    def lines(self) -> dict[str, int]:
        data = self.cleaned_data
        return {
            category.category: data[f"qty_{category.category}"]
            for category in self.categories
            if data.get(f"qty_{category.category}")
        }


def _group(request_id: int) -> GroupRequest:
    group = (
        GroupRequest.objects.select_related("order", "tour", "answered_by")
        .prefetch_related("lines__category")
        .filter(pk=request_id)
        .first()
    )
    if group is None:
        raise Http404()
    return group


def _may(user, permission: str) -> None:
    if not user.has_perm(permission):
        raise PermissionDenied(_("This is for staff who answer group requests."))


@desk_only
def groups(request):
    """The queue of requests waiting, oldest first, and the visits from today on."""
    today = timezone.localdate()
    context = {
        "waiting": reports.waiting(),
        "visits": reports.visits_from(today),
        "today": today,
        "now": timezone.now(),
        "currency": settings.MUSEUM_CURRENCY,
    }
    return _page(request, "desk/groups.html", context)


@desk_only
def group_page(request, request_id: int):
    if request.method != "GET":
        raise Http404()
    return _group_page(request, _group(request_id))


def _group_page(request, group: GroupRequest, *, forms_given: dict | None = None, status=200):
    today = timezone.localdate()
    given = forms_given or {}
    # What a step refused, at the page's top too: its form may not show once the status moved.
    errors = [
        str(error)
        for what, form in given.items()
        if what != "no_show"
        for error in form.non_field_errors()
    ]
    context = {
        "errors": errors,
        "group": group,
        "waiting": group.status in HOLDING,
        "approved": group.status == GroupStatus.APPROVED,
        "ran_out": group.ran_out(),
        "refusal": _refusal_today(group, today=today),
        "may_answer": request.user.has_perm(ANSWER),
        "may_take_payment": request.user.has_perm(TAKE_DESK_PAYMENT),
        "approve_form": given.get("approve") or ApproveForm(),
        "offer_form": given.get("offer") or OfferForm(),
        "decline_form": given.get("decline") or DeclineForm(),
        "payment_form": given.get("payment") or GroupPaymentForm(),
        "numbers_form": given.get("numbers") or NumbersForm(group=group),
        "cancel_form": given.get("cancel") or CancelForm(),
        "no_show_error": given.get("no_show"),
        "currency": settings.MUSEUM_CURRENCY,
    }
    return _page(request, "desk/group.html", context, status=status)


def _refusal_today(group: GroupRequest, *, today) -> str | None:
    """Why the door refuses the group today, on its day only (another day's is no news)."""
    reason = day.admission_refusal(group, today=today) if group.date == today else None
    return None if reason is None else str(day.REFUSALS[reason])


def _approve(request, group: GroupRequest, form: ApproveForm) -> str:
    data = form.cleaned_data
    approved = approval.approve(
        request_id=group.pk,
        by=request.user,
        date=data.get("date"),
        entry_time=data.get("entry_time"),
    )
    assert approved.order is not None
    return _("Approved: group order %(code)s.") % {"code": approved.order.confirmation_code}


def _offer(request, group: GroupRequest, form: OfferForm) -> str:
    data = form.cleaned_data
    requests.offer_time(
        request_id=group.pk,
        by=request.user,
        date=data["date"],
        entry_time=data.get("entry_time"),
        message=data.get("message") or "",
    )
    return _("Another time offered to the group.")


def _decline(request, group: GroupRequest, form: DeclineForm) -> str:
    requests.decline(request_id=group.pk, by=request.user, reason=form.cleaned_data["reason"])
    return _("Declined.")


def _payment(request, group: GroupRequest, form: GroupPaymentForm) -> str:
    data = form.cleaned_data
    money.record_payment(
        request_id=group.pk, by=request.user, amount=data["amount"], method=data["method"]
    )
    return _("Payment recorded.")


def _numbers(request, group: GroupRequest, form: NumbersForm) -> str:
    numbers.change_numbers(request_id=group.pk, by=request.user, lines=form.lines())
    return _("Numbers changed.")


def _cancel(request, group: GroupRequest, form: CancelForm) -> str:
    numbers.cancel_group(request_id=group.pk, by=request.user, reason=form.cleaned_data["reason"])
    return _("The visit is called off.")


# What each POST does: the permission it needs, its form, and the service it calls.
ACTIONS: dict[str, tuple[str, Callable, Callable]] = {
    "approve": (ANSWER, lambda post, group: ApproveForm(post), _approve),
    "offer": (ANSWER, lambda post, group: OfferForm(post), _offer),
    "decline": (ANSWER, lambda post, group: DeclineForm(post), _decline),
    "payment": (TAKE_DESK_PAYMENT, lambda post, group: GroupPaymentForm(post), _payment),
    "numbers": (ANSWER, lambda post, group: NumbersForm(post, group=group), _numbers),
    "cancel": (ANSWER, lambda post, group: CancelForm(post), _cancel),
}


@desk_only
def change_group(request, request_id: int, what: str):
    """One of a group's steps (ACTIONS, or `no-show`), POSTed from its page: done, then the page
    again with what was done; refused, the page with the refusal as the form's error."""
    if request.method != "POST":
        raise Http404()
    group = _group(request_id)
    if what == "no-show":
        try:
            day.mark_no_show(request_id=group.pk, by=request.user)
        except MuseumProblem as problem:
            return _group_page(request, group, forms_given={"no_show": words(problem)}, status=400)
        messages.success(request, _("Marked as a no-show."))
        return redirect("desk-group", request_id=group.pk)
    if what not in ACTIONS:
        raise Http404()
    permission, make_form, step = ACTIONS[what]
    _may(request.user, permission)
    form = make_form(request.POST, group)
    if form.is_valid():
        try:
            done = step(request, group, form)
        except MuseumProblem as problem:
            form.add_error(None, words(problem))
        else:
            messages.success(request, done)
            return redirect("desk-group", request_id=group.pk)
    return _group_page(request, _group(request_id), forms_given={what: form}, status=400)
