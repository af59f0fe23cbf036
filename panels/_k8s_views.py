"""Painted views for the Kubernetes panel: the cluster (nodes, request bars, pod tiles) and the
ownership/selection graph. Pure drawing of engine frames; no rules live here."""
from __future__ import annotations

from collections import Counter

from PySide6.QtCore import QRect, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from engines.k8s.explain import node_status
from engines.k8s.quantity import format_bytes, format_cpu
from engines.k8s.scenarios import Frame, graph_layout, ownership_graph
from explorer.theme import ink_on
from panels._k8s_frames import context_lines, evicted_at, twin_since

# Okabe-Ito roles; every colour is paired with text and a pattern
STATE_STYLE = {  # badge → (palette index, brush pattern)
    "Running": (2, Qt.SolidPattern), "Pending": (1, Qt.Dense4Pattern), "ContainerCreating": (1, Qt.Dense4Pattern),
    "Terminating": (7, Qt.BDiagPattern), "Evicted": (5, Qt.DiagCrossPattern), "CrashLoopBackOff": (5, Qt.CrossPattern),
}
QOS_BADGE = {"Guaranteed": "G", "Burstable": "Bu", "BestEffort": "BE"}
LEGEND = ("solid line: ownerReferences (owns) · dashed: Service label selector (selects) · hatched dot: not Ready. "
          "Pod tiles: phase · ✓ Ready / ✗ not Ready · QoS class G = Guaranteed, Bu = Burstable, BE = BestEffort")


def _style(badge: str, ready: bool) -> tuple[int, Qt.BrushStyle]:
    for key, style in STATE_STYLE.items():
        if badge.startswith(key):
            if key == "Running" and not ready:
                return 0, Qt.Dense3Pattern
            return style
    return 6, Qt.Dense5Pattern


def fit_name(fm, width: float, name: str, suffix: int = 5) -> str:
    """``name`` whole if it fits ``width`` pixels, else its distinguishing suffix (a pod's random
    tail) after as much of the front as fits: "web-67…jxkk8"; at worst the suffix alone."""
    if fm.horizontalAdvance(name) <= width or len(name) <= suffix:
        return name
    tail = name[-suffix:]
    head = fm.elidedText(name[:-suffix], Qt.ElideRight, int(width - fm.horizontalAdvance(tail)))
    return head + tail if head else tail


def fit(fm, width: float, *candidates: str) -> str:
    """The first (longest) wording that fits ``width`` pixels, else the last one elided: narrow
    node columns get shorter labels instead of text clipped mid-glyph."""
    for text in candidates:
        if fm.horizontalAdvance(text) <= width:
            return text
    return fm.elidedText(candidates[-1], Qt.ElideRight, int(width))


def fresh_texts(view) -> list[tuple[str, QRectF, QFont]]:
    """``view``'s drawn texts as a paint now writes them: a repaint is asked for, not done, so a new
    frame shown a moment ago may not be painted yet; then it is painted off screen (only when asked)."""
    if view._drawn_for != view._state() and view.isVisible() and not view.size().isEmpty():
        view.grab()
    return list(view._drawn)


