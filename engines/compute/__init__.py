"""Compute, power and cost (lessons D1–D3): scaling laws in closed form and fitted to measured losses,
what a run costs in GPU-hours, megawatts and dollars, and the network a step waits on.

Public API: :func:`training_flops` (6ND), :func:`chinchilla_loss` and :func:`chinchilla_optimum` (fits
``"hoffmann"``, ``"hoffmann-unrounded"``, ``"besiroglu"``), Kaplan's laws, :func:`gpu_hours`,
:func:`implied_mfu`, :func:`train_days`, :func:`facility_power_mw`, :func:`annual_energy_mwh`,
:func:`allreduce_seconds` (ring), :func:`cost_per_gpu_hour` → :class:`CostBreakdown`,
:func:`fit_scaling_law` → :class:`Fit`; and the views' computations :func:`published_runs`,
:func:`scenario_run`, :func:`demand`, :func:`power_budget`, :func:`power_trace`, :func:`step_network`,
:func:`campus_capex`, :func:`measure_machine`; and the panel's one call :func:`study` →
:class:`ComputeStudy`. Figures with their dates and sources: ``assets/compute/``.
"""
from engines.compute.cost import (PART_LABELS, PARTS, CampusCapex, CostBreakdown, campus_capex,
                                  capital_recovery_factor, cost_per_gpu_hour)
from engines.compute.data import CONFIDENCE, CONFIDENCE_LABELS, assumption, data_path, load_table, parse_table
from engines.compute.demand import Demand, demand, serving_traffic, tokens_per_day
from engines.compute.fit import Fit, fit_scaling_law
from engines.compute.measure import (MachineMeasurement, Rate, machine_devices, measure_copy, measure_gemm,
                                     measure_machine)
from engines.compute.network import StepNetwork, allreduce_seconds, step_network
from engines.compute.params import FIT_LABELS, Params
from engines.compute.power import (HOURS_PER_YEAR, NodePower, PowerBudget, PowerTrace, annual_energy_mwh, deals,
                                   facility_power_mw, lead_times, node_power, power_budget, power_trace)
from engines.compute.runs import (RunPoint, ScenarioRun, gpu_hours, implied_mfu, place_run, published_runs,
                                  scenario_run, train_days)
from engines.compute.scaling import (FITS, KAPLAN, PF_DAY, KaplanLaws, LawConstants, chinchilla_frontier,
                                     chinchilla_loss, chinchilla_loss_grid, chinchilla_optimum,
                                     inference_flops_per_token, iso_flop_curve, kaplan_allocation, kaplan_loss_c,
                                     kaplan_loss_d, kaplan_loss_n, optimum_exponents, tokens_per_param_at_optimum,
                                     training_flops)
from engines.compute.study import (CostStudy, ComputeStudy, FitOptimum, FrontierLine, GridStudy, IsoCurve, MachineRates,
                                   MachineStudy, PowerStudy, RateBar, ScalingStudy, scaling_study, study)

__all__ = ["Fit", "fit_scaling_law", "FITS", "FIT_LABELS", "KAPLAN", "PF_DAY", "KaplanLaws", "LawConstants",
           "chinchilla_frontier", "chinchilla_loss", "chinchilla_loss_grid", "chinchilla_optimum",
           "inference_flops_per_token", "iso_flop_curve", "kaplan_allocation", "kaplan_loss_c", "kaplan_loss_d",
           "kaplan_loss_n", "optimum_exponents", "tokens_per_param_at_optimum", "training_flops",
           "gpu_hours", "implied_mfu", "train_days", "RunPoint", "ScenarioRun", "place_run", "published_runs",
           "scenario_run", "facility_power_mw", "annual_energy_mwh", "HOURS_PER_YEAR", "NodePower", "node_power",
           "PowerBudget", "power_budget", "PowerTrace", "power_trace", "lead_times", "deals",
           "allreduce_seconds", "StepNetwork", "step_network", "CostBreakdown", "cost_per_gpu_hour",
           "capital_recovery_factor", "CampusCapex", "campus_capex", "PARTS", "PART_LABELS",
           "Demand", "demand", "serving_traffic", "tokens_per_day", "Rate", "MachineMeasurement", "measure_gemm", "measure_copy",
           "measure_machine", "machine_devices", "CONFIDENCE", "CONFIDENCE_LABELS", "assumption", "data_path", "load_table",
           "parse_table", "Params", "study", "scaling_study", "ComputeStudy", "ScalingStudy", "FrontierLine",
           "IsoCurve", "FitOptimum", "MachineStudy", "MachineRates", "RateBar", "PowerStudy", "CostStudy", "GridStudy"]
