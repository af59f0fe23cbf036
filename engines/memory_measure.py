"""Compatibility: the measured mode moved to :mod:`engines.memory.measure` (every name stays importable here)."""
from engines.memory.measure import (MEASURE_CATEGORIES, ComparisonRow, MeasureConfig, MeasuredMemory,  # noqa: F401
                                    MeasurementCancelled, _check, _explain, _storage_key, analytic_for, build_model,
                                    measure_training_step, scaled_down_arch)
