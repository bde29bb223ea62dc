"""The group's pages, without an account: the public form at /groups/ that asks for a group's
visit through the same service as `POST /v1.1/group-requests` (requests.request_group, with no
account), and the page an offer's email links to (signed, groups.links), which shows the time
offered and accepts it (requests.accept_offer).

The form speaks the visitor's language among the museum's (MUSEUM_LANGUAGES): the one `?lang=`
names (its links do), else the browser's (LocaleMiddleware), else the museum's; the request is
made in the language the form was shown in. Each page is limited per client address like the
other pages opened without an account, and the form's requests further, to
MUSEUM_THROTTLE_GROUP_REQUEST_RATE an address; every email it causes counts toward its
mailbox's daily limit (groups.tasks)."""

from django import forms
from django.conf import settings
from django.http import Http404
from django.shortcuts import render
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from groups import links
from groups.models import GroupRequest, GroupStatus, OrganisationKind, TourProgramme
from groups.notifications import people_in_words, visit_in_words
from groups.services import requests as group_requests
from museum import i18n
from museum.errors import STATUS_OF_KIND
from museum.exceptions import MuseumProblem
from museum.i18n import moment_in_words
from museum.text import one_line
from museum.throttling import page_within_address_rate, page_within_group_request_rate
from orders.models import MEMBER_CATEGORY, VisitorCategory

ORGANISATION_KINDS = {
    OrganisationKind.SCHOOL: gettext_lazy("School"),
    OrganisationKind.COMPANY: gettext_lazy("Company"),
    OrganisationKind.ASSOCIATION: gettext_lazy("Association"),
}
# How many of one category the form takes (the service keeps MUSEUM_GROUP_MAX_PEOPLE in all).
MOST_OF_A_CATEGORY = 1000
PEOPLE_PREFIX = "people_"
TOO_MANY = gettext_lazy("Too many requests: try again later.")


class GroupRequestForm(forms.Form):
    organisation = forms.CharField(
        label=gettext_lazy("School, company or association"), max_length=200
    )
    organisation_kind = forms.ChoiceField(
        label=gettext_lazy("Kind of group"), choices=list(ORGANISATION_KINDS.items())
    )
    contact_name = forms.CharField(label=gettext_lazy("Contact person"), max_length=100)
    email = forms.EmailField(label=gettext_lazy("Email"), max_length=254)
    phone = forms.CharField(label=gettext_lazy("Phone number"), max_length=32, required=False)
    date = forms.DateField(
        label=gettext_lazy("Date of the visit"), widget=forms.DateInput(attrs={"type": "date"})
    )
    entry_time = forms.TimeField(
        label=gettext_lazy("Entry time"),
        required=False,
        widget=forms.TimeInput(attrs={"type": "time"}, format="%H:%M"),
    )
    alternative_date = forms.DateField(
        label=gettext_lazy("Another date that would suit"),
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}),
    )
    alternative_time = forms.TimeField(
        label=gettext_lazy("Its entry time"),
        required=False,
        widget=forms.TimeInput(attrs={"type": "time"}, format="%H:%M"),
    )
    age_group = forms.CharField(
        label=gettext_lazy("Age or school year"), max_length=100, required=False
    )
    tour = forms.TypedChoiceField(
        label=gettext_lazy("Guided tour"), coerce=int, required=False, empty_value=None
    )
    accessibility = forms.CharField(
        label=gettext_lazy("Accessibility needs"), required=False, max_length=2000,
        widget=forms.Textarea(attrs={"rows": 2}),
    )  # fmt: skip
    comment = forms.CharField(
        label=gettext_lazy("Comment"), required=False, max_length=2000,
        widget=forms.Textarea(attrs={"rows": 3}),
    )  # fmt: skip
    address = forms.CharField(
        label=gettext_lazy("Invoice address"), required=False, max_length=500,
        widget=forms.Textarea(attrs={"rows": 3}),
    )  # fmt: skip
    vat_id = forms.CharField(label=gettext_lazy("VAT number"), max_length=40, required=False)

    def __init__(self, *args, categories, tours, **kwargs):
        super().__init__(*args, **kwargs)
        self.categories = categories
        for category in categories:
            self.fields[PEOPLE_PREFIX + category.category] = forms.IntegerField(
                label=one_line(category.counted(2)).capitalize(),
                min_value=0,
                max_value=MOST_OF_A_CATEGORY,
                required=False,
            )
        tour_field = self.fields["tour"]
        assert isinstance(tour_field, forms.ChoiceField)
        tour_field.choices = [("", _("No guided tour"))] + [
            (tour.pk, one_line(tour.name)) for tour in tours
        ]

    def sections(self) -> list[tuple[str, list]]:
        """The form's fieldsets: each legend and its fields, in the page's order."""
        people = [PEOPLE_PREFIX + category.category for category in self.categories]
        return [
            (_("Your group"), ["organisation", "organisation_kind", "age_group"]),
            (_("How many people"), people),
            (_("When"), ["date", "entry_time", "alternative_date", "alternative_time"]),
            (_("Your visit"), ["tour", "accessibility", "comment"]),
            (_("Contact and invoice"), ["contact_name", "email", "phone", "address", "vat_id"]),
        ]

    def clean(self):
        data = super().clean() or {}
        lines = {
            category.category: data.get(PEOPLE_PREFIX + category.category) or 0
            for category in self.categories
        }
        data["lines"] = {code: count for code, count in lines.items() if count}
        if not data["lines"]:
            raise forms.ValidationError(_("Say how many people come."))
        return data

    def request_kwargs(self) -> dict:
        """What the service takes, from the form's cleaned data."""
        data = self.cleaned_data
        alternatives = []
        if data.get("alternative_date"):
            hour = data.get("alternative_time")
            alternatives.append(
                {
                    "date": data["alternative_date"].isoformat(),
                    "time": hour.strftime("%H:%M") if hour else None,
                }
            )
        return {
            "organisation": data["organisation"],
            "organisation_kind": data["organisation_kind"],
            "contact_name": data["contact_name"],
            "email": data["email"],
            "phone": data["phone"],
            "date": data["date"],
            "entry_time": data.get("entry_time"),
            "lines": data["lines"],
            "alternatives": alternatives,
            "age_group": data["age_group"],
            "accessibility": data["accessibility"],
            "tour_id": data.get("tour"),
            "comment": data["comment"],
            "address": data["address"],
            "vat_id": data["vat_id"],
        }


