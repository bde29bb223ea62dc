"""The event's texts visitors read, in each shipped language (django-modeltranslation)."""

from modeltranslation.translator import TranslationOptions, register

from events.models import SpecialEvent


@register(SpecialEvent)
class SpecialEventTranslation(TranslationOptions):
    fields = ("name", "location", "description")
