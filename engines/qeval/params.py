"""The quantization-evaluation panel's knobs as one value (every view is a state).

The configuration being built is a :class:`~engines.qeval.config.QuantConfig` (its fields are inherited,
so the builder and the engine cannot drift); the panel adds the measurement budget, the configurations
added to the comparison (as text, so a saved view or a tour step restores them), the one the
error-compounding chart follows, and the addition model's view and retraining settings.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from functools import lru_cache
from typing import ClassVar

from engines.core.errors import ValidationError
from engines.core.params import param
from engines.qeval.config import BUDGETS, QuantConfig

ADD_GROUPS = (32, None)
MAX_COMPARED_TEXT = 4000


def _config_fields() -> tuple[str, ...]:
    return tuple(f.name for f in fields(QuantConfig) if f.metadata)


@lru_cache(maxsize=512)
def config_code(config: QuantConfig) -> str:
    """A short, readable text for a configuration: its fields that differ from the baseline.

    Kept per configuration: a comparison names each of its rows on every redraw."""
    base = QuantConfig().to_dict()
    parts = [f"{k}={_text(v)}" for k, v in config.canonical().to_dict().items() if base.get(k) != v]
    return " ".join(parts) or "baseline"


def _text(value) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def config_from_code(code: str, field: str = "compared") -> QuantConfig:
    """Read :func:`config_code` back; a bad text raises ValidationError naming ``field`` and the part."""
    code = code.strip()
    if code == "baseline":
        return QuantConfig()
    defaults = QuantConfig().to_dict()
    values: dict = {}
    for part in code.split():
        key, sep, raw = part.partition("=")
        if not sep or key not in defaults:
            raise ValidationError(field, f"{part!r} is not 'field=value' for a QuantConfig field",
                                  ", ".join(defaults))
        values[key] = _parse(raw, defaults[key], key)
    try:
        return QuantConfig(**{**defaults, **values}).canonical()
    except ValidationError as exc:
        raise ValidationError(field, f"{code!r}: {exc}", exc.allowed) from None


def _parse(raw: str, default, key: str):
    if raw == "none":
        return None
    if raw in ("true", "false"):
        return raw == "true"
    if isinstance(default, str):
        return raw
    try:
        return int(raw)
    except ValueError:
        raise ValidationError(key, f"{raw!r} is not a number", "an integer") from None


def compared_configs(text: str) -> tuple[QuantConfig, ...]:
    """The configurations a ``compared`` text lists (``|``-separated codes), in order, without repeats."""
    out: list[QuantConfig] = []
    for code in (c for c in text.split("|") if c.strip()):
        cfg = config_from_code(code)
        if cfg not in out:
            out.append(cfg)
    return tuple(out)


def with_config(text: str, config: QuantConfig) -> str:
    """``text`` with ``config`` appended (unchanged if already listed)."""
    configs = compared_configs(text)
    if config.canonical() in configs:
        return text
    return "|".join([*map(config_code, configs), config_code(config)])


def without_config(text: str, config: QuantConfig) -> str:
    return "|".join(config_code(c) for c in compared_configs(text) if c != config.canonical())


@dataclass(frozen=True)
class Params(QuantConfig):
    """The configuration being built, plus how the panel measures and shows the comparison."""

    version: ClassVar[int] = 1

    budget: str = param("quick", label="Budget", choices=BUDGETS,
                        tip="quick: ~1k tokens of perplexity, 8 continuations of 128 tokens, 16 items a task; "
                            "full: ~4k tokens, 20 continuations of 256 tokens, up to 40 items a task")
    compared: str = param("", None, MAX_COMPARED_TEXT, label="Added configurations",
                          tip="Configurations added to the shipped comparison, as 'field=value' codes separated by |")
    curve: str = param("weight_bits=8", None, 400, label="Compounding chart follows",
                       tip="The configuration whose survival curve and (1 − p)^t prediction are drawn")
    add_group: int | None = param(32, label="Addition model groups", choices=ADD_GROUPS,
                                  tip="32: one scale per 32 inputs; None: one scale per output channel")
    add_seed: int = param(4, 0, 10_000, label="Training seed", step=1,
                          tip="The seed a retraining run uses (the shipped checkpoint names its own)")

    def __post_init__(self) -> None:
        super().__post_init__()
        compared_configs(self.compared)          # refuse a text that does not parse, naming the field
        config_from_code(self.curve, "curve")

    def config(self) -> QuantConfig:
        """The configuration being built, as the engine takes it."""
        return QuantConfig(**{name: getattr(self, name) for name in _config_fields()})
