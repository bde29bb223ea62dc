"""What the tests of guided tours build: a tour programme, guides with their weekly hours, and
groups made directly (a request waiting, with its lines), past the request's own rules."""

import datetime as dt
import itertools
from decimal import Decimal

from groups.models import (
    GroupLine,
    GroupRequest,
    Guide,
    GuideAvailability,
    OrganisationKind,
    TourProgramme,
)
from orders.models import VisitorCategory

# A Wednesday, far enough ahead for every test that asks "from today on".
TOUR_DAY = dt.date(2030, 6, 12)
_codes = itertools.count(1)


def make_tour(**fields) -> TourProgramme:
    defaults = {
        "name": "Highlights",
        "duration_minutes": 60,
        "languages": ["en", "de"],
        "audiences": [OrganisationKind.SCHOOL, OrganisationKind.COMPANY],
        "max_people_per_guide": 25,
        "fee": Decimal("90.00"),
        "fee_per": "tour",
    }
    return TourProgramme.objects.create(**{**defaults, **fields})


def make_guide(name: str, *, languages=("en",), audiences=("school",), hours=None) -> Guide:
    """A guide who works every day from 9 to 17, unless `hours` gives (weekday, from, to)s."""
    guide = Guide.objects.create(
        name=name,
        email=f"{name.lower()}@example.com",
        languages=list(languages),
        audiences=list(audiences),
    )
    for weekday, starts, ends in (
        hours if hours is not None else [(day, "09:00", "17:00") for day in range(7)]
    ):
        GuideAvailability.objects.create(
            guide=guide, weekday=weekday, starts=dt.time.fromisoformat(starts), ends=ends
        )
    return guide


def make_group(
    tour: TourProgramme | None,
    *,
    people: int = 40,
    day: dt.date = TOUR_DAY,
    at: str | None = "10:00",
    language: str = "en",
    kind: str = OrganisationKind.SCHOOL,
) -> GroupRequest:
    """A request waiting for staff (holding nothing: `places` 0), of `people` children."""
    number = next(_codes)
    group = GroupRequest.objects.create(
        code=f"group-{number:06d}-00000",
        organisation=f"School {number}",
        organisation_kind=kind,
        contact_name="Ms Frizzle",
        email="frizzle@example.com",
        mailbox="frizzle@example.com",
        language=language,
        date=day,
        entry_time=dt.time.fromisoformat(at) if at else None,
        tour=tour,
        status="requested",
    )
    GroupLine.objects.create(
        request=group, category=VisitorCategory.objects.get(category="child"), quantity=people
    )
    return group
