"""Compute, power and cost (lessons D1–D3): scaling laws published and measured, training against
inference, the data centre as one computer and the cost of its GPU-hour, the power it draws and the
grid it waits for.

A thin view over :mod:`engines.compute`. The closed forms are computed inline on every edit; the
machine measurement runs in the "measure" job slot, the scaling experiment in its own view's slots.
"""
from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QLabel, QPushButton, QVBoxLayout, QWidget

from engines.compute import (FIT_LABELS, Params, campus_capex, cost_per_gpu_hour, deals, demand, lead_times,
                             load_table, machine_devices, measure_machine, node_power, power_budget, power_trace,
                             published_runs, scenario_run, step_network, tokens_per_day)
from engines.compute.data import data_path
from engines.core.hardware import gpu as gpu_spec
from explorer.binder import ParamBinder, param_slider
from explorer.panel import Panel
from explorer.ui.flow_layout import FlowLayout, keep_together
from explorer.ui.widgets import ErrorLabel, Tabs
from panels._compute_cost import CostResult, CostView
from panels._compute_demand import DemandView
from panels._compute_experiment import ExperimentView
from panels._compute_machine import MachineView
from panels._compute_power import GridView, PowerView
from panels._compute_scaling import ScalingResult, ScalingView

TAB_TITLES = ("Scaling laws (D1)", "Scaling experiment (D1)", "Training vs inference (D1)", "One computer (D2)",
              "Cost of a GPU-hour (D2)", "Power (D3)", "Waiting for the grid (D3)")
SCALING_FIELDS = frozenset({"fit", "tokens_b", "mfu_pct"})
DEMAND_FIELDS = frozenset({"tokens_b", "serve_req_per_s", "tokens_per_request"})
MACHINE_FIELDS = frozenset({"efficiency_pct"})
POWER_FIELDS = frozenset({"pue", "load_pct", "price_c_per_kwh", "grid_kg_per_mwh", "waiting_pct", "checkpoint_every",
                          "checkpoint_s", "efficiency_pct", "tokens_b", "mfu_pct"})
COST_FIELDS = frozenset({"server_capex_k", "server_life_years", "facility_m_per_mw", "facility_life_years",
                         "utilisation_pct", "opex_per_gpu_hour", "rate_pct", "pue", "price_c_per_kwh", "tokens_b",
                         "mfu_pct"})
ALL_FIELDS = SCALING_FIELDS | DEMAND_FIELDS | MACHINE_FIELDS | POWER_FIELDS | COST_FIELDS
PUE_PRESETS_SHOWN = 3


