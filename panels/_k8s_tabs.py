"""The Kubernetes panel's hands-on parts: the command bar (kubectl and an operator's buttons), and
the Why?, Addresses and Autoscaler tabs. Thin views: the commands come from
``engines.k8s.kubectl.operator_commands``, the words from ``engines.k8s.why`` and
``engines.k8s.network.client_view``; the widgets lay them out."""
from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QLineEdit, QMenu, QPushButton, QTextBrowser, QToolButton,
                               QVBoxLayout, QWidget)

from engines.core.errors import ValidationError
from engines.k8s import client_view, why
from engines.k8s.kubectl import ACCEPTED_NOTE, operator_commands
from engines.k8s.why import WHY_KINDS
from explorer.binder import quiet
from explorer.ui.widgets import make_plot, pen
from panels._k8s_frames import context_lines

BUTTONS = (("delete pod", "Delete pod"), ("relabel pod", "Relabel pod"), ("scale up", "Scale +1"),
           ("scale down", "Scale −1"), ("cordon", "Cordon node"), ("uncordon", "Uncordon node"), ("drain", "Drain node"),
           ("rollout undo", "Undo rollout"), ("rollout pause", "Pause rollout"), ("rollout resume", "Resume rollout"))


def paragraphs(lines) -> str:
    """Each point of an explanation its own paragraph: a gap between them reads as a list of points, and on
    a slide the text takes the height of the pane rather than a third of it."""
    return "".join(f"<p>{line}</p>" for line in lines)


def set_html(browser: QTextBrowser, html: str) -> None:
    """setHtml re-lays out the document: skip it when the frame did not change the text."""
    if browser.property("html_source") != html:
        browser.setProperty("html_source", html)
        browser.setHtml(html)


class CommandBar(QWidget):
    """A kubectl line and an operator's menu of commands; ``command`` carries the text to give now.
    One row, so the cluster drawing keeps its height; the answers show under it at the frames
    where commands were given."""

    command = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        row = self.row = QHBoxLayout()
        row.addWidget(QLabel("kubectl"))
        self.line = QLineEdit()
        self.line.setPlaceholderText("scale deploy/web --replicas=6 · set image deploy/web web=web:2 · "
                                     "patch deploy web --type merge -p '{\"spec\":{\"replicas\":2}}'")
        self.line.setAccessibleName("kubectl command")
        self.line.returnPressed.connect(self._give_line)
        row.addWidget(self.line, 1)
        self.run = QPushButton("Run at this second")
        self.run.setToolTip("Give the command to the cluster as it is at the frame shown; the timeline forks here "
                            "and the loops answer from the next second")
        self.run.clicked.connect(self._give_line)
        row.addWidget(self.run)
        self.operator = QToolButton()
        self.operator.setText("Operator ▾")
        self.operator.setToolTip("What an operator does, aimed at the selected pod, its Deployment and its node")
        self.operator.setPopupMode(QToolButton.InstantPopup)
        self.menu = QMenu(self.operator)
        self.operator.setMenu(self.menu)
        self.actions_by_name: dict[str, QAction] = {}
        for action, label in BUTTONS:
            a = self.menu.addAction(label)
            a.triggered.connect(lambda _=False, name=action: self._give_action(name))
            self.actions_by_name[action] = a
        row.addWidget(self.operator)
        lay.addLayout(row)
        self.result = QLabel()
        self.result.setWordWrap(True)
        self.result.setAccessibleName("What the API server answered")
        self.result.hide()
        lay.addWidget(self.result)
        self.commands: dict[str, str] = {}

    def _give_line(self) -> None:
        text = self.line.text().strip()
        if text:
            self.command.emit(text[len("kubectl "):] if text.startswith("kubectl ") else text)

    def _give_action(self, action: str) -> None:
        command = self.commands.get(action)
        if command:
            self.line.setText(command)
            self.command.emit(command)

    def set_frame(self, frame, pod: str | None) -> None:
        """Aim the operator's commands at this frame's objects (the selected pod, its Deployment and node)."""
        self.commands = operator_commands(frame, pod) if frame is not None else {}
        for action, label in BUTTONS:
            a, command = self.actions_by_name[action], self.commands.get(action)
            a.setVisible(command is not None or action in ("delete pod", "scale up", "cordon", "drain"))
            a.setEnabled(command is not None)
            a.setText(f"{label}: kubectl {command}" if command else f"{label} (nothing to aim it at)")

    def show_results(self, results, note: str = "", now: float | None = None) -> None:
        """The answers to the latest commands given up to the frame shown (or ``note``); hidden when
        there are none."""
        if not results:
            self.result.setText(note)
            self.result.setVisible(bool(note))
            return
        if not self.line.hasFocus():
            self.line.setText(results[-1].command.splitlines()[0])   # what was typed, for a tour step or a replay
        parts = []
        for r in results:
            verdict = "<b>accepted</b>" if r.accepted else "<b>rejected</b>"
            when = f"at t = {r.t:.0f} s" + (f" ({now - r.t:.0f} s ago)" if now is not None and now - r.t > 1 else "")
            parts.append(f"{when}: $ kubectl {escape(r.command.splitlines()[0])} → {verdict}: "
                         + "<br>".join(escape(x) for x in r.message.splitlines()[:6]))
        self.result.setText("<br>".join(parts) + (f"<br><i>{escape(ACCEPTED_NOTE)}</i>"
                                                   if any(r.accepted for r in results) else ""))
        self.result.show()


