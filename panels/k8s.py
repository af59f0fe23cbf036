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
from functools import partial
from html import escape

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QSplitter, QVBoxLayout, QWidget

from engines.core.errors import ValidationError
from engines.k8s import EXAMPLE_YAML, Params, YamlRun, deployment_status, explain_pod, run_yaml
from engines.k8s.dump import read_dump
from engines.k8s.params import encode_commands
from engines.k8s.scenarios import (GUIDES, ModelServerPlan, Timeline, autoscale_plan, dump_guide, fork, guide_keys,
                                   model_server_plan, play_guide, run_guide)
from explorer.binder import ParamBinder
from explorer.ui.live_text import LiveText
from explorer.panel import Panel, TimelineSpec
from explorer.ui.widgets import ErrorLabel
from panels._k8s_pages import YAML_BUTTON, DumpButton, K8sTabs  # noqa: F401  (YAML_BUTTON stays importable here)
from panels._k8s_tabs import CommandBar, paragraphs, set_html
from panels._k8s_split import ClusterSplit
from panels._k8s_views import ClusterView, GraphView

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
        self.open_dump_button = DumpButton()
        self.open_dump_button.chosen.connect(self.open_dump)
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
        self.cluster, self.graph = ClusterView(self.theme), GraphView(self.theme)
        self.cluster.pod_clicked.connect(lambda name: self.update_params(pod=name, why=f"Pod/{name}"))
        left = ClusterSplit(self.cluster, self.graph)   # the cluster drawing first; the graph where it fits
        split.addWidget(left)
        tabs = self.tabs = K8sTabs(self.theme, self.params.manifests)
        self.loop, self.events, self.explainer = tabs.loop, tabs.events, tabs.explainer
        self.why, self.addresses, self.hpa = tabs.why, tabs.addresses, tabs.hpa
        yaml_box = self.yaml_view = tabs.yaml_view
        yaml_box.run_requested.connect(self.run_yaml)
        yaml_box.apply_requested.connect(lambda text: self.give("apply -f -\n" + text))
        self.yaml = yaml_box.editor                        # tours and tests reach the editor and its buttons
        self.run_yaml_button, self.apply_now_button = yaml_box.run_button, yaml_box.apply_now_button
        self.yaml_report = yaml_box.report
        self._yaml_running = False
        self.tasks.finished.connect(self._yaml_finished)
        self.why.chosen.connect(lambda key: self.update_params(why=key))
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
        if "yaml" in changed:
            self.yaml_view.set_text(p.manifests)
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
        self.draw_when_shown(self.hpa, partial(self.hpa.set_timeline, timeline, self.autoplan), "timeline")
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
    def run_yaml(self, text: str | None = None) -> None:
        """Apply: the editor's text becomes ``params.yaml`` (checked by Params, so a bad manifest is
        reported here, naming the field, and changes nothing); its run is shown once it is done."""
        text = self.yaml.toPlainText() if text is None else text
        changes = {"yaml": "" if text == EXAMPLE_YAML else text, "yaml_shown": True}
        if all(getattr(self.params, k) == v for k, v in changes.items()):
            return self._start_yaml()      # the same manifests again (after a Cancel, say)
        error = self.update_params(**changes)
        if error is not None:
            self.yaml_view.show_report(f"Error: {error}")

    def _start_yaml(self) -> None:
        """Build and run the manifests' cluster in the worker: the Cluster lives only on the worker
        thread; the GUI gets the finished frames."""
        text, commands = self.params.manifests, self.params.command_list

        def work(progress, cancelled) -> YamlRun:
            return run_yaml(text, progress, cancelled, commands=commands)
        self.tasks.run(work, self._yaml_done, label="Simulating your YAML…", on_error=self._yaml_failed)
        self._yaml_running = True
        self.yaml_view.set_running(True)

    def _yaml_finished(self, how: str) -> None:
        """Any end of the panel's task (done, failed, cancelled or superseded) frees the button."""
        if not self._yaml_running:
            return
        self._yaml_running = False
        self.yaml_view.set_running(False)
        if how == "cancelled":
            self.yaml_view.show_report("Cancelled: nothing applied; the view still shows the previous timeline.")

    def _yaml_done(self, run: YamlRun) -> None:
        self.yaml_view.show_report(run.report)
        if run.timeline is not None:
            self.index = 0
            self._show_timeline(run.timeline)

    def _yaml_failed(self, text: str) -> None:
        self.yaml_view.show_report("Failed: " + (text.strip().splitlines() or ["unknown error"])[0])

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
        self.cluster.set_frame(f, self.timeline_data)
        self.graph.set_frame(f, self.timeline_data)
        self.draw_when_shown(self.loop, partial(self.loop.show_result, f, self.timeline_data))
        self.draw_when_shown(self.events, partial(self.events.show_result, f))
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
        self.draw_when_shown(self.why, partial(self.why.set_frame, f, self.params.why or (
            f"Pod/{self.params.pod}" if self.params.pod else "")))
        self.draw_when_shown(self.addresses, partial(self.addresses.set_frame, f, self.timeline_data))
        self.draw_when_shown(self.hpa, partial(self.hpa.set_frame, f), "frame")

    def _explain(self) -> None:
        self.draw_when_shown(self.explainer, self._draw_explainer)

    def _draw_explainer(self) -> None:
        if self.timeline_data is None:
            return
        f = self.timeline_data.frames[self.index]
        pod = next((p for p in f.pods if p["name"] == self.params.pod), None) or (f.pods[0] if f.pods else None)
        set_html(self.explainer, paragraphs(explain_pod(pod, f.nodes).lines) if pod else "<i>No pods.</i>")

    # --- exports / theme / selftest -------------------------------------------------------------------
    def result(self) -> object:
        return self.timeline_data.frames[self.index].record(self.timeline_data.key) if self.timeline_data else {}

    def table(self) -> list[dict]:
        return self.timeline_data.frames[self.index].pod_rows() if self.timeline_data else []

    def apply_theme(self, theme) -> None:
        super().apply_theme(theme) if hasattr(super(), "apply_theme") else None
        self.yaml_view.apply_theme(theme)
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
