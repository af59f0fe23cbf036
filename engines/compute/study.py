"""What the compute panel shows, computed in one call: the scaling view (the scenario's run, the
published runs, every fit's compute-optimal frontier, iso-FLOP curves, the fits at Chinchilla's budget),
training against inference, the machine's network, power, the cost of a GPU-hour and the grid.

The panel's knobs arrive in display units (B tokens, %, ¢/kWh, kg/MWh, k$, M$/MW); :func:`study`
converts them once, here, so the quantities in :class:`ComputeStudy` are in base units: FLOP,
parameters, tokens, seconds, watts, joules, dollars, kilograms of CO2, fractions; the views format them.
Three figures keep the unit the field is named for, as the sources count them: GPU-hours, days (of
training and of serving) and dollars per GPU-hour."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from engines.compute.cost import CampusCapex, CostBreakdown, campus_capex, cost_per_gpu_hour
from engines.compute.data import Consumption, Cpu, Deal, LeadTime, Share, load_table
from engines.compute.demand import Demand, demand, tokens_per_day
from engines.compute.network import StepNetwork, step_network
from engines.compute.params import Params
from engines.compute.power import NodePower, PowerBudget, PowerTrace, deals, lead_times, node_power, power_budget, power_trace
from engines.compute.runs import RunPoint, ScenarioRun, published_runs, scenario_run
from engines.compute.scaling import (FITS, LawConstants, chinchilla_frontier, chinchilla_optimum, iso_flop_curve,
                                     kaplan_allocation, kaplan_loss_n)
from engines.core.hardware import GPU, gpu as gpu_spec
from engines.core.scenario import Scenario

def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


C_AXIS = _frozen(np.geomspace(1e18, 1e27, 60))
"""Training compute (FLOP) over which the frontier is drawn."""
KAPLAN_N_AXIS = _frozen(np.geomspace(1e7, 1e13, 60))
"""Model sizes over which Kaplan's L(N) is drawn."""
ISO_BUDGETS = (1e19, 1e21, 1e23, 1e25)
"""The fixed budgets (FLOP) of the iso-FLOP curves; the scenario's own budget is added last."""
ISO_POINTS, ISO_SPAN = 120, 30.0
CHINCHILLA_C = 5.76e23
"""Chinchilla's training budget (Hoffmann et al. 2022, Table 3): where the fits are compared."""
TRACE_INTERVALS = 2
"""The power trace shows two checkpoint intervals."""


@dataclass(frozen=True)
class FrontierLine:
    """One fit's compute-optimal allocation (Hoffmann et al. 2022, Eq. 4) over :data:`C_AXIS`."""

    fit: str
    chosen: bool
    flop: np.ndarray
    params: np.ndarray
    tokens: np.ndarray


@dataclass(frozen=True)
class IsoCurve:
    """Loss against model size at one fixed budget (D = C/(6N); Hoffmann et al. 2022, Fig. 3)."""

    flop: float
    params: np.ndarray
    loss: np.ndarray
    optimum_params: float
    optimum_loss: float
    scenario: bool                 # the scenario's own budget


@dataclass(frozen=True)
class FitOptimum:
    """One fit's constants and its optimum at Chinchilla's budget :data:`CHINCHILLA_C`."""

    fit: str
    constants: LawConstants
    chosen: bool
    params: float
    tokens: float

    @property
    def tokens_per_param(self) -> float:
        return self.tokens / self.params