@never_cache
@require_http_methods(["GET", "POST"])
def group_form(request):
    language = _page_language(request)
    with i18n.speaking(language):
        if not page_within_address_rate(request) or (
            request.method == "POST" and not page_within_group_request_rate(request)
        ):
            return _form_page(request, language, outcome=str(TOO_MANY), status=429)
        if request.method == "GET":
            return _form_page(request, language)
        form = _form(request.POST)
        if not form.is_valid():
            return _form_page(request, language, form=form, status=400)
        try:
            group = group_requests.request_group(
                account=None, language=language, **form.request_kwargs()
            )
        except MuseumProblem as problem:
            outcome, status = str(problem.detail), STATUS_OF_KIND[problem.kind]
            return _form_page(request, language, form=form, outcome=outcome, status=status)
        return _received_page(request, language, group)


def _page_language(request) -> str:
    asked = request.POST.get("language") or request.GET.get("lang") or ""
    return (
        i18n.offered(asked)
        or i18n.offered(translation.get_language() or "")
        or settings.MUSEUM_LANGUAGE
    )


def _form(data=None) -> GroupRequestForm:
    categories = VisitorCategory.objects.filter(active=True).exclude(category=MEMBER_CATEGORY)
    tours = TourProgramme.objects.filter(active=True).order_by("name")
    return GroupRequestForm(data, categories=list(categories), tours=list(tours))


def _form_page(request, language: str, *, form=None, outcome: str = "", status: int = 200):
    form = form if form is not None else _form()
    sections = [(legend, [form[name] for name in names]) for legend, names in form.sections()]
    languages = [(code, settings.SHIPPED_LANGUAGES[code]) for code in settings.MUSEUM_LANGUAGES]
    context = {
        **_common(language),
        "form": form,
        "sections": sections,
        "outcome": outcome,
        "languages": languages,
    }
    return render(request, "groups/form.html", context, status=status)


def _received_page(request, language: str, group: GroupRequest):
    group = GroupRequest.objects.get(pk=group.pk)
    context = {
        **_common(language),
        "group": group,
        "when": visit_in_words(group),
        "people": people_in_words(group),
        "until": moment_in_words(group.expires_at) if group.expires_at else "",
    }
    return render(request, "groups/received.html", context, status=201)


def _common(language: str) -> dict:
    return {"museum": one_line(settings.MUSEUM_NAME), "language": language}


# The accept page of an offer.


@never_cache
@require_http_methods(["GET", "POST"])
def accept_page(request, token: str):
    group = links.group_of_accept_link(token)
    if group is None:
        raise Http404()
    with i18n.speaking(group.language):
        if not page_within_address_rate(request):
            return _offer_page(request, group, outcome=str(TOO_MANY), status=429)
        if request.method == "GET":
            return _offer_page(request, group)
        try:
            group_requests.accept_offer(request_id=group.pk)
        except MuseumProblem as problem:
            status = STATUS_OF_KIND[problem.kind]
            return _offer_page(request, group, outcome=str(problem.detail), status=status)
        group.refresh_from_db()
        return _offer_page(
            request, group, outcome=_("Thank you: the time is accepted. We will confirm it.")
        )


def _offer_page(request, group: GroupRequest, *, outcome: str = "", status: int = 200):
    context = {
        **_common(i18n.current()),
        "group": group,
        "when": visit_in_words(group),
        "people": people_in_words(group),
        "until": moment_in_words(group.expires_at) if group.expires_at else "",
        "open": group.status == GroupStatus.OFFERED and not group.ran_out(),
        "outcome": outcome,
    }
    return render(request, "groups/offer.html", context, status=status)
