"""The pipeline panel's tensor- and 3D-parallel charts: one TP block step by step, the DP × TP × PP
rank grid grouped by node, and memory per stage. Drawing only: they take engines.pipeline results
(TPStep list, Layout3D, LayoutStudy)."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QPen
from PySide6.QtWidgets import QGraphicsRectItem

from explorer.theme import Theme
from explorer.ui.fast_items import Bars
from explorer.ui.label_layer import range_end_for_label
from explorer.ui.widgets import cache_static, make_plot, pen, size_floating_legend
from panels._pipeline_views import Texts, _Blocks


class TPView(pg.PlotWidget):
    """Steps of one tensor-parallel block (columns) × GPUs (rows). Each cell shows which part of
    the tensor the GPU holds: the whole (replicated), slice i of t (column / sequence shard) or
    a hatched whole (a partial sum awaiting the all-reduce). Collectives are vertical bars."""

    def __init__(self, theme: Theme) -> None:
        super().__init__()
        self.theme = theme
        self.setMouseEnabled(x=False, y=False)
        self.hideAxis("bottom")
        self.getPlotItem().invertY(True)
        cache_static(self)
        self.cells = _Blocks()
        self.addItem(self.cells)
        self.texts = Texts(self)
        self.highlight = QGraphicsRectItem()
        self.addItem(self.highlight)
        self.steps = []
        self.t = 1
        self.current = 0

    def set_steps(self, steps, t: int, current: int = 0) -> None:
        self.steps, self.t = steps, t
        self.current = max(0, min(current, len(steps) - 1))
        self._draw()

    def set_current(self, index: int) -> None:
        index = max(0, min(index, len(self.steps) - 1))
        if index != self.current:
            self.current = index
            self._draw()

    def apply_theme(self, theme: Theme) -> None:
        self.theme = theme
        self._draw()

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        super().resizeEvent(event)
        if event is not None and event.oldSize() != event.size():   # pyqtgraph calls it with None
            self._draw()     # the captions' room above and below the rows is worked out in pixels

    def _y_range(self, rows: int, small: QFont, bold: QFont) -> tuple[float, float, float]:
        """(top, bottom, phase caption's y): room above the rows for the region and phase captions and
        below them for the two-line collective names, in pixels, so they neither overlap nor get cut."""
        h = max(self.getViewBox().height(), 100.0)
        above = QFontMetrics(small).height() + QFontMetrics(bold).height() + 6
        below = 2 * QFontMetrics(small).height() + 6
        k_above, k_below = min(above / h, 0.4), min(below / h, 0.4)
        span = (rows + 0.1) / max(1 - k_above - k_below, 0.2)   # data units across the whole view
        return -0.5 - k_above * span, rows - 0.4 + k_below * span, -0.5 - QFontMetrics(small).height() / h * span

    def _draw(self) -> None:
        th = self.theme
        self.setBackground(th.bg)
        self.texts.begin()
        rows = min(self.t, 8)
        rects = []
        font = QFont()
        font.setPointSizeF(th.point_size * 0.8)
        bold = QFont()
        bold.setPointSizeF(th.point_size)
        bold.setBold(True)
        top, bottom, phase_y = self._y_range(rows, font, bold)
        for i, st in enumerate(self.steps):
            done = i <= self.current
            alpha = 1.0 if done else 0.25
            x0 = i * 1.2
            if st.collective:
                c = QColor(th.error)
                c.setAlphaF(alpha)
                rects.append((QRectF(x0 + 0.3, -0.45, 0.4, rows - 0.1), QBrush(c), QBrush(QColor(th.bg), Qt.Dense5Pattern)))
                self.texts.add(st.collective.replace("-", "-\n"), (x0 + 0.5, rows - 0.4), (0.5, 0),
                               th.fg if done else th.muted, font)
                continue
            for g in range(rows):
                base = QColor(th.muted)
                base.setAlphaF(0.15)
                rects.append((QRectF(x0, g - 0.4, 1.0, 0.8), QBrush(base), None))
                col = QColor(th.color({"replicated": 1, "sequence-shard": 2, "column": 4, "row": 0,
                                       "local": 4, "collective": 5}[st.kind]))
                col.setAlphaF(alpha)
                if st.kind in ("column", "local", "sequence-shard"):
                    w = 1.0 / self.t
                    rects.append((QRectF(x0 + g * w, g - 0.4, w, 0.8), QBrush(col), None))
                elif st.kind == "row":
                    rects.append((QRectF(x0, g - 0.4, 1.0, 0.8), QBrush(col), QBrush(QColor(th.bg), Qt.BDiagPattern)))
                else:
                    rects.append((QRectF(x0, g - 0.4, 1.0, 0.8), QBrush(col), None))
        self.cells.outline = QPen(QColor(th.fg))
        self.cells.outline.setCosmetic(True)
        self.cells.set_rects(rects)
        if self.steps:
            x0 = self.current * 1.2
            self.highlight.setRect(QRectF(x0 - 0.08, -0.55, 1.16, rows + 0.1))
            p = QPen(QColor(th.error), 0)
            p.setWidthF(3)
            p.setCosmetic(True)
            self.highlight.setPen(p)
            for phase in ("forward", "backward"):  # phase captions above the columns
                idx = [i for i, s in enumerate(self.steps) if s.phase == phase]
                if idx:
                    self.texts.add(f"{phase} pass", (idx[0] * 1.2, phase_y), (0, 1), th.fg, bold)
            for i, st in enumerate(self.steps):  # region captions where the region changes
                if i == 0 or self.steps[i - 1].region != st.region:
                    self.texts.add(st.region.upper() if st.region == "mlp" else st.region, (i * 1.2, -0.5), (0, 1),
                                   th.muted, font)
        self.texts.end()
        ticks = [(g, f"GPU {g}") for g in range(rows)]
        if ticks != getattr(self, "_ticks", None):
            self.getAxis("left").setTicks([ticks])
            self._ticks = ticks
        self.getAxis("left").setTextPen(pen(th.fg, 1))
        n = max(1, len(self.steps))
        # the last column's collective name is centred on it: room on the right for its wider half
        names = [st.collective for st in self.steps[-1:] if st.collective]
        half_px = max((QFontMetrics(font).horizontalAdvance(w) for n_ in names for w in n_.split("-")), default=0) / 2
        a = min((half_px + 6) / max(self.getViewBox().width(), 100.0), 0.3) if half_px else 0.0
        right = max(n * 1.2, ((n - 1) * 1.2 + 0.5 + 0.2 * a) / (1 - a))   # its centre + half its width, in data
        self.setXRange(-0.2, right, padding=0)
        self.setYRange(top, bottom, padding=0)


# ---------------------------------------------------------------------------------------------


class LayoutView(pg.PlotWidget):
    """GPUs as squares inside node boxes, labelled rank and (TP, DP, PP) coordinates, shaded by
    pipeline stage; one example TP, DP and PP group is joined by solid / dashed / dotted lines."""

    MAX_NODES = 16

    def __init__(self, theme: Theme) -> None:
        super().__init__()
        self.theme = theme
        self.setMouseEnabled(x=False, y=False)
        self.hideAxis("bottom")
        self.hideAxis("left")
        self.getPlotItem().invertY(True)
        self.layout3d = None
        self.blocks = _Blocks()
        self.blocks.setZValue(-1)
        self.addItem(self.blocks)
        self.texts = Texts(self)
        self.group_lines = {kind: (pg.PlotCurveItem(connect="finite"), pg.ScatterPlotItem())
                            for kind in ("tp", "dp", "pp")}                 # (path, member dots)
        for line, dots in self.group_lines.values():
            self.addItem(line)
            self.addItem(dots)
        self.setAspectLocked(True)

    def set_layout(self, layout3d) -> None:
        self.layout3d = layout3d
        self._draw()

    def apply_theme(self, theme: Theme) -> None:
        self.theme = theme
        self._draw()

    def _pos(self, rank: int) -> tuple[float, float]:
        g = self.layout3d.gpus_per_node
        node, local = divmod(rank, g)
        per_row = min(g, 8)
        cols = 2 if self.layout3d.n_nodes <= 8 else 4
        nx, ny = node % cols, node // cols
        gx, gy = local % per_row, local // per_row
        rows_per_node = -(-g // per_row)
        return nx * (per_row + 1.2) + gx, ny * (rows_per_node + 1.6) + gy

    def _draw(self) -> None:
        th = self.theme
        self.setBackground(th.bg)
        lay = self.layout3d
        if lay is None:
            return
        self.texts.begin()
        shown = min(lay.n_nodes, self.MAX_NODES)
        limit = shown * lay.gpus_per_node
        g = lay.gpus_per_node
        per_row = min(g, 8)
        rows_per_node = -(-g // per_row)
        font = QFont()
        font.setPointSizeF(th.point_size * (0.85 if shown <= 8 else 0.65))
        rects, labels = [], []
        for node in range(shown):
            x, y = self._pos(node * g)
            rects.append((QRectF(x - 0.55, y - 0.75, per_row + 0.1, rows_per_node + 0.3), QBrush(Qt.NoBrush), None))
            members = lay.ranks[node * g:(node + 1) * g]
            pps = sorted({r.pp_rank for r in members})
            dps = sorted({r.dp_rank for r in members})
            # short enough to stay over its node's box at presenter text sizes ("DP replica 40–47" ran past it)
            self.texts.add(f"node {node}: PP stage {_span(pps)} · DP {_span(dps)}", (x - 0.55, y - 0.75),
                           (0, 1), th.fg, font)
        for rp in lay.ranks[:limit]:
            x, y = self._pos(rp.rank)
            c = QColor(th.color([1, 0, 2, 6, 4, 5, 3][rp.pp_rank % 7]))
            hatch = QBrush(QColor(th.bg), [None, Qt.BDiagPattern, Qt.FDiagPattern, Qt.CrossPattern][rp.pp_rank % 4]) \
                if rp.pp_rank % 4 else None
            box = QRectF(x - 0.42, y - 0.42, 0.84, 0.84)
            rects.append((box, QBrush(c), hatch))
            labels.append((box, str(rp.rank)))
        self.texts.end()
        self.blocks.outline = QPen(QColor(th.fg))
        self.blocks.outline.setCosmetic(True)
        bold = QFont(font)
        bold.setBold(True)
        self.blocks.font = bold
        self.blocks.set_rects(rects, labels)
        styles = {"tp": Qt.SolidLine, "dp": Qt.DashLine, "pp": Qt.DotLine}
        xs = [self._pos(r)[0] for r in range(0, limit)]
        ys = [self._pos(r)[1] for r in range(0, limit)]
        for kind, (line, dots) in self.group_lines.items():
            grp = next((gr for gr in lay.groups if gr.kind == kind and max(gr.members) < limit), None)
            if grp is None or len(grp.members) < 2:
                line.hide()
                dots.hide()
                continue
            pts = [self._pos(m) for m in grp.members]
            dx, dy = {"tp": (0.0, 0.5), "dp": (0.0, -0.5), "pp": (-0.5, 0.0)}[kind]  # in the gaps: numbers stay legible
            colour = th.error if kind == "tp" else th.fg
            px, py = group_path(pts, dx, dy, min(xs) - SPINE[kind])
            line.setData(px, py, pen=pg.mkPen(colour, width=4 if kind == "tp" else 3, style=styles[kind]))
            dots.setData([x + dx for x, _ in pts], [y + dy for _, y in pts], size=9, brush=colour, pen=pg.mkPen(colour))
            line.show()
            dots.show()
        # one call: with the aspect locked, pyqtgraph then widens whichever range the widget's shape
        # needs; two calls keep the last one and crop the other (nodes were cut off at both sides)
        self.setRange(xRange=(min(xs) - max(SPINE.values()) - 0.3, max(xs) + 0.8),
                      yRange=(min(ys) - 1.4, max(ys) + 0.8), padding=0)


MEMORY_STYLE = (("weights", 5), ("gradients", 0), ("optimizer", 2), ("activations", 1), ("buffers + reserve", 6))
"""Legend label and theme colour of each part in engines.pipeline.study.MEMORY_PARTS order."""


class StageMemoryChart:
    """Per-stage stacked memory bars (a LayoutStudy's parts), each total written on its bar, and
    the GPU's memory as a dashed line; updated in place."""

    def __init__(self, theme: Theme) -> None:
        self.plot = make_plot(theme, "Memory per GPU by stage", "GB", "pipeline stage")
        self.plot.setAccessibleName("Per-stage memory from the memory engine")
        self.plot.setMouseEnabled(x=False, y=False)
        cache_static(self.plot)
        self.bars = [Bars(x=[0], height=[0], width=0.7) for _ in MEMORY_STYLE]
        self.legend = self.plot.addLegend(offset=(10, 10))  # top left: above the short bars
        for item, (label, _) in zip(self.bars, MEMORY_STYLE):
            self.plot.addItem(item)
            self.legend.addItem(item, label)  # BarGraphItem is not auto-listed
        self.totals = Texts(self.plot)
        self.cap = pg.InfiniteLine(angle=0, movable=False)
        self.plot.addItem(self.cap)
        self._fit = None     # (tallest thing in GB, label line height in px) once drawn
        self.plot.getViewBox().sigResized.connect(self._fit_y)   # a short chart (presenter) refits

    def show(self, study, th: Theme) -> None:
        n = len(study.stage_memory)
        xs = list(range(n))
        base = [0.0] * n
        for item, vals, (_, color) in zip(self.bars, study.parts_gb or [()] * len(MEMORY_STYLE), MEMORY_STYLE):
            item.setOpts(x=xs, y0=base, height=list(vals), width=0.7, brush=th.color(color), pen=th.fg)
            base = [b + v for b, v in zip(base, vals)]
        self.totals.begin()
        font = QFont()
        font.setPointSizeF(th.point_size * 0.85)
        for i, total in enumerate(base):  # the number on each bar: colour is never the only cue
            self.totals.add(f"{total:.1f} GB", (i, total), (0.5, 1), th.fg, font)
        cap = study.gpu_memory_gb
        self.totals.add(f"GPU memory {cap:.0f} GB", (n - 0.45, cap), (1, 1), th.fg, font)
        self.totals.end()
        self.cap.setPos(cap)
        self.cap.setPen(pg.mkPen(th.error, width=2, style=Qt.DashLine))
        self.plot.getAxis("bottom").setTicks([[(i, f"{i} ({st.layers} L)") for i, st in enumerate(study.stage_memory)]])
        self.plot.setXRange(-0.6, max(n, 1) - 0.4, padding=0)
        lay = study.layout   # the layout under the chart: a slide showing only this chart still names it
        label = f"pipeline stage · DP {lay.dp} × TP {lay.tp} × PP {lay.pp}"
        if self.plot.getAxis("bottom").labelText != label:
            self.plot.getAxis("bottom").setLabel(label)
        self._fit = (max(max(base, default=0), cap), QFontMetrics(font).height())
        self._fit_y()

    def _fit_y(self) -> None:
        """Room above the tallest thing (bars or the memory line and its label) for the legend, laid
        out in one row of columns when the chart is wide, so a short chart keeps room for its bars."""
        if self._fit is None:
            return
        tallest, line_px = self._fit
        vb = self.plot.getViewBox()
        self.legend.setColumnCount(3 if vb.width() >= 480 else 1)
        size_floating_legend(self.legend)
        view_px = max(vb.height(), 150.0)
        legend_px = self.legend.layout.preferredHeight() + 2.5 * line_px
        self.plot.setYRange(0, range_end_for_label(tallest, 0.0, legend_px, view_px, 0.4 * view_px), padding=0)



SPINE = {"tp": 0.85, "dp": 1.0, "pp": 1.15}   # a group's spine: this far left of the first GPU column


def group_path(points: list[tuple[float, float]], dx: float, dy: float, spine_x: float) -> tuple[list, list]:
    """A group's connecting path: a line along each row of members (offset by dx, dy into the gaps
    between squares), and for a group that spans rows a vertical spine at ``spine_x``, left of the
    node boxes, with a stub into each row. Diagonals from one row's end to the next row's start
    crossed the node labels (a 64-GPU DP group zigzagged through every node). NaN separates
    segments (``connect="finite"``)."""
    nan = float("nan")
    rows: dict[float, list[float]] = {}
    for x, y in points:
        rows.setdefault(round(y + dy, 6), []).append(x + dx)
    xs: list[float] = []
    ys: list[float] = []
    for y, row in sorted(rows.items()):
        xs += sorted(row) + [nan]
        ys += [y] * len(row) + [nan]
    if len(rows) > 1:
        for y, row in sorted(rows.items()):
            xs += [spine_x, min(row), nan]
            ys += [y, y, nan]
        xs += [spine_x, spine_x, nan]
        ys += [min(rows), max(rows), nan]
    return xs, ys


def _span(values: list[int]) -> str:
    """'3' or '0–7' for a sorted list of small integers."""
    return str(values[0]) if len(values) == 1 else f"{values[0]}–{values[-1]}"


# --- captions: engine results as text -------------------------------------------------------------


def tp_counts_html(tp) -> str:
    """Collectives per phase of an engines.pipeline.TPStudy, and the ring traffic."""
    parts = []
    for phase, counts in (("forward", tp.forward), ("backward", tp.backward)):
        cs = ", ".join(f"{n} {c}" for c, n in counts if n)
        parts.append(f"{phase}: {cs or 'no collectives'}")
    return (f"Per layer, per micro-batch ({tp.model_label}, t = {tp.tp}"
            f"{', SP on' if tp.sequence_parallel else ''}): " + "; ".join(parts) +
            f". Ring traffic per GPU per layer: {tp.bytes_per_gpu / 1e6:,.1f} MB "
            "(TP and TP+SP move the same bytes)."
            + (" <b>t = 1: one GPU holds every matrix whole, so the all-reduces have nothing to "
               "sum.</b> Raise t (2 to 8, within a node) to see the column-then-row split."
               if tp.tp == 1 else ""))


def tp_caption_html(steps, i: int) -> str:
    if not steps:
        return ""
    st = steps[i]
    what = f"<b>{st.collective}</b> ({st.operator}), {st.bytes_per_gpu / 1e6:,.1f} MB sent per GPU" \
        if st.collective else (f"operator {st.operator}: identity in this pass" if st.operator else st.kind)
    return (f"Step {i + 1}/{len(steps)} — {st.phase}, {st.region}: <b>{st.label}</b>. "
            f"Each GPU holds {st.shape_per_gpu}. {what}.")


def layout_html(study, max_nodes: int) -> str:
    """The rank grid's groups (an engines.pipeline.LayoutStudy) and the links they use."""
    lay = study.layout
    nv = f"NVLink {study.nvlink_gbps:,.0f} GB/s"
    net = f"network {study.internode_gbps:,.0f} GB/s per GPU"
    lines = [f"<b>{lay.n_gpus} GPUs = DP {lay.dp} × TP {lay.tp} × PP {lay.pp}</b> on {lay.n_nodes} node(s) "
             f"of {lay.gpus_per_node}. Squares show the global rank = tp + TP·(dp + DP·pp) (Megatron order), "
             "so TP rank = rank mod TP; shade and hatch = pipeline stage."]
    names = {"tp": "TP groups (solid red line: one example)", "dp": "DP groups (dashed)", "pp": "PP groups (dotted)"}
    for kind, s in lay.summary().items():
        if s["size"] <= 1:
            lines.append(f"{names[kind]}: size 1, no communication.")
            continue
        where = "all inside a node → " + nv if s["intra_node"] == s["groups"] else \
            ("all across nodes → " + net if s["intra_node"] == 0 else
             f"{s['intra_node']} of {s['groups']} inside a node")
        lines.append(f"{names[kind]}: {s['groups']} group{'s' if s['groups'] != 1 else ''} of {s['size']}, {where}.")
    if lay.n_nodes > max_nodes:
        lines.append(f"<i>Drawing the first {max_nodes} of {lay.n_nodes} nodes.</i>")
    return "<br>".join(lines)
