"""Kubernetes: desired vs actual, reconcile loops, requests vs limits, failure modes.

Draws timelines from engines.k8s.scenarios (one frame per simulated second): the cluster, the
ownership/selection graph, the rule each controller fired, kubectl-style events and a
requests-vs-limits explainer for the selected pod. Pasted YAML runs in a fresh cluster, in the
panel's worker (progress per simulated second, Cancel between seconds); manifests asking for more
than ``MAX_YAML_PODS`` pods are refused up front, naming the field.
"""
from __future__ import annotations

from collections import OrderedDict

from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QHeaderView, QLabel, QPlainTextEdit, QPushButton, QSplitter,
                               QTableWidget, QTableWidgetItem, QTabWidget, QTextBrowser, QVBoxLayout, QWidget)
from PySide6.QtCore import Qt

from engines.errors import ValidationError
from engines.k8s import load_manifests
from engines.k8s.quantity import format_bytes, format_cpu
from engines.k8s.scenarios import (GUIDES, Guide, ModelServerPlan, guide_keys, model_server_plan, play_guide, run_guide,
                                   Timeline)
from explorer.fonts import mono_font
from explorer.live_text import LiveText
from explorer.panel import Panel, TimelineSpec
from explorer.tasks import Cancelled
from explorer.widgets import ErrorLabel
from panels._k8s_views import ClusterView, GraphView

YAML_SECONDS = 60
YAML_BUTTON = f"Apply and run {YAML_SECONDS} s"
MAX_YAML_PODS = 2000   # a teaching animation: ~10 ms of simulation per pod-second, one tile per pod


def pod_demand(objs: list[dict]) -> list[tuple[str, str, int]]:
    """(object, field, pods) for every pasted object that creates pods: a Deployment or
    ReplicaSet its ``spec.replicas`` (default 1), a bare Pod one."""
    out = []
    for o in objs:
        title = f"{o['kind']}/{o['metadata'].get('name') or o['metadata'].get('generateName', '')}"
        if o["kind"] in ("Deployment", "ReplicaSet"):
            out.append((title, "spec.replicas", int((o.get("spec") or {}).get("replicas", 1))))
        elif o["kind"] == "Pod":
            out.append((title, "kind: Pod", 1))
    return out


def pod_limit_error(objs: list[dict], limit: int = MAX_YAML_PODS) -> str | None:
    """Why these manifests are too big to animate (naming the field), or None."""
    demand = pod_demand(objs)
    for title, field, n in demand:
        if n > limit:
            return (f"{title} {field}: {n} pods is more than this simulator animates (at most {limit}); "
                    "lower the replica count")
    total = sum(n for _t, _f, n in demand)
    if total > limit:
        parts = ", ".join(f"{t} {n}" for t, _f, n in sorted(demand, key=lambda d: -d[2])[:4])
        return (f"spec.replicas: {total} pods in total ({parts}{', …' if len(demand) > 4 else ''}) is more than "
                f"this simulator animates (at most {limit}); lower the replica counts")
    return None


EXAMPLE_YAML = """apiVersion: v1
kind: Node
metadata: {name: node-0}
status: {allocatable: {cpu: "4", memory: 8Gi}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        resources: {requests: {cpu: 250m, memory: 256Mi}, limits: {memory: 512Mi}}
"""


def explain_pod(pod: dict, nodes: list[dict]) -> str:
    """Requests vs limits for one pod, as HTML: placement and what happens past each limit."""
    req, lim = pod["requests"], pod["limits"]
    lines = [f"<b>{pod['name']}</b> — {pod['badge']}, {'Ready' if pod['ready'] else 'not Ready'}, QoS <b>{pod['qos']}</b>"]
    where = pod["node"] or "nowhere yet"
    lines.append(f"<b>Placement</b> (uses <i>requests</i> only): cpu {format_cpu(req.get('cpu', 0))}, "
                 f"memory {format_bytes(req.get('memory', 0))}"
                 + (f", GPUs {req['nvidia.com/gpu']}" if req.get("nvidia.com/gpu") else "") + f" → on <b>{where}</b>.")
    sched = pod.get("scheduled")
    if sched and sched.get("status") == "False":
        lines.append(f"Scheduler: {sched.get('message')}")
    cpu_lim, mem_lim = lim.get("cpu"), lim.get("memory")
    lines.append("<b>CPU limit</b>: " + (f"{format_cpu(cpu_lim)} → a CFS quota of {cpu_lim / 10:.0f} ms per 100 ms; "
                                          "above it the container is <i>throttled</i>, never killed." if cpu_lim
                                          else "none: may use idle CPU on the node."))
    lines.append("<b>Memory limit</b>: " + (f"{format_bytes(mem_lim)} → above it the kernel OOM-kills the container "
                                             "(OOMKilled, exit 137); it restarts in place with back-off." if mem_lim
                                             else "none: bounded only by the node; under node pressure it is evicted first "
                                                  "if its usage exceeds its request."))
    if pod["usage"] is not None:
        lines.append(f"Usage now: {format_bytes(pod['usage'])} "
                     f"({'above' if pod['usage'] > req.get('memory', 0) else 'within'} its memory request).")
    lines.append(f"Eviction rank under memory pressure: usage &gt; request first, then priority ({pod['priority']}), "
                 "then usage − request. QoS only predicts this order.")
    return "<br>".join(lines)


