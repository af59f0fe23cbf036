"""Kubernetes: desired vs actual, reconcile loops, requests vs limits, failure modes.

Draws timelines from engines.k8s.scenarios (one frame per simulated second): the cluster, the
ownership/selection graph, the rule each controller fired, kubectl-style events and a
requests-vs-limits explainer for the selected pod. What is shown is ``self.params``
(engines.k8s.Params: the guided scenario, your applied YAML and whether its run is shown, the
pod explained). Your YAML runs in a fresh cluster in the panel's worker (engines.k8s.run_yaml:
progress per simulated second, Cancel between seconds); manifests the engine refuses (bad fields,
more than ``MAX_YAML_PODS`` pods) are reported up front, naming the field.
"""
from __future__ import annotations

from collections import OrderedDict
from html import escape

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QComboBox, QFileDialog, QHBoxLayout, QHeaderView, QLabel, QPlainTextEdit, QPushButton,
                               QSplitter, QTableWidget, QTableWidgetItem, QTabWidget, QTextBrowser, QVBoxLayout, QWidget)

from engines.core.errors import ValidationError
from engines.k8s import (EXAMPLE_YAML, MAX_YAML_PODS, YAML_SECONDS, Params, YamlRun, deployment_status, explain_pod,
                         run_yaml)
from engines.k8s.dump import read_dump
from engines.k8s.params import encode_commands
from engines.k8s.scenarios import (GUIDES, ModelServerPlan, Timeline, autoscale_plan, dump_guide, fork, guide_keys,
                                   model_server_plan, play_guide, run_guide)
from explorer.binder import ParamBinder
from explorer.fonts import mono_font
from explorer.ui.live_text import LiveText
from explorer.panel import Panel, TimelineSpec
from explorer.ui.widgets import ErrorLabel
from panels._k8s_tabs import AddressView, CommandBar, HpaView, WhyView, set_html
from panels._k8s_views import ClusterView, GraphView

YAML_BUTTON = f"Apply and run {YAML_SECONDS} s"
MODEL_SERVER = "Deploy the scenario's model server"
AUTOSCALE = "Autoscale the model server (HPA)"


