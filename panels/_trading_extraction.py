"""H4 view of the trading panel: a headline classifier scored against gold labels, calibration, drift,
the audit record and the governance duties.

Pure drawing of :class:`engines.trading.ExtractionRun` (the run happens in the panel's job slot).
"""
from __future__ import annotations

import json
from html import escape

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (QGridLayout, QHBoxLayout, QHeaderView, QLabel, QPushButton, QSizePolicy, QTableWidget,
                               QTableWidgetItem, QTextBrowser, QVBoxLayout, QWidget)

from engines.trading import CLASS_TITLES, GOVERNANCE, PSI_BANDS, PSI_BANDS_NOTE, ExtractionRun, psi_band
from explorer.theme import ink_on
from explorer.ui.live_text import LiveText
from explorer.ui.widgets import Tabs, legend_below, make_plot, pen, brush
from panels._trading_study import with_readout

SHORT = {"results_up": "up", "results_down": "down", "deal": "deal", "legal": "legal", "leadership": "leader"}
STATUS = {"checked": "checked against the primary text", "secondary": "secondary: third-party copies, not the primary",
          "interpretation": "our interpretation: no regulator guidance found"}
SOURCES = ("Sources: F1 = 2PR/(P+R) (van Rijsbergen 1979); κ (Cohen 1960); ECE and reliability diagram "
           "(Guo et al., ICML 2017, equal-width bins); Brier (1950); PSI Σ(a − e)·ln(a/e) (a credit-scoring "
           "metric, reviewed by du Pisanie et al., arXiv 2303.01227). Headlines: written for this app about "
           "invented companies.")


def _table(rows: int, cols: int, name: str) -> QTableWidget:
    t = QTableWidget(rows, cols)
    t.setAccessibleName(name)
    t.verticalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
    t.horizontalHeader().setSectionResizeMode(QHeaderView.Stretch)
    t.setEditTriggers(QTableWidget.NoEditTriggers)
    return t


def _cell(table: QTableWidget, r: int, c: int, text: str, fill: str | None = None, ink: str | None = None) -> None:
    item = QTableWidgetItem(text)
    item.setTextAlignment(Qt.AlignCenter)
    if fill is not None:
        item.setBackground(QColor(fill))
        item.setForeground(QColor(ink))
    table.setItem(r, c, item)


def _mix(a: str, b: str, share: float) -> str:
    ca, cb = QColor(a), QColor(b)
    return QColor(round(ca.red() + (cb.red() - ca.red()) * share), round(ca.green() + (cb.green() - ca.green()) * share),
                  round(ca.blue() + (cb.blue() - ca.blue()) * share)).name()


CONFUSION_KEY = "Held-out: rows gold, columns predicted; ✓ right, ✗ wrong."

