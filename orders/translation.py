"""A visitor category's names, for one and for several, in each shipped language
(django-modeltranslation)."""

from modeltranslation.translator import TranslationOptions, register

from orders.models import Fund, MembershipType, VisitorCategory


@register(VisitorCategory)
class VisitorCategoryTranslation(TranslationOptions):
    fields = ("name", "plural_name")


@register(MembershipType)
class MembershipTypeTranslation(TranslationOptions):
    fields = ("name", "description")


@register(Fund)
class FundTranslation(TranslationOptions):
    fields = ("name", "description")