class ClusterView(QWidget):
    """Nodes as boxes with CPU / memory request bars; pods as tiles (phase, readiness, QoS)."""

    pod_clicked = Signal(str)

    def __init__(self, theme) -> None:
        super().__init__()
        self.theme = theme
        self.frame: Frame | None = None
        self.timeline = None
        self._context: tuple[str, ...] = ()
        self._twin_since: float | None = None
        self.selected: str | None = None
        self.tiles: list[tuple[QRectF, str]] = []
        self._drawn: list[tuple[str, QRectF, QFont]] = []
        self._drawn_for: tuple | None = None
        self.setMinimumHeight(200)   # a slide of the command line at 1280x800 fits (its tiles then show "…")
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)

    def set_frame(self, frame: Frame | None, timeline=None) -> None:
        """Show ``frame``; ``timeline`` (the run it is from) says what it follows from (read here, not per paint)."""
        self.frame, self.timeline = frame, timeline
        self._context = context_lines(timeline, frame) if frame is not None else ()
        self._twin_since = twin_since(timeline, frame) if frame is not None else None
        self.update()

    def _state(self) -> tuple:
        return (self.frame, self.timeline, self.selected, self.size(), self.theme, self.theme.point_size)

    def drawn_texts(self) -> list[tuple[str, QRectF, QFont]]:
        """What a paint writes now (for the slide check: this view paints its own text): painted
        afresh off screen when the frame or size changed since the last paint, not yet repainted."""
        return fresh_texts(self)

    def mousePressEvent(self, event) -> None:  # noqa: N802
        for rect, name in self.tiles:
            if rect.contains(event.position()):
                self.selected = name
                self.pod_clicked.emit(name)
                self.update()
                return

    def paintEvent(self, _event) -> None:  # noqa: N802
        p = QPainter(self)   # axis-aligned boxes: no antialiasing (patterned fills cost 5× with it)
        t = self.theme
        p.fillRect(self.rect(), QColor(t.bg))
        self.tiles = []
        drawn = self._drawn = []
        self._drawn_for = self._state()

        def text(rect: QRectF, flags, s: str, note: bool = True) -> None:
            p.drawText(rect, flags, s)
            if note:   # left-aligned: the ink spans the text's advance from the left edge
                width = min(rect.width(), p.fontMetrics().horizontalAdvance(s))
                drawn.append((s, QRectF(rect.left(), rect.top(), width, rect.height()), QFont(p.font())))

        if self.frame is None:
            return
        f = self.frame
        font = QFont()
        font.setPointSizeF(t.point_size * 0.9)
        p.setFont(font)
        fm = p.fontMetrics()
        line = fm.height()
        nodes = f.nodes
        pending = [x for x in f.pods if not x["node"] and x["active"]]
        evicted = evicted_at(f)
        columns = max(1, len(nodes) + (1 if pending else 0))
        w = (self.width() - 10) / columns
        # a footer with the simulated time (and the level-triggered twin, if any): tour captions cite
        # both, and in presenter mode the panel's caption line is folded away
        ready = sum(1 for x in f.pods if x["active"] and x["ready"])
        since = self._twin_since
        twin = f" · {f.twin}" + (f" since t = {since:.0f} s" if since is not None else "") if f.twin else ""
        footer = (f"t = {f.t:.0f} s · {len(nodes)} node{'s' * (len(nodes) != 1)} · {ready} pod{'s' * (ready != 1)} "
                  "Ready" + twin)
        p.setPen(QColor(t.fg))
        context = fit(fm, self.width() - 16, *self._context, "")
        if context and self.height() > 12 * line:     # a short view keeps its room for the nodes
            text(QRectF(8, self.height() - 2 * line - 6, self.width() - 16, line), Qt.AlignLeft, context)
        else:
            context = ""
        h = self.height() - 10 - line * (2 if context else 1) - 2
        bold = QFont(font)
        bold.setBold(bool(f.twin))
        p.setFont(bold)
        text(QRectF(8, self.height() - line - 4, self.width() - 16, line), Qt.AlignLeft,
             p.fontMetrics().elidedText(footer, Qt.ElideRight, self.width() - 16))
        p.setFont(font)
        for i, node in enumerate(nodes + ([{"name": "unscheduled (Pending)", "pending": True}] if pending else [])):
            x0 = 5 + i * w
            box = QRectF(x0 + 3, 5, w - 6, h)
            dashed = node.get("pending") or node.get("ready") != "True"
            p.setPen(QPen(QColor(t.fg), 2, Qt.DashLine if dashed else Qt.SolidLine))
            p.setBrush(QColor(t.panel_bg))
            p.drawRoundedRect(box, 6, 6)
            p.setPen(QColor(t.fg))
            inner = box.width() - 12
            title = node["name"]
            y = box.top() + 4
            if not node.get("pending"):
                status = node_status(node)
                if fm.horizontalAdvance(f"{title} — {status}") <= inner:
                    title = f"{title} — {status}"
                else:   # narrow column: the status gets its own line
                    text(QRectF(box.left() + 6, y, inner, line), Qt.AlignLeft, fit(fm, inner, title))
                    y += line
                    title = status
            text(QRectF(box.left() + 6, y, inner, line), Qt.AlignLeft, fit(fm, inner, title))
            y += line + 4
            if not node.get("pending"):
                for res, label, short, fmt in (("cpu", "CPU req", "CPU", format_cpu), ("memory", "mem req", "mem", format_bytes),
                                               ("nvidia.com/gpu", "GPU", "GPU", str)):
                    alloc = node["alloc"].get(res, 0)
                    if not alloc:
                        continue
                    used = node["requested"].get(res, 0)
                    frac = min(used / alloc, 1.0)
                    bar = QRectF(box.left() + 6, y, box.width() - 12, line)
                    p.setPen(QPen(QColor(t.fg), 1))
                    p.setBrush(Qt.NoBrush)
                    p.drawRect(bar)
                    fill, filled = t.palette[4], QRectF(bar.left(), bar.top(), bar.width() * frac, bar.height())
                    p.fillRect(filled, QBrush(QColor(fill), Qt.SolidPattern))
                    label_text = fit(fm, bar.width() - 8, f"{label} {fmt(used)} / {fmt(alloc)}",
                                     f"{short} {fmt(used)}/{fmt(alloc)}", f"{fmt(used)}/{fmt(alloc)}")
                    # the text twice, clipped: contrasting ink over the fill, the normal ink past it
                    for clip, ink in ((filled, ink_on(fill, t)), (bar.adjusted(filled.width(), 0, 0, 0), t.fg)):
                        p.setClipRect(clip)
                        p.setPen(QColor(ink))
                        text(bar.adjusted(4, 0, -4, 0), Qt.AlignVCenter | Qt.AlignLeft, label_text,
                             note=clip is not filled)
                    p.setClipping(False)
                    p.setPen(QColor(t.fg))
                    y += line + 4
                cap = node["memory_capacity"]
                if cap:
                    used_mem, cap_mem = format_bytes(node["memory_used"]), format_bytes(cap)
                    lines = [fit(fm, inner, f"mem in use {used_mem} / {cap_mem}", f"in use {used_mem}/{cap_mem}",
                                 f"used {used_mem}/{cap_mem}")]
                    if fm.horizontalAdvance(f"used {used_mem}/{cap_mem}") > inner:   # narrow: value on its own line
                        lines = ["mem in use", fit(fm, inner, f"{used_mem}/{cap_mem}")]
                    for row in lines:
                        text(QRectF(box.left() + 6, y, inner, line), Qt.AlignLeft, row)
                        y += line
                    y += 4
                if node["taints"]:
                    text(QRectF(box.left() + 6, y, inner, line), Qt.AlignLeft,
                               fit(fm, inner, "taint: " + ", ".join(sorted(set(node["taints"])))))
                    y += line + 4
                # kubectl get pods lists these too: Terminating (deleted, not yet gone: stuck while its
                # node is unreachable), Evicted, Completed
                pods = [x for x in f.pods if x["node"] == node["name"] and (
                    x["active"] or x["badge"] in ("Evicted", "Terminating") or x["badge"].startswith("Completed"))]
            else:
                pods = pending
            for pod in pods:
                room = box.width() - 12 - 8 - 6
                # an evicted pod says when: a bare pod stays Evicted, and a tour cites the second it went
                badge = pod["badge"]
                badges = ((f"{badge} at t = {evicted[pod['name']]:.0f} s", f"{badge} t={evicted[pod['name']]:.0f}s", badge)
                          if badge == "Evicted" and pod["name"] in evicted else (badge,))
                ready = "Ready" if pod["ready"] else "not Ready"
                mark = "✓" if pod["ready"] else "✗"
                restarts = f" · ↻{pod['restarts']}" if pod["restarts"] else ""
                qos = QOS_BADGE[pod["qos"]]
                # the readiness/QoS wordings, longest first; each fits a narrower column than the last
                details = (f"{ready} · QoS {qos}{restarts}", f"{ready} · {qos}{restarts}", f"{mark} {qos}{restarts}")
                if fm.horizontalAdvance(f"{badges[-1]} · {details[-1]}") <= room:
                    status = [fit(fm, room, *(f"{b} · {d}" for b in badges for d in details))]
                else:   # a narrow column: phase on one line, readiness and QoS on the next, nothing elided
                    status = [fit(fm, room, *badges), fit(fm, room, *details)]
                tile_h = line * (1 + len(status)) + 4 + 4 * len(status)
                if y + tile_h > box.bottom() - 4:
                    text(QRectF(box.left() + 6, y, box.width() - 12, line), Qt.AlignLeft, "…")
                    break
                rect = QRectF(box.left() + 6, y, box.width() - 12, tile_h)
                idx, pattern = _style(pod["badge"], pod["ready"])
                p.setPen(QPen(QColor(t.accent if pod["name"] == self.selected else t.fg),
                              3 if pod["name"] == self.selected else 1))
                p.setBrush(QBrush(QColor(t.palette[idx]), pattern))
                p.drawRoundedRect(rect, 4, 4)
                label_rect = rect.adjusted(4, 2, -4, -2)
                name = fit(fm, room, pod["name"], "…" + pod["name"][-11:], "…" + pod["name"][-5:])
                p.setPen(QColor(t.fg))
                for k, row in enumerate([name] + status):
                    top = label_rect.top() + k * (line + 2)
                    p.fillRect(QRectF(label_rect.left(), top, min(label_rect.width(), fm.horizontalAdvance(row) + 8),
                                      line), QColor(t.bg))
                    text(QRectF(label_rect.left() + 2, top, label_rect.width(), line), Qt.AlignLeft, row)
                self.tiles.append((rect, pod["name"]))
                y += tile_h + 4
        p.end()