class ExtractionView(QWidget):
    """Scores (confusion matrix, per-class table, figures), calibration and drift, audit and governance."""

    def __init__(self, theme) -> None:
        super().__init__()
        self.theme = theme
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.tabs = Tabs()
        lay.addWidget(self.tabs, 1)
        # scores
        scores = QWidget()
        g = QGridLayout(scores)
        g.setContentsMargins(0, 0, 0, 0)
        self.confusion = _table(5, 5, "Confusion matrix of the held-out headlines: rows gold, columns predicted")
        self.confusion.verticalHeader().setSectionResizeMode(QHeaderView.Stretch)   # the matrix fills its cell
        self.scores = _table(5, 5, "Precision, recall and F1 per class")
        self.scores.setHorizontalHeaderLabels(["P", "R", "F1", "n", "F1 drift"])
        for j, tip in enumerate(("precision", "recall", "F1 = 2PR/(P+R)", "items", "F1 on the shifted set")):
            self.scores.horizontalHeaderItem(j).setToolTip(tip)
        self.figures = LiveText()
        self.figures.reserve_lines(7)
        # the matrix with its key and its accuracy: one view, so a slide of it says how many are right
        self.confusion_key = QLabel(CONFUSION_KEY)
        self.confusion_key.setWordWrap(True)
        self.confusion_cell = QWidget()
        cell = QVBoxLayout(self.confusion_cell)
        cell.setContentsMargins(0, 0, 0, 0)
        cell.addWidget(self.confusion_key)
        cell.addWidget(self.confusion, 1)
        g.addWidget(self.confusion_cell, 0, 0, 2, 1)
        per_class = QLabel("Per class on the held-out test; F1 drift: F1 on the shifted set.")
        per_class.setWordWrap(True)
        g.addWidget(per_class, 2, 0)
        g.addWidget(self.scores, 3, 0)
        g.addWidget(self.figures, 0, 1, 4, 1)
        g.setColumnStretch(0, 3)
        g.setColumnStretch(1, 2)
        g.setRowStretch(1, 1)
        # the per-class table as tall as its rows (a stretch shared with the matrix left it half empty
        # while the matrix scrolled)
        self.scores.setSizeAdjustPolicy(QTableWidget.AdjustToContents)
        self.scores.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.scores.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Minimum)   # grows when a slide shows it alone
        self.tabs.addTab(scores, "Scores")
        # calibration and drift
        cal = QWidget()
        c = QGridLayout(cal)
        c.setContentsMargins(0, 0, 0, 0)
        r = self.reliability_plot = make_plot(theme, "Reliability: accuracy against confidence per bin",
                                              "accuracy", "mean confidence in the bin")
        r.setAccessibleName("Reliability diagram of the classifier")
        r.setMouseEnabled(x=False, y=False)
        legend_below(r)
        self.diagonal = r.plot([0, 1], [0, 1], name="perfectly calibrated")
        self.rel_test = r.plot([], [], symbol="o", symbolSize=10, name="held-out test")
        self.rel_shift = r.plot([], [], symbol="s", symbolSize=10, name="shifted set")
        d = self.drift_plot = make_plot(theme, "Predicted class shares: test against shifted", "share (%)", "")
        d.setAccessibleName("Predicted class shares on the test and the shifted set")
        d.setMouseEnabled(x=False, y=False)
        legend_below(d)
        self.share_test = d.plot([], [], pen=None, symbol="o", symbolSize=14, name="held-out test")
        self.share_shift = d.plot([], [], pen=None, symbol="s", symbolSize=14, name="shifted set")
        self.drift_text = LiveText()
        self.drift_text.reserve_lines(5)
        self.reliability_box, self.reliability_text = with_readout(r)
        self.drift_box, self.drift_readout = with_readout(d)
        c.addWidget(self.reliability_box, 0, 0)
        c.addWidget(self.drift_box, 0, 1)
        c.addWidget(self.drift_text, 1, 0, 1, 2)
        c.setRowStretch(0, 1)
        self.tabs.addTab(cal, "Calibration and drift")
        # audit and governance
        gov = QWidget()
        a = QVBoxLayout(gov)
        a.setContentsMargins(0, 0, 0, 0)
        self.audit_box = QWidget()
        box = QVBoxLayout(self.audit_box)
        box.setContentsMargins(0, 0, 0, 0)
        bar = QHBoxLayout()
        self.audit_text = LiveText()
        self.audit_text.reserve_lines(4)
        self.export_button = QPushButton("Export audit record (JSON)…")
        self.export_button.setEnabled(False)
        bar.addWidget(self.audit_text, 1)
        bar.addWidget(self.export_button)
        box.addLayout(bar)
        self.audit_excerpt = QTextBrowser()
        self.audit_excerpt.setAccessibleName("The first record of the audit file")
        self.audit_excerpt.setLineWrapMode(QTextBrowser.NoWrap)
        box.addWidget(self.audit_excerpt, 1)
        a.addWidget(self.audit_box, 1)
        self.governance = QTextBrowser()
        self.governance.setAccessibleName("Governance duties that apply to a model in a regulated process")
        self.governance.setOpenLinks(False)
        self.governance.setHtml("".join(
            f"<p><b>{escape(d.regime)}.</b> {escape(d.duty)} <i>({escape(d.source)}; {STATUS[d.status]})</i></p>"
            for d in GOVERNANCE))
        a.addWidget(self.governance, 2)
        note = QLabel("Not legal advice. Status per line: how far we checked the text (see the lesson).")
        note.setWordWrap(True)
        a.addWidget(note)
        self.tabs.addTab(gov, "Audit and governance")
        self.result: ExtractionRun | None = None
        self.show_waiting()

    def show_waiting(self) -> None:
        self.figures.setText("Embedding 600 headlines with all-MiniLM-L6-v2 and training the classifier: the "
                             "first run takes about half a minute on two cores, later runs a second or two.")

    def show_stale(self, stale: bool) -> None:
        for w in (self.confusion, self.scores, self.reliability_plot, self.drift_plot):
            w.setEnabled(not stale)
        self.reliability_plot.setOpacity(0.4 if stale else 1.0)
        self.drift_plot.setOpacity(0.4 if stale else 1.0)

    def show_result(self, run: ExtractionRun) -> None:
        self.result = run
        t = self.theme
        names = [SHORT.get(c, c) for c in run.classes]
        k = len(names)
        titles = [f"{CLASS_TITLES.get(c, c)}" for c in run.classes]
        self.confusion.setRowCount(k)
        self.confusion.setVerticalHeaderLabels(titles)
        self.scores.setRowCount(k + 1)
        self.scores.setVerticalHeaderLabels([*titles, "Macro F1"])
        self.confusion.setColumnCount(k)
        self.confusion.setHorizontalHeaderLabels(names)
        conf = np.array(run.test.confusion)
        top = max(1, int(conf.max()))
        for i in range(k):
            for j in range(k):
                fill = _mix(t.bg, t.color(4) if i == j else t.color(5), conf[i, j] / top)
                mark = ("✓ " if i == j else "✗ ") if conf[i, j] else ""
                _cell(self.confusion, i, j, f"{mark}{conf[i, j]}", fill, ink_on(fill, t))
        s, sh = run.test.scores, run.shifted.scores
        self.confusion_key.setText(f"{CONFUSION_KEY} Accuracy {s.accuracy:.1%} of {run.test.n}.")
        for i in range(k):
            for j, v in enumerate((f"{s.precision[i]:.2f}", f"{s.recall[i]:.2f}", f"{s.f1[i]:.2f}",
                                   f"{s.support[i]}", f"{sh.f1[i]:.2f}")):
                _cell(self.scores, i, j, v)
        for j, v in enumerate(("", "", f"{s.macro_f1:.2f}", f"{run.test.n}", f"{sh.macro_f1:.2f}")):
            _cell(self.scores, k, j, v)
        self.figures.setText(
            f"<b>{run.audit['dataset']['items']} headlines</b> in all. <b>Held-out test</b> ({run.test.n} headlines from templates never seen in training, {run.n_train} "
            f"for training): accuracy {s.accuracy:.1%}, macro F1 {s.macro_f1:.2f}; model against gold κ = "
            f"{run.kappa_model_gold:.2f}. <b>Shifted set</b> ({run.shifted.n}): accuracy {sh.accuracy:.1%}, macro "
            f"F1 {sh.macro_f1:.2f}.<br><b>Two labelers</b> (template rule against keyword rule) agree with κ = "
            f"{run.kappa_labelers:.2f} on the base set, {run.kappa_labelers_shifted:.2f} on the shifted set: the "
            f"ceiling a model can be held to.<br><small>{escape(SOURCES)}</small>")
        x = np.arange(k)
        for item, scores, colour in ((self.rel_test, run.test, 4), (self.rel_shift, run.shifted, 5)):
            rel = scores.reliability
            keep = np.array(rel.counts) > 0
            item.setData(np.array(rel.confidence)[keep], np.array(rel.accuracy)[keep])
            item.setPen(pen(t.color(colour), 2, Qt.SolidLine if colour == 4 else Qt.DashLine))
            item.setSymbolBrush(brush(t.color(colour)))
            item.setSymbolPen(pen(t.fg, 1))
        self.diagonal.setPen(pen(t.fg, 1, Qt.DotLine))
        self.reliability_plot.setXRange(0, 1, padding=0.02)
        self.reliability_plot.setYRange(0, 1, padding=0.02)
        for item, shares, colour, dx in ((self.share_test, run.test.predicted_shares, 4, -0.08),
                                         (self.share_shift, run.shifted.predicted_shares, 5, 0.08)):
            item.setData(x + dx, 100 * np.array(shares))
            item.setPen(None)
            item.setSymbolBrush(brush(t.color(colour)))
            item.setSymbolPen(pen(t.fg, 1))
        self.drift_plot.getAxis("bottom").setTicks([[(i, n) for i, n in enumerate(names)], []])
        self.drift_plot.setXRange(-0.5, k - 0.5, padding=0)
        self.drift_plot.enableAutoRange(axis="y")
        rel = run.test.reliability
        top = max((i for i, n in enumerate(rel.counts) if n), default=None)
        self.reliability_text.setText(
            f"Held-out test in {len(rel.counts)} confidence bins: ECE <b>{rel.ece:.2f}</b>"
            + (f"; top bin: says {100 * rel.confidence[top]:.0f} %, right {100 * rel.accuracy[top]:.0f} % "
               f"({rel.counts[top]} headlines)." if top is not None else "."))
        self.drift_readout.setText(
            f"PSI test → shifted: predicted classes <b>{run.psi_predicted:.2f}</b>, top-class confidence "
            f"<b>{run.psi_confidence:.2f}</b>; alarm levels " + " / ".join(f"{b:g}" for b, _ in PSI_BANDS[:-1])
            + " (rule of thumb).")
        self.drift_text.setText(
            f"<b>Calibration:</b> ECE {run.test.reliability.ece:.3f} on the test set, "
            f"{run.shifted.reliability.ece:.3f} on the shifted set ({len(run.test.reliability.counts)} equal-width bins); "
            f"Brier {run.test.brier:.3f} / {run.shifted.brier:.3f}. Points below the diagonal are over-confident.<br>"
            f"<b>Drift (PSI, test → shifted):</b> predicted classes {run.psi_predicted:.2f} "
            f"({psi_band(run.psi_predicted)}), top-class confidence {run.psi_confidence:.2f} "
            f"({psi_band(run.psi_confidence)}), input length in tokens {run.psi_length:.2f} "
            f"({psi_band(run.psi_length)}). <i>{escape(PSI_BANDS_NOTE)}.</i> Empty bins get half a count.")
        a = run.audit
        self.audit_text.setText(
            f"<b>Audit record of this run</b> ({a['started_utc']} → {a['finished_utc']} UTC, {escape(run.device)}): "
            f"model file SHA-256 {a['model']['sha256'][:16]}…, code {a['code']['sha256'][:16]}…, label guideline "
            f"{a['guideline_sha256'][:16]}…, data {a['dataset']['sha256'][:16]}…; {len(a['records'])} inputs with "
            f"their outputs and probabilities.")
        self.audit_excerpt.setPlainText("First of the record's entries:\n" + json.dumps(a["records"][0], indent=1,
                                                                                        ensure_ascii=False))
        self.export_button.setEnabled(True)
        self.show_stale(False)
