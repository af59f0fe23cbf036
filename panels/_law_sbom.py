"""The law panel's "SBOM" tab: the CRA clause (Annex I Part II(1)) against a real SBOM: open a CycloneDX
or SPDX JSON or CycloneDX XML file, the shipped example, or generate one for what this app's bundle
ships with the CycloneDX library (a job with progress and cancel). The source is the ``sbom_source`` field of the
panel's ``Params``; reading, checking and generating are engines.law.sbom."""
from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QAbstractItemView, QFileDialog, QHeaderView, QLabel, QPushButton,
                               QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from engines.core.errors import ValidationError
from engines.law import advisories, sbom
from explorer.ui.flow_layout import FlowLayout
from explorer.ui.widgets import ErrorLabel

EXAMPLE = ":example"


class SbomView:
    """Builds the tab on ``panel.tabs`` and shows the SBOM ``panel.params.sbom_source`` names."""

    def __init__(self, panel) -> None:
        self.panel = panel
        self.sbom: sbom.Sbom | None = None
        self._shown: str | None = None
        self._adv_shown: str | None = None
        self.matches: tuple[advisories.Match, ...] = ()
        self.jobs = panel.jobs("sbom")
        page = QWidget()
        lay = QVBoxLayout(page)
        intro = QLabel("CRA Annex I Part II(1): a machine-readable SBOM of at least the top-level dependencies. "
                       "Open CycloneDX (JSON or XML) or SPDX JSON, or make one for this app's bundle; then an OSV or CSAF advisory you "
                       "downloaded, to see which components it hits. Nothing is looked up online.")
        intro.setWordWrap(True)
        intro.setObjectName("muted")
        lay.addWidget(intro)
        bar = FlowLayout()
        self.open_btn = QPushButton("Open SBOM…")
        self.open_btn.clicked.connect(self._open_dialog)
        self.example_btn = QPushButton("Example (camera firmware)")
        self.example_btn.clicked.connect(lambda: self._send(EXAMPLE))
        self.env_btn = QPushButton("Generate for this app")
        self.env_btn.setToolTip("What the bundle ships: the runtime dependencies and the two model wheels, "
                                "no test or build tools (the 'sbom' extra)")
        self.env_btn.clicked.connect(lambda: self._send(sbom.ENVIRONMENT))
        self.adv_btn = QPushButton("Open OSV/CSAF…")
        self.adv_btn.setToolTip("An OSV record (or list) or a CSAF 2.0 advisory, matched against the SBOM")
        self.adv_btn.clicked.connect(self._open_advisory)
        self.adv_example_btn = QPushButton("Example advisory")
        self.adv_example_btn.setToolTip("A CSAF 2.0 file with invented flaws for the example camera")
        self.adv_example_btn.clicked.connect(lambda: self._send_adv(EXAMPLE))
        for b in (self.open_btn, self.example_btn, self.env_btn, self.adv_btn, self.adv_example_btn):
            bar.addWidget(b)
        lay.addLayout(bar)
        if not sbom.generator_available():
            self.env_btn.setEnabled(False)
            self.env_btn.setToolTip("Needs cyclonedx-python-lib: pip install '.[sbom]'")
        bar_widget = self.jobs.widget()          # shown only while the generator runs
        bar_widget.hide()
        lay.addWidget(bar_widget)
        self.error = ErrorLabel()
        lay.addWidget(self.error)
        self.jobs.started.connect(lambda _label: bar_widget.show())
        self.jobs.finished.connect(lambda how: self._finished(how, bar_widget))
        self.jobs.failed.connect(lambda message: self.error.show_error(message))
        self.findings = QLabel()
        self.findings.setWordWrap(True)
        self.findings.setTextFormat(Qt.RichText)
        lay.addWidget(self.findings)
        self.vulns = QLabel()
        self.vulns.setWordWrap(True)
        self.vulns.setTextFormat(Qt.RichText)
        lay.addWidget(self.vulns)
        self.table = QTableWidget(0, 5)
        self.table.setHorizontalHeaderLabels(["Component", "Version", "Licence", "Top-level", "Advisories"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.setSortingEnabled(True)
        head = self.table.horizontalHeader()
        for col, mode in enumerate((QHeaderView.Stretch, QHeaderView.ResizeToContents, QHeaderView.Stretch,
                                    QHeaderView.ResizeToContents, QHeaderView.Stretch)):
            head.setSectionResizeMode(col, mode)
        lay.addWidget(self.table, 1)
        panel.tabs.addTab(page, "SBOM")
        panel.name_view("sbom", page, "The SBOM clause on a real SBOM")
        panel.name_view("sbom_check", self.findings, "What the clause asks against what the file holds")
        panel.name_view("sbom_table", self.table, "Components: version, licence, top-level or transitive")
        panel.name_view("sbom_advisories", self.vulns, "Which components an opened OSV or CSAF advisory hits")
        panel.params_changed.connect(lambda _p: self.refresh())
        self.refresh()

    def _send(self, source: str) -> None:
        self.error.show_error(self.panel.update_params(sbom_source=source))

    def _send_adv(self, source: str) -> None:
        self.error.show_error(self.panel.update_params(advisory_source=source))

    def _open_advisory(self) -> None:
        name, _ = QFileDialog.getOpenFileName(self.panel, "Open an OSV or CSAF advisory", "",
                                              "Advisory JSON (*.json);;All files (*)")
        if name:
            self._send_adv(name)

    def _open_dialog(self) -> None:
        name, _ = QFileDialog.getOpenFileName(self.panel, "Open an SBOM", "", "SBOM (*.json *.xml);;All files (*)")
        if name:
            self._send(name)

    def refresh(self) -> None:
        source = self.panel.params.sbom_source
        if source == self._shown:
            if self.panel.params.advisory_source != self._adv_shown:
                self._show(self.sbom)
            return
        self._shown = source
        self.error.show_error(None)
        if not source:
            self._show(None)
        elif source == sbom.ENVIRONMENT:
            if not sbom.generator_available():
                self.error.show_error("cyclonedx-python-lib is not installed: pip install '.[sbom]'")
                self._show(None)
                return
            self.findings.setText("Building the SBOM of this app's bundle …")
            self.jobs.run(lambda progress, cancelled: sbom.for_environment(progress, cancelled), self._done,
                          label="SBOM of this app's bundle")
        else:
            try:
                self._show(sbom.read(sbom.EXAMPLE if source == EXAMPLE else source))
            except ValidationError as exc:
                self.error.show_error(str(exc))
                self._show(None)

    def _finished(self, how: str, bar_widget) -> None:
        bar_widget.hide()
        if how != "done":
            self.findings.setText("Generating was cancelled." if how == "cancelled" else "Generating failed.")

    def _done(self, result) -> None:
        if isinstance(result, sbom.Sbom):
            self._show(result)

    def _matches(self, s: sbom.Sbom) -> tuple[advisories.Match, ...]:
        """The opened advisory's matches against ``s``, with its summary line (or its error) shown."""
        source = self._adv_shown = self.panel.params.advisory_source
        self.error.show_error(None)
        if not source:
            self.vulns.setText("No advisory open: open an OSV or CSAF file you downloaded to match it here.")
            return ()
        try:
            a = advisories.read(advisories.EXAMPLE if source == EXAMPLE else source)
        except ValidationError as exc:
            self.error.show_error(str(exc))
            self.vulns.setText("The advisory could not be read.")
            return ()
        found = advisories.match(s, a)
        hit = [m for m in found if m.status == advisories.AFFECTED]
        unknown = [m for m in found if m.status == advisories.UNKNOWN]
        self.vulns.setText(
            f"<b>{html.escape(a.source)} ({a.format}, {len(a.items)} advisories): {len(hit)} component version(s) "
            f"affected, {len(unknown)} not evaluated.</b>"
            + ("<ul>" + "".join(f"<li><b>⚠ {html.escape(m.component)} {html.escape(m.version or '')}</b>: "
                                f"{html.escape(m.advisory)}, {html.escape(m.why)}</li>" for m in hit) + "</ul>"
               if hit else " ")
            + ("A product may not be made available with a known vulnerability that is exploitable (Annex I "
               "Part I(2)(a)); Part II(2) asks for remediation without delay. " if hit else "")
            + "<i>" + html.escape("; ".join(a.notes)) + "</i>")
        return found

    def _show(self, s: sbom.Sbom | None) -> None:
        self.sbom = s
        self.table.setSortingEnabled(False)
        if s is None:
            self.findings.setText("No SBOM open.")
            self.vulns.setText("")
            self._adv_shown = None
            self.matches = ()
            self.table.setRowCount(0)
            return
        self.matches = self._matches(s)
        by_comp: dict[str, list[str]] = {}
        for m in self.matches:
            by_comp.setdefault(f"{m.component}@{m.version}", []).append(f"{m.advisory}: {m.status}")
        c = self.check = sbom.check(s, sbom.expected_for(self.panel.params.sbom_source))
        verdict = {True: "covers the top-level dependencies", False: "does not cover every top-level dependency",
                   None: "cannot show its top-level dependencies"}[c.meets_clause]
        self.findings.setText(
            f"<b>{s.source}: {s.format}, product {s.product or '(not named)'}; the file {verdict}.</b><ul>"
            + "".join(f"<li><b>{a}</b>: {t}</li>" for a, t in c.lines)
            + "".join(f"<li><i>Problem</i>: {p}</li>" for p in s.problems) + "</ul>")
        top = {id(x) for x in s.top_level} if s.top_level is not None else None
        self.table.setRowCount(len(s.components))
        for row, comp in enumerate(s.components):
            where = "—" if top is None else ("top-level" if id(comp) in top else "transitive")
            hits = "; ".join(by_comp.get(f"{comp.name}@{comp.version}", ())) or "—"
            for col, text in enumerate((comp.name, comp.version or "(none)", comp.licence or "(none)", where, hits)):
                self.table.setItem(row, col, QTableWidgetItem(text))
        self.table.setSortingEnabled(True)
        self.table.sortItems(3, Qt.AscendingOrder)

    def state(self) -> dict | None:
        if self.sbom is None:
            return None
        return {"format": self.sbom.format, "product": self.sbom.product, "components": len(self.sbom.components),
                "top_level": None if self.sbom.top_level is None else [c.name for c in self.sbom.top_level],
                "findings": [list(x) for x in self.check.lines],
                "advisories": [[m.component, m.version, m.advisory, m.status] for m in self.matches]}