class GraphView(QWidget):
    """Deployment → ReplicaSets → Pods (solid: ownerReferences) and Service → Pods (dashed: labels)."""

    def __init__(self, theme) -> None:
        super().__init__()
        self.theme = theme
        self.frame: Frame | None = None
        self.timeline = None
        self._context: tuple[str, ...] = ()
        self._graph: tuple | None = None       # (frame, graph, layout) of the frame drawn last
        self._drawn: list[tuple[str, QRectF, QFont]] = []
        self._drawn_for: tuple | None = None
        self.setMinimumHeight(0)     # under the cluster in a short window: the cluster keeps the room

    def drawn_texts(self) -> list[tuple[str, QRectF, QFont]]:
        """What a paint writes now (for the slide check), as :meth:`ClusterView.drawn_texts`."""
        return fresh_texts(self)

    def _state(self) -> tuple:
        return (self.frame, self.timeline, self.size(), self.theme, self.theme.point_size)

    def set_frame(self, frame: Frame | None, timeline=None) -> None:
        self.frame, self.timeline = frame, timeline
        self._context = context_lines(timeline, frame) if frame is not None else ()
        self.update()

    def least_height(self) -> int:
        """The height below which node labels cannot clear each other: two layer gaps, each a node
        and its label, plus the margins and one label line."""
        font = QFont()
        font.setPointSizeF(self.theme.point_size * 0.75)
        label_h = QFontMetrics(font).height() + 2
        return 30 + label_h + 2 * (18 + 2 * label_h)

    def graph(self):
        """The ownership graph and its layout, built once per frame (not on every repaint)."""
        if self._graph is None or self._graph[0] is not self.frame:
            g = ownership_graph(self.frame)
            self._graph = (self.frame, g, graph_layout(g))
        return self._graph[1], self._graph[2]

    def paintEvent(self, _event) -> None:  # noqa: N802
        p = QPainter(self)
        p.setRenderHint(QPainter.Antialiasing)
        t = self.theme
        p.fillRect(self.rect(), QColor(t.bg))
        drawn = self._drawn = []
        self._drawn_for = self._state()
        if self.frame is None:
            return
        g, pos = self.graph()
        font = QFont()
        font.setPointSizeF(t.point_size * 0.75)
        p.setFont(font)
        fm = p.fontMetrics()
        legend = LEGEND
        legend_rect = fm.boundingRect(QRect(0, 0, max(self.width() - 20, 50), 1000), int(Qt.TextWordWrap), legend)
        legend_h = legend_rect.height() + 6
        label_h = fm.height() + 2
        # a short view (a tab under the cluster) keeps the graph readable: the key goes first, then the footer
        need = self.least_height() - 30 - label_h   # two layer gaps, each a node and its label clear of the next
        if self.height() < self.least_height():   # too short for labels clear of each other: nothing
            p.end()
            return
        footer_h = label_h
        if self.height() - 30 - legend_h - footer_h - label_h < need:
            legend_h, legend = 0, ""
        if self.height() - 30 - footer_h - label_h < need:
            footer_h = 0
        # then what the frame follows from, on a line of its own above the graph, where there is room
        context = fit(fm, self.width() - 20, *self._context, "")
        top = label_h if context and self.height() - 30 - legend_h - footer_h - 2 * label_h >= need else 0
        W, H = self.width() - 20, max(self.height() - 30 - legend_h - footer_h - label_h - top, 20)

        def xy(n):
            x, y = pos[n]
            return 10 + x * W, 20 + top + (2 - y) / 2 * H

        # graph_layout spaces each layer evenly: a label may use its node's share of the width
        per_layer = Counter(y for _x, y in pos.values())
        revisions = {r["name"]: r["revision"] for r in self.frame.replicasets if r.get("revision")}

        for a, b, data in g.edges(data=True):
            if a not in pos or b not in pos:
                continue
            owns = data["relation"] == "owns"
            p.setPen(QPen(QColor(t.fg if owns else t.palette[5]), 2 if owns else 1.5, Qt.SolidLine if owns else Qt.DashLine))
            (x1, y1), (x2, y2) = xy(a), xy(b)
            p.drawLine(int(x1), int(y1), int(x2), int(y2))
        for n, data in g.nodes(data=True):
            if n not in pos:
                continue
            x, y = xy(n)
            kind = data["kind"]
            short = {"Deployment": "deploy", "ReplicaSet": "rs", "Service": "svc", "Pod": ""}[kind]
            slot = max(W / per_layer[pos[n][1]] - 8, fm.horizontalAdvance("…00000"))
            label = fit_name(fm, slot, data["label"] if kind == "Pod" else f"{short}/{data['label']}")
            if kind == "ReplicaSet" and data["label"] in revisions and fm.horizontalAdvance(label) <= slot:
                # the Deployment's revision of this ReplicaSet: a rollout's tour step cites it
                label = fit(fm, slot, f"{label} (revision {revisions[data['label']]})",
                            f"{label} (rev. {revisions[data['label']]})", label)
            color = QColor(t.palette[2] if data.get("ready", True) else t.palette[0])
            p.setPen(QPen(QColor(t.fg), 1))
            p.setBrush(QBrush(color, Qt.SolidPattern if data.get("ready", True) else Qt.Dense4Pattern))
            r = 7 if kind == "Pod" else 9
            p.drawEllipse(QRectF(x - r, y - r, 2 * r, 2 * r))
            # label on a background chip, kept inside the widget, so edges never cross the text
            tw = fm.horizontalAdvance(label) + 6
            lx = min(max(x - tw / 2, 2), self.width() - tw - 2)
            chip = QRectF(lx, y + r + 1, tw, label_h)
            p.fillRect(chip, QColor(t.bg))
            p.setPen(QColor(t.fg))
            p.drawText(chip, Qt.AlignCenter, label)
            drawn.append((label, chip, QFont(font)))
        # the simulated second and what the graph holds: tour captions cite them, and in presenter
        # mode the cluster view's footer is folded away
        pods = sum(1 for _n, d in g.nodes(data=True) if d["kind"] == "Pod")
        services = "; ".join(f"svc/{s['name']}: {len(s['ready'])} ready endpoint{'s' * (len(s['ready']) != 1)}"
                             for s in self.frame.services)
        footer = fm.elidedText(f"t = {self.frame.t:.0f} s · {pods} pod{'s' * (pods != 1)}"
                               + (f" · {services}" if services else ""), Qt.ElideRight, self.width() - 20)
        if top:
            context_rect = QRectF(10, 2, fm.horizontalAdvance(context), label_h)
            p.drawText(context_rect, Qt.AlignLeft | Qt.AlignVCenter, context)
            drawn.append((context, context_rect, QFont(font)))
        if footer_h:
            footer_rect = QRectF(10, self.height() - legend_h - label_h, fm.horizontalAdvance(footer), label_h)
            p.drawText(footer_rect, Qt.AlignLeft | Qt.AlignVCenter, footer)
            drawn.append((footer, footer_rect, QFont(font)))
        if legend:
            legend_box = QRectF(10, self.height() - legend_h, self.width() - 20, legend_h)
            p.drawText(legend_box, Qt.AlignLeft | Qt.TextWordWrap, legend)
            drawn.append((legend, QRectF(legend_box.topLeft(), QRectF(legend_rect).size()), QFont(font)))
        p.end()
