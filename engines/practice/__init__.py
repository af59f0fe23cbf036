"""Practice: exercises the engines set and mark.

Templates (data, ``assets/exercises/<lesson>.json``) name a registered computation; drawing a
variant calls it with seeded parameters and gets the answer, the worked steps with their sources,
the modelled mistakes and the *Show me* view; :func:`mark` compares a learner's answer. Qt-free."""
from engines.practice.exercise import Mark, Variant, draw, format_number, mark
from engines.practice.model import DIRECTIONS, KINDS, KnobResult, Mistake, Option, Outcome, Redraw, Step
from engines.practice.schema import SCHEMA_VERSION, ParamSpec, Template, lesson_templates, load_file, shipped_lessons

__all__ = ["Mark", "Variant", "draw", "mark", "format_number", "DIRECTIONS", "KINDS", "KnobResult", "Mistake",
           "Option", "Outcome", "Redraw", "Step", "SCHEMA_VERSION", "ParamSpec", "Template", "lesson_templates",
           "load_file", "shipped_lessons"]
