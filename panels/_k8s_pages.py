"""The Kubernetes panel's per-second tabs and its YAML page, as views: the reconcile loop, the
events table and the editor for your own manifests. They draw one engine frame (or report a run)
and emit signals; the panel connects them and runs the jobs."""
from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QFileDialog, QHeaderView, QLabel, QPlainTextEdit, QPushButton,
                               QTableWidget, QTableWidgetItem, QTabWidget, QTextBrowser, QVBoxLayout, QWidget)

from engines.k8s import MAX_YAML_PODS, YAML_SECONDS
from explorer.fonts import mono_font
from panels._k8s_tabs import AddressView, HpaView, WhyView, set_html
from panels._k8s_frames import context_lines

YAML_BUTTON = f"Apply and run {YAML_SECONDS} s"


class LoopView(QTextBrowser):
    """The rule each controller fired this second, grouped by controller."""

    def show_result(self, frame, timeline=None) -> None:
        by_controller: dict[str, list[str]] = {}
        for d in frame.decisions:
            by_controller.setdefault(d["controller"], []).append(d["text"])
        # plain text: "3 observed < 4 desired" must not open a tag
        html = "".join(f"<b>{escape(ctrl)}</b><ul>" + "".join(f"<li>{escape(t)}</li>" for t in texts[-6:]) + "</ul>"
                       for ctrl, texts in by_controller.items())
        # the second and what it follows from: a tour step cites them, and a slide shows this tab alone
        since = context_lines(timeline, frame)
        head = f"<p><i>t = {frame.t:.0f} s" + (f" · {escape(since[-1])}" if since else "") + "</i></p>"
        set_html(self, head + (html or "<i>No controller acted this second: desired = observed everywhere.</i>"))


class EventsView(QTableWidget):
    """kubectl's event columns in a ~330 px tab (at 1600 px): REASON above OBJECT in one cell, and
    each event's MESSAGE on a full-width, wrapped line of its own below them."""

    def __init__(self) -> None:
        super().__init__(0, 3)
        self.setHorizontalHeaderLabels(["LAST SEEN", "TYPE", "REASON / OBJECT"])
        self.verticalHeader().hide()                      # row numbers: newest first says it already
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)   # wrapped messages grow
        self.setWordWrap(True)
        self.setAlternatingRowColors(True)                # fields and message rows alternate: one event, two tints
        self.setTextElideMode(Qt.ElideMiddle)             # a squeezed name keeps its kind and pod suffix
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        header = self.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.Fixed)    # sized in show_result: the spanning
        header.setSectionResizeMode(1, QHeaderView.ResizeToContents)   # message would count as its content
        header.setSectionResizeMode(2, QHeaderView.Stretch)    # an object name wraps at its "/" and "-"
        self.setVerticalScrollMode(QAbstractItemView.ScrollPerItem)
        self.verticalScrollBar().valueChanged.connect(self._whole_rows)

    def updateGeometries(self) -> None:  # noqa: N802
        super().updateGeometries()
        self._whole_rows()

    def _whole_rows(self) -> None:
        """Show only whole rows: the strip a row would be cut by is left out of the viewport, so the
        bottom line never shows half an event (it scrolls into view whole)."""
        margins = self.viewportMargins()
        room = self.height() - 2 * self.frameWidth() - margins.top()
        used, row = 0, max(self.rowAt(0), 0)
        while row < self.rowCount() and used + self.rowHeight(row) <= room:
            used += self.rowHeight(row)
            row += 1
        bottom = room - used if row < self.rowCount() else 0
        if margins.bottom() != bottom:
            self.setViewportMargins(margins.left(), margins.top(), margins.right(), bottom)

    def show_result(self, frame) -> None:
        """kubectl get events, newest first, two table rows per event (the fields, then the message
        spanning them); existing cells are re-texted, not recreated."""
        f = frame
        if self.rowCount() != 2 * len(f.events):
            self.clearSpans()
            self.setRowCount(2 * len(f.events))
            for r in range(1, self.rowCount(), 2):
                self.setSpan(r, 0, 1, self.columnCount())
        ages: list[str] = []
        for r, e in enumerate(reversed(f.events)):
            age = f.t - e["lastTimestamp"]
            count = f"\n(x{e['count']} over {f.t - e['firstTimestamp']:.0f}s)" if e["count"] > 1 else ""
            cells = [(2 * r, col, text) for col, text in enumerate([f"{age:.0f}s{count}", e["type"],
                                                                    f"{e['reason']}\n{e['object']}"])]
            ages.append(cells[0][2])
            for row, col, text in cells + [(2 * r + 1, 0, e["message"])]:
                item = self.item(row, col)
                if item is None:
                    item = QTableWidgetItem(text)
                    item.setToolTip(text)                  # the full text of an elided cell
                    self.setItem(row, col, item)
                elif item.text() != text:
                    item.setText(text)
                    item.setToolTip(text)
        fm = self.fontMetrics()
        self.horizontalHeader().resizeSection(0, max([self.horizontalHeader().sectionSizeHint(0)]
                                                     + [fm.horizontalAdvance(line) + 12 for a in ages
                                                        for line in a.splitlines()]))
        self.resizeRowsToContents()                       # wrap heights follow the widths just set


