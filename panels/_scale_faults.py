"""The fault-run page of the training-at-scale panel: the knobs of :func:`engines.scale.faults.run`,
the loss and gradient-norm curves a run logs (the faulty run beside its clean reference, the steps
a rollback threw away drawn apart), the alarms and the triage actions with their sources and cost.

A view: ``show_result(FaultStudy)``, drawing only; the panel owns the job that makes it and binds the
controls (``widgets()``) to its parameters.
"""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QCheckBox, QComboBox, QGridLayout, QSpinBox, QTextBrowser, QVBoxLayout, QWidget)

from engines.scale.faults import ACTION_SOURCES, FAULT_LABELS, RULE_SOURCES, FaultStudy, Run, summary
from engines.scale.params import FAULT_CHOICES, Params
from explorer.ui.flow_layout import FlowLayout
from explorer.ui.live_text import LiveText
from explorer.ui.widgets import brush, legend_below, log_axes, make_plot, pen
from explorer.ui.numbers import eng

FAULT_NAMES = {"none": "no fault", **FAULT_LABELS}
ACTION_MARKS = {"replay": "⟲ replay", "skip_batch": "⟲ skip batch", "lower_lr": "⟲ lower LR"}
RULE_NAMES = {"checksum": "replica checksums differ", "nonfinite": "non-finite value",
              "loss_z": "loss z-score", "grad_z": "gradient-norm z-score"}


def _spin(name: str, prefix: str) -> QSpinBox:
    spec = Params.spec(name)
    box = QSpinBox()
    box.setRange(int(spec["lo"]), int(spec["hi"]))
    box.setPrefix(prefix)
    box.setKeyboardTracking(False)
    box.setToolTip(spec["tip"])
    box.setAccessibleName(spec["label"])
    return box


def _segments(records, key) -> tuple[np.ndarray, np.ndarray]:
    """The discarded steps as line pieces, one per attempt, split by NaN (one item draws them all)."""
    xs, ys = [], []
    by_attempt: dict[int, list] = {}
    for r in records:
        if not r.kept:
            by_attempt.setdefault(r.attempt, []).append(r)
    for rows in by_attempt.values():
        xs += [r.step for r in rows] + [math.nan]
        ys += [key(r) for r in rows] + [math.nan]
    return np.array(xs, float), np.array(ys, float)


