"""What one evaluation measured (frozen), and the versioned JSON form it is cached and shipped in."""
from __future__ import annotations

from dataclasses import dataclass, field

from engines.qeval.config import QuantConfig

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Evaluation:
    """Measurements of one configuration against the baseline (``QuantConfig()``) on one budget.

    ``perplexity``: exp of the mean next-token loss over the held-out text of both domains
    (``perplexity_by_domain`` per domain). ``flip_rate``: share of those positions whose top-1 token
    differs from the baseline's, under teacher forcing; ``mean_kl``: mean KL(baseline ‖ config) in
    nats per token (the baseline's log-probabilities are kept in fp16, so about 1e-5 is the floor); ``flip_profile``: the flip rate per window of ``profile_bin`` positions along the
    text. ``survival[n]``: share of the baseline's greedy continuations that this configuration's
    greedy decoding reproduces exactly through n new tokens. ``task_accuracy[task]``: exact-match
    accuracy of greedy answers, over ``task_items[task]`` items.
    """

    config: QuantConfig
    budget: str
    perplexity: float
    perplexity_by_domain: dict[str, float]
    flip_rate: float
    mean_kl: float
    survival: dict[int, float]
    task_accuracy: dict[str, float]
    task_items: dict[str, int] = field(default_factory=dict)
    flip_profile: tuple[float, ...] = ()
    profile_bin: int = 64
    eval_tokens: int = 0
    weight_error: float = 0.0          # ‖W − Ŵ‖/‖W‖ over the quantized matrices (0 for the baseline)
    bits_per_weight: float = 16.0      # storage of the quantized linears incl. fp16 scale + zero
    device: str = "cpu"
    seconds: float = 0.0               # evaluation wall time (quantization excluded)
    quantize_seconds: float = 0.0      # weight quantization wall time (GPTQ/AWQ calibration included)
    measured: str = ""                 # where and when, e.g. "build machine, CPU (2 cores), 2026-12-01"

    def to_dict(self) -> dict:
        return {"config": self.config.to_dict(), "budget": self.budget, "perplexity": self.perplexity,
                "perplexity_by_domain": dict(self.perplexity_by_domain), "flip_rate": self.flip_rate,
                "mean_kl": self.mean_kl, "survival": {str(k): v for k, v in self.survival.items()},
                "task_accuracy": dict(self.task_accuracy), "task_items": dict(self.task_items),
                "flip_profile": list(self.flip_profile), "profile_bin": self.profile_bin,
                "eval_tokens": self.eval_tokens, "weight_error": self.weight_error,
                "bits_per_weight": self.bits_per_weight, "device": self.device, "seconds": self.seconds,
                "quantize_seconds": self.quantize_seconds, "measured": self.measured}

    @classmethod
    def from_dict(cls, d: dict) -> "Evaluation":
        from engines.core.errors import ValidationError

        try:
            return cls(config=QuantConfig.from_dict(d["config"]), budget=str(d["budget"]),
                       perplexity=float(d["perplexity"]),
                       perplexity_by_domain={str(k): float(v) for k, v in d["perplexity_by_domain"].items()},
                       flip_rate=float(d["flip_rate"]), mean_kl=float(d["mean_kl"]),
                       survival={int(k): float(v) for k, v in d["survival"].items()},
                       task_accuracy={str(k): float(v) for k, v in d["task_accuracy"].items()},
                       task_items={str(k): int(v) for k, v in d.get("task_items", {}).items()},
                       flip_profile=tuple(float(x) for x in d.get("flip_profile", ())),
                       profile_bin=int(d.get("profile_bin", 64)), eval_tokens=int(d.get("eval_tokens", 0)),
                       weight_error=float(d.get("weight_error", 0.0)),
                       bits_per_weight=float(d.get("bits_per_weight", 16.0)), device=str(d.get("device", "cpu")),
                       seconds=float(d.get("seconds", 0.0)), quantize_seconds=float(d.get("quantize_seconds", 0.0)),
                       measured=str(d.get("measured", "")))
        except ValidationError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValidationError("evaluations", f"an entry is malformed: {exc!r}") from None

    def predicted_survival(self, n: int) -> float:
        """(1 − p)^n with p the teacher-forced flip rate: the survival expected if every new token
        differed independently with the same probability (the compounding the panel draws)."""
        return (1.0 - self.flip_rate) ** n

    def survival_at(self, n: int) -> float:
        """Survival through ``n`` tokens (the nearest measured length at or below ``n``)."""
        keys = sorted(k for k in self.survival if k <= n)
        return self.survival[keys[-1]] if keys else 1.0
