"""Compute, power and cost (lessons D1–D3): scaling laws published and measured, training against
inference, the data centre as one computer and the cost of its GPU-hour, the power it draws and the
grid it waits for.

A thin view over :mod:`engines.compute`: one :func:`~engines.compute.study` call per edit gives every
view its part; the visible tab is drawn at once, the others when shown. The machine measurement runs in
the "measure" job slot, the scaling experiment in its own view's slots.
"""
from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QLabel, QPushButton, QVBoxLayout, QWidget

from engines.compute import (FIT_LABELS, ComputeStudy, Params, load_table, machine_devices, measure_machine,
                             serving_traffic, study)
from engines.compute.data import data_path
from engines.compute.experiment import ExperimentResult, default_cache_dir, run_experiment, shipped_result
from engines.compute.experiment import Params as ExperimentParams
from engines.core.errors import ValidationError
from explorer.binder import ParamBinder
from explorer.panel import Panel
from explorer.ui.flow_layout import keep_together
from explorer.ui.widgets import ErrorLabel, Tabs
from panels._compute_cost import CostView
from panels._compute_demand import DemandView
from panels._compute_experiment import ExperimentView
from panels._compute_machine import MachineView
from panels._compute_power import GridView, PowerView
from panels._compute_scaling import ScalingView

TAB_TITLES = ("Scaling laws (D1)", "Scaling experiment (D1)", "Training vs inference (D1)", "One computer (D2)",
              "Cost of a GPU-hour (D2)", "Power (D3)", "Waiting for the grid (D3)")