class YamlView(QWidget):
    """Your manifests: an editor, Apply-and-run (a fresh cluster) and apply-at-this-second (a command)."""

    run_requested = Signal(str)      # the editor's text, to run in a fresh cluster
    apply_requested = Signal(str)    # the editor's text, to apply at the frame shown

    def __init__(self, manifests: str) -> None:
        super().__init__()
        yl = QVBoxLayout(self)
        self.editor = QPlainTextEdit(manifests)
        # YAML indentation is syntax: fixed pitch, and long lines scroll instead of wrapping to column 0
        self.editor.setLineWrapMode(QPlainTextEdit.NoWrap)
        run = self.run_button = QPushButton(YAML_BUTTON)
        run.setToolTip(f"Apply these manifests in a fresh simulated cluster and record {YAML_SECONDS} s "
                       f"(in the background; at most {MAX_YAML_PODS} pods)")
        run.clicked.connect(lambda: self.run_requested.emit(self.editor.toPlainText()))
        self.report = QLabel()
        self.report.setWordWrap(True)
        note = QLabel("Your own manifests, run in a fresh cluster (three 4-CPU / 8Gi nodes unless they "
                      "define Nodes), not the guided scenario: edit the example, then apply.")
        note.setWordWrap(True)
        yl.addWidget(note)
        yl.addWidget(self.editor)
        yl.addWidget(run)
        yl.addWidget(self.report)
        apply_now = self.apply_now_button = QPushButton("kubectl apply at this second")
        apply_now.setToolTip("Apply the editor's manifests to the cluster shown, at the frame shown (a command in "
                             "the timeline), instead of a fresh cluster")
        apply_now.clicked.connect(lambda: self.apply_requested.emit(self.editor.toPlainText()))
        yl.addWidget(apply_now)

    def set_text(self, manifests: str) -> None:
        if self.editor.toPlainText() != manifests:
            self.editor.setPlainText(manifests)

    def set_running(self, running: bool) -> None:
        """While a run is in the worker the button says so and is off; any end frees it."""
        self.run_button.setEnabled(not running)
        self.run_button.setText("Running… (Cancel stops it)" if running else YAML_BUTTON)
        if running:
            self.report.setText(f"Running {YAML_SECONDS} simulated seconds in the background…")

    def show_report(self, text: str) -> None:
        self.report.setText(text)

    def apply_theme(self, theme) -> None:
        self.editor.setFont(mono_font(theme.point_size))


class DumpButton(QPushButton):
    """Open dump…: asks for a kubectl dump file and emits its path (the panel checks and replays it)."""

    chosen = Signal(str)

    def __init__(self) -> None:
        super().__init__("Open dump…")
        self.setToolTip("Replay a kubectl get nodes,deployments,replicasets,pods,services -o yaml "
                        "(or -o json) file: offline, no cluster credentials")
        self.clicked.connect(self._choose)

    def _choose(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open a cluster dump (kubectl get … -o yaml or -o json)", "",
                                              "Kubernetes dumps (*.yaml *.yml *.json);;All files (*)")
        if path:
            self.chosen.emit(path)


class K8sTabs(QTabWidget):
    """The right-hand tabs, each a view of the frame shown; the panel fills them and connects their signals."""

    def __init__(self, theme, manifests: str) -> None:
        super().__init__()
        self.loop, self.events, self.why = LoopView(), EventsView(), WhyView()
        self.addresses, self.hpa, self.explainer = AddressView(), HpaView(theme), QTextBrowser()
        self.yaml_view = YamlView(manifests)
        for widget, title in ((self.loop, "Reconcile loop"), (self.events, "Events"), (self.why, "Why?"),
                              (self.addresses, "Addresses"), (self.hpa, "Autoscaler"),
                              (self.explainer, "Requests vs limits"), (self.yaml_view, "YAML")):
            self.addTab(widget, title)
