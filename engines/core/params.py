"""Declared panel parameters: a frozen dataclass whose fields carry their label, unit and range.

Each topic package exports ``Params`` built on :class:`ParamsBase` with :func:`param` fields, so
validation, the widgets that edit a field and the saved view all read one declaration (settings
as data, as pyqtgraph's ParameterTree does). ``Params(**asdict(p)) == p`` always holds. The shared
scenario (:mod:`engines.core.scenario`) declares its editable fields the same way.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import MISSING, Field, asdict, dataclass, field, fields
from typing import Any, ClassVar

from engines.core.errors import ValidationError, require_bool, require_choice, require_int, require_number


def param(default: Any, lo: float | None = None, hi: float | None = None, *, label: str, unit: str = "",
          step: float = 1, decimals: int = 0, choices: tuple | None = None, tip: str = "",
          choice_labels: Mapping | None = None, lo_open: bool = False) -> Any:
    """A parameter field: its default, allowed range (or ``choices``, shown as ``choice_labels`` where
    given; for text, ``hi`` is the longest allowed; ``lo_open``: ``lo`` itself is excluded) and how a
    control shows it."""
    return field(default=default, metadata={"lo": lo, "hi": hi, "label": label, "unit": unit, "step": step,
                                            "decimals": decimals, "choices": choices, "tip": tip,
                                            "choice_labels": dict(choice_labels) if choice_labels else None,
                                            "lo_open": lo_open})


@functools.cache
def _declared(cls: type) -> dict[str, Field]:
    """``cls``'s :func:`param` fields by name, in declaration order: read once per class (``fields()``
    builds its tuple on every call, and engines ask for a limit thousands of times per edit)."""
    return {f.name: f for f in fields(cls) if "label" in f.metadata}


def validate_fields(obj: Any) -> None:
    """Check every :func:`param` field of dataclass ``obj`` against its declaration (numbers are
    normalised in place); a bad value raises a :class:`ValidationError` naming the field and range."""
    for f in _declared(type(obj)).values():
        m, value = f.metadata, getattr(obj, f.name)
        if m["choices"] is not None:
            require_choice(value, f.name, m["choices"])
        elif isinstance(f.default, bool):
            require_bool(value, f.name)
        elif isinstance(f.default, str):
            if not isinstance(value, str) or (m["hi"] is not None and len(value) > m["hi"]):
                raise ValidationError(f.name, f"expected text of at most {m['hi'] or 'any'} characters, "
                                              f"got {type(value).__name__}", "text")
        elif isinstance(f.default, int):
            object.__setattr__(obj, f.name, require_int(value, f.name, int(m["lo"]), int(m["hi"])))
        elif isinstance(f.default, float):
            object.__setattr__(obj, f.name, require_number(value, f.name, m["lo"], m["hi"],
                                                           lo_open=m.get("lo_open", False)))


def spec_of(cls: type, name: str) -> dict:
    """The declaration of :func:`param` field ``name`` of dataclass ``cls`` (label, unit, lo, hi, step,
    decimals, choices, choice_labels, lo_open, tip)."""
    f = _declared(cls).get(name)
    if f is None:
        raise ValidationError(name, f"is not a parameter of {cls.__qualname__}")
    return dict(f.metadata)


def declared_fields(cls: type) -> list[str]:
    """The :func:`param` fields of dataclass ``cls``, in declaration order."""
    return list(_declared(cls))


@dataclass(frozen=True)
class ParamsBase:
    """Validates every :func:`param` field on construction; bad values name the field and the range.

    ``version`` counts the changes of the fields' names and meanings; ``migrations[i]`` turns a dict of
    version ``i + 1`` into one of version ``i + 2`` (``migrate_1``, ``migrate_2``, … in order), so a
    saved view or a tour written by an older app still opens. A step receives only the fields that
    were saved (a tour step stores those that differ from the defaults) and must not modify its input.
    """

    version: ClassVar[int] = 1
    migrations: ClassVar[tuple[Callable[[dict], dict], ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if len(cls.migrations) != cls.version - 1:
            raise TypeError(f"{cls.__qualname__}: version {cls.version} needs {cls.version - 1} migration steps, "
                            f"has {len(cls.migrations)}")

    def __post_init__(self) -> None:
        validate_fields(self)

    @classmethod
    def spec(cls, name: str) -> dict:
        """The declaration of field ``name`` (label, unit, lo, hi, step, decimals, choices, tip)."""
        return spec_of(cls, name)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def upgrade(cls, data: Any, version: Any, owner: str = "params") -> dict:
        """``data`` saved at ``version`` as a dict of the current version, one migration at a time.

        A version newer than this class, or not a version at all, raises a :class:`ValidationError`
        on ``owner`` (say ``params.serving``) naming both versions; ``data`` is never modified."""
        if not isinstance(data, dict):
            raise ValidationError(owner, f"expected an object, got {type(data).__name__}")
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise ValidationError(owner, f"parameters version {version!r} is not a version", f"1…{cls.version}")
        if version > cls.version:
            raise ValidationError(owner, f"saved with parameters version {version}, newer than this app reads "
                                         f"(version {cls.version})", f"1…{cls.version}")
        out = dict(data)
        for step in cls.migrations[version - 1:]:
            out = dict(step(out))
        return out

    @classmethod
    def from_dict(cls, data: Any, version: int | None = None) -> "ParamsBase":
        """Rebuild from :meth:`to_dict` (saved at ``version``, migrated first; ``None``: the current one);
        unknown keys are refused, missing ones take their defaults."""
        if version is not None:
            data = cls.upgrade(data, version)
        if not isinstance(data, dict):
            raise ValidationError("params", f"expected an object, got {type(data).__name__}")
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ValidationError(unknown[0], f"is not a parameter of {cls.__qualname__}", ", ".join(sorted(names)))
        return cls(**data)


def defaults_of(cls: type[ParamsBase]) -> dict:
    return {f.name: f.default for f in fields(cls) if f.default is not MISSING}
