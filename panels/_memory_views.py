"""The training-memory panel's charts: stacked bars per strategy, the sharding animation, the
GPU-count sweep and the traffic bars. Drawing only: every number comes from an
``engines.memory.study.MemoryStudy`` the panel hands over."""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics
from PySide6.QtWidgets import (QGraphicsItem, QGridLayout, QHBoxLayout, QHeaderView, QLabel, QPushButton,
                               QTableWidget, QVBoxLayout, QWidget)

from engines.memory import CATEGORIES, CATEGORY_LABELS, CATEGORY_LETTERS, STRATEGY_SHORT, STRATEGY_TICKS
from engines.core.hardware import gpu as gpu_spec
from engines.core.scenario import STRATEGIES
from explorer.ui.fast_items import Scatter
from explorer.ui.label_layer import PAD as LABEL_PAD
from explorer.ui.label_layer import range_end_for_label
from explorer.ui.live_text import LiveText
from explorer.ui.pool import ItemPool
from panels._memory_sweep_views import SweepAndTrafficCharts
from explorer.ui.widgets import RowLegend, Tabs, cache_static, make_plot, pen

CATEGORY_COLOR = {"params": 4, "grads": 0, "optimizer": 2, "activations": 1, "buffers": 6, "reserve": 5}
CATEGORY_PATTERN = {"params": Qt.NoBrush, "grads": Qt.BDiagPattern, "optimizer": Qt.FDiagPattern,
                    "activations": Qt.Dense6Pattern, "buffers": Qt.CrossPattern, "reserve": Qt.Dense7Pattern}
DRAWN_GPUS = 4


def _gb(x: float) -> str:
    return f"{x / 1e9:,.2f} GB" if x < 1e12 else f"{x / 1e12:,.2f} TB"