@dataclass(frozen=True)
class ScalingStudy:
    """D1: the scenario's run, the published runs and the curves of every fit."""

    fit: str
    runs: tuple[RunPoint, ...]
    scenario: ScenarioRun
    frontier: tuple[FrontierLine, ...]
    kaplan_flop: np.ndarray          # Kaplan's N ∝ C^0.73 through GPT-3's point (empty without GPT-3)
    kaplan_params: np.ndarray
    kaplan_loss_params: np.ndarray   # Kaplan L(N), the slope only
    kaplan_loss: np.ndarray
    iso: tuple[IsoCurve, ...]
    iso_loss_low: float              # lowest loss on any iso curve
    iso_loss_high: float             # the highest curve's 60th percentile: the chart's upper bound
    optima: tuple[FitOptimum, ...]

    @property
    def chosen(self) -> FrontierLine:
        return next(f for f in self.frontier if f.chosen)

    @property
    def optimum_tokens_per_param(self) -> float:
        """Tokens per parameter the chosen fit would spend the scenario's compute on."""
        p = self.scenario.point
        return p.optimum_D / p.optimum_N


@dataclass(frozen=True)
class RateBar:
    """One rate of the machine view: FLOP/s or bytes/s, where it comes from ("measured", "datasheet"
    or "derived") and, under the GPU's datasheet peak, how many times under it (0 otherwise): a log
    axis hides ratios from the eye. ``value`` None: not measured yet."""

    label: str
    value: float | None
    source: str
    below_peak: float = 0.0


@dataclass(frozen=True)
class MachineRates:
    """This machine's measured rates beside the scenario's GPU and the catalogue's CPUs."""

    flops: tuple[RateBar, ...]
    bytes: tuple[RateBar, ...]
    cpu_below_gpu: float | None      # the GPU's bf16 peak over this CPU's measured fp32 GEMM rate


@dataclass(frozen=True)
class MachineStudy:
    """D2: the scenario's GPU, its gradient all-reduce against a step, and the market figures."""

    gpu: GPU
    network: StepNetwork
    cpus: tuple[Cpu, ...]
    share: tuple[Share, ...]

    def rates(self, measured=None) -> MachineRates:
        """``measured``: a :class:`engines.compute.measure.MachineMeasurement` or None (not measured yet).
        GPU peaks from its datasheet (``engines.core.hardware``), CPU rows derived in the catalogue."""
        get = measured.get if measured is not None else (lambda _device, _kind: None)
        cpu_g, cpu_c, cuda_g, cuda_c = get("cpu", "gemm"), get("cpu", "copy"), get("cuda", "gemm"), get("cuda", "copy")
        flops = [(f"this CPU, {cpu_g.threads if cpu_g else 2} threads, fp32 (measured)", cpu_g.value if cpu_g else None,
                  "measured")]
        moved = [("this CPU, copy (measured)", cpu_c.value if cpu_c else None, "measured")]
        if cuda_g is not None:
            flops.append((f"{cuda_g.device_name}, bf16 (measured)", cuda_g.value, "measured"))
            moved.append((f"{cuda_c.device_name}, copy (measured)", cuda_c.value if cuda_c else None, "measured"))
        peak, hbm = self.gpu.peak_flops("bf16"), self.gpu.bandwidth_gbps * 1e9
        flops.append((f"{self.gpu.label}, bf16 (datasheet)", peak, "datasheet"))
        moved.append((f"{self.gpu.label}, HBM (datasheet)", hbm, "datasheet"))
        for c in self.cpus:
            flops.append((f"{c.label}, {c.precision} (derived)", c.flops, "derived"))
            moved.append((f"{c.label}, DDR5 (derived)", c.bytes_per_s, "derived"))

        def bars(rows, top: float) -> tuple[RateBar, ...]:
            return tuple(RateBar(label, v, source, top / v if v and 0 < v < top else 0.0) for label, v, source in rows)
        return MachineRates(bars(flops, peak), bars(moved, hbm), peak / cpu_g.value if cpu_g and cpu_g.value else None)


@dataclass(frozen=True)
class PowerStudy:
    """D3: the cluster's power, a year's and the run's energy, cost and CO2, and its draw through steps."""

    gpu: GPU
    budget: PowerBudget
    trace: PowerTrace
    run_label: str
    sources: tuple[tuple[str, str], ...]     # (figure, where it comes from)


