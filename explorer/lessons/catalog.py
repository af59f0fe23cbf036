"""The syllabus as the app knows it: eight courses, thirty lessons with stable ids, their titles and
summaries in the app's own words, the panels each uses, and which ones have a tour yet.

Qt-free. The data is ``assets/tours/catalog.json``; a lesson is *ready* when its tour file
``assets/tours/<ID>.json`` ships and every panel it names exists, else *coming*.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from engines.core.assets import asset_path, load_json_asset
from engines.core.errors import ValidationError
from explorer.lessons.tour import Tour, load_tour

READY, COMING = "ready", "coming"


@dataclass(frozen=True)
class Lesson:
    id: str
    course: str
    title: str
    summary: str
    panels: tuple[str, ...]
    status: str              # READY or COMING

    @property
    def ready(self) -> bool:
        return self.status == READY


@dataclass(frozen=True)
class Course:
    id: str
    title: str
    lessons: tuple[Lesson, ...]


def tour_path(lesson_id: str):
    return asset_path("tours", f"{lesson_id}.json")


@lru_cache(maxsize=None)
def _catalog(panel_keys: tuple[str, ...]) -> tuple[Course, ...]:
    doc = load_json_asset("tours", "catalog.json")
    courses = []
    for c in doc["courses"]:
        lessons = tuple(
            Lesson(lesson["id"], c["id"], lesson["title"], lesson["summary"], tuple(lesson["panels"]),
                   READY if tour_path(lesson["id"]).exists() and set(lesson["panels"]) <= set(panel_keys)
                   else COMING)
            for lesson in c["lessons"])
        courses.append(Course(c["id"], c["title"], lessons))
    return tuple(courses)


def courses(panel_keys: Iterable[str] | None = None) -> tuple[Course, ...]:
    """Every course and lesson, in syllabus order; ``panel_keys`` are the panels this app has
    (default: the registered ones)."""
    if panel_keys is None:
        import panels

        panel_keys = [row[1] for row in panels.REGISTRY]
    return _catalog(tuple(sorted(panel_keys)))


def lessons(panel_keys: Iterable[str] | None = None) -> list[Lesson]:
    return [lesson for c in courses(panel_keys) for lesson in c.lessons]


def lesson(lesson_id: str, panel_keys: Iterable[str] | None = None) -> Lesson:
    """The lesson with id ``lesson_id`` (case-insensitive), or a ValidationError listing the ids."""
    every = lessons(panel_keys)
    for item in every:
        if item.id.lower() == str(lesson_id).strip().lower():
            return item
    raise ValidationError("lesson", f"no lesson {lesson_id!r}", ", ".join(x.id for x in every))


def next_lesson(lesson_id: str, panel_keys: Iterable[str] | None = None) -> Lesson | None:
    """The next ready lesson of ``lesson_id``'s course (what its last step offers), or None at the
    course's end or for a tour that is no lesson of the catalogue."""
    for c in courses(panel_keys):
        ids = [x.id for x in c.lessons]
        if lesson_id in ids:
            return next((x for x in c.lessons[ids.index(lesson_id) + 1:] if x.ready), None)
    return None


def lesson_tour(lesson_id: str) -> Tour:
    """The shipped tour of a ready lesson (FileProblem if its file is damaged)."""
    item = lesson(lesson_id)
    if not item.ready:
        raise ValidationError("lesson", f"{item.id} has no tour yet (coming with its panel)",
                              ", ".join(x.id for x in lessons() if x.ready))
    return load_tour(tour_path(item.id))
