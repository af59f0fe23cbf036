"""The law panel's "SBOM" tab: the CRA clause (Annex I Part II(1)) against a real SBOM: open a CycloneDX
or SPDX JSON or CycloneDX XML file, the shipped example, or generate one for what this app's bundle
ships, with the CycloneDX library (a job with progress and cancel). The source is the ``sbom_source`` field
of the panel's ``Params``; reading, checking and generating are engines.law.sbom (with engines.law.sbom_study).
A view: its buttons ask for a source through ``requested`` and the panel hands it the study."""
from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QFileDialog, QHeaderView, QLabel, QPushButton,
                               QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from engines.law import advisories, sbom
from engines.law.sbom_study import EXAMPLE, SbomStudy
from explorer.ui.flow_layout import FlowLayout
from explorer.ui.widgets import ErrorLabel



class SbomView(QWidget):
    """The SBOM tab. ``requested`` carries a params change (``sbom_source`` or ``advisory_source``) the
    user asked for; the panel reads, checks or generates and calls :meth:`show_result`. ``progress``
    is the panel's job bar for the generator, shown only while it runs."""

    requested = Signal(dict)

    def __init__(self, progress: QWidget) -> None:
        super().__init__()
        self.sbom: sbom.Sbom | None = None
        self.matches: tuple[advisories.Match, ...] = ()
        lay = QVBoxLayout(self)
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
        self.progress = progress                  # shown only while the generator runs
        progress.hide()
        lay.addWidget(progress)
        self.error = ErrorLabel()
        lay.addWidget(self.error)
        reading = QWidget()                       # the clause's reading and the advisory's hits: one slide
        reading_lay = QVBoxLayout(reading)
        reading_lay.setContentsMargins(0, 0, 0, 0)
        self.findings = QLabel()
        self.vulns = QLabel()
        for text in (self.findings, self.vulns):
            text.setWordWrap(True)
            text.setTextFormat(Qt.RichText)
            reading_lay.addWidget(text)
        lay.addWidget(reading)
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
        self.named = (("sbom", self, "The SBOM clause on a real SBOM"),
                      ("sbom_check", self.findings, "What the clause asks against what the file holds"),
                      ("sbom_table", self.table, "Components: version, licence, top-level or transitive"),
                      ("sbom_advisories", self.vulns, "Which components an opened OSV or CSAF advisory hits"),
                      ("sbom_reading", reading, "The clause against the file, then the advisory's hits"))

    def _send(self, source: str) -> None:
        self.requested.emit({"sbom_source": source})

    def _send_adv(self, source: str) -> None:
        self.requested.emit({"advisory_source": source})

    def _open_advisory(self) -> None:
        name, _ = QFileDialog.getOpenFileName(self, "Open an OSV or CSAF advisory", "",
                                              "Advisory JSON (*.json);;All files (*)")
        if name:
            self._send_adv(name)

    def _open_dialog(self) -> None:
        name, _ = QFileDialog.getOpenFileName(self, "Open an SBOM", "", "SBOM (*.json *.xml);;All files (*)")
        if name:
            self._send(name)

    def show_generator(self, available: bool) -> None:
        """Whether this app's SBOM can be generated here (the 'sbom' extra is installed)."""
        self.env_btn.setEnabled(available)
        if not available:
            self.env_btn.setToolTip("Needs cyclonedx-python-lib: pip install '.[sbom]'")

    def show_generating(self) -> None:
        self.findings.setText("Building the SBOM of this app's bundle …")

    def show_finished(self, how: str) -> None:
        """The generator's job ended (``done``, ``cancelled`` or ``failed``)."""
        self.progress.hide()
        if how != "done":
            self.findings.setText("Generating was cancelled." if how == "cancelled" else "Generating failed.")

    def _show_advisory(self, r: SbomStudy) -> None:
        """The opened advisory's summary line, or why there is none."""
        self.error.show_error(r.advisory_error)
        a = r.advisory
        if a is None:
            self.vulns.setText("The advisory could not be read." if r.advisory_error else
                               "No advisory open: open an OSV or CSAF file you downloaded to match it here.")
            return
        hit = [m for m in r.matches if m.status == advisories.AFFECTED]
        unknown = [m for m in r.matches if m.status == advisories.UNKNOWN]
        self.vulns.setText(
            f"<b>{html.escape(a.source)} ({a.format}, {len(a.items)} advisories): {len(hit)} component version(s) "
            f"affected, {len(unknown)} not evaluated.</b>"
            + ("<ul>" + "".join(f"<li><b>⚠ {html.escape(m.component)} {html.escape(m.version or '')}</b>: "
                                f"{html.escape(m.advisory)}, {html.escape(m.why)}</li>" for m in hit) + "</ul>"
               if hit else " ")
            + ("A product may not be made available with a known vulnerability that is exploitable (Annex I "
               "Part I(2)(a)); Part II(2) asks for remediation without delay. " if hit else "")
            + "<i>" + html.escape("; ".join(a.notes)) + "</i>")

    def show_result(self, r: SbomStudy | None) -> None:
        """The study of the open SBOM, or None: no SBOM open."""
        s = self.sbom = r.sbom if r else None
        self.table.setSortingEnabled(False)
        if r is None:
            self.findings.setText("No SBOM open.")
            self.vulns.setText("")
            self.matches = ()
            self.table.setRowCount(0)
            return
        self.matches = r.matches
        self._show_advisory(r)
        by_comp: dict[str, list[str]] = {}
        for m in self.matches:
            by_comp.setdefault(f"{m.component}@{m.version}", []).append(f"{m.advisory}: {m.status}")
        c = self.check = r.check
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
