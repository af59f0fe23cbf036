"""Compatibility module: the executed mode now lives in :mod:`engines.pipeline.execution`."""
from engines.pipeline.execution import (Action, ExecutedRun, ExecutionCancelled, Simulation, TimedOp,  # noqa: F401
                                        _clone, _elapsed, _gradient_error, _make_stage, _mean_costs, _nullcontext,
                                        _run_order, _stamp, _warm_up, check_orders, execute, run_order, schedule,
                                        simulate, timed_from_measurements)

__all__ = ["ExecutedRun", "ExecutionCancelled", "execute", "run_order"]
