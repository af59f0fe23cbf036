"""The power a cluster draws: GPU boards, the rest of the node, the building (PUE); the energy, bill
and CO2 over a year or one training run; and the synchronised swings of a training job.

- P_IT = nodes × P_node; P_facility = P_IT × PUE (The Green Grid's PUE = facility ÷ IT energy).
  Node power: NVIDIA DGX user guides (``assets/compute/power.json``); a card without a node row gets
  its TDP × the DGX H100 node factor 10.2 kW / (8 × 700 W) = 1.82.
- Energy E = P × hours × load factor; cost = E × price; CO2 = E × grid intensity (the user's).
- Training-run energy = GPU-hours × node kW per GPU × PUE (as the Llama 3.1 model card counts it,
  from TDP adjusted for PUE).
- The power trace: every GPU of a synchronous job computes, then waits on the same collective or the
  same checkpoint at the same moment, so the whole cluster's draw falls and rises together (Llama 3,
  arXiv 2407.21783, §3.3.4: swings of tens of megawatts). Phase lengths come from the step-time engine
  (``engines.memory.step_time``); the draw of a waiting GPU is the user's assumption.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engines.compute.data import load_table
from engines.core.errors import Cancelled, require_int, require_number
from engines.core.hardware import gpu as gpu_spec

HOURS_PER_YEAR = 8760.0
J_PER_KWH = 3.6e6
W_PER_MW = 1e6
KG_PER_T = 1000.0


def facility_power_mw(n_gpus: int, gpus_per_node: int, node_kw: float, pue: float) -> float:
    """Facility MW of ``n_gpus`` in whole nodes of ``gpus_per_node`` drawing ``node_kw`` each, at ``pue``."""
    n = require_int(n_gpus, "n_gpus", 1)
    g = require_int(gpus_per_node, "gpus_per_node", 1)
    kw = require_number(node_kw, "node_kw", 0.0, None, lo_open=True)
    pue = require_number(pue, "pue", 1.0, 5.0)
    return math.ceil(n / g) * kw * pue / 1000.0


def annual_energy_mwh(mw: float, load_factor: float = 1.0) -> float:
    """MWh in a year (8,760 h) at ``mw`` drawn on average ``load_factor`` of the time-averaged nameplate."""
    mw = require_number(mw, "mw", 0.0)
    f = require_number(load_factor, "load_factor", 0.0, 1.0)
    return mw * HOURS_PER_YEAR * f


@dataclass(frozen=True)
class NodePower:
    """A node's nameplate draw and where it comes from."""

    kw: float
    gpus_per_node: int
    gpu_kw: float           # the GPUs' boards alone (TDP × GPUs)
    label: str
    source: str

    @property
    def kw_per_gpu(self) -> float:
        return self.kw / self.gpus_per_node

    @property
    def non_gpu_kw(self) -> float:
        return max(self.kw - self.gpu_kw, 0.0)


def node_power(gpu_key: str, gpus_per_node: int = 8) -> NodePower:
    """The DGX/HGX node of ``gpu_key`` scaled to ``gpus_per_node``, or TDP × the DGX H100 node factor."""
    card = gpu_spec(gpu_key)
    g = require_int(gpus_per_node, "gpus_per_node", 1)
    table = load_table("power.json")
    gpu_kw = card.tdp_w * g / 1000.0
    for node in table["nodes"]:
        if gpu_key in node.gpus:
            kw = node.kw * g / node.gpus_per_node
            return NodePower(kw, g, gpu_kw, node.label, node.citation)
    factor = table["node_factor"]
    return NodePower(gpu_kw * factor.value, g, gpu_kw, f"{g} × {card.label} × {factor.value:g} (derived)",
                     f"{card.tdp_source}; × {factor.citation}")


@dataclass(frozen=True)
class PowerBudget:
    """The scenario's cluster: power at the boards, the IT load and the building; a year and one run.
    Base units: watts, joules, dollars, kilograms of CO2 (the inputs keep the units prices are quoted in)."""

    n_gpus: int
    node: NodePower
    pue: float
    load_factor: float
    gpu_w: float
    it_w: float
    facility_w: float
    annual_j: float
    annual_cost: float
    annual_co2_kg: float
    run_gpu_hours: float
    run_j: float
    run_cost: float
    run_co2_kg: float
    price_per_kwh: float
    grid_t_per_mwh: float


