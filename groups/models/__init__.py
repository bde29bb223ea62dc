"""Groups' models by concern: what a group pays (`prices`), tour programmes and their guides
(`tours`), a group's request and visit (`requests`), and its emails (`emails`). Every importer
takes them from here."""

from .emails import GroupEmail, GroupEmailKind
from .prices import ChaperoneRule, GroupRate
from .requests import GroupLine, GroupRequest, GroupStatus, OrganisationKind
from .tours import (
    AssignmentState,
    FeePer,
    Guide,
    GuideAbsence,
    GuideAssignment,
    GuideAvailability,
    TourProgramme,
)

__all__ = [
    "AssignmentState",
    "ChaperoneRule",
    "FeePer",
    "GroupEmail",
    "GroupEmailKind",
    "GroupLine",
    "GroupRate",
    "GroupRequest",
    "GroupStatus",
    "Guide",
    "GuideAbsence",
    "GuideAssignment",
    "GuideAvailability",
    "OrganisationKind",
    "TourProgramme",
]