def _set_html(browser: QTextBrowser, html: str) -> None:
    """setHtml re-lays out the document: skip it when the frame did not change the text."""
    if browser.property("html_source") != html:
        browser.setProperty("html_source", html)
        browser.setHtml(html)


class K8sPanel(Panel):
    key = "k8s"
    title = "Kubernetes loops"
    order = 80
    reads = frozenset({"model", "arch", "gpu", "n_gpus", "gpus_per_node", "weight_bits", "kv_bits",
                       "serve_batch", "serve_context"})
    lesson = "k8s.md"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.timeline_data: Timeline | None = None
        self.index = 0
        self.scenario = None
        self.plan: ModelServerPlan | None = None
        # finished timelines: guides by key, the model server by its plan (scenario edits that
        # leave the plan alone, or go back to an earlier one, cost nothing)
        self._timelines: OrderedDict[tuple, Timeline] = OrderedDict()
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Guided scenario:"))
        self.chooser = QComboBox()
        self.chooser.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.chooser.setMinimumContentsLength(14)   # long titles elide: the panel fits ~1000 px
        for key in guide_keys():
            self.chooser.addItem(GUIDES[key].title if key in GUIDES else "Deploy the scenario's model server", key)
        self.chooser.currentIndexChanged.connect(lambda _i: self.load(self.chooser.currentData()))
        bar.addWidget(self.chooser, 1)
        bar.addWidget(self.tasks.widget())
        self.body.addLayout(bar)
        self.caption = LiveText(min_lines=3)   # re-texted every frame: a QLabel re-laid out the whole panel
        self.caption.setAccessibleName("What happens this second")
        self.body.addWidget(self.caption)
        self.error = ErrorLabel()
        self.body.addWidget(self.error)

        split = QSplitter(Qt.Horizontal)
        left = QSplitter(Qt.Vertical)
        self.cluster = ClusterView(self.theme)
        self.cluster.pod_clicked.connect(self._pod_selected)
        self.graph = GraphView(self.theme)
        left.addWidget(self.cluster)
        left.addWidget(self.graph)
        left.setSizes([400, 300])
        split.addWidget(left)
        tabs = self.tabs = QTabWidget()
        self.loop = QTextBrowser()
        self.events = self._events_table()
        self.explainer = QTextBrowser()
        yaml_box = QWidget()
        yl = QVBoxLayout(yaml_box)
        self.yaml = QPlainTextEdit(EXAMPLE_YAML)
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
        tabs.addTab(self.loop, "Reconcile loop")
        tabs.addTab(self.events, "Events")
        tabs.addTab(self.explainer, "Requests vs limits")
        tabs.addTab(yaml_box, "YAML")
        split.addWidget(tabs)
        split.setSizes([620, 380])
        self.body.addWidget(split, 1)
        self.selected_pod: str | None = None

    # --- scenario / timeline ---------------------------------------------------------------------
    def set_scenario(self, scenario) -> None:
        """Cheap on every edit: the model-server plan is arithmetic; its timeline is simulated in
        the worker, and only while it is the scenario shown (other guides ignore the scenario)."""
        self.scenario = scenario
        try:
            self.plan = model_server_plan(scenario)
            label = f"Deploy the scenario's model server ({self.plan.model}: {self.plan.gpus_needed} GPU(s) per replica)"
        except ValidationError as exc:
            self.plan, label = None, f"Deploy the scenario's model server (unavailable: {exc})"
        self.chooser.setItemText(self.chooser.findData("model-server"), label)
        key = self.chooser.currentData()
        if self.timeline_data is None:
            self.load(key)
        elif key == "model-server":
            self.load(key, background=True)

    def _cache_key(self, key: str) -> tuple:
        return (key, self.plan) if key == "model-server" else (key,)

    def load(self, key: str, background: bool = False) -> None:
        """Show guide ``key``: from the cache, else simulated now (a click: ≤ 0.5 s) or, for a
        scenario edit (``background``), in the worker with progress and Cancel."""
        if key == "model-server" and self.plan is None:
            self.error.show_error("the shared scenario has no valid serving memory; fix the scenario first")
            return
        cache_key = self._cache_key(key)
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
            def step(fraction: float) -> None:
                if cancelled():
                    raise Cancelled()
                progress(fraction, "simulating the cluster")
            return run_guide(key, scenario, progress=step)
        self.tasks.run(work, lambda tl: self._show_timeline(tl, cache_key), label="Re-running the model server…",
                       on_error=self.error.show_error)

    def _show_timeline(self, timeline: Timeline, cache_key: tuple | None = None) -> None:
        if cache_key is not None:
            self._timelines[cache_key] = timeline
            while len(self._timelines) > 16:
                self._timelines.popitem(last=False)
        if self.timeline_data is not None and timeline.key != self.timeline_data.key:
            self.index = 0
        self.timeline_data = timeline
        self.error.show_error(None)
        self.timeline_changed.emit()
        self.show_frame(self.index)

    def run_yaml(self) -> None:
        """Check the manifests here (quick), then build and run their cluster in the worker: the
        Cluster lives only on the worker thread; the GUI gets the finished frames."""
        try:
            docs = load_manifests(self.yaml.toPlainText())
        except ValidationError as exc:
            self.yaml_report.setText(f"Error: {exc}")
            return
        objs = [m.obj for m in docs]
        too_big = pod_limit_error(objs)
        if too_big:
            self.yaml_report.setText(f"Error: {too_big}")
            return
        report = [f"{m.title}: {u}" for m in docs for u in m.unsupported]

        def setup(c) -> None:
            if not any(o["kind"] == "Node" for o in objs):
                for i in range(3):
                    c.apply({"kind": "Node", "metadata": {"name": f"node-{i}"},
                             "status": {"allocatable": {"cpu": "4", "memory": "8Gi"}}})
            for o in sorted(objs, key=lambda o: o["kind"] != "Node"):
                c.apply(o)
        guide = Guide("yaml", "Your YAML", "Your manifests, applied at t = 0.", setup, [], YAML_SECONDS)
        seconds = int(guide.duration) + 1

        def work(progress, cancelled):
            def step(fraction: float) -> None:
                if cancelled():
                    raise Cancelled()
                second = round(fraction * seconds)
                progress(fraction, f"simulating your YAML: {second} of {YAML_SECONDS} s")
            try:
                return play_guide(guide, progress=step), None
            except ValidationError as exc:     # e.g. an object the cluster refuses on apply
                return None, str(exc)

        self.tasks.run(work, lambda out: self._yaml_done(out, report), label="Simulating your YAML…",
                       on_error=self._yaml_failed)
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

    def _yaml_done(self, out: tuple, report: list[str]) -> None:
        timeline, error = out
        if error is not None:
            self.yaml_report.setText(f"Error: {error}")
            return
        self.yaml_report.setText("Applied. Unsupported fields (dropped):<br>" + "<br>".join(report) if report
                                 else "Applied; every field is simulated.")
        self.index = 0
        self._show_timeline(timeline)

    def _yaml_failed(self, text: str) -> None:
        self.yaml_report.setText("Failed: " + (text.strip().splitlines() or ["unknown error"])[0])

    def wait_yaml(self, timeout_ms: int = 120_000) -> bool:
        """Block (processing events) until a YAML run ends: for tests and the self-test."""
        return self.tasks.wait(timeout_ms)

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
        deps = " · ".join(f"deploy/{d['name']}: {d['updated']} updated, {d['available']}/{d['replicas']} available "
                          f"(≤ {d['max_total']} pods, ≥ {d['min_available']} available) Progressing={d['progressing']}"
                          for d in f.deployments)
        self.caption.setText(f"<b>{self.timeline_data.title}</b> — t = {f.t:.0f} s — {f.caption}"
                             + (f"<br>{deps}" if deps else "") + (f"<br><b>{f.twin}</b>" if f.twin else ""))
        self.cluster.set_frame(f)
        self.graph.set_frame(f)
        self._fill_loop(f)
        self._fill_events(f)
        self._explain()

    def _fill_loop(self, f) -> None:
        """The rule each controller fired this second, grouped by controller."""
        by_controller: dict[str, list[str]] = {}
        for d in f.decisions:
            by_controller.setdefault(d["controller"], []).append(d["text"])
        html = "".join(f"<b>{ctrl}</b><ul>" + "".join(f"<li>{t}</li>" for t in texts[-6:]) + "</ul>"
                       for ctrl, texts in by_controller.items())
        _set_html(self.loop, html or "<i>No controller acted this second: desired = observed everywhere.</i>")

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

    def _pod_selected(self, name: str) -> None:
        self.selected_pod = name
        self._explain()

    def _explain(self) -> None:
        if self.timeline_data is None:
            return
        f = self.timeline_data.frames[self.index]
        pod = next((p for p in f.pods if p["name"] == self.selected_pod), None) or (f.pods[0] if f.pods else None)
        _set_html(self.explainer, explain_pod(pod, f.nodes) if pod else "<i>No pods.</i>")

    # --- exports / theme / selftest -------------------------------------------------------------------
    def result(self) -> object:
        if self.timeline_data is None:
            return {}
        f = self.timeline_data.frames[self.index]
        return {"scenario": self.timeline_data.key, "t": f.t, "nodes": f.nodes, "pods": f.pods,
                "replicasets": f.replicasets, "deployments": f.deployments, "services": f.services,
                "decisions": f.decisions, "events": f.events}

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
            spec = self.timeline()
            assert spec is not None and spec.n_frames > 1
            self.show_frame(spec.n_frames - 1)
        self.run_yaml()
        assert self.wait_yaml(), "the YAML run did not finish"
        assert self.timeline_data is not None and self.timeline_data.key == "yaml"


PANEL = K8sPanel