@dataclass(frozen=True)
class CostStudy:
    """D2: dollars per utilised GPU-hour part by part, the run's bill and the campus's capital."""

    breakdown: CostBreakdown
    node: NodePower
    run_gpu_hours: float
    run_label: str
    run_dollars: float               # the whole run at the breakdown's total
    run_power_dollars: float         # of which electricity
    campus: CampusCapex
    sources: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class GridStudy:
    """D3: what connecting the cluster waits for, the deals, and the world's consumption."""

    facility_w: float
    lead_times: tuple[LeadTime, ...]
    deals: tuple[Deal, ...]
    consumption: tuple[Consumption, ...]


@dataclass(frozen=True)
class ComputeStudy:
    """Everything the compute panel draws for one scenario and one set of knobs."""

    scenario: Scenario
    params: Params
    scaling: ScalingStudy
    demand: Demand
    machine: MachineStudy
    power: PowerStudy
    cost: CostStudy
    grid: GridStudy

    @property
    def run(self) -> ScenarioRun:
        return self.scaling.scenario


@lru_cache(maxsize=8)
def _fit_curves(fit: str) -> tuple[tuple[FrontierLine, ...], tuple[FitOptimum, ...], np.ndarray]:
    """What depends on the chosen fit only (and on no file): every fit's frontier, the fits' optima at
    Chinchilla's budget and Kaplan's L(N). Cached, read-only, so an edit that keeps the fit reuses them."""
    frontier = []
    for key in FITS:
        n, d, _ = chinchilla_frontier(C_AXIS, key)
        frontier.append(FrontierLine(key, key == fit, C_AXIS, _frozen(n), _frozen(d)))
    optima = tuple(FitOptimum(key, f, key == fit, *chinchilla_optimum(CHINCHILLA_C, key)) for key, f in FITS.items())
    return tuple(frontier), optima, _frozen(np.array([kaplan_loss_n(x) for x in KAPLAN_N_AXIS]))


def scaling_study(scenario: Scenario, tokens: float, mfu: float, fit: str) -> ScalingStudy:
    """The D1 view: 6ND and GPU-hours of the scenario's run, the published runs placed by ``fit``,
    every fit's frontier, Kaplan's slope through GPT-3, and iso-FLOP curves at :data:`ISO_BUDGETS` and
    the scenario's budget."""
    run = scenario_run(scenario, tokens, mfu, fit)
    runs = published_runs(fit)
    frontier, optima, kaplan_loss = _fit_curves(fit)
    gpt3 = next((x for x in runs if x.label.startswith("GPT-3")), None)
    k_flop, k_params = (C_AXIS, kaplan_allocation(C_AXIS, gpt3.flop, gpt3.N)[0]) if gpt3 else (np.empty(0), np.empty(0))
    iso = []
    budgets = [*ISO_BUDGETS, run.point.flop_6nd]
    for k, c in enumerate(budgets):
        n, loss = iso_flop_curve(c, fit, ISO_POINTS, ISO_SPAN)
        iso.append(IsoCurve(c, n, loss, chinchilla_optimum(c, fit)[0], float(np.min(loss)), k == len(budgets) - 1))
    return ScalingStudy(fit, runs, run, frontier, k_flop, k_params, KAPLAN_N_AXIS, kaplan_loss, tuple(iso),
                        min(c.optimum_loss for c in iso), max(float(np.percentile(c.loss, 60)) for c in iso), optima)


def _cite(row: str) -> str:
    return next(r.citation for r in load_table("assumptions.json")["rows"] if r.id == row)


def _power_sources(p: Params, card: GPU, b: PowerBudget, trace: PowerTrace, gpu_hours: float):
    return ((f"{card.label}: {card.tdp_w:g} W board power", card.tdp_source),
            (f"node {b.node.kw:g} kW ({b.node.label})", b.node.source),
            (f"PUE {p.pue:.2f}", "your input; " + _cite("pue")),
            (f"{p.price_c_per_kwh:.2f} ¢/kWh", "your input; default " + _cite("price_per_kwh")),
            (f"{p.grid_kg_per_mwh} kg CO2/MWh", "your input; default " + _cite("grid_t_per_mwh")),
            (f"average draw {p.load_pct}% of nameplate", "your input; default " + _cite("load_factor")),
            (f"run: {gpu_hours:,.0f} GPU-hours", "the scaling view's run: 6ND at your MFU"),
            ("synchronised swings of tens of MW", load_table("power.json")["swings"].citation),
            ("power trace", trace.source))