class WhyView(QWidget):
    """Pick an object of the frame; read the describe-like walk that ends in its reason."""

    chosen = Signal(str)     # "Kind/name"

    def __init__(self) -> None:
        super().__init__()
        lay = QVBoxLayout(self)
        row = QHBoxLayout()
        row.addWidget(QLabel("Why is"))
        self.picker = QComboBox()
        self.picker.setAccessibleName("Object to explain")
        self.picker.setMinimumContentsLength(10)
        self.picker.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.picker.activated.connect(lambda _i: self.chosen.emit(self.picker.currentData() or ""))
        row.addWidget(self.picker, 1)
        lay.addLayout(row)
        self.text = QTextBrowser()
        lay.addWidget(self.text, 1)

    def set_frame(self, frame, selected: str) -> None:
        """Fill the picker with the frame's objects and walk ``selected`` ("Kind/name")."""
        items = [(f"{k}/{o['metadata']['name']}", f"{k if k != 'HorizontalPodAutoscaler' else 'HPA'} "
                  f"{o['metadata']['name']}") for k in WHY_KINDS
                 for o in sorted((frame.objects or {}).get(k, {}).values(), key=lambda o: o["metadata"]["name"])
                 if not (k == "Pod" and o["metadata"].get("deletionTimestamp") is None
                         and (o.get("status") or {}).get("phase") in ("Succeeded",))]
        keys = [k for k, _ in items]
        if [self.picker.itemData(i) for i in range(self.picker.count())] != keys:
            with quiet(self.picker):
                self.picker.clear()
                for key, label in items:
                    self.picker.addItem(label, key)
        if selected not in keys:
            selected = keys[0] if keys else ""
        self.picker.setCurrentIndex(max(keys.index(selected), 0) if selected else -1)
        if not selected:
            set_html(self.text, "<i>No objects in this frame.</i>")
            return
        kind, name = selected.split("/", 1)
        try:
            w = why(frame, kind, name)
        except ValidationError as exc:
            set_html(self.text, f"<i>{escape(str(exc))}</i>")
            return
        html = [f"<p><b>{escape(kind)} {escape(name)}</b>: <b>{escape(w.answer)}</b></p>"]
        for head, lines in w.sections:
            html.append(f"<b>{escape(head)}</b><ul>" + "".join(f"<li>{escape(x)}</li>" for x in lines) + "</ul>")
        html.append("<p><i>Like kubectl describe (conditions, owners, events), plus the decision this simulator "
                    "records for every controller; a real cluster keeps no such record.</i></p>")
        set_html(self.text, "".join(html))