class K8sPanel(Panel):
    key = "k8s"
    title = "Kubernetes loops"
    order = 80
    Params = Params
    reads = frozenset({"model", "arch", "gpu", "n_gpus", "gpus_per_node", "weight_bits", "kv_bits",
                       "serve_batch", "serve_context"})
    lesson = "k8s.md"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.timeline_data: Timeline | None = None
        self.index = 0
        self.scenario = None
        self.plan: ModelServerPlan | None = None
        self.autoplan = None
        self._dump_note = ""
        self._resume_at: int | None = None
        # finished timelines: guides by key, the model server by its plan (scenario edits that
        # leave the plan alone, or go back to an earlier one, cost nothing)
        self._timelines: OrderedDict[tuple, Timeline] = OrderedDict()
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Guided scenario:"))
        self.chooser = QComboBox()
        self.chooser.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.chooser.setMinimumContentsLength(14)   # long titles elide: the panel fits ~1000 px
        labels = {key: GUIDES[key].title if key in GUIDES else (MODEL_SERVER if key == "model-server" else AUTOSCALE)
                  for key in guide_keys()}
        for key, label in labels.items():
            self.chooser.addItem(label, key)
        bar.addWidget(self.chooser, 1)
        self.open_dump_button = QPushButton("Open dump…")
        self.open_dump_button.setToolTip("Replay a kubectl get nodes,deployments,replicasets,pods,services -o yaml "
                                         "(or -o json) file: offline, no cluster credentials")
        self.open_dump_button.clicked.connect(self._choose_dump)
        bar.addWidget(self.tasks.widget())
        self.body.addLayout(bar)
        self.caption = LiveText(min_lines=3)   # re-texted every frame: a QLabel re-laid out the whole panel
        self.caption.setAccessibleName("What happens this second")
        self.body.addWidget(self.caption)
        self.error = ErrorLabel()
        self.body.addWidget(self.error)
        self.commands = CommandBar()
        self.commands.command.connect(self.give)
        self.commands.row.addWidget(self.open_dump_button)
        act = self.act = QWidget()            # the command line with what it acts on: one view for a tour
        act_layout = QVBoxLayout(act)
        act_layout.setContentsMargins(0, 0, 0, 0)
        act_layout.addWidget(self.commands)
        self.body.addWidget(act, 1)

        split = QSplitter(Qt.Horizontal)
        left = QSplitter(Qt.Vertical)
        self.cluster = ClusterView(self.theme)
        self.cluster.pod_clicked.connect(lambda name: self.update_params(pod=name, why=f"Pod/{name}"))
        self.graph = GraphView(self.theme)
        left.addWidget(self.cluster)
        left.addWidget(self.graph)
        left.setSizes([470, 230])   # the cluster drawing first: the command row took ~30 px of height
        split.addWidget(left)
        tabs = self.tabs = QTabWidget()
        self.loop = QTextBrowser()
        self.events = self._events_table()
        self.explainer = QTextBrowser()
        yaml_box = QWidget()
        yl = QVBoxLayout(yaml_box)
        self.yaml = QPlainTextEdit(self.params.manifests)
        # YAML indentation is syntax: fixed pitch, and long lines scroll instead of wrapping to column 0
        self.yaml.setLineWrapMode(QPlainTextEdit.NoWrap)
        run_yaml = self.run_yaml_button = QPushButton(YAML_BUTTON)
        run_yaml.setToolTip(f"Apply these manifests in a fresh simulated cluster and record {YAML_SECONDS} s "
                            f"(in the background; at most {MAX_YAML_PODS} pods)")
        run_yaml.clicked.connect(self.run_yaml)
        self._yaml_running = False
        self.tasks.finished.connect(self._yaml_finished)
        self.yaml_report = QLabel()
        self.yaml_report.setWordWrap(True)
        yaml_note = QLabel("Your own manifests, run in a fresh cluster (three 4-CPU / 8Gi nodes unless they "
                           "define Nodes), not the guided scenario: edit the example, then apply.")
        yaml_note.setWordWrap(True)
        yl.addWidget(yaml_note)
        yl.addWidget(self.yaml)
        yl.addWidget(run_yaml)
        yl.addWidget(self.yaml_report)
        self.why = WhyView()
        self.why.chosen.connect(lambda key: self.update_params(why=key))
        self.addresses = AddressView()
        self.hpa = HpaView(self.theme)
        apply_now = self.apply_now_button = QPushButton("kubectl apply at this second")
        apply_now.setToolTip("Apply the editor's manifests to the cluster shown, at the frame shown (a command in "
                             "the timeline), instead of a fresh cluster")
        apply_now.clicked.connect(lambda: self.give("apply -f -\n" + self.yaml.toPlainText()))
        yl.addWidget(apply_now)
        tabs.addTab(self.loop, "Reconcile loop")
        tabs.addTab(self.events, "Events")
        tabs.addTab(self.why, "Why?")
        tabs.addTab(self.addresses, "Addresses")
        tabs.addTab(self.hpa, "Autoscaler")
        tabs.addTab(self.explainer, "Requests vs limits")
        tabs.addTab(yaml_box, "YAML")
        split.addWidget(tabs)
        split.setSizes([620, 380])
        act_layout.addWidget(split, 1)
        for name, widget, title in (("caption", self.caption, "What happens this second"),
                                    ("cluster", self.cluster, "Nodes and pods"),
                                    ("graph", self.graph, "Owns (ownerReferences) and selects (labels)"),
                                    ("cluster_graph", left, "Nodes, pods and the ownership graph"),
                                    ("loop", self.loop, "Reconcile loop: the rule each controller fired"),
                                    ("events", self.events, "Events (kubectl get events)"),
                                    ("explainer", self.explainer, "Requests vs limits of the selected pod"),
                                    ("yaml", yaml_box, "Your YAML"),
                                    ("commands", self.commands, "kubectl and an operator's commands, at this second"),
                                    ("act", act, "kubectl, the cluster it acts on and the loops' answer"),
                                    ("why", self.why, "Why? A describe-like walk of one object"),
                                    ("addresses", self.addresses, "Pod IPs, the ClusterIP and the EndpointSlice"),
                                    ("hpa", self.hpa, "The Horizontal Pod Autoscaler and the GPUs")):
            self.name_view(name, widget, title)
        self.binder = ParamBinder(self, {"scenario": self.chooser}, choices={"scenario": labels},
                                  error=self.error.show_error)

    # --- parameters ------------------------------------------------------------------------------
    def update_params(self, **changes) -> str | None:
        """Choosing a guided scenario also leaves your YAML's run (one undo step)."""
        if "scenario" in changes:
            changes.setdefault("yaml_shown", False)
            changes.setdefault("dump_shown", False)
            if changes["scenario"] != self.params.scenario or self.params.yaml_shown or self.params.dump_shown:
                changes.setdefault("commands", "")
        return super().update_params(**changes)

    def params_updated(self, changed: frozenset[str]) -> None:
        p = self.params
        if "yaml" in changed and self.yaml.toPlainText() != p.manifests:
            self.yaml.setPlainText(p.manifests)
        if "pod" in changed:
            self.cluster.selected = p.pod or None
            self.cluster.update()
            self._explain()
        if changed & {"pod", "why"} and self.timeline_data is not None:
            self._fill_hands_on(self.timeline_data.frames[self.index])
        if self.scenario is not None and changed & {"scenario", "yaml_shown", "yaml", "commands", "dump", "dump_shown"}:
            self._show_params()     # before the first set_scenario, it shows them

    def _show_params(self, background: bool = False) -> None:
        if self.params.dump_shown:
            self._start_dump()
        elif self.params.yaml_shown:
            self._start_yaml()
        else:
            self.load(self.params.scenario, background)

    # --- scenario / timeline ---------------------------------------------------------------------
    def set_scenario(self, scenario) -> None:
        """Cheap on every edit: the model-server plan is arithmetic; its timeline is simulated in
        the worker, and only while it is the scenario shown (other guides ignore the scenario)."""
        self.scenario = scenario
        try:
            self.plan = model_server_plan(scenario)
            label = f"{MODEL_SERVER} ({self.plan.model}: {self.plan.gpus_needed} GPU(s) per replica)"
        except ValidationError as exc:
            self.plan, label = None, f"{MODEL_SERVER} (unavailable: {exc})"
        try:
            self.autoplan = autoscale_plan(scenario)
            auto_label = f"{AUTOSCALE}: {self.autoplan.server.model}, {self.autoplan.target_rps:.1f} req/s per pod"
        except ValidationError as exc:
            self.autoplan, auto_label = None, f"{AUTOSCALE} (unavailable: {exc})"
        self.binder.set_choice("scenario", "model-server", label)
        self.binder.set_choice("scenario", "autoscale", auto_label)
        if self.timeline_data is None and not self.tasks.running:
            self._show_params()
        elif self.params.scenario in ("model-server", "autoscale") and not (self.params.yaml_shown or self.params.dump_shown):
            self.load(self.params.scenario, background=True)

    def _cache_key(self, key: str) -> tuple:
        plan = {"model-server": self.plan, "autoscale": self.autoplan}.get(key)
        return (key, plan, self.params.commands)

    def load(self, key: str, background: bool = False) -> None:
        """Show guide ``key``: from the cache, else simulated now (a click: ≤ 0.5 s) or, for a
        scenario edit, your commands or the long autoscaler run (``background``), in the worker
        with progress and Cancel."""
        if key in ("model-server", "autoscale") and (self.plan if key == "model-server" else self.autoplan) is None:
            self.error.show_error("the shared scenario has no valid serving memory; fix the scenario first")
            return
        cache_key = self._cache_key(key)
        commands = self.params.command_list
        background = background or bool(commands) or key == "autoscale"
        if cache_key in self._timelines:
            self._timelines.move_to_end(cache_key)
            self.tasks.cancel()
            return self._show_timeline(self._timelines[cache_key])
        scenario = self.scenario
        if not background:
            self.tasks.cancel()
            try:
                timeline = run_guide(key, scenario)
            except ValidationError as exc:
                self.error.show_error(str(exc))
                return
            return self._show_timeline(timeline, cache_key)

        def work(progress, cancelled) -> Timeline:
            return run_guide(key, scenario, progress=lambda f: progress(f, "simulating the cluster"),
                             cancelled=cancelled, commands=commands)
        self.tasks.run(work, lambda tl: self._show_timeline(tl, cache_key), label="Simulating the cluster…",
                       on_error=self.error.show_error)

    def _show_timeline(self, timeline: Timeline, cache_key: tuple | None = None) -> None:
        if cache_key is not None:
            self._timelines[cache_key] = timeline
            while len(self._timelines) > 16:
                self._timelines.popitem(last=False)
        if self.timeline_data is not None and timeline.key != self.timeline_data.key:
            self.index = 0
        self.addresses.reset()
        self.timeline_data = timeline
        self.hpa.set_timeline(timeline)
        self.error.show_error(None)
        self.timeline_changed.emit()
        if self._resume_at is not None:      # after a command: the first second of the loops' answer
            self.index, self._resume_at = min(self._resume_at, len(timeline.frames) - 1), None
            position = getattr(self.ctx, "timeline", None)
            if position is not None and position.spec is not None:
                position.set_position(self.index)
        self.show_frame(self.index)

    # --- acting on the running simulation --------------------------------------------------------
    def give(self, command: str) -> None:
        """Give ``command`` at the frame shown: the timeline forks there (later commands go) and is
        replayed with it in the worker; the view then shows the next second, the loops' first answer."""
        if self.timeline_data is None or not command.strip():
            return
        second = int(self.timeline_data.frames[self.index].t)
        try:
            commands = fork(self.params.command_list, second, command)
        except ValidationError as exc:
            self.error.show_error(str(exc))
            return
        self._resume_at = self.index + 1
        error = self.update_params(commands=encode_commands(commands))
        if error is not None:
            self._resume_at = None
            self.error.show_error(error)

    def _choose_dump(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open a cluster dump (kubectl get … -o yaml or -o json)", "",
                                              "Kubernetes dumps (*.yaml *.yml *.json);;All files (*)")
        if path:
            self.open_dump(path)

    def open_dump(self, path: str) -> None:
        """Check the dump in the worker; only a dump that passes becomes the timeline shown (a broken
        file is explained and nothing changes)."""
        def work(progress, cancelled):
            progress(0.0, "checking the dump")
            return read_dump(path)

        def done(dump) -> None:
            self._dump_cache = (path, dump)
            self.index = 0
            error = self.update_params(dump=path, dump_shown=True, commands="")
            if error is not None:
                self.error.show_error(error)

        self.tasks.run(work, done, label="Checking the cluster dump…",
                       on_error=lambda text: self.error.show_error("Cluster dump refused, nothing changed: "
                                                                   + (text.strip().splitlines() or ["?"])[-1]))

    def _start_dump(self) -> None:
        path, commands = self.params.dump, self.params.command_list
        cached = getattr(self, "_dump_cache", None)
        known = cached[1] if cached and cached[0] == path else None

        def work(progress, cancelled):
            dump = known or read_dump(path)
            return dump, play_guide(dump_guide(dump), progress=lambda f: progress(f, "replaying the dump"),
                                    cancelled=cancelled, commands=commands)

        def done(result) -> None:
            dump, timeline = result
            self._dump_cache = (path, dump)
            self._dump_note = escape(dump.report).replace("\n", "<br>")
            self._show_timeline(timeline)
        self.tasks.run(work, done, label="Replaying the cluster dump…",
                       on_error=lambda text: self.error.show_error("Cluster dump: " + (text.strip().splitlines() or ["?"])[-1]))

    # --- your YAML -------------------------------------------------------------------------------
    def run_yaml(self) -> None:
        """Apply: the editor's text becomes ``params.yaml`` (checked by Params, so a bad manifest is
        reported here, naming the field, and changes nothing); its run is shown once it is done."""
        text = self.yaml.toPlainText()
        changes = {"yaml": "" if text == EXAMPLE_YAML else text, "yaml_shown": True}
        if all(getattr(self.params, k) == v for k, v in changes.items()):
            return self._start_yaml()      # the same manifests again (after a Cancel, say)
        error = self.update_params(**changes)
        if error is not None:
            self.yaml_report.setText(f"Error: {error}")

    def _start_yaml(self) -> None:
        """Build and run the manifests' cluster in the worker: the Cluster lives only on the worker
        thread; the GUI gets the finished frames."""
        text, commands = self.params.manifests, self.params.command_list

        def work(progress, cancelled) -> YamlRun:
            return run_yaml(text, progress, cancelled, commands=commands)
        self.tasks.run(work, self._yaml_done, label="Simulating your YAML…", on_error=self._yaml_failed)
        self._yaml_running = True
        self.run_yaml_button.setEnabled(False)
        self.run_yaml_button.setText("Running… (Cancel stops it)")
        self.yaml_report.setText(f"Running {YAML_SECONDS} simulated seconds in the background…")

    def _yaml_finished(self, how: str) -> None:
        """Any end of the panel's task (done, failed, cancelled or superseded) frees the button."""
        if not self._yaml_running:
            return
        self._yaml_running = False
        self.run_yaml_button.setEnabled(True)
        self.run_yaml_button.setText(YAML_BUTTON)
        if how == "cancelled":
            self.yaml_report.setText("Cancelled: nothing applied; the view still shows the previous timeline.")

    def _yaml_done(self, run: YamlRun) -> None:
        self.yaml_report.setText(run.report)
        if run.timeline is not None:
            self.index = 0
            self._show_timeline(run.timeline)

    def _yaml_failed(self, text: str) -> None:
        self.yaml_report.setText("Failed: " + (text.strip().splitlines() or ["unknown error"])[0])

    def timeline(self) -> TimelineSpec | None:
        if self.timeline_data is None:
            return None
        return TimelineSpec(n_frames=len(self.timeline_data.frames), chapters=self.timeline_data.chapters, fps=4.0)

    def show_frame(self, index: int) -> None:
        """Per frame: the caption, both drawings and the three tabs; table cells and HTML are
        rewritten only when their text changed (most frames change little)."""
        if self.timeline_data is None or not self.timeline_data.frames:
            return
        self.index = max(0, min(index, len(self.timeline_data.frames) - 1))
        f = self.timeline_data.frames[self.index]
        deps = " · ".join(deployment_status(d) for d in f.deployments)
        self.caption.setText(f"<b>{self.timeline_data.title}</b> — t = {f.t:.0f} s — {f.caption}"
                             + (f"<br>{deps}" if deps else "") + (f"<br><b>{f.twin}</b>" if f.twin else ""))
        self.cluster.set_frame(f)
        self.graph.set_frame(f)
        self._fill_loop(f)
        self._fill_events(f)
        self._explain()
        self._fill_hands_on(f)

    def _fill_hands_on(self, f) -> None:
        """The command bar's targets and answers, the Why? walk, the addresses and the autoscaler."""
        self.commands.set_frame(f, self.params.pod or None)
        frames = self.timeline_data.frames if self.timeline_data else [f]
        given = next((g for g in reversed(frames[:self.index + 1]) if g.commands), None)
        self.commands.show_results(given.commands if given else [], self._dump_note if self.timeline_data and
                                   self.timeline_data.key == "dump" and self.index == 0 else "",
                                   now=f.t)
        self.why.set_frame(f, self.params.why or (f"Pod/{self.params.pod}" if self.params.pod else ""))
        self.addresses.set_frame(f, self.timeline_data)
        self.hpa.set_frame(f)

    def _fill_loop(self, f) -> None:
        """The rule each controller fired this second, grouped by controller."""
        by_controller: dict[str, list[str]] = {}
        for d in f.decisions:
            by_controller.setdefault(d["controller"], []).append(d["text"])
        # plain text: "3 observed < 4 desired" must not open a tag
        html = "".join(f"<b>{escape(ctrl)}</b><ul>" + "".join(f"<li>{escape(t)}</li>" for t in texts[-6:]) + "</ul>"
                       for ctrl, texts in by_controller.items())
        set_html(self.loop, html or "<i>No controller acted this second: desired = observed everywhere.</i>")

    @staticmethod
    def _events_table() -> QTableWidget:
        """kubectl's event columns in a ~330 px tab (at 1600 px): REASON above OBJECT in one cell, and
        each event's MESSAGE on a full-width, wrapped line of its own below them."""
        table = QTableWidget(0, 3)
        table.setHorizontalHeaderLabels(["LAST SEEN", "TYPE", "REASON / OBJECT"])
        table.verticalHeader().hide()                      # row numbers: newest first says it already
        table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)   # wrapped messages grow
        table.setWordWrap(True)
        table.setAlternatingRowColors(True)                # fields and message rows alternate: one event, two tints
        table.setTextElideMode(Qt.ElideMiddle)             # a squeezed name keeps its kind and pod suffix
        table.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        header = table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.Fixed)    # sized in _fill_events: the spanning
        header.setSectionResizeMode(1, QHeaderView.ResizeToContents)   # message would count as its content
        header.setSectionResizeMode(2, QHeaderView.Stretch)    # an object name wraps at its "/" and "-"
        return table

    def _fill_events(self, f) -> None:
        """kubectl get events, newest first, two table rows per event (the fields, then the message
        spanning them); existing cells are re-texted, not recreated."""
        table = self.events
        if table.rowCount() != 2 * len(f.events):
            table.clearSpans()
            table.setRowCount(2 * len(f.events))
            for r in range(1, table.rowCount(), 2):
                table.setSpan(r, 0, 1, table.columnCount())
        ages: list[str] = []
        for r, e in enumerate(reversed(f.events)):
            age = f.t - e["lastTimestamp"]
            count = f"\n(x{e['count']} over {f.t - e['firstTimestamp']:.0f}s)" if e["count"] > 1 else ""
            cells = [(2 * r, col, text) for col, text in enumerate([f"{age:.0f}s{count}", e["type"],
                                                                    f"{e['reason']}\n{e['object']}"])]
            ages.append(cells[0][2])
            for row, col, text in cells + [(2 * r + 1, 0, e["message"])]:
                item = table.item(row, col)
                if item is None:
                    item = QTableWidgetItem(text)
                    item.setToolTip(text)                  # the full text of an elided cell
                    table.setItem(row, col, item)
                elif item.text() != text:
                    item.setText(text)
                    item.setToolTip(text)
        fm = table.fontMetrics()
        table.horizontalHeader().resizeSection(0, max([table.horizontalHeader().sectionSizeHint(0)]
                                                      + [fm.horizontalAdvance(line) + 12 for a in ages
                                                         for line in a.splitlines()]))
        table.resizeRowsToContents()                       # wrap heights follow the widths just set

    def _explain(self) -> None:
        if self.timeline_data is None:
            return
        f = self.timeline_data.frames[self.index]
        pod = next((p for p in f.pods if p["name"] == self.params.pod), None) or (f.pods[0] if f.pods else None)
        set_html(self.explainer, explain_pod(pod).html if pod else "<i>No pods.</i>")

    # --- exports / theme / selftest -------------------------------------------------------------------
    def result(self) -> object:
        if self.timeline_data is None:
            return {}
        f = self.timeline_data.frames[self.index]
        return {"scenario": self.timeline_data.key, "t": f.t, "nodes": f.nodes, "pods": f.pods,
                "replicasets": f.replicasets, "deployments": f.deployments, "services": f.services,
                "hpas": f.hpas, "decisions": f.decisions, "events": f.events,
                "commands": [{"t": r.t, "command": r.command, "accepted": r.accepted, "message": r.message}
                             for r in f.commands]}

    def table(self) -> list[dict]:
        if self.timeline_data is None:
            return []
        f = self.timeline_data.frames[self.index]
        return [{"pod": p["name"], "node": p["node"] or "", "status": p["badge"], "ready": p["ready"], "qos": p["qos"],
                 "owner": p["owner"] or "", "restarts": p["restarts"]} for p in f.pods]

    def apply_theme(self, theme) -> None:
        super().apply_theme(theme) if hasattr(super(), "apply_theme") else None
        self.yaml.setFont(mono_font(theme.point_size))
        self.cluster.theme = theme
        self.graph.theme = theme
        self.cluster.update()
        self.graph.update()

    def selftest(self) -> None:
        for i in range(self.chooser.count()):
            self.chooser.setCurrentIndex(i)
            assert self.settle(180_000), f"{self.chooser.itemData(i)} did not finish"
            spec = self.timeline()
            assert spec is not None and spec.n_frames > 1 and self.timeline_data.key == self.chooser.itemData(i)
            self.show_frame(spec.n_frames - 1)
        self.run_yaml()
        assert self.settle(), "the YAML run did not finish"
        assert self.timeline_data is not None and self.timeline_data.key == "yaml"
        self.show_frame(5)
        self.give("scale deploy/web --replicas=4")
        assert self.settle(), "the command's replay did not finish"
        assert self.timeline_data.frames[6].commands and self.timeline_data.frames[6].commands[0].accepted


PANEL = K8sPanel
