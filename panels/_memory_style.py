"""What the memory panel's chart views share: the category colours and patterns, fonts, pens and
brushes cached per theme, the redraw-only-on-change check, and label room worked out in pixels."""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from engines.core.hardware import gpu as gpu_spec

from explorer.ui.label_layer import PAD as LABEL_PAD
from explorer.ui.label_layer import range_end_for_label
from explorer.ui.pool import ItemPool
from explorer.ui.widgets import cache_static, make_plot, pen

CATEGORY_COLOR = {"params": 4, "grads": 0, "optimizer": 2, "activations": 1, "buffers": 6, "reserve": 5}
CATEGORY_PATTERN = {"params": Qt.NoBrush, "grads": Qt.BDiagPattern, "optimizer": Qt.FDiagPattern,
                    "activations": Qt.Dense6Pattern, "buffers": Qt.CrossPattern, "reserve": Qt.Dense7Pattern}


# On-chart labels against the text size: 0.75 keeps them at ≥ 2.2 % of the screen's height in presenter
# mode (the slide check's readability floor, issue 38); 0.7 drew 16 px on an 800-line screen.
SMALL_LABEL = 0.75
SETUP_SHARE = 0.15      # the set-up line shows where it takes at most this share of its chart's height
SETUP_CHART_PX = 240    # and leaves the chart at least this tall


def _gb(x: float) -> str:
    return f"{x / 1e9:,.2f} GB" if x < 1e12 else f"{x / 1e12:,.2f} TB"


def _nice_ceil(x: float) -> float:
    """The next 1, 2, 2.5 or 5 × 10^k at or above ``x``: axis ranges that rarely change re-render rarely."""
    e = 10.0 ** np.floor(np.log10(x))
    return next(m * e for m in (1, 2, 2.5, 5, 10) if m * e >= x * (1 - 1e-9))


def setup_text(sc) -> str:
    """The set-up a chart is drawn for, in one line under it: a tour step that shows only the chart
    (presenter mode) still says which model, cluster and batch its figures belong to."""
    accum = f", {sc.grad_accum} micro-batches accumulated" if sc.grad_accum > 1 else ""
    return (f"{sc.arch.label} on {sc.n_gpus} × {gpu_spec(sc.gpu).label} (TP {sc.tp} × PP {sc.pp} × DP {sc.dp}, "
            f"{sc.gpus_per_node} per node, {sc.internode_gbps:,g} GB/s per GPU between nodes); micro-batch "
            f"{sc.micro_batch} × {sc.seq_len:,} tokens{accum}; recompute: {sc.recompute}.")


class _SetupLine(QLabel):
    """A word-wrapped line that asks for its height but never forces it: the chart's minimum height
    stays the chart's (``MemoryChart._fit_setup`` hides the line where there is no room for it)."""

    def hasHeightForWidth(self) -> bool:  # noqa: N802 (Qt name)
        return False

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt name)
        return QSize(0, 0)

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt name)
        holder = self.parentWidget()   # as wide as its chart: a hint for a narrower width was lines too tall
        width = holder.width() if holder is not None and holder.width() > 200 else max(self.width(), 200)
        return QSize(super().sizeHint().width(), self.heightForWidth(width))


class MemoryChart(QWidget):
    """A memory view: a theme, a style cache and the inputs it shows now (so a redraw that would
    change nothing is skipped). ``self.box`` is its layout, margins zero."""

    def __init__(self, theme) -> None:
        super().__init__()
        self.theme = theme
        self._style_cache: dict = {}
        self._drawn: dict[str, object] = {}
        self.box = QVBoxLayout(self)
        self.box.setContentsMargins(0, 0, 0, 0)
        self.setup = _SetupLine()           # the scenario the chart shows (placed by each view)
        self.setup.setWordWrap(True)
        self.setup.setAccessibleName("Set-up of the chart")

    def show_setup(self, scenario) -> None:
        text = setup_text(scenario)
        if self.setup.text() != text:
            self.setup.setText(text)
        holder = self.setup.parentWidget()
        if holder is not None and not holder.property("fits_setup"):
            holder.setProperty("fits_setup", True)
            holder.installEventFilter(self)
        self._fit_setup()

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 (Qt name)
        if event.type() == QEvent.Resize and obj is self.setup.parentWidget():
            self._fit_setup()
        return False

    def _fit_setup(self) -> None:
        """The set-up line shows only where the chart keeps its own minimum height beside it: in a
        tour's slide (the view alone) it names the scenario; in a crowded window the panel's verdict
        already does, and the line would push the chart out of its scroll area."""
        holder = self.setup.parentWidget()
        if holder is None or holder.layout() is None or holder.width() <= 1:
            return
        lay = holder.layout()
        need = self.setup.heightForWidth(holder.width()) + lay.spacing()
        rest = lay.minimumSize().height()      # the line adds nothing to it (``_SetupLine``)
        shown = (bool(self.setup.text()) and holder.height() - need >= max(rest, SETUP_CHART_PX)
                 and need <= SETUP_SHARE * holder.height())
        if shown != self.setup.isVisibleTo(holder):
            self.setup.setVisible(shown)

    def _bar_plot(self, title: str, left: str, bottom: str, accessible: str) -> pg.PlotWidget:
        """A fixed (no mouse) plot in this view's box, its static parts cached, its items pooled
        (``self.pool``); a resize of its view box calls ``self._resized``."""
        self.plot = make_plot(self.theme, title, left, bottom)
        self.plot.setAccessibleName(accessible)
        self.plot.setMouseEnabled(x=False, y=False)
        self.box.addWidget(self.plot)
        self.box.addWidget(self.setup)
        cache_static(self.plot)
        self.pool = ItemPool(self.plot)
        self.plot.getViewBox().sigResized.connect(self._resized)
        return self.plot

    def apply_theme(self, theme) -> None:
        """Forget the styles and what is drawn: the next ``show_result`` redraws in ``theme``."""
        self.theme = theme
        self._style_cache = {}
        self._drawn = {}

    def _changed(self, view: str, signature) -> bool:
        """True (and remembered) when ``view``'s inputs differ from what it shows now."""
        if self._drawn.get(view) == signature:
            return False
        self._drawn[view] = signature
        return True

    # --- styles: built once per theme (building them each frame costs milliseconds) ------------
    def _font(self, scale: float = 0.9) -> QFont:
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
        """A category's fill and its pattern overlay in the text colour."""
        key = ("brush", category, round(alpha, 2), self.theme.name)
        if key not in self._style_cache:
            c = QColor(self.theme.color(CATEGORY_COLOR[category]))
            c.setAlphaF(round(alpha, 2))
            overlay = QColor(self.theme.fg)
            overlay.setAlphaF(0.45 * round(alpha, 2))
            self._style_cache[key] = (QBrush(c), QBrush(overlay, CATEGORY_PATTERN[category]))
        return self._style_cache[key]

    # --- label room, in pixels ------------------------------------------------------------------
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
