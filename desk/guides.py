"""The front desk's tours without a guide: every upcoming tour whose assignment has no guide yet
or was declined by the guide asked, each with the guides free to lead it (their language,
audience, hours and other tours allowed for: groups.services.guides.free_guides_for) and a form
that asks one through the same service as the group's approval (`assign`). Seeing the list
takes the desk's permission; asking a guide, staff's who answer group requests."""

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from desk.views import _page, desk_only, words
from groups.services import guides
from museum.exceptions import MuseumProblem

ANSWER_GROUP_REQUESTS = "groups.answer_group_requests"


class AssignForm(forms.Form):
    assignment = forms.IntegerField(min_value=1)
    guide = forms.IntegerField(min_value=1)


@desk_only
@require_http_methods(["GET", "POST"])
def tours_without_guide(request):
    may_assign = request.user.has_perm(ANSWER_GROUP_REQUESTS)
    if request.method == "POST":
        if not may_assign:
            raise PermissionDenied("Asking guides is for staff who answer group requests.")
        _assign(request, AssignForm(request.POST))
        return redirect("desk-guides")
    tours = guides.unguided_tours()
    free = guides.free_guides_for(tours)
    rows = [{"assignment": tour, "free": free[tour.pk]} for tour in tours]
    return _page(request, "desk/guides.html", {"rows": rows, "may_assign": may_assign})


def _assign(request, form: AssignForm) -> None:
    if not form.is_valid():
        messages.error(request, _("Choose a guide for the tour."))
        return
    try:
        assignment = guides.assign(
            assignment_id=form.cleaned_data["assignment"],
            guide_id=form.cleaned_data["guide"],
            by=request.user,
        )
    except MuseumProblem as problem:
        messages.error(request, words(problem), extra_tags=problem.code)
        return
    messages.success(
        request,
        _("%(guide)s is asked to lead the tour of %(group)s; they answer by email.")
        % {"guide": assignment.guide, "group": assignment.group.organisation},
    )
