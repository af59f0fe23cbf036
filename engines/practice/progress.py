"""A learner's practice progress per lesson, kept in one small versioned JSON file.

Saved atomically (engines.core.writing); read through engines.core.reading (size- and depth-
limited). A broken or newer file raises a ValidationError naming the problem and is never
overwritten by the session that found it, so nothing the learner had is lost."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

from engines.core.errors import ValidationError, require
from engines.core.reading import read_json
from engines.core.versioned import upgrade
from engines.core.writing import atomic_write_text

KIND = "explorer-practice-progress"
VERSION = 1
MIGRATIONS: dict = {}
MAX_BYTES = 2_000_000


@dataclass(frozen=True)
class LessonProgress:
    answered: int = 0
    correct: int = 0
    solved: tuple[str, ...] = ()       # template ids answered right at least once

    def after(self, template_id: str, correct: bool) -> "LessonProgress":
        solved = self.solved if (not correct or template_id in self.solved) else (*self.solved, template_id)
        return LessonProgress(self.answered + 1, self.correct + int(correct), solved)


@dataclass(frozen=True)
class Progress:
    lessons: Mapping[str, LessonProgress] = field(default_factory=dict)

    def of(self, lesson: str) -> LessonProgress:
        return self.lessons.get(lesson, LessonProgress())

    def record(self, lesson: str, template_id: str, correct: bool) -> "Progress":
        return replace(self, lessons={**self.lessons, lesson: self.of(lesson).after(template_id, correct)})

    def to_json_dict(self) -> dict:
        return {"kind": KIND, "schema_version": VERSION,
                "lessons": {k: {"answered": v.answered, "correct": v.correct, "solved": list(v.solved)}
                            for k, v in sorted(self.lessons.items())}}


def _count(raw: Mapping, key: str, where: str) -> int:
    v = raw.get(key, 0)
    require(isinstance(v, int) and not isinstance(v, bool) and v >= 0, f"{where}.{key}", f"{v!r} is not a count",
            "an integer ≥ 0")
    return v


def from_json_dict(doc: Any) -> Progress:
    doc = upgrade(doc, VERSION, MIGRATIONS, "practice progress")
    require(doc.get("kind") == KIND, "kind", f"{doc.get('kind')!r} is not a practice-progress file", KIND)
    lessons = doc.get("lessons", {})
    require(isinstance(lessons, Mapping), "lessons", "must map lesson ids to progress")
    out = {}
    for lesson, raw in lessons.items():
        where = f"lessons.{lesson}"
        require(isinstance(raw, Mapping), where, "must be an object")
        answered, correct = _count(raw, "answered", where), _count(raw, "correct", where)
        require(correct <= answered, f"{where}.correct", f"{correct} right of {answered} answered", f"≤ {answered}")
        solved = raw.get("solved", [])
        require(isinstance(solved, list) and all(isinstance(s, str) for s in solved), f"{where}.solved",
                "must be a list of template ids")
        out[str(lesson)] = LessonProgress(answered, correct, tuple(solved))
    return Progress(out)


def load_progress(path: str | Path) -> Progress:
    """The progress in ``path``; an empty one when the file does not exist yet."""
    p = Path(path)
    if not p.exists():
        return Progress()
    doc = read_json(p, MAX_BYTES, "progress")        # its errors name the file already
    try:
        return from_json_dict(doc)
    except ValidationError as exc:
        raise ValidationError("progress", f"{p.name}: {exc}") from None


def save_progress(progress: Progress, path: str | Path) -> None:
    import json

    atomic_write_text(path, json.dumps(progress.to_json_dict(), indent=1) + "\n", make_parents=True)