class ComputePanel(Panel):
    key = "compute"
    title = "Compute, power and cost"
    order = 65
    Params = Params
    reads = frozenset({"model", "arch", "gpu", "n_gpus", "gpus_per_node", "tp", "pp", "internode_gbps", "strategy",
                       "micro_batch", "seq_len", "grad_accum", "precision", "recompute", "optimizer",
                       "offload_optimizer", "offload_params", "offload_target", "sequence_parallel"})
    lesson = "compute.md"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.measure_tasks = self.jobs("measure")
        self.measured = None
        self.results: dict[str, object] = {}
        self._measure_timer = self.debounce(self._start_measure, 0)
        self.error = ErrorLabel()
        self.sliders = {}
        self.tabs = Tabs()
        self.body.addWidget(self.error)
        self.body.addWidget(self.tabs, 1)
        self.tabs.addTab(self._scaling_page(), TAB_TITLES[0])
        self.tabs.addTab(self._experiment_page(), TAB_TITLES[1])
        self.tabs.addTab(self._demand_page(), TAB_TITLES[2])
        self.tabs.addTab(self._machine_page(), TAB_TITLES[3])
        self.tabs.addTab(self._cost_page(), TAB_TITLES[4])
        self.tabs.addTab(self._power_page(), TAB_TITLES[5])
        self.tabs.addTab(self._grid_page(), TAB_TITLES[6])
        self.tabs.currentChanged.connect(self._tab_shown)
        self.binder = ParamBinder(self, {**self.sliders, "fit": self.fit_combo, "gemm_n": self.gemm_combo},
                                  choices={"fit": FIT_LABELS, "gemm_n": {n: f"n = {n}" for n in Params.spec("gemm_n")["choices"]}},
                                  error=self.error.show_error)
        for name, widget in self.sliders.items():
            self.name_view(name, widget, Params.spec(name)["label"])
        self.name_view("fit", self.fit_combo, "Chinchilla fit")

    # --- pages --------------------------------------------------------------------------------------
    def _page(self, fields, view: QWidget, extra=()) -> QWidget:
        page = QWidget()
        lay = QVBoxLayout(page)
        lay.setContentsMargins(4, 4, 4, 4)
        row = FlowLayout()
        for name in fields:
            self.sliders[name] = param_slider(Params, name)
            row.addWidget(self.sliders[name])
        for w in extra:
            row.addWidget(w)
        lay.addLayout(row)
        lay.addWidget(view, 1)
        return page

    def _scaling_page(self) -> QWidget:
        v = self.scaling_view = ScalingView(self.theme)
        self.fit_combo = QComboBox()
        self.fit_combo.addItems(list(FIT_LABELS.values()))
        self.fit_combo.setAccessibleName("Chinchilla fit")
        self.fit_combo.setToolTip(Params.spec("fit")["tip"])
        self.mfu_link = QPushButton("Use the scale panel's MFU")
        self.mfu_link.setToolTip("Take the MFU assumed in the Training at scale panel")
        self.mfu_link.clicked.connect(self._take_scale_mfu)
        for name, widget, title in (("scaling", v, "Scaling laws, published runs and the scenario's run"),
                                    ("frontier", v.frontier_plot, "Compute-optimal size against compute"),
                                    ("isoflop", v.iso_plot, "Iso-FLOP curves"),
                                    ("scaling_readout", v.text, "The scenario's run: C = 6ND, GPU-hours, days"),
                                    ("scaling_tables", v.tables, "Published runs and the three fits"),
                                    ("scaling_sources", v.sources, "Sources of the scaling view")):
            self.name_view(name, widget, title)
        return self._page(("tokens_b", "mfu_pct"), v, (keep_together(QLabel("Fit:"), self.fit_combo), self.mfu_link))

    def _experiment_page(self) -> QWidget:
        self.experiment_view = ExperimentView(self)
        v = self.experiment_view
        for name, widget, title in (("experiment", v, "The scaling-law experiment, measured here"),
                                    ("experiment_losses", v.loss_plot, "Measured losses against compute"),
                                    ("experiment_frontier", v.frontier_plot, "Fitted frontier beside the published"),
                                    ("experiment_readout", v.readout, "The fitted constants")):
            self.name_view(name, widget, title)
        return self.experiment_view

    def _demand_page(self) -> QWidget:
        v = self.demand_view = DemandView(self.theme)
        self.traffic_link = QPushButton("Use the serving panel's traffic")
        self.traffic_link.setToolTip("Take the traffic and request size of the Inference serving panel")
        self.traffic_link.clicked.connect(self._take_serving_traffic)
        for name, widget, title in (("demand", v, "Training against inference"),
                                    ("demand_chart", v.plot, "Cumulative compute, training and inference"),
                                    ("demand_statements", v.table, "What the companies said about the split")):
            self.name_view(name, widget, title)
        return self._page(("serve_req_per_s", "tokens_per_request"), v, (self.traffic_link,))

    def _machine_page(self) -> QWidget:
        v = self.machine_view = MachineView(self.theme)
        self.gemm_combo = QComboBox()
        self.gemm_combo.addItems([f"n = {n}" for n in Params.spec("gemm_n")["choices"]])
        self.gemm_combo.setAccessibleName("GEMM size")
        self.measure_button = QPushButton("Measure this machine")
        self.measure_button.setToolTip("Time a matrix multiply and a memory copy with torch, on the CPU and on CUDA when present")
        self.measure_button.clicked.connect(self._start_measure)
        for name, widget, title in (("machine", v, "The data centre as one computer"),
                                    ("machine_flops", v.flops_plot, "GEMM FLOP/s measured against datasheet peaks"),
                                    ("machine_bytes", v.bytes_plot, "Copy bytes/s measured against datasheet bandwidth"),
                                    ("allreduce", v.net_plot, "All-reduce over NVLink and the network against compute"),
                                    ("market", v.market, "Market share and data-centre revenue")):
            self.name_view(name, widget, title)
        return self._page(("efficiency_pct",), v, (keep_together(QLabel("GEMM:"), self.gemm_combo),
                                                    self.measure_button, self.measure_tasks.widget()))

    def _cost_page(self) -> QWidget:
        v = self.cost_view = CostView(self.theme)
        for name, widget, title in (("cost", v, "The cost of one GPU-hour"),
                                    ("cost_bar", v.bar_plot, "One GPU-hour, part by part"),
                                    ("campus", v.campus_plot, "A campus's capital split")):
            self.name_view(name, widget, title)
        return self._page(("server_capex_k", "server_life_years", "facility_m_per_mw", "facility_life_years",
                           "utilisation_pct", "opex_per_gpu_hour", "rate_pct"), v)

    def _power_page(self) -> QWidget:
        v = self.power_view = PowerView(self.theme)
        presets = []
        for p in load_table("power.json")["pue_presets"][:PUE_PRESETS_SHOWN]:
            b = QPushButton(f"PUE {p.value:g}: {p.label}")
            b.setToolTip(p.citation)
            b.clicked.connect(lambda _=False, x=p.value: self.error.show_error(self.update_params(pue=x)))
            presets.append(b)
        for name, widget, title in (("power", v, "The cluster's power"),
                                    ("power_levels", v.levels, "From GPU boards to the building"),
                                    ("power_trace", v.trace, "The draw through steps and checkpoints"),
                                    ("power_readout", v.text, "MW, MWh, cost and CO2")):
            self.name_view(name, widget, title)
        return self._page(("pue", "load_pct", "price_c_per_kwh", "grid_kg_per_mwh", "waiting_pct", "checkpoint_every",
                           "checkpoint_s"), v, presets)

    def _grid_page(self) -> QWidget:
        v = self.grid_view = GridView(self.theme)
        files = QLabel("Data files you can edit (dated, cited, checked on start): "
                       + ", ".join(str(data_path(n).name) for n in ("assumptions.json", "power.json", "market.json",
                                                                   "runs.json"))
                       + f" in {data_path('power.json').parent}")
        files.setWordWrap(True)
        for name, widget, title in (("grid", v, "Waiting for the grid"),
                                    ("lead_times", v.timeline, "Published lead times"),
                                    ("deals", v.deals, "Gas and nuclear deals")):
            self.name_view(name, widget, title)
        page = QWidget()
        lay = QVBoxLayout(page)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(v, 1)
        lay.addWidget(files)
        return page

    # --- links to the other panels -------------------------------------------------------------------
    def _sibling_params(self, key: str) -> dict:
        win = self.window()
        if not hasattr(win, "view_state"):
            return {}
        return dict(win.view_state().params.get(key, {}))

    def _take_scale_mfu(self) -> None:
        from engines.scale.params import Params as ScaleParams

        mfu = self._sibling_params("scale").get("mfu_pct", ScaleParams().mfu_pct)
        self.error.show_error(self.update_params(mfu_pct=int(mfu)))

    def _take_serving_traffic(self) -> None:
        from engines.serving.params import Params as ServingParams

        p = {**ServingParams().to_dict(), **self._sibling_params("serving")}
        self.error.show_error(self.update_params(serve_req_per_s=float(p["traffic_per_s"]),
                                                tokens_per_request=int(p["prompt_tokens"] + p["output_tokens"])))

    # --- scenario and parameters ----------------------------------------------------------------------
    def set_scenario(self, scenario) -> None:
        self._recompute(ALL_FIELDS)

    def params_updated(self, changed: frozenset[str]) -> None:
        self._recompute(changed)
        if "gemm_n" in changed and self.measured is not None:
            self._schedule_measure()

    def _recompute(self, changed: frozenset[str]) -> None:
        sc, p = self.ctx.scenario.value, self.params
        try:
            run = scenario_run(sc, p.tokens, p.mfu, p.fit)
            self.results["run"] = run
            if changed & SCALING_FIELDS or "scaling" not in self.results:
                self.results["scaling"] = ScalingResult(p.fit, published_runs(p.fit), run)
                self.scaling_view.show_result(self.results["scaling"])
            if changed & DEMAND_FIELDS or "demand" not in self.results:
                self.results["demand"] = demand(run.point.N, p.tokens, tokens_per_day(p.serve_req_per_s, p.tokens_per_request))
                self.demand_view.show_result(self.results["demand"], sc.arch.label)
            if changed & MACHINE_FIELDS or "network" not in self.results:
                self.results["network"] = step_network(sc, p.efficiency_pct / 100)
                self._draw_machine()
            if changed & POWER_FIELDS or "power" not in self.results:
                self._recompute_power(sc, p, run)
            if changed & COST_FIELDS or "cost" not in self.results:
                self._recompute_cost(sc, p, run)
        except ValueError as exc:
            self.error.show_error(str(exc))
            return
        self.error.show_error(None)

    def _recompute_power(self, sc, p, run) -> None:
        b = power_budget(sc.gpu, sc.n_gpus, sc.gpus_per_node, p.pue, p.price_c_per_kwh / 100, p.grid_kg_per_mwh / 1000,
                         p.load_pct / 100, run.gpu_hours)
        tr = power_trace(sc, p.pue, p.waiting_pct / 100, 2 * p.checkpoint_every, p.checkpoint_every, p.checkpoint_s, p.efficiency_pct / 100)
        self.results["power"], self.results["trace"] = b, tr
        card = gpu_spec(sc.gpu)
        table = load_table("power.json")
        sources = [(f"{card.label}: {card.tdp_w:g} W board power", card.tdp_source),
                   (f"node {b.node.kw:g} kW ({b.node.label})", b.node.source),
                   (f"PUE {p.pue:.2f}", "your input; " + next(r.citation for r in load_table("assumptions.json")["rows"] if r.id == "pue")),
                   (f"{p.price_c_per_kwh:.2f} ¢/kWh", "your input; default " + next(r.citation for r in load_table("assumptions.json")["rows"] if r.id == "price_per_kwh")),
                   (f"{p.grid_kg_per_mwh} kg CO2/MWh", "your input; default " + next(r.citation for r in load_table("assumptions.json")["rows"] if r.id == "grid_t_per_mwh")),
                   (f"average draw {p.load_pct}% of nameplate", "your input; default " + next(r.citation for r in load_table("assumptions.json")["rows"] if r.id == "load_factor")),
                   (f"run: {run.gpu_hours:,.0f} GPU-hours", "the scaling view's run: 6ND at your MFU"),
                   ("synchronised swings of tens of MW", table["swings"].citation),
                   ("power trace", tr.source)]
        self.power_view.show_result(b, tr, f"Training {sc.arch.label} on {p.tokens_b:,.0f}B tokens", sources)
        self.grid_view.show_result(lead_times(), deals(), table["consumption"], b.facility_mw)

    def _recompute_cost(self, sc, p, run) -> None:
        node = node_power(sc.gpu, sc.gpus_per_node)
        b = cost_per_gpu_hour(p.server_capex_k * 1000, p.server_life_years, p.facility_m_per_mw * 1e6, node.kw_per_gpu,
                              p.facility_life_years, p.pue, p.price_c_per_kwh / 100, p.utilisation_pct / 100,
                              p.opex_per_gpu_hour, p.rate_pct / 100)
        campus = campus_capex(sc.n_gpus, p.server_capex_k * 1000, node.kw_per_gpu * sc.n_gpus / 1000,
                              p.facility_m_per_mw * 1e6)
        rows = {r.id: r for r in load_table("assumptions.json")["rows"]}
        sources = tuple((f"{rows[k].label}: your input", f"default {rows[k].citation}")
                        for k in ("server_capex_per_gpu", "server_life_years", "facility_capex_per_mw",
                                  "facility_life_years", "utilisation", "opex_per_gpu_hour", "rate", "pue",
                                  "price_per_kwh")) + (
            (f"node {node.kw_per_gpu:.3f} kW per GPU", node.source),
            ("cost per GPU-hour = amortised capex / (8,760 × utilisation) + kW × PUE × price + operations",
             "formula in engines/compute/cost.py (capital recovery factor for a cost of capital)"),
            (f"{run.gpu_hours:,.0f} GPU-hours", "the scaling view's run: 6ND at your MFU"))
        self.results["cost"] = CostResult(b, run.gpu_hours, f"training {sc.arch.label}", campus, node.kw_per_gpu, sources)
        self.cost_view.show_result(self.results["cost"])

    # --- the machine measurement (job slot) ------------------------------------------------------------
    def _tab_shown(self, index: int) -> None:
        if index == TAB_TITLES.index("One computer (D2)") and self.measured is None and not self.measure_tasks.running:
            self._schedule_measure()

    def _schedule_measure(self) -> None:
        self._measure_timer.start()

    def _start_measure(self) -> None:
        self._measure_timer.stop()
        n, devices = self.params.gemm_n, machine_devices(self.ctx.device)   # the app's one device choice

        def work(progress, cancelled):
            return measure_machine(devices, gemm_n=n, progress=progress, cancelled=cancelled)

        self.measure_tasks.run(work, self._measured, label="measuring GEMM and copy", on_error=self.error.show_error)

    def _measured(self, m) -> None:
        self.measured = m
        self._draw_machine()

    def _draw_machine(self) -> None:
        sc = self.ctx.scenario.value
        market = load_table("market.json")
        self.machine_view.show_result(self.measured, self.results["network"], gpu_spec(sc.gpu), market["cpus"],
                                      market["share"], gpu_spec(sc.gpu).label)

    def wait_measure(self, timeout_ms: int = 120_000) -> bool:
        self._measure_timer.flush()
        return self.measure_tasks.wait(timeout_ms)

    # --- theme, exports, self-test ----------------------------------------------------------------------
    def apply_theme(self, theme) -> None:
        super().apply_theme(theme)
        for view in (self.scaling_view, self.demand_view, self.machine_view, self.cost_view, self.power_view,
                     self.grid_view, self.experiment_view):
            view.theme = theme
        if self.experiment_view.result is not None:
            self.experiment_view.show_result(self.experiment_view.result)
        if self.results:
            self.results.pop("scaling", None)
            self.results.pop("demand", None)
            self.results.pop("network", None)
            self.results.pop("power", None)
            self.results.pop("cost", None)
            self._recompute(frozenset())

    def result(self) -> object:
        return {**self.results, "measured": self.measured}

    def table(self) -> list[dict]:
        r = self.results.get("scaling")
        if r is None:
            return []
        return [{"run": x.label, "N": x.N, "D": x.D, "flop_6nd": x.flop_6nd, "reported_flop": x.reported_flop,
                 "gpu_hours": x.gpu_hours, "implied_mfu": x.implied_mfu, "source": x.source} for x in r.runs]

    def selftest(self) -> None:
        self.update_params(fit="hoffmann", pue=1.58, rate_pct=8.0)
        assert self.results["cost"].breakdown.total > 0 and self.results["power"].pue == 1.58
        self._start_measure()
        if not self.wait_measure():
            raise RuntimeError(self.measure_tasks.last_error or "the measurement did not finish")
        assert self.measured.get("cpu", "gemm").value > 0
        self.update_params(fit="besiroglu", pue=Params().pue, rate_pct=0.0)


PANEL = ComputePanel
