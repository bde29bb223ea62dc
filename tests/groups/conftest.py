"""Groups' fixtures: a school's categories (pupils, teachers), a chaperone rule of 1 free
teacher per 10 pupils, and a day far enough ahead for the final-numbers date to come later."""

import datetime as dt
from decimal import Decimal

import pytest
from django.utils import timezone

from groups.models import ChaperoneRule
from orders.models import VisitorCategory
from tests.factories import MuseumDayFactory
from tests.orders.test_stripe_payments import stripe_on  # noqa: F401 (the fixture)


def ahead(days: int = 30) -> dt.date:
    return timezone.localdate() + dt.timedelta(days=days)


@pytest.fixture(autouse=True)
def groups_use_the_database(db):
    """Every test here requests, answers or admits groups, in the database."""


@pytest.fixture
def pupil(db):
    return VisitorCategory.objects.create(
        category="pupil",
        name="Pupil",
        plural_name="Pupils",
        general_price=Decimal("6.00"),
        tax_rate=Decimal("7.00"),
    )


@pytest.fixture
def teacher(db):
    return VisitorCategory.objects.create(
        category="teacher",
        name="Teacher",
        plural_name="Teachers",
        general_price=Decimal("12.00"),
        tax_rate=Decimal("7.00"),
    )


@pytest.fixture
def chaperones(pupil, teacher):
    """1 free teacher per 10 pupils or part of it; extra teachers at their price."""
    return ChaperoneRule.objects.create(
        name="School classes",
        pupil_category=pupil,
        adult_category=teacher,
        free_adults=1,
        per_pupils=10,
    )


@pytest.fixture
def group_day(db):
    """An untimed day 30 days ahead with room for 40."""
    return MuseumDayFactory(date=ahead(30), capacity=40)


def school(day: dt.date, **fields) -> dict:
    """A school's request's arguments for requests.request_group."""
    return {
        "organisation": "Schiller-Gymnasium",
        "organisation_kind": "school",
        "contact_name": "Frau Weber",
        "email": "weber@schiller.example",
        "date": day,
        "lines": {"pupil": 28, "teacher": 3},
        "language": "de",
        **fields,
    }