class AddressView(QTextBrowser):
    """Services with their ClusterIP, the EndpointSlice this second, and a client's view."""

    def __init__(self) -> None:
        super().__init__()
        self.pinned: dict[str, tuple[str, float]] = {}   # Service → (pod IP a client copied down, when)

    def reset(self) -> None:
        self.pinned = {}

    def _pin(self, timeline, name: str) -> tuple[str, float] | None:
        """The first ready address the Service ever had in this timeline: what a client copies."""
        if name not in self.pinned and timeline is not None:
            for f in timeline.frames:
                svc = next((s for s in f.services if s["name"] == name), None)
                ready = [e for e in (svc or {}).get("endpoints", []) if e["ready"]]
                if ready:
                    self.pinned[name] = (ready[0]["ip"], f.t)
                    break
        return self.pinned.get(name)

    def set_frame(self, frame, timeline) -> None:
        """Lists, not tables: the tab is ~330 px wide, and an address must not wrap mid-number."""
        since = context_lines(timeline, frame)
        html = [f"<p><i>t = {frame.t:.0f} s" + (f" · {escape(since[-1])}" if since else "") + "</i></p>"]
        for svc in frame.services:
            pin = self._pin(timeline, svc["name"])
            pinned = pin[0] if pin and pin[1] <= frame.t else None
            html.append(f"<h4>Service {escape(svc['name'])}: ClusterIP {escape(svc.get('cluster_ip') or 'none')}</h4>")
            if svc.get("selector"):
                html.append("<p><b>A client's view</b>" + (f" (it copied {escape(pin[0])} at t = {pin[1]:.0f} s)"
                                                            if pinned else "") + ":</p><ul>"
                            + "".join(f"<li>{x}</li>" for x in client_view(frame, svc["name"], pinned)) + "</ul>")
            rows = "".join(
                f"<li><b>{escape(e['ip'])}</b> {escape(e['pod'])} on {escape(e['node'] or '—')}: "
                f"ready {'yes' if e['ready'] else 'no'} · serving {'yes' if e['serving'] else 'no'} · "
                f"terminating {'yes' if e['terminating'] else 'no'}</li>" for e in svc.get("endpoints", []))
            html.append(f"<p>EndpointSlice {escape(', '.join(svc.get('slices', [])) or '—')} at t = {frame.t:.0f} s "
                        f"(selector {escape(str(svc['selector']))}):</p><ul>{rows or '<li>no endpoints</li>'}</ul>")
        cidrs = {n["name"]: n.get("pod_cidr") or "—" for n in frame.nodes}
        html.append("<h4>Pod addresses</h4><ul>" + "".join(
            f"<li><b>{escape(p['ip'] or '—')}</b> {escape(p['name'])} on {escape(p['node'] or '— (Pending)')}"
            + (f" ({escape(cidrs.get(p['node'], '—'))})" if p["node"] else "") + "</li>"
            for p in frame.pods if p["active"]) + "</ul>")
        html.append("<p><i>Pod IPs: the node's pod CIDR (node IPAM range allocator), handed out by the CNI's "
                    "host-local IPAM after the last address used; ClusterIPs: random in 10.96.0.0/12 (kubeadm's "
                    "default service range).</i></p>")
        set_html(self, "".join(html))


