"""A guide's pages, under /groups/guides/ (groups.pages.guides)."""

from django.urls import path

from groups.pages import guides

urlpatterns = [
    path("answer/<str:token>/", guides.answer_page, name="guide-answer"),
    path("calendar/", guides.calendar_page, name="guide-calendar"),
    path("<str:feed_token>.ics", guides.feed, name="guide-feed"),
]