class FaultRunView(QWidget):
    """Controls, two charts and the incident log of one fault study (the page itself)."""

    def __init__(self, theme, job_widget: QWidget) -> None:
        super().__init__()
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        controls = FlowLayout()
        self.kind = QComboBox()
        self.kind.addItems([FAULT_NAMES[k] for k in FAULT_CHOICES])
        self.kind.setToolTip(Params.spec("fault_kind")["tip"])
        self.kind.setAccessibleName("Injected fault")
        self.step = _spin("fault_step", "at step ")
        self.replica = _spin("fault_replica", "on replica ")
        self.bit = _spin("fault_bit", "bit ")
        self.replicas = _spin("replicas", "replicas: ")
        self.seed = _spin("fault_seed", "seed ")
        self.triage = QCheckBox("automatic triage")
        self.triage.setToolTip(Params.spec("triage")["tip"])
        for w in (self.kind, self.step, self.replica, self.bit, self.replicas, self.triage, self.seed, job_widget):
            controls.addWidget(w)
        outer.addLayout(controls)

        grid = QGridLayout()
        self.loss_plot = make_plot(theme, "Training loss per step (nats per byte)", "loss", "step")
        self.loss_plot.setAccessibleName("Loss per step of the faulty and the clean run")
        self.grad_plot = make_plot(theme, "Gradient norm per step (before clipping)", "gradient norm", "step")
        self.grad_plot.setAccessibleName("Gradient norm per step of the faulty and the clean run")
        log_axes(self.grad_plot, y=True)
        self.items = {}
        legend = legend_below(self.loss_plot)     # one legend: the gradient chart draws the same items
        for key, plot in (("loss", self.loss_plot), ("grad", self.grad_plot)):
            plot.setMouseEnabled(x=False, y=False)
            named = key == "loss"
            ref = plot.plot([], [], name="clean run, same seed" if named else None)
            lost = plot.plot([], [], name="steps undone by a rollback" if named else None, connect="finite")
            kept = plot.plot([], [], name="run with the fault" if named else None)
            alarms = plot.plot([], [], pen=None, symbol="x", symbolSize=16, name="alarm" if named else None)
            fault = pg.InfiniteLine(angle=90, label="fault", labelOpts={"position": 0.7, "anchors": [(1, 0.5), (1, 0.5)]})
            plot.addItem(fault)
            self.items[key] = {"ref": ref, "lost": lost, "kept": kept, "alarms": alarms, "fault": fault, "marks": []}
        self.legend = legend
        self.loss_box = QWidget()
        lay = QVBoxLayout(self.loss_box)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.loss_plot, 1)
        self.first_alarm = LiveText(min_lines=1)    # what the ✖ on the chart found, said beside it on a slide
        self.first_alarm.setAccessibleName("The first alarm after the fault")
        lay.addWidget(self.first_alarm)
        grid.addWidget(self.loss_box, 0, 0)
        grid.addWidget(self.grad_plot, 0, 1)
        self.text = LiveText()
        self.text.reserve_lines(2)
        self.log = QTextBrowser()
        self.log.setOpenLinks(False)
        self.log.setAccessibleName("Alarms and triage actions of the fault run, with sources")
        side = QWidget()
        side_lay = QVBoxLayout(side)
        side_lay.setContentsMargins(0, 0, 0, 0)
        side_lay.addWidget(self.text)
        side_lay.addWidget(self.log, 1)
        self.log_box = side
        grid.addWidget(side, 1, 0, 1, 2)
        grid.setColumnStretch(0, 1)
        grid.setColumnStretch(1, 1)
        grid.setRowStretch(0, 3)
        grid.setRowStretch(1, 2)
        outer.addLayout(grid, 1)
        self.theme = theme
        self.study: FaultStudy | None = None
        self.log.setHtml("<p>The run starts when this page is shown and after each change of its knobs.</p>")

    @property
    def page(self) -> QWidget:
        """The page in the panel's tabs: the view itself (tests and tours use this name)."""
        return self

    def widgets(self) -> dict[str, QWidget]:
        """The controls by parameter name (for the panel's ParamBinder)."""
        return {"fault_kind": self.kind, "fault_step": self.step, "fault_replica": self.replica,
                "fault_bit": self.bit, "replicas": self.replicas, "triage": self.triage, "fault_seed": self.seed}

    def set_stale(self, stale: bool) -> None:
        for plot in (self.loss_plot, self.grad_plot):
            plot.setOpacity(0.35 if stale else 1.0)

    # --- drawing -----------------------------------------------------------------------------
    def show_result(self, study: FaultStudy) -> None:
        self.study = study
        self.set_stale(False)
        r, ref = study.run, study.reference
        for key, value, plot in (("loss", lambda x: x.loss, self.loss_plot),
                                 ("grad", lambda x: x.grad_norm, self.grad_plot)):
            it = self.items[key]
            it["ref"].setData([x.step for x in ref.kept], [self._finite(value(x), key) for x in ref.kept])
            it["kept"].setData([x.step for x in r.kept], [self._finite(value(x), key) for x in r.kept])
            lx, ly = _segments(r.records, lambda x: self._finite(value(x), key))
            it["lost"].setData(lx, ly)
            alarmed = [x for x in r.records if x.alarms]
            it["alarms"].setData([x.step for x in alarmed], [self._finite(value(x), key) for x in alarmed])
            for mark in it["marks"]:
                plot.removeItem(mark)
            it["marks"] = []
            if r.faults:
                it["fault"].setPos(r.faults[0].step)
                it["fault"].setVisible(True)
            else:
                it["fault"].setVisible(False)
            by_target: dict[int, list[str]] = {}
            for a in r.actions:
                by_target.setdefault(a.to_step, []).append(ACTION_MARKS[a.kind].replace("⟲ ", ""))
            for i, (to_step, kinds) in enumerate(list(by_target.items())[:4]):
                line = pg.InfiniteLine(pos=to_step, angle=90, label="⟲ " + ", ".join(dict.fromkeys(kinds)),
                                       labelOpts={"position": 0.9 - 0.15 * i, "color": self.theme.fg,
                                                  "anchors": [(0, 0.5), (0, 0.5)]})
                line.setPen(pen(self.theme.color(2), 2, Qt.DotLine))
                plot.addItem(line)
                it["marks"].append(line)
            it["fault"].label.setColor(self.theme.fg)
            self._mark_off_chart(key, plot, r.records, value)
            plot.enableAutoRange()
        self.text.setText(summary(study))
        first = r.first_alarm()
        self.first_alarm.setText(f"✖ first alarm, step {first.step}: {first.detail}" if first else "No alarm fired.")
        self.log.setHtml(self._log_html(r))

    def _mark_off_chart(self, key: str, plot, records, value) -> None:
        """Values drawn at the chart's edge say so: the first one gets an arrow and its true size (the
        flip of a top exponent bit reads about 10³⁸, the chart stops at its cap)."""
        cap = self._cap(key)
        over = next((x for x in records if not math.isfinite(value(x)) or value(x) > cap), None)
        if over is None:
            return
        v = value(over)
        text = f"▲ {eng(v) if math.isfinite(v) else 'not finite'}: off the chart"
        y = math.log10(cap) if key == "grad" else cap          # the gradient chart's y axis is log10
        right_half = over.step > (records[0].step + records[-1].step) / 2
        mark = pg.TextItem(text, color=self.theme.fg, anchor=(1 if right_half else 0, 0))   # the text runs inwards
        mark.setPos(over.step, y)
        plot.addItem(mark)
        self.items[key]["marks"].append(mark)

    @staticmethod
    def _cap(key: str) -> float:
        return 20.0 if key == "loss" else 1e6

    @staticmethod
    def _finite(v: float, key: str) -> float:
        """Non-finite or astronomically large values are drawn at the chart's edge (the log says the value)."""
        cap = FaultRunView._cap(key)
        return min(v, cap) if math.isfinite(v) else cap

    def _log_html(self, r: Run) -> str:
        rows = []
        if r.injected:
            rows.append("<p><b>Injected:</b> " + "; ".join(r.injected) + "</p>")
        if not r.alarms:
            rows.append("<p>No alarm fired.</p>")
        events = sorted([(a.attempt, a.step, 0, f"⚠ step {a.step}, pass {a.attempt + 1}: <b>{RULE_NAMES[a.rule]}</b> "
                          f"— {a.detail}") for a in r.alarms[:12]] +
                        [(i, a.step, 1, f"⟲ <b>{a.detail}</b>: {a.lost_steps} steps redone, {a.lost_seconds:.2f} s "
                          f"<i>({a.source})</i>") for i, a in enumerate(r.actions)])
        rows.append("<p>" + "<br>".join(text for *_k, text in events) + "</p>")
        if len(r.alarms) > 12:
            rows.append(f"<p>… {len(r.alarms) - 12} more alarms: without triage the damage stays.</p>")
        if r.suspects:
            rows.append(f"<p>Drain and test replica {', '.join(map(str, r.suspects))}: its weights disagreed with "
                        f"the majority.</p>")
        rows.append(f"<p style='font-size:small'>Backend {r.backend} on {r.device}, {r.config.replicas} replicas, "
                    f"{len(r.records)} steps executed at {r.steps_per_second:.1f} steps/s. Rules: "
                    + "; ".join(f"{RULE_NAMES[k]}: {v}" for k, v in RULE_SOURCES.items()) + ". Actions: "
                    + "; ".join(f"{ACTION_MARKS[k]}: {v}" for k, v in ACTION_SOURCES.items()) + ".</p>")
        return "".join(rows)

    def apply_theme(self, t) -> None:
        self.theme = t
        self.first_alarm.reset_height()
        for it in self.items.values():
            it["ref"].setPen(pen(t.fg, 2, Qt.DashLine))
            it["lost"].setPen(pen(t.color(0), 2.5, Qt.DotLine))
            it["kept"].setPen(pen(t.color(4), 2.5))
            it["alarms"].setSymbolBrush(brush(t.color(5)))
            it["alarms"].setSymbolPen(pen(t.color(5), 2))
            it["fault"].setPen(pen(t.color(6), 2, Qt.DashDotLine))
        if self.study is not None:
            self.show_result(self.study)
