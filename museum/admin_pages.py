"""Admin pages of our own, in the admin's look: an action's confirmation, a form of its own."""

from django.contrib.admin import helpers
from django.template.response import TemplateResponse


def admin_page(model_admin, request, template: str, *, title: str, **context) -> TemplateResponse:
    """Render `template` (which extends templates/admin/intermediate_page.html) for a model.

    `action_checkbox_name` lets an action's page send the selected rows back with its answer.
    """
    return TemplateResponse(
        request,
        template,
        {
            **model_admin.admin_site.each_context(request),
            "title": title,
            "opts": model_admin.opts,
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            **context,
        },
    )