class MemoryCharts(SweepAndTrafficCharts):
    """The panel's four charts and the measurement box (mixed into ``MemoryPanel``). Each chart
    redraws only when what it shows changed, a chart in the lower tabs only while its tab shows."""

    def _build_views(self) -> None:
        th = self.theme
        key = "   ".join(f"<b>{CATEGORY_LETTERS[c]}</b> = {CATEGORY_LABELS[c]}" for c in CATEGORIES)
        self.key_label = QLabel(f"Blocks (letter, pattern and colour): {key}. ▼ marks your strategy. "
                                "GB = 10⁹ bytes.")
        self.key_label.setWordWrap(True)
        self.body.addWidget(self.key_label)
        self.frame_caption = LiveText(min_lines=2)
        self.frame_caption.setAccessibleName("Sharding frame")
        grid = QGridLayout()
        self.bars_plot = make_plot(th, "Per-GPU memory by strategy", "GB per GPU", "")
        self.bars_plot.setAccessibleName("Stacked per-GPU memory for every strategy, with the GPU's memory")
        self.bars_plot.setMouseEnabled(x=False, y=False)
        grid.addWidget(self.bars_plot, 0, 0)
        self.shard_plot = make_plot(th, "Sharding, DP → ZeRO-3 (play the timeline)", "GB per GPU", "GPU")
        self.shard_plot.setAccessibleName("Sharding animation across a handful of GPUs")
        self.shard_plot.setMouseEnabled(x=False, y=False)
        shard_view = QWidget()                  # the caption and its chart are one view (a tour's focus)
        shard_box = QVBoxLayout(shard_view)
        shard_box.setContentsMargins(0, 0, 0, 0)
        shard_box.addWidget(self.frame_caption)
        shard_box.addWidget(self.shard_plot, 1)
        grid.addWidget(shard_view, 0, 1)
        self.sweep_plot = make_plot(th, "Per-GPU memory against GPU count (log–log)", "GB per GPU", "GPUs")
        self.sweep_plot.setAccessibleName("Sweep of per-GPU memory over 1 to 1024 GPUs for every strategy")
        self.sweep_plot.setLogMode(x=True, y=True)
        self.sweep_curves: list[tuple[pg.PlotDataItem, Scatter]] = []  # (line, markers) per strategy
        self.sweep_legend = RowLegend(colCount=6, frame=False)
        for row, s in enumerate(STRATEGIES):
            line, marks = pg.PlotDataItem(), Scatter()
            self.sweep_plot.addItem(line)
            self.sweep_plot.addItem(marks)
            self.sweep_legend.addItem(line, STRATEGY_SHORT[s])
            self.sweep_curves.append((line, marks))
            for item in (line.curve, line.scatter, marks):  # redrawn only when the sweep changes
                item.setCacheMode(QGraphicsItem.DeviceCoordinateCache)
        self.sweep_plot.getPlotItem().layout.addItem(self.sweep_legend, 5, 1)
        self.sweep_marker = pg.InfiniteLine(angle=90, movable=False)  # the scenario's GPU count
        self.sweep_plot.addItem(self.sweep_marker)

        # The lower row is one full-width tab widget: the sweep gets the whole width (its legend one
        # row) instead of a quarter of the panel, and a chart redraws only while its tab shows.
        self.lower_tabs = Tabs()
        self.lower_tabs.addTab(self.sweep_plot, "Memory against GPU count")
        self.comm_plot = make_plot(th, "Data-parallel traffic per GPU per step", "", "GB sent per step")
        self.comm_plot.setAccessibleName("Communication bytes and time per step for every strategy")
        self.comm_plot.setMouseEnabled(x=False, y=False)
        self.lower_tabs.addTab(self.comm_plot, "Communication per step")
        box = self.measure_box = QWidget()
        bl = QVBoxLayout(box)
        bl.setContentsMargins(4, 4, 4, 4)
        buttons = QHBoxLayout()
        self.measure_button = QPushButton("Measure one step")
        self.measure_button.setToolTip("Scaled-down model of this scenario's shape; one real mixed-precision "
                                       "training step on the compute device, every byte counted")
        self.measure_button.clicked.connect(self.run_measurement)
        self.fsdp_button = QPushButton("FSDP2 run (2 ranks)")
        self.fsdp_button.setToolTip("torch fully_shard on 2 CPU processes over gloo; per-rank shard bytes")
        self.fsdp_button.clicked.connect(self.run_fsdp)
        buttons.addWidget(self.measure_button)
        buttons.addWidget(self.fsdp_button)
        bl.addLayout(buttons)
        bl.addWidget(self.jobs("measure").widget())   # the torch step and the FSDP2 run share one slot
        self.measure_table = QTableWidget(0, 5)
        self.measure_table.setHorizontalHeaderLabels(["category", "analytic", "measured", "diff", "why they differ"])
        self.measure_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        self.measure_table.horizontalHeader().setStretchLastSection(True)
        self.measure_table.verticalHeader().hide()
        self.measure_table.setWordWrap(True)
        self.measure_table.setAccessibleName("Measured against analytic bytes per category")
        bl.addWidget(self.measure_table, 1)
        self.measure_note = QLabel("Runs in the background with progress and Cancel.")
        self.measure_note.setWordWrap(True)
        bl.addWidget(self.measure_note)
        self.lower_tabs.addTab(box, "Measured vs analytic (real torch)")
        self.lower_tabs.currentChanged.connect(lambda _i: self._redraw())  # a chart draws when shown
        grid.addWidget(self.lower_tabs, 1, 0, 1, 2)
        grid.setColumnStretch(0, 1)
        grid.setColumnStretch(1, 1)
        grid.setRowStretch(0, 1)
        grid.setRowStretch(1, 1)
        self.body.addLayout(grid, 1)
        for name, widget, title in (("bars", self.bars_plot, "Per-GPU memory by strategy"),
                                    ("sharding", shard_view, "Sharding, DP → ZeRO-3"),
                                    ("sweep", self.sweep_plot, "Per-GPU memory against GPU count"),
                                    ("traffic", self.comm_plot, "Data-parallel traffic per step"),
                                    ("measured", self.measure_box, "Measured against analytic bytes")):
            self.name_view(name, widget, title)
        for plot in (self.bars_plot, self.shard_plot, self.sweep_plot, self.comm_plot):
            cache_static(plot)
        self.comm_plot.getViewBox().sigResized.connect(self._comm_resized)
        self.bars_plot.getViewBox().sigResized.connect(lambda *_a: self._relabel("bars"))
        self.shard_plot.getViewBox().sigResized.connect(lambda *_a: self._relabel("frame"))
        self.sweep_plot.getViewBox().sigResized.connect(lambda *_a: self._fit_legend())

    def apply_theme(self, theme) -> None:
        """Restyle for ``theme``: fonts, pens and brushes are rebuilt, every chart redraws."""
        super().apply_theme(theme)
        self._style_cache = {}
        self._drawn = {}
        self.frame_caption.reset_height()
        self.verdict.reset_height()
        self.sweep_marker.setPen(self._pen(theme.muted, 1.5, Qt.DotLine))
        self.sweep_legend.setLabelTextColor(theme.fg)
        self.sweep_legend.row_height = QFontMetrics(self._font(0.85)).height() * 1.15 + 10  # + the label margins
        for plot, lines in ((self.bars_plot, 14), (self.shard_plot, 12), (self.sweep_plot, 14)):
            plot.setMinimumHeight(int(theme.point_size * lines))   # title, axis (and legend) leave the data room
        self._fit_legend()
        if self.breakdowns:
            self._redraw()
            self.show_frame(self._frame)

    def _redraw(self) -> None:
        """Each view redraws only when its inputs changed; a chart in the lower tabs only while it shows."""
        if not self.breakdowns:
            return
        self._draw_verdict()
        self._draw_bars()
        shown = self.lower_tabs.currentWidget()
        if shown is self.sweep_plot:
            self._draw_sweep()
        elif shown is self.comm_plot:
            self._draw_comm()

    def _changed(self, view: str, signature) -> bool:
        """True (and remembered) when ``view``'s inputs differ from what it shows now."""
        if self._drawn.get(view) == signature:
            return False
        self._drawn[view] = signature
        return True

    # --- drawing ----------------------------------------------------------------------------
    def _font(self, scale: float = 0.9) -> QFont:
        """Fonts, pens and brushes are cached per theme: building them each frame costs milliseconds."""
        key = ("font", scale, self.theme.point_size)
        if key not in self._style_cache:
            f = QFont()
            f.setPointSizeF(self.theme.point_size * scale)
            self._style_cache[key] = f
        return self._style_cache[key]

    def _pen(self, color: str, width: float = 1.0, style=Qt.SolidLine):
        key = ("pen", color, width, style)
        if key not in self._style_cache:
            self._style_cache[key] = pen(color, width, style)
        return self._style_cache[key]

    def _brush(self, color: str) -> QBrush:
        key = ("plain", color)
        if key not in self._style_cache:
            self._style_cache[key] = pg.mkBrush(QColor(color))
        return self._style_cache[key]

    def _category_brushes(self, category: str, alpha: float = 0.9) -> tuple[QBrush, QBrush]:
        key = ("brush", category, round(alpha, 2), self.theme.name)
        if key not in self._style_cache:
            c = QColor(self.theme.color(CATEGORY_COLOR[category]))
            c.setAlphaF(round(alpha, 2))
            overlay = QColor(self.theme.fg)
            overlay.setAlphaF(0.45 * round(alpha, 2))
            self._style_cache[key] = (QBrush(c), QBrush(overlay, CATEGORY_PATTERN[category]))
        return self._style_cache[key]

    def _text_height(self, plot, y_span: float, scale: float) -> float:
        """Height of one text line of ``scale`` in data units of ``plot`` (to keep labels apart)."""
        px = max(plot.getViewBox().height(), 120.0)
        return QFontMetrics(self._font(scale)).height() * 1.1 * y_span / px

    def _top_with_labels(self, plot, tops: list[tuple[float, int]], scale: float) -> float:
        """A y-range top that leaves ``lines`` text lines above each ``(value, lines)``. Labels keep
        their size in pixels, so the share of the range they need grows as the chart gets shorter
        (presenter fonts, a small window) and a fixed margin would cut them off."""
        line_px = QFontMetrics(self._font(scale)).height()
        view_px = max(plot.getViewBox().height(), 120.0)
        return max(range_end_for_label(value, 0.0, lines * line_px + 2 * LABEL_PAD, view_px, 0.4 * view_px)
                   for value, lines in tops)

    def _right_with_labels(self, plot, start: float, left: float, width_px: float) -> float:
        """The x-range right end that leaves ``width_px`` pixels after data ``start`` when the range
        begins at ``left``, in quarter steps so a label a few pixels longer does not move the axes."""
        view_px = max(plot.getViewBox().width(), 120.0)
        right = range_end_for_label(start, left, width_px, view_px, 0.25 * view_px) \
            if view_px - width_px > 0.25 * view_px else start + 4.0
        return math.ceil(right * 4) / 4

    def _stack(self, pool: ItemPool, xs: list[float], values: dict[str, list[float]], width: float,
               label_min: float = float("inf"), avoid: tuple[float, float] = (0.0, 0.0),
               room_px: float = float("inf")) -> float:
        """Draw stacked category blocks at ``xs`` (patterned, lettered); returns the tallest stack in GB.

        A block label whose centre falls in the band ``avoid`` (the memory line and its label) moves
        to the middle of the larger part of its block outside the band, or is dropped. Labels wider
        than ``room_px`` (the pixels between two stacks) would run into their neighbours': all of
        the chart's labels are shortened alike ("W 16.06" → "W 16" → "W")."""
        base = np.zeros(len(xs))
        lo, hi = avoid
        blocks = {"x": [], "y0": [], "height": [], "fill": [], "hatch": []}  # all blocks in two bar items
        placed = []                                                          # (letter, value, x, y)
        for cat in CATEGORIES:
            if cat not in values:
                continue
            h = np.array(values[cat]) / 1e9
            fill, hatch = self._category_brushes(cat)
            blocks["x"] += list(xs)
            blocks["y0"] += list(base)
            blocks["height"] += list(h)
            blocks["fill"] += [fill] * len(xs)
            blocks["hatch"] += [hatch] * len(xs)
            for x, b0, hh in zip(xs, base, h):
                if hh < label_min:
                    continue
                y = b0 + hh / 2
                if lo < y < hi:
                    below, above = lo - b0, b0 + hh - hi
                    if max(below, above) < label_min / 2:
                        continue
                    y = b0 + below / 2 if below >= above else hi + above / 2
                placed.append((CATEGORY_LETTERS[cat], float(hh), x, y))
            base = base + h
        if placed:   # one format for the whole chart: the longest that fits between two stacks
            metrics = QFontMetrics(self._font(0.7))
            widest = max(placed, key=lambda p: p[1])
            fmt = next((f for f in ("{} {:,.2f}", "{} {:,.0f}")
                        if metrics.horizontalAdvance(f.format("W", widest[1])) + 2 * LABEL_PAD + 6 <= room_px), "{}")
            backing = self._brush(self.theme.bg)
            for letter, value, x, y in placed:
                pool.text(fmt.format(letter, value), (x, y), (0.5, 0.5), self._font(0.7), self.theme.fg, backing)
        pool.bar(x=blocks["x"], y0=blocks["y0"], height=blocks["height"], width=width, brushes=blocks["fill"],
                 hatches=blocks["hatch"], pen=self._pen(self.theme.fg, 1))
        return float(base.max()) if len(xs) else 0.0

    def _memory_line(self, pool: ItemPool, cap_gb: float, x_label: float) -> None:
        """The GPU's memory as a dashed line, labelled just above its right end (``x_label``)."""
        pool.line(cap_gb, 0, self._pen(self.theme.error, 2.5, Qt.DashLine))
        pool.text(f"GPU memory {cap_gb:,.0f} GB", (x_label, cap_gb), (1, 1), self._font(0.75), self.theme.fg)

    def _draw_verdict(self) -> None:
        b = self.breakdowns[self.scenario.strategy]
        cap = b.gpu_memory
        state = "<b>fits</b>" if b.fits else "<b>does NOT fit</b>"
        free = f"{_gb(b.headroom)} free" if b.fits else f"{_gb(-b.headroom)} over"
        smallest = self.sweep_result.smallest_fit
        parts = [f"{STRATEGY_SHORT[s]} {smallest[s] if smallest[s] else '> 1024'}" for s in STRATEGIES]
        cpu = f"; CPU RAM per GPU for offload: {_gb(b.cpu)}" if b.cpu else ""
        cpu += f"; NVMe per GPU for offload: {_gb(b.nvme)}" if b.nvme else ""
        sc = self.scenario
        text = (f"<span style='font-size:{self.theme.point_size * 1.25:.0f}pt'>{b.label} on {sc.n_gpus} × "
                f"{gpu_spec(sc.gpu).label} (TP {sc.tp} × PP {sc.pp} × DP {sc.dp}): {_gb(b.total)} of {_gb(cap)} "
                f"per GPU — {state} ({free}){cpu}.</span><br>Smallest GPU count that fits (≤ 1024, multiples of "
                f"TP×PP): {', '.join(parts)}." + ("<br><i>" + "; ".join(b.notes) + "</i>" if b.notes else ""))
        self.verdict.setText(text)

    def _draw_bars(self) -> None:
        shown = [s for s in STRATEGIES if self.breakdowns.get(s) is not None]
        values = {c: [getattr(self.breakdowns[s], c) for s in shown] for c in CATEGORIES}
        cap = self.breakdowns[self.scenario.strategy].gpu_memory / 1e9
        if not self._changed("bars", (tuple(shown), str(values), cap, self.scenario.strategy)):
            return
        p, pool = self.bars_plot, self._pools["bars"]
        pool.begin()
        xs = list(range(len(shown)))
        left, right = -0.7, len(xs) + 0.8                   # room for the memory line's label on the right
        room = p.getViewBox().width() / (right - left)       # pixels per stack
        yours = self.scenario.strategy
        mark = "yours ▼" if QFontMetrics(self._font(0.75)).horizontalAdvance("yours ▼") + 2 * LABEL_PAD + 6 <= room \
            else "▼"                                          # the key above the charts says what ▼ means
        tops = [(self.breakdowns[s].total / 1e9, 3 if s == yours else 2) for s in shown] + [(cap, 2)]
        y_top = max(self._top_with_labels(p, tops, 0.75), max(v for v, _n in tops) * 1.1)
        line_h = self._text_height(p, y_top, 0.75)
        # a block gets a label only when some of it still shows above and below the label's box: a label
        # as tall as its block hid the block, and the stack read as floating pieces at presenter sizes
        label_min = max(0.07 * y_top, 1.5 * self._text_height(p, y_top, 0.7))
        self._stack(pool, xs, values, 0.62, label_min=label_min, avoid=(cap - 0.6 * line_h, cap + 0.6 * line_h),
                    room_px=room)
        pool.line(cap, 0, self._pen(self.theme.error, 2.5, Qt.DashLine))  # labelled in the free right margin
        pool.text(f"GPU memory\n{cap:,.0f} GB", (right - 0.05, cap), (1, 1), self._font(0.75), self.theme.fg)
        backing = self._brush(self.theme.bg)  # a total label may sit on the memory line: hide it there
        for x, s in zip(xs, shown):
            b = self.breakdowns[s]
            above = f"{mark}\n" if s == yours else ""       # the y axis says GB
            pool.text(f"{above}{b.total / 1e9:,.1f}\n{'fits' if b.fits else 'too big'}", (x, b.total / 1e9),
                      (0.5, 1), self._font(0.75), self.theme.fg, backing)
        pool.end()
        names = next((names for names in STRATEGY_TICKS[:-1] if self._ticks_fit(p, [names[s] for s in shown], room)),
                     STRATEGY_TICKS[-1])
        self._set_axes(p, "bars", bottom=[(x, names[s]) for x, s in zip(xs, shown)],
                       x_range=(left, right), y_range=(0, y_top))

    def _ticks_fit(self, plot, labels: list[str], room: float, gap: int = 10) -> bool:
        """True when every two neighbouring tick labels, ``room`` pixels apart centre to centre,
        keep ``gap`` pixels between them."""
        metrics = QFontMetrics(plot.getAxis("bottom").style["tickFont"] or QFont())
        widths = [metrics.horizontalAdvance(t) for t in labels]
        return all((a + b) / 2 + gap <= room for a, b in zip(widths, widths[1:]))

    def _set_axes(self, plot, view: str, bottom=None, left=None, x_range=None, y_range=None) -> None:
        """Ticks and ranges, touched only when they change (each change re-renders the cached axis)."""
        for name, ticks in (("bottom", bottom), ("left", left)):
            if ticks is not None and self._changed(f"{view}-{name}", ticks):
                plot.getAxis(name).setTicks([ticks])
        x_range = x_range if x_range is not None and self._changed(f"{view}-x", x_range) else None
        y_range = y_range if y_range is not None and self._changed(f"{view}-y", y_range) else None
        if x_range or y_range:   # one call: each range change re-lays out the view and its axes
            plot.setRange(xRange=x_range, yRange=y_range, padding=0)

    def show_frame(self, index: int) -> None:
        """Draw one sharding frame: each GPU keeps its own 1/N shard (solid) while the part it will
        drop fades out. All blocks go into four multi-bar items so a frame costs a few milliseconds."""
        if not self.frames:
            return
        index = max(0, min(int(index), len(self.frames) - 1))
        self._frame = index
        frame = self.frames[index]
        cap = self.breakdowns[self.scenario.strategy].gpu_memory / 1e9
        if not self._changed("frame", (frame, self.frames[0].bytes, cap)):
            return
        p, pool = self.shard_plot, self._pools["shard"]
        pool.begin()
        n = frame.dp
        drawn = min(DRAWN_GPUS, n)
        xs = list(range(drawn))
        y_top = max(self.frames[0].total / 1e9 * 1.12, self._top_with_labels(p, [(cap, 1)], 0.75))
        line_h = self._text_height(p, y_top, 0.72)
        metrics = QFontMetrics(self._font(0.72))
        label_px = 0.0
        per_px = y_top / max(p.getViewBox().height(), 120.0)          # data units per pixel
        solid = {"x": [], "y0": [], "height": [], "fill": [], "hatch": []}
        fading = {"x": [], "y0": [], "height": [], "fill": [], "hatch": []}
        base, next_label = 0.0, (metrics.height() / 2 + LABEL_PAD + 1) * per_px   # labels sit on the axis, not across it
        for block in self.study.shard_blocks(index):
            cat, split, sharding = block.category, block.split, block.sharding
            total, kept = block.total / 1e9, block.kept / 1e9
            fill, hatch = self._category_brushes(cat)
            for group, y0, height, brushes in ((solid, base, kept, (fill, hatch)),
                                               (fading, base + kept, total - kept,
                                                self._category_brushes(cat, alpha=max(0.12, 1 - split)))):
                if height <= 1e-12:
                    continue
                group["x"] += xs
                group["y0"] += [y0] * drawn
                group["height"] += [height] * drawn
                group["fill"] += [brushes[0]] * drawn
                group["hatch"] += [brushes[1]] * drawn
            label = block.label                  # the engine says what the block is and where it goes
            label_y = max(base + total / 2, next_label)
            if cap - 0.7 * line_h < label_y < cap + 1.6 * line_h:  # keep clear of the memory line's label
                label_y = cap - 0.7 * line_h if label_y < cap and cap - 0.7 * line_h >= next_label \
                    else cap + 1.6 * line_h
            next_label = label_y + line_h
            text = f"{CATEGORY_LETTERS[cat]} {label}: {total:,.2f}"
            widest = text.replace(f"1/{block.shard}", "1/8888") if sharding else text   # the room does not change
            label_px = max(label_px, metrics.horizontalAdvance(widest) + 2 * LABEL_PAD)  # with a GPU count
            pool.text(text, (drawn - 1 + 0.33, label_y), (0, 0.5), self._font(0.72), self.theme.fg)
            base += total
        for group, edge in ((solid, self._pen(self.theme.fg, 1)), (fading, self._pen(self.theme.fg, 1, Qt.DotLine))):
            if group["x"]:
                pool.bar(x=group["x"], y0=group["y0"], height=group["height"], width=0.6, brushes=group["fill"],
                         hatches=group["hatch"], pen=edge)
        right = max(drawn + 2.3, self._right_with_labels(p, drawn - 1 + 0.33, -0.5, label_px + 4))  # labels end inside
        self._memory_line(pool, cap, right - 0.1)
        pool.end()
        ticks = [(x, str(r)) for x, r in zip(xs, xs[:-1] + [n - 1])]   # GPUs 0, 1, 2 and the last one
        title = f"{frame.stage_label} — {frame.total / 1e9:,.2f} GB per GPU × {n} GPUs (data-parallel)"
        if n > drawn:
            title += f"; {drawn} drawn"
        if frame.host:
            where = next(iter(frame.offloaded.values()), "host")      # the engine names the target
            title += f"; {_gb(frame.host)} offloaded to {where}"
        self.frame_caption.setText(f"<b>{title}</b>")
        self._set_axes(p, "shard", bottom=ticks, x_range=(-0.5, right), y_range=(0, y_top))