class HpaView(QWidget):
    """Request rate and replicas over the whole run, and the HPA's reasoning this second."""

    def __init__(self, theme) -> None:
        super().__init__()
        lay = QVBoxLayout(self)
        self.plot = make_plot(theme, "HPA over the run", "replicas", "simulated s")
        self.plot.setMinimumHeight(120)   # the tab sets the command-line slide's least height
        self.cursor = None
        self.theme = theme
        lay.addWidget(self.plot, 1)
        self.key = QLabel("solid red-orange: desired replicas · solid green: running (got a GPU) · dashed blue: Pending · "
                          "dotted: load ÷ per-pod target (the replicas the load needs)")
        self.key.setWordWrap(True)
        lay.addWidget(self.key)
        self.text = QTextBrowser()
        lay.addWidget(self.text, 1)
        self._timeline = None
        self._run = ""          # the plan and the replica changes over the whole run (HTML)

    def set_timeline(self, timeline, plan=None) -> None:
        """Draw the run; ``plan`` (engines.k8s.scenarios.AutoscalePlan) is what the autoscale run was made from."""
        import pyqtgraph as pg
        if timeline is self._timeline:
            return
        self._timeline = timeline
        self.plot.clear()
        frames = [f for f in timeline.frames if f.hpas] if timeline is not None else []
        self._run = ""
        if not frames:
            return
        # when the HPA changed the replica count: tour steps cite those seconds, read off the line
        changes, last = [], frames[0].hpas[0]["desired"]
        for f in frames:
            if f.hpas[0]["desired"] != last:
                last = f.hpas[0]["desired"]
                changes.append(f"t = {f.t:.0f} s → {last}")
        self._run = f"<b>Desired replicas over the run</b>: {frames[0].hpas[0]['desired']} at first; {', '.join(changes)}."
        if plan is not None and timeline.key == "autoscale":
            self._run += ("<br><b>Traffic</b> (requests/s): " + " → ".join(f"{rps:g} at t = {t:.0f} s" for t, rps in plan.traffic)
                          + f".<br><b>The plan</b>: {escape(plan.summary)}")
        t = [f.t for f in frames]
        target = next((f.hpas[0]["metrics"][0]["target"] for f in frames if f.hpas[0]["metrics"]), None)
        pal = self.theme.palette
        series = [("desired replicas", [f.hpas[0]["desired"] or 0 for f in frames], pen(pal[5], 3)),
                  ("running (got a GPU)", [f.hpas[0]["running"] for f in frames], pen(pal[2], 3)),
                  ("Pending", [f.hpas[0]["pending"] for f in frames], pen(pal[1], 2, style=Qt.DashLine))]
        if target:
            series.append(("load ÷ per-pod target", [f.hpas[0]["load"] / target for f in frames], pen(self.theme.fg, 2, style=Qt.DotLine)))
        for name, ys, p in series:
            self.plot.plot(t, ys, pen=p, name=name)
        self.cursor = pg.InfiniteLine(pos=0, angle=90, pen=pen(self.theme.fg, 1))
        self.plot.addItem(self.cursor)

    def set_frame(self, frame) -> None:
        if self.cursor is not None:
            self.cursor.setPos(frame.t)
        if not frame.hpas:
            set_html(self.text, "<i>No HorizontalPodAutoscaler in this timeline: choose “Autoscale the model server”.</i>")
            return
        h = frame.hpas[0]
        metric = h["metrics"][0] if h["metrics"] else None
        lines = [f"<b>HPA {escape(h['name'])}</b> → Deployment {escape(h['target'])}: min {h['min']}, max {h['max']}.",
                 f"Traffic now {h['load']:.1f} requests/s"
                 + (f"; per pod {metric['current']:.1f} against a target of {metric['target']:g}." if metric else "."),
                 f"Replicas: current {h['current']}, desired {h['desired']}; {h['running']} running (a GPU each), "
                 f"<b>{h['pending']} Pending</b>" + (" — no GPU left: capacity, not YAML, is the limit." if h["pending"] else ".")]
        lines += [f"This second: {escape(d['text'])}" for d in frame.decisions
                  if d["object"] == f"HorizontalPodAutoscaler {h['name']}"][-1:]
        lines += [f"{escape(c['type'])}={escape(c['status'])} ({escape(c['reason'])}): {escape(c['message'])}"
                  for c in h["conditions"]]
        lines.append(self._run)
        lines.append("<i>desired = ceil(replicas × current ÷ target) outside a ±10 % tolerance; Pending pods count "
                     "as 0 when scaling up; scale-down waits for the highest recommendation of the last 300 s "
                     "(kubernetes pkg/controller/podautoscaler replica_calculator.go, horizontal.go).</i>")
        set_html(self.text, "<br>".join(lines))
