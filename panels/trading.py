"""Language models in trading: where a model call fits the stack (H1), the headline study read precisely
(H2), look-ahead bias simulated (H3) and an extraction classifier evaluated without returns (H4).

A thin view over :mod:`engines.trading`: the stack pricing and the study's statistics are computed
inline on every edit; the look-ahead Monte Carlo runs in the "lookahead" job slot, debounced, with the
previous result dimmed until the new one lands; the H4 classifier runs in the "extraction" slot, first
when its tab is opened, again on every edit. Not investment or legal advice.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QComboBox, QLabel, QPushButton, QSpinBox, QWidget

from engines.trading import (REMEDIES, ExtractionParams, Params, audit_json, price_stack, run_extraction,
                             simulate_lookahead, study)
from explorer.binder import ParamBinder
from explorer.exports import save_document, write_document
from explorer.panel import Panel
from explorer.ui.flow_layout import keep_together
from explorer.ui.widgets import ErrorLabel, Tabs
from panels._trading_extraction import ExtractionView
from panels._trading_lookahead import LookaheadView
from panels._trading_stack import StackView
from panels._trading_study import StudyView

STACK_FIELDS = frozenset({"prompt_tokens", "output_tokens", "gpu_hour_usd", "api_in_usd_per_m", "api_out_usd_per_m"})
STUDY_FIELDS = frozenset({"cost_bp", "turnover_pct", "m_tests"})
LOOKAHEAD_FIELDS = frozenset({"days_pre", "days_post", "n_stocks", "a_pre", "a_post", "remedy", "mask_share",
                              "n_prompts", "trials_var", "seed"})
LOOKAHEAD_SLIDERS = ("a_pre", "a_post", "days_pre", "days_post", "n_stocks", "mask_share", "n_prompts", "trials_var")
EXTRACTION_SLIDERS = ("ext_train_share", "ext_l2", "ext_epochs", "ext_bins", "ext_seed")
EXTRACTION_FIELDS = frozenset(EXTRACTION_SLIDERS)
TAB_TITLES = ("The stack (H1)", "The study, read precisely (H2)", "Look-ahead bias (H3)",
              "Extraction without returns (H4)")
DEBOUNCE_MS = 150


class TradingPanel(Panel):
    key = "trading"
    title = "Language models in trading"
    order = 95
    Params = Params
    reads = frozenset({"model", "arch", "gpu", "weight_bits", "kv_bits", "serve_batch", "serve_context"})
    lesson = "trading.md"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.stack_result = None
        self.study_result = None
        self.lookahead_result = None
        self.extraction_result = None
        self._refresh = self.debounce(self._start_simulation, DEBOUNCE_MS)
        self.error = ErrorLabel()
        self.tabs = Tabs()
        self.tabs.addTab(self._stack_page(), TAB_TITLES[0])
        self.tabs.addTab(self._study_page(), TAB_TITLES[1])
        self.tabs.addTab(self._lookahead_page(), TAB_TITLES[2])
        self.tabs.addTab(self._extraction_page(), TAB_TITLES[3])
        self.tabs.currentChanged.connect(self._tab_shown)
        self.body.addWidget(self.error)
        self.body.addWidget(self.tabs, 1)
        self.binder = ParamBinder(self, {**self.sliders, "remedy": self.remedy_combo, "seed": self.seed_spin},
                                  choices={"remedy": REMEDIES}, error=self.error.show_error)
        for name, widget in self.sliders.items():
            self.name_view(name, widget, Params.spec(name)["label"])
        self.name_view("remedy", self.remedy_combo, "Remedy")
        self._recompute_study()

    # --- pages ----------------------------------------------------------------------------------
    def _stack_page(self) -> QWidget:
        self.stack_view = StackView(self.theme)
        self.name_view("stack", self.stack_view, "The stack's clocks and one model call")
        self.name_view("stack_chart", self.stack_view.plot, "Stages on a time axis")
        knobs = ("prompt_tokens", "output_tokens", "gpu_hour_usd", "api_in_usd_per_m", "api_out_usd_per_m")
        return self.slider_page(knobs, self.stack_view)

    def _study_page(self) -> QWidget:
        v = self.study_view = StudyView(self.theme)
        for name, widget, title in (("study", v, "The study, read precisely"),
                                    ("study_cumulative", v.cum_box, "Cumulative return before and after costs"),
                                    ("study_costs", v.cost_box, "Net Sharpe against cost"),
                                    ("study_decay", v.decay_box, "Sharpe by period"),
                                    ("study_stats", v.tabs, "Statistics and the study's figures")):
            self.name_view(name, widget, title)
        return self.slider_page(("cost_bp", "turnover_pct", "m_tests"), v)

    def _lookahead_page(self) -> QWidget:
        v = self.lookahead_view = LookaheadView(self.theme)
        for name, widget, title in (("lookahead", v, "Look-ahead bias simulated"),
                                    ("lookahead_pnl", v.pnl_box, "Cumulative P&L across the cutoff"),
                                    ("lookahead_hits", v.hit_box, "Hit rate across the cutoff"),
                                    ("lookahead_figures", v.text, "Sharpe and t before and after the cutoff")):
            self.name_view(name, widget, title)
        self.remedy_combo = QComboBox()
        self.remedy_combo.addItems(list(REMEDIES.values()))
        self.remedy_combo.setAccessibleName("Remedy for look-ahead bias")
        self.seed_spin = QSpinBox()
        spec = Params.spec("seed")
        self.seed_spin.setRange(int(spec["lo"]), int(spec["hi"]))
        self.seed_spin.setPrefix("seed: ")
        self.seed_spin.setKeyboardTracking(False)
        self.seed_spin.setAccessibleName("Random seed of the simulation")
        reroll = QPushButton("Re-roll")
        reroll.setToolTip("Draw another market with the next seed")
        reroll.clicked.connect(lambda: self.error.show_error(self.update_params(seed=self.params.seed + 1)))
        extra = (keep_together(QLabel("Remedy:"), self.remedy_combo), self.seed_spin, reroll,
                 self.jobs("lookahead").widget())
        return self.slider_page(LOOKAHEAD_SLIDERS, v, extra)

    def _extraction_page(self) -> QWidget:
        v = self.extraction_view = ExtractionView(self.theme)
        for name, widget, title in (("extraction", v, "Extraction, evaluated without returns"),
                                    ("extraction_confusion", v.confusion_cell, "Confusion matrix of the held-out headlines"),
                                    ("extraction_scores", v.scores, "Precision, recall and F1 per class"),
                                    ("extraction_figures", v.figures, "Accuracy, F1 and Cohen's kappa"),
                                    ("extraction_reliability", v.reliability_box, "Reliability diagram"),
                                    ("extraction_drift", v.drift_box, "Predicted class shares under drift"),
                                    ("extraction_drift_figures", v.drift_text, "ECE, Brier and PSI"),
                                    ("extraction_audit", v.audit_box, "The run's audit record"),
                                    ("extraction_governance", v.governance, "Governance duties")):
            self.name_view(name, widget, title)
        v.export_button.clicked.connect(self._ask_export_audit)
        return self.slider_page(EXTRACTION_SLIDERS, v, (self.jobs("extraction").widget(),))

    def tab_widgets(self) -> list:
        """A fixed order (outer tabs, H2's, H4's): Qt's child order changes when pages are re-parented
        after construction, and saved views and tours address the tab widgets by position."""
        return [self.tabs, self.study_view.tabs, self.extraction_view.tabs]

    # --- scenario and parameters ------------------------------------------------------------------
    def set_scenario(self, scenario) -> None:
        self._recompute_stack()
        if self.lookahead_result is None:
            self._schedule_simulation()

    def params_updated(self, changed: frozenset[str]) -> None:
        if changed & STACK_FIELDS:
            self._recompute_stack()
        if changed & STUDY_FIELDS:
            self._recompute_study()
        if changed & LOOKAHEAD_FIELDS:
            self._schedule_simulation()
        if changed & EXTRACTION_FIELDS and (self.extraction_result is not None or self.jobs("extraction").running
                                            or self.tabs.currentIndex() == 3):
            self._start_extraction()

    def _recompute_stack(self) -> None:
        p = self.params
        try:
            r = price_stack(self.ctx.scenario.value, p.prompt_tokens, p.output_tokens, p.gpu_hour_usd,
                            p.api_in_usd_per_m, p.api_out_usd_per_m)
        except ValueError as exc:
            self.error.show_error(str(exc))
            return
        self.stack_result = r
        self.stack_view.show_result(r)

    def _recompute_study(self) -> None:
        p = self.params
        self.study_result = study(p.cost_bp, p.turnover_pct / 100, p.m_tests)
        self.study_view.show_result(self.study_result)

    # --- the look-ahead simulation (job slot) -----------------------------------------------------
    def _schedule_simulation(self) -> None:
        if self.lookahead_result is None and not self.jobs("lookahead").running and not self._refresh.isActive():
            self._start_simulation()
            return
        self.jobs("lookahead").cancel()
        self.lookahead_view.show_stale(True)
        self._refresh.start()

    def _start_simulation(self) -> None:
        self._refresh.stop()
        p = self.params          # captured before the job: a worker never reads a widget
        kwargs = dict(days_pre=p.days_pre, days_post=p.days_post, n_stocks=p.n_stocks, a_pre=p.a_pre,
                      a_post=p.a_post, remedy=p.remedy, mask_share=p.mask_share, n_prompts=p.n_prompts,
                      trials_var=p.trials_var, seed=p.seed)

        def work(progress, cancelled):
            return simulate_lookahead(**kwargs, progress=progress, cancelled=cancelled)

        self.jobs("lookahead").run(work, self._simulated, label="simulating the backtest",
                                   on_error=self.error.show_error)

    def _simulated(self, run) -> None:
        self.lookahead_result = run
        self.lookahead_view.show_result(run)

    # --- the extraction classifier (job slot) -------------------------------------------------------
    def _tab_shown(self, index: int) -> None:
        if index == 3 and self.extraction_result is None and not self.jobs("extraction").running:
            QTimer.singleShot(0, self, self._first_extraction)   # after the tab switch (and a view's inner tabs) settle

    def _first_extraction(self) -> None:
        if self.extraction_result is None and not self.jobs("extraction").running:
            self._start_extraction()

    def _start_extraction(self) -> None:
        self.jobs("extraction").cancel()
        p = self.params
        ep = ExtractionParams(**{f: getattr(p, f) for f in EXTRACTION_FIELDS})   # captured before the job
        device = self.ctx.device          # the app's one device choice (--device), never a knob of its own
        if self.extraction_result is not None:
            self.extraction_view.show_stale(True)

        def work(progress, cancelled):
            return run_extraction(ep, progress=progress, cancelled=cancelled, device=device)

        self.jobs("extraction").run(work, self._extracted, label="embedding and classifying headlines",
                                    on_error=self.error.show_error)

    def _extracted(self, run) -> None:
        self.extraction_result = run
        self.extraction_view.show_result(run)

    def export_audit(self, path: str | Path) -> Path:
        """Write the last run's audit record (JSON, atomically)."""
        if self.extraction_result is None:
            raise ValueError("run the extraction first: there is no audit record yet")
        return write_document(path, audit_json(self.extraction_result.audit) + "\n")

    def _ask_export_audit(self) -> None:
        save_document(self, "Export the audit record", "extraction-audit.json", "JSON (*.json)", self.export_audit,
                      self.error.show_error)

    # --- theme, exports, self-test ----------------------------------------------------------------
    def apply_theme(self, theme) -> None:
        super().apply_theme(theme)
        for view, res in ((self.stack_view, self.stack_result), (self.study_view, self.study_result),
                          (self.lookahead_view, self.lookahead_result),
                          (self.extraction_view, self.extraction_result)):
            view.theme = theme
            if res is not None:
                view.show_result(res)

    def result(self) -> object:
        ex = self.extraction_result
        return {"stack": self.stack_result, "study": self.study_result, "lookahead": self.lookahead_result,
                "extraction": ex.scores() if ex is not None else None,
                "measured": ex.measured() if ex is not None else None}

    def table(self) -> list[dict]:
        return self.study_result.rows() if self.study_result is not None else []

    def selftest(self) -> None:
        self.update_params(cost_bp=20.0, turnover_pct=190.0)
        assert self.study_result.net_mean_daily < 0          # past the 17.9 bp break-even
        self.update_params(remedy="after_cutoff", seed=3)
        if not self.settle():
            raise RuntimeError(self.jobs("lookahead").last_error or "the look-ahead simulation did not finish")
        assert self.lookahead_result.evaluated_from == self.params.days_pre
        self.update_params(cost_bp=10.0, remedy="none", seed=1)


PANEL = TradingPanel