TAB_SCALING, TAB_EXPERIMENT, TAB_DEMAND, TAB_MACHINE, TAB_COST, TAB_POWER, TAB_GRID = range(len(TAB_TITLES))
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
        self.measured = None
        self.study: ComputeStudy | None = None
        self._stale: set[int] = set()
        self._recompute_due = False            # a recompute waits for a hold to end (see _draw_current_tab)
        self._measure_timer = self.debounce(self._start_measure, 0)
        self.error = ErrorLabel()
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
                                    ("frontier", v.frontier_box, "Compute-optimal size against compute, the scenario's run under it"),
                                    ("isoflop", v.iso_plot, "Iso-FLOP curves"),
                                    ("scaling_readout", v.text, "The scenario's run: C = 6ND, GPU-hours, days"),
                                    ("scaling_tables", v.tables, "Published runs and the three fits"),
                                    ("scaling_sources", v.sources, "Sources of the scaling view")):
            self.name_view(name, widget, title)
        fit = keep_together(QLabel("Fit:"), self.fit_combo)
        return self.slider_page(("tokens_b", "mfu_pct"), v, (fit, self.mfu_link), margins=4)

    def _experiment_page(self) -> QWidget:
        jobs = self.jobs("experiment")
        v = self.experiment_view = ExperimentView(self.theme, jobs.widget())
        v.run_requested.connect(self.run_experiment)
        v.shipped_requested.connect(lambda: v.show_result(self.experiment_shipped, shipped=True))
        jobs.failed.connect(v.error.show_error)
        jobs.finished.connect(lambda _how: v.show_running(jobs.running))
        self.experiment_local: ExperimentResult | None = None
        self.experiment_shipped: ExperimentResult | None = None
        try:
            self.experiment_shipped = shipped_result()
        except ValidationError as exc:
            v.error.show_error(f"The shipped experiment file cannot be read: {exc}")
        v.show_result(self.experiment_shipped, shipped=True, has_shipped=self.experiment_shipped is not None)
        for name, widget, title in (("experiment", v, "The scaling-law experiment, measured here"),
                                    ("experiment_losses", v.loss_plot, "Measured losses against compute"),
                                    ("experiment_frontier", v.frontier_plot, "Fitted frontier beside the published"),
                                    ("experiment_readout", v.readout, "The fitted constants")):
            self.name_view(name, widget, title)
        return self.experiment_view

    def _experiment_params(self, seed: int) -> ExperimentParams:
        return ExperimentParams(seed=seed, device=self.ctx.device)

    def run_experiment(self, seed: int) -> None:
        """Train on this machine in the background (or show the cached run for the same seed and device)."""
        params, cache = self._experiment_params(seed), default_cache_dir()
        self.experiment_view.error.show_error("")
        self.jobs("experiment").run(lambda progress, cancelled: run_experiment(params, progress, cancelled,
                                                                               cache_dir=cache),
                                    self._experiment_done, label="Training six tiny transformers…")
        self.experiment_view.show_running(self.jobs("experiment").running)

    def _experiment_done(self, result: ExperimentResult) -> None:
        self.experiment_local = result
        self.experiment_view.show_result(result, has_shipped=self.experiment_shipped is not None)

    def _demand_page(self) -> QWidget:
        v = self.demand_view = DemandView(self.theme)
        self.traffic_link = QPushButton("Use the serving panel's traffic")
        self.traffic_link.setToolTip("Take the traffic and request size of the Inference serving panel")
        self.traffic_link.clicked.connect(self._take_serving_traffic)
        for name, widget, title in (("demand", v, "Training against inference"),
                                    ("demand_chart", v.plot, "Cumulative compute, training and inference"),
                                    ("demand_statements", v.table, "What the companies said about the split")):
            self.name_view(name, widget, title)
        return self.slider_page(("serve_req_per_s", "tokens_per_request"), v, (self.traffic_link,), margins=4)

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
        extra = (keep_together(QLabel("GEMM:"), self.gemm_combo), self.measure_button, self.jobs("measure").widget())
        return self.slider_page(("efficiency_pct",), v, extra, margins=4)

    def _cost_page(self) -> QWidget:
        v = self.cost_view = CostView(self.theme)
        for name, widget, title in (("cost", v, "The cost of one GPU-hour"),
                                    ("cost_bar", v.bar_plot, "One GPU-hour, part by part"),
                                    ("campus", v.campus_plot, "A campus's capital split")):
            self.name_view(name, widget, title)
        knobs = ("server_capex_k", "server_life_years", "facility_m_per_mw", "facility_life_years", "utilisation_pct",
                 "opex_per_gpu_hour", "rate_pct")
        return self.slider_page(knobs, v, margins=4)

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
        knobs = ("pue", "load_pct", "price_c_per_kwh", "grid_kg_per_mwh", "waiting_pct", "checkpoint_every",
                 "checkpoint_s")
        return self.slider_page(knobs, v, presets, margins=4)

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
        rate, per_request = serving_traffic(p["traffic_per_s"], p["prompt_tokens"], p["output_tokens"])
        self.error.show_error(self.update_params(serve_req_per_s=rate, tokens_per_request=per_request))

    # --- scenario and parameters ----------------------------------------------------------------------
    def set_scenario(self, scenario) -> None:
        self._recompute_soon()

    def params_updated(self, changed: frozenset[str]) -> None:
        self._recompute_soon()
        if "gemm_n" in changed and self.measured is not None:
            self._schedule_measure()

    def _recompute_soon(self) -> None:
        self._recompute_due = True
        self.once(self._recompute)

    def _recompute(self) -> None:
        """One study call per edit; only the visible tab is drawn now, the others when shown."""
        self._recompute_due = False
        try:
            self.study = study(self.ctx.scenario.value, self.params)
        except ValueError as exc:
            self.error.show_error(str(exc))
            return
        self.error.show_error(None)
        self.grid_view.show_tables(self.study.grid)      # data files: once per theme, a no-op after
        self._stale = set(range(self.tabs.count()))
        self._draw_tab(self.tabs.currentIndex())

    def _draw_current_tab(self) -> None:
        """Not while a held recompute is still to come: it draws the tab the view ends on, and a tour
        step that switched the tab before its knobs drew the tab twice (D3 1: 36 of go()'s 68 ms)."""
        if not self._recompute_due:
            self._draw_tab(self.tabs.currentIndex())

    def _draw_tab(self, index: int) -> None:
        if index not in self._stale or self.study is None:
            return
        self._stale.discard(index)
        s = self.study
        if index == TAB_SCALING:
            self.scaling_view.show_result(s.scaling)
        elif index == TAB_DEMAND:
            self.demand_view.show_result(s.demand, s.scenario.arch.label,
                                         (s.params.serve_req_per_s, s.params.tokens_per_request))
        elif index == TAB_MACHINE:
            self._draw_machine()
        elif index == TAB_COST:
            self.cost_view.show_result(s.cost, (s.params.pue, s.params.price_c_per_kwh, s.params.mfu_pct))
        elif index == TAB_POWER:
            self.power_view.show_result(s.power)
        elif index == TAB_GRID:
            self.grid_view.show_result(s.grid)

    # --- the machine measurement (job slot) ------------------------------------------------------------
    def _tab_shown(self, index: int) -> None:
        self.once(self._draw_current_tab)
        if index == TAB_MACHINE and self.measured is None and not self.jobs("measure").running:
            self._schedule_measure()

    def _schedule_measure(self) -> None:
        self._measure_timer.start()

    def _start_measure(self) -> None:
        self._measure_timer.stop()
        n, devices = self.params.gemm_n, machine_devices(self.ctx.device)   # the app's one device choice

        def work(progress, cancelled):
            return measure_machine(devices, gemm_n=n, progress=progress, cancelled=cancelled)

        self.jobs("measure").run(work, self._measured, label="measuring GEMM and copy", on_error=self.error.show_error)

    def _measured(self, m) -> None:
        self.measured = m
        if self.study is not None:
            self._stale.add(TAB_MACHINE)
            self._draw_tab(self.tabs.currentIndex())

    def _draw_machine(self) -> None:
        m = self.study.machine
        self.machine_view.show_result(m, self.measured)

    # --- theme, exports, self-test ----------------------------------------------------------------------
    def apply_theme(self, theme) -> None:
        super().apply_theme(theme)
        for view in (self.scaling_view, self.demand_view, self.machine_view, self.cost_view, self.power_view,
                     self.grid_view, self.experiment_view):
            view.theme = theme
        v = self.experiment_view
        if v.result is not None:
            v.show_result(v.result, shipped=v.result is self.experiment_shipped,
                          has_shipped=self.experiment_shipped is not None)
        if self.study is not None:
            self.grid_view.show_tables(self.study.grid)
            self._stale = set(range(self.tabs.count()))
            self._draw_tab(self.tabs.currentIndex())

    def result(self) -> object:
        return {"study": self.study, "measured": self.measured}

    def table(self) -> list[dict]:
        if self.study is None:
            return []
        return [{"run": x.label, "N": x.N, "D": x.D, "flop_6nd": x.flop_6nd, "reported_flop": x.reported_flop,
                 "gpu_hours": x.gpu_hours, "implied_mfu": x.implied_mfu, "source": x.source} for x in self.study.scaling.runs]

    def selftest(self) -> None:
        self.update_params(fit="hoffmann", pue=1.58, rate_pct=8.0)
        assert self.study.cost.breakdown.total > 0 and self.study.power.budget.pue == 1.58
        self._start_measure()
        if not self.settle():
            raise RuntimeError(self.jobs("measure").last_error or "the measurement did not finish")
        assert self.measured.get("cpu", "gemm").value > 0
        self.update_params(fit="besiroglu", pue=Params().pue, rate_pct=0.0)


PANEL = ComputePanel