COST_INPUTS = ("server_capex_per_gpu", "server_life_years", "facility_capex_per_mw", "facility_life_years",
               "utilisation", "opex_per_gpu_hour", "rate", "pue", "price_per_kwh")


def _cost_sources(node: NodePower, gpu_hours: float):
    rows = {r.id: r for r in load_table("assumptions.json")["rows"]}
    return tuple((f"{rows[k].label}: your input", f"default {rows[k].citation}") for k in COST_INPUTS) + (
        (f"node {node.kw_per_gpu:.3f} kW per GPU", node.source),
        ("cost per GPU-hour = amortised capex / (8,760 × utilisation) + kW × PUE × price + operations",
         "formula in engines/compute/cost.py (capital recovery factor for a cost of capital)"),
        (f"{gpu_hours:,.0f} GPU-hours", "the scaling view's run: 6ND at your MFU"))


def study(scenario: Scenario, params: Params | None = None) -> ComputeStudy:
    """The compute panel's one call: every view's result for ``scenario`` and the knobs ``params``.
    Raises :class:`~engines.core.errors.ValidationError` naming the field an engine rejects."""
    p = params if params is not None else Params()
    sc = scenario
    scaling = scaling_study(sc, p.tokens, p.mfu, p.fit)
    run = scaling.scenario
    label = sc.arch.label
    efficiency = p.efficiency_pct / 100
    market = load_table("market.json")
    machine = MachineStudy(gpu_spec(sc.gpu), step_network(sc, efficiency), tuple(market["cpus"]),
                           tuple(market["share"]))
    price_per_kwh = p.price_c_per_kwh / 100
    budget = power_budget(sc.gpu, sc.n_gpus, sc.gpus_per_node, p.pue, price_per_kwh, p.grid_kg_per_mwh / 1000,
                          p.load_pct / 100, run.gpu_hours)
    trace = power_trace(sc, p.pue, p.waiting_pct / 100, TRACE_INTERVALS * p.checkpoint_every, p.checkpoint_every,
                        p.checkpoint_s, efficiency)
    power = PowerStudy(machine.gpu, budget, trace, f"Training {label} on {p.tokens_b:,.0f}B tokens",
                       _power_sources(p, machine.gpu, budget, trace, run.gpu_hours))
    node = node_power(sc.gpu, sc.gpus_per_node)
    server_capex, facility_per_mw = p.server_capex_k * 1000, p.facility_m_per_mw * 1e6
    breakdown = cost_per_gpu_hour(server_capex, p.server_life_years, facility_per_mw, node.kw_per_gpu,
                                  p.facility_life_years, p.pue, price_per_kwh, p.utilisation_pct / 100,
                                  p.opex_per_gpu_hour, p.rate_pct / 100)
    bill = breakdown.times(run.gpu_hours)
    campus = campus_capex(sc.n_gpus, server_capex, node.kw_per_gpu * sc.n_gpus / 1000, facility_per_mw)
    cost = CostStudy(breakdown, node, run.gpu_hours, f"training {label}", bill["total"], bill["power"], campus,
                     _cost_sources(node, run.gpu_hours))
    grid = GridStudy(budget.facility_w, tuple(lead_times()), tuple(deals()),
                     tuple(load_table("power.json")["consumption"]))
    dem = demand(run.point.N, p.tokens, tokens_per_day(p.serve_req_per_s, p.tokens_per_request))
    return ComputeStudy(sc, p, scaling, dem, machine, power, cost, grid)