def power_budget(gpu_key: str, n_gpus: int, gpus_per_node: int, pue: float, price_per_kwh: float,
                 grid_t_per_mwh: float, load_factor: float = 1.0, run_gpu_hours: float = 0.0) -> PowerBudget:
    """Power, energy, electricity cost and CO2 of ``n_gpus`` for a year, and of a run of ``run_gpu_hours``."""
    node = node_power(gpu_key, gpus_per_node)
    price = require_number(price_per_kwh, "price_per_kwh", 0.0, 10.0)
    grid = require_number(grid_t_per_mwh, "grid_t_per_mwh", 0.0, 5.0)
    hours = require_number(run_gpu_hours, "run_gpu_hours", 0.0)
    facility_mw = facility_power_mw(n_gpus, gpus_per_node, node.kw, pue)
    year_kwh = annual_energy_mwh(facility_mw, load_factor) * 1000.0
    run_kwh = hours * node.kw_per_gpu * pue * load_factor
    board_kw = n_gpus * node.gpu_kw / node.gpus_per_node
    return PowerBudget(n_gpus, node, pue, load_factor, board_kw * 1000.0, facility_mw / pue * W_PER_MW,
                       facility_mw * W_PER_MW, year_kwh * J_PER_KWH, year_kwh * price, year_kwh / 1000.0 * grid * KG_PER_T,
                       hours, run_kwh * J_PER_KWH, run_kwh * price, run_kwh / 1000.0 * grid * KG_PER_T, price, grid)


@dataclass(frozen=True)
class PowerTrace:
    """The cluster's facility draw through training steps and checkpoints (a step function of time)."""

    t: np.ndarray               # seconds, phase boundaries (len = len(w) + 1)
    w: np.ndarray               # facility watts during each phase
    phase: tuple[str, ...]      # "compute", "communicate" or "checkpoint" per phase
    busy_w: float               # average facility draw while the cluster computes
    waiting_w: float            # while every rank waits
    swing_w: float
    step_seconds: float
    compute_seconds: float
    waiting_seconds: float
    checkpoint_seconds: float
    source: str


def power_trace(scenario, pue: float, waiting_share: float, steps: int = 12, checkpoint_every: int = 6,
                checkpoint_seconds: float = 60.0, efficiency: float = 0.5, cancelled=lambda: False) -> PowerTrace:
    """Facility MW of the scenario's cluster through ``steps`` steps with a checkpoint every
    ``checkpoint_every`` of them. Computing GPUs draw their TDP, waiting ones ``waiting_share`` of it,
    the rest of the node its share throughout. Waits every rank shares at once (the exposed gradient
    collective, offload traffic, checkpoints) dip the whole cluster together; the pipeline bubble and
    tensor-parallel collectives idle different GPUs at different moments, so they only lower the
    average draw of the computing phase."""
    from engines.memory.step_time import TimeKnobs, step_time

    steps = require_int(steps, "steps", 1, 10_000)
    every = require_int(checkpoint_every, "checkpoint_every", 1, 10_000)
    ck = require_number(checkpoint_seconds, "checkpoint_seconds", 0.0, 86_400.0)
    share = require_number(waiting_share, "waiting_share", 0.0, 1.0)
    pue = require_number(pue, "pue", 1.0, 5.0)
    st = step_time(scenario, knobs=TimeKnobs(efficiency=efficiency))
    busy_s = st.compute + st.recompute + st.optimizer
    spread_s = st.bubble + st.tp_comm              # idle slots staggered across stages and layers
    sync_s = st.dp_comm + st.offload               # every rank waits on the same gradient collective
    node = node_power(scenario.gpu, scenario.gpus_per_node)
    nodes = math.ceil(scenario.n_gpus / scenario.gpus_per_node)
    busy = nodes * node.kw * pue * 1000.0
    waiting = nodes * (node.non_gpu_kw + node.gpu_kw * share) * pue * 1000.0
    computing = (busy * busy_s + waiting * spread_s) / (busy_s + spread_s)
    busy_s += spread_s
    wait_s = sync_s
    t, w, phase = [0.0], [], []
    for i in range(steps):
        if cancelled():
            raise Cancelled()
        for name, secs, level in (("compute", busy_s, computing), ("communicate", wait_s, waiting)):
            if secs > 0:
                t.append(t[-1] + secs)
                w.append(level)
                phase.append(name)
        if (i + 1) % every == 0 and ck > 0:
            t.append(t[-1] + ck)
            w.append(waiting)
            phase.append("checkpoint")
    return PowerTrace(np.array(t), np.array(w), tuple(phase), computing, waiting, computing - waiting, st.total,
                      busy_s, wait_s, ck,
                      "phase lengths: step-time engine (PaLM FLOPs, ring collectives, 1F1B bubble); node power: "
                      f"{node.source}; waiting draw {share:.0%} of TDP is your assumption")


def lead_times():
    """The published lead times (years) of what connecting a large load waits for (``power.json``)."""
    return load_table("power.json")["lead_times"]


def deals():
    """Dated gas and nuclear supply deals for data centres (``power.json``)."""
    return load_table("power.json")["deals"]
