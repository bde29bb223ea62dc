"""Units that tell the truth: ages only where the museum set them on the category's OCTO unit
(OCTO's required integers read 0 and 100 otherwise), and `idRequired` only where the unit asks for
proof, not for every category the door looks at."""

import pytest
from django.db import IntegrityError, connection
from django.db.migrations.executor import MigrationExecutor

from octo.models import CategoryUnit, UnitType
from orders.models import VisitorCategory


def units_of(octo) -> dict[str, dict]:
    product = octo.get("/octo/products/general").json()
    return {unit["id"]: unit for unit in product["options"][0]["units"]}


def test_unmapped_categories_set_no_ages_and_ask_no_proof(octo):
    # The first migrate's categories: all but adult are checked at the door.
    assert VisitorCategory.objects.filter(check_at_door=True).count() == 4

    units = units_of(octo)

    for unit in units.values():
        restrictions = unit["restrictions"]
        assert (restrictions["minAge"], restrictions["maxAge"]) == (0, 100)
        assert restrictions["idRequired"] is False


def test_a_units_ages_and_proof_are_what_staff_set(octo):
    child = VisitorCategory.objects.get(category="child")
    student = VisitorCategory.objects.get(category="student")
    CategoryUnit.objects.create(category=child, unit_type=UnitType.CHILD, min_age=6, max_age=17)
    CategoryUnit.objects.create(category=student, unit_type=UnitType.STUDENT, id_required=True)
    senior = VisitorCategory.objects.get(category="senior")
    CategoryUnit.objects.create(category=senior, unit_type=UnitType.SENIOR, min_age=65)

    said = {
        code: (
            unit["restrictions"]["minAge"],
            unit["restrictions"]["maxAge"],
            unit["restrictions"]["idRequired"],
        )
        for code, unit in units_of(octo).items()
    }

    assert said["child"] == (6, 17, False)
    assert said["student"] == (0, 100, True)
    assert said["senior"] == (65, 100, False)
    assert said["infant"] == (0, 100, False)


def test_ages_run_forwards(db):
    child = VisitorCategory.objects.get(category="child")
    with pytest.raises(IntegrityError):
        CategoryUnit.objects.create(category=child, min_age=18, max_age=6)


@pytest.mark.django_db(transaction=True)
def test_the_migration_keeps_ages_and_the_proof_staff_saw():
    """Units staff mapped keep their ages, and ask for proof where their category is checked at
    the door (what resellers read until now); the others ask none."""
    executor = MigrationExecutor(connection)
    executor.migrate([("octo", "0002_booking_uuid_per_partner")])
    old = executor.loader.project_state([("octo", "0002_booking_uuid_per_partner")]).apps
    OldUnit = old.get_model("octo", "CategoryUnit")
    OldCategory = old.get_model("orders", "VisitorCategory")
    for code, checked in (("adult", False), ("student", True)):
        category = OldCategory.objects.get(category=code)
        assert category.check_at_door is checked
        OldUnit.objects.create(category=category, unit_type="OTHER", min_age=12, max_age=30)

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    found = {
        unit.category.category: (unit.min_age, unit.max_age, unit.id_required)
        for unit in CategoryUnit.objects.select_related("category")
    }
    assert found == {"adult": (12, 30, False), "student": (12, 30, True)}
