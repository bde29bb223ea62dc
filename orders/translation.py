"""A visitor category's name in each shipped language (django-modeltranslation)."""

from modeltranslation.translator import TranslationOptions, register

from orders.models import VisitorCategory


@register(VisitorCategory)
class VisitorCategoryTranslation(TranslationOptions):
    fields = ("name",)
