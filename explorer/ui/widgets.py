"""Small reusable widgets so panels stay mostly binding code."""
from __future__ import annotations

import math

from PySide6.QtCore import QEvent, QObject, Qt, QThread, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (QComboBox, QDoubleSpinBox, QHBoxLayout, QLabel, QPushButton, QSizePolicy, QSlider,
                               QSpinBox, QStyle, QStyleOptionComboBox, QStylePainter, QTabWidget, QTextBrowser,
                               QWidget)

from explorer.theme import Theme


def brush(color: str, alpha: float = 1.0):
    import pyqtgraph as pg

    c = QColor(color)
    c.setAlphaF(alpha)
    return pg.mkBrush(c)


def pen(color: str, width: float = 2.0, style=Qt.SolidLine):
    import pyqtgraph as pg

    return pg.mkPen(QColor(color), width=width, style=style)


def make_plot(theme: Theme, title: str = "", left: str = "", bottom: str = ""):
    """A pyqtgraph PlotWidget styled for the theme, with large axis text for projection."""
    w = _plot_class()(axisItems={"bottom": bottom_axis(), "left": left_axis()})
    pi = w.getPlotItem()
    pi.layout.removeItem(pi.titleLabel)   # the title spans the whole chart, not the data's column:
    pi.layout.addItem(pi.titleLabel, 0, 0, 1, 3)   # an axis that widens then neither cuts it nor is pushed out
    style_plot(w, theme, title, left, bottom)
    w.installEventFilter(_TitleFitter(w))
    w.getPlotItem().vb.sigResized.connect(lambda *_args: fit_title(w))   # axes widen after their first paint
    cache_static(w)
    eager_view_matrix(w)
    return w


_AXIS_CLASS = None


def _axis(orientation: str):
    """An ``AxisItem`` that leaves room for all of its text. pyqtgraph sizes a bottom axis for 80% of
    the measured tick text height and lets the glyphs run past; a cached axis (``cache_static``)
    clips them there, so "hybrid" read "hvbrid" and "GPUs" lost the foot of its p. A left axis gets
    80% of its title's height and the title is then drawn whole: in presenter type at 1080p the
    rotated "count (log)" ran into the tick labels beside it."""
    global _AXIS_CLASS
    if _AXIS_CLASS is None:
        import pyqtgraph as pg

        class Axis(pg.AxisItem):
            def _updateHeight(self) -> None:  # noqa: N802 (pyqtgraph name)
                # pyqtgraph calls this after every re-render of the axis: the height must be set once,
                # to its final value (an unchanged height then re-lays out nothing)
                measured = self.textHeight
                self.textHeight = measured * 1.25    # the whole line: pyqtgraph measured 80% of it
                try:
                    super()._updateHeight()
                finally:
                    self.textHeight = measured

            def _updateWidth(self) -> None:  # noqa: N802 (pyqtgraph name)
                if not (self.isVisible() and self.fixedWidth is None and self.label.isVisible()):
                    return super()._updateWidth()
                width = 0.0
                if self.style["showValues"]:
                    width = self.textWidth if self.style["autoExpandTextSpace"] else self.style["tickTextWidth"]
                    width += self.style["tickTextOffset"][0]
                width += max(0, self.style["tickLength"]) + self.label.boundingRect().height()   # all of it
                self.setMaximumWidth(width)
                self.setMinimumWidth(width)
                self.picture = None

        _AXIS_CLASS = Axis
    return _AXIS_CLASS(orientation)


def bottom_axis():
    """A bottom axis tall enough for its tick text's descenders (see ``_axis``)."""
    return _axis("bottom")


def left_axis():
    """A left axis wide enough for its rotated title beside the tick text (see ``_axis``)."""
    return _axis("left")


MIN_PLOT_HEIGHT = 120   # a chart with no minimum of its own still prefers this much
_PLOT_CLASS = None


def _plot_class():
    """``pg.PlotWidget`` whose preferred height is its minimum: its layout's stretch gives it the
    rest. A QGridLayout with wrapped text in any cell treats every row's *preferred* height as its
    minimum; a chart's large default preference (a few hundred pixels) then claims room the window
    does not have, and Qt squeezes every row below its true minimum, cutting text off."""
    global _PLOT_CLASS
    if _PLOT_CLASS is None:
        import pyqtgraph as pg
        from PySide6.QtCore import QSize

        class Plot(pg.PlotWidget):
            def sizeHint(self) -> QSize:  # noqa: N802 (Qt name)
                return QSize(super().sizeHint().width(), max(self.minimumHeight(), MIN_PLOT_HEIGHT))

        _PLOT_CLASS = Plot
    return _PLOT_CLASS


def eager_view_matrix(plot) -> None:
    """Apply a new view range to the items at once, not when the view next paints.

    pyqtgraph defers the data-to-pixel matrix to the start of the next paint; items that then move
    (everything in the view) mark the view dirty again *during* that paint, so every range change
    cost two full paints of the plot, the second one identical to the first."""
    vb = plot.getPlotItem().getViewBox() if hasattr(plot, "getPlotItem") else plot.getViewBox()
    vb.sigRangeChanged.connect(lambda *_args: vb.updateMatrix())


def log_axes(plot, x: bool = False, y: bool = False) -> None:
    """Log scale on ``x`` and/or ``y``, with text on the decades only (``style_plot`` keeps it so):
    pyqtgraph labels every 2…9 × 10^k of an axis spanning a decade or two, and the labels pile up."""
    plot.setLogMode(x=x, y=y)
    for name, on in (("bottom", x), ("left", y)):
        if on:
            axis = plot.getAxis(name)
            axis.logTickValues = _decade_ticks
            axis.setStyle(maxTextLevel=0)


def _decade_ticks(low: float, high: float, _size: float, _std_ticks) -> list[tuple]:
    """Tick levels of a log axis (values in log10): the decades, with 2× and 5× when fewer than two
    decades show; then the other multiples, unlabelled."""
    first, last = math.floor(low), math.ceil(high)
    decades = [float(v) for v in range(first, last + 1) if low <= v <= high]
    multiples = {m: [v + math.log10(m) for v in range(first, last) if low < v + math.log10(m) < high]
                 for m in range(2, 10)}
    major = decades + (multiples[2] + multiples[5] if len(decades) < 2 else [])
    minor = [t for m, ts in multiples.items() for t in ts if t not in major]
    return [(1.0, sorted(major)), (None, sorted(minor))]


def cache_static(plot) -> None:
    """Axes and title change rarely: Qt keeps them as pixmaps, so repainting the data (an edit, a
    timeline frame) does not re-render their text each time (that was most of a repaint)."""
    from PySide6.QtWidgets import QGraphicsItem

    pi = plot.getPlotItem() if hasattr(plot, "getPlotItem") else plot
    for name in ("left", "bottom", "right", "top"):
        pi.getAxis(name).setCacheMode(QGraphicsItem.DeviceCoordinateCache)
    pi.titleLabel.setCacheMode(QGraphicsItem.DeviceCoordinateCache)


def _row_legend_class():
    """The ``RowLegend`` class, built once (on first use)."""
    if "RowLegend" in globals():
        return globals()["RowLegend"]
    import pyqtgraph as pg
    from PySide6.QtGui import QFont, QFontMetrics

    class RowLegend(pg.LegendItem):
        """A legend that lives in the plot's grid layout (below the axes), never on top of the curves:
        the layout sizes it, so it must not set its own geometry as the floating LegendItem does."""

        row_height = 20.0  # set from the theme's font (label heights are not final when pyqtgraph asks)

        def updateSize(self) -> None:  # noqa: N802 (pyqtgraph name)
            rows = -(-len(self.items) // max(1, self.columnCount))
            height = rows * self.row_height + 4
            self.setMinimumHeight(height)
            self.setMaximumHeight(height)

        def fit_columns(self, width_px: float, font: QFont, most: int = 4) -> None:
            """As many columns as ``width_px`` holds: a row wider than its plot would push the plot out.
            Each column is as wide as its own widest entry (entries fill the rows left to right)."""
            metrics = QFontMetrics(font)
            widths = [metrics.horizontalAdvance(label.text) + 45 for _, label in self.items] or [85]

            def row_width(cols: int) -> int:
                return sum(max(widths[c::cols]) for c in range(cols))

            cols = next((c for c in range(min(most, len(widths)), 0, -1) if row_width(c) <= width_px), 1)
            if cols != self.columnCount:
                self.setColumnCount(cols)
            self.updateSize()

    globals()["RowLegend"] = RowLegend
    return RowLegend


def __getattr__(name: str):
    # RowLegend subclasses a pyqtgraph class; build it on first use so importing this module stays cheap.
    if name == "RowLegend":
        return _row_legend_class()
    raise AttributeError(name)


TITLE_MARGIN = 8   # pixels a plot title needs beyond its text on each side


def fit_title(plot) -> None:
    """Show the plot's title in full when it fits, else cut with an ellipsis (the full title goes
    to the tooltip unless the panel gave the plot one). A title wider than the chart made the whole
    chart wider than its widget, cutting off the right axis at presenter font sizes. ``make_plot``
    charts' titles span every column of the layout; others share the data's column."""
    from PySide6.QtGui import QFont, QFontMetrics

    pi = plot.getPlotItem()
    full = getattr(pi, "_full_title", None)
    if full is None:
        return
    title, color, size = full
    if not title:
        return
    points = f"{size:.0f}"                 # the size the title is drawn at (pyqtgraph takes whole points)
    font = QFont()
    font.setPointSizeF(float(points))
    room = plot.width() - 2 * TITLE_MARGIN   # the layout's and the text document's margins
    if pi.layout.itemAt(0, 0) is not pi.titleLabel:   # in the data's column only
        for name in ("left", "right"):
            axis = pi.getAxis(name)
            if axis.isVisible():
                room -= int(axis.width()) + 1
    for col in range(3, pi.layout.columnCount()):     # beyond the right axis: a colour bar, say
        item = pi.layout.itemAt(2, col)
        room -= max(pi.layout.columnMinimumWidth(col),
                    item.effectiveSizeHint(Qt.MinimumSize).width() if item is not None else 0)
    shown = QFontMetrics(font).elidedText(title, Qt.ElideRight, max(room, 40))
    if shown != pi.titleLabel.text or getattr(pi, "_title_style", None) != (color, size):
        pi._title_style = (color, size)
        pi.setTitle(shown, color=color, size=f"{points}pt")
        own_tip = getattr(pi, "_title_tip", "")
        if plot.toolTip() in ("", own_tip):   # a tooltip the panel set stays
            pi._title_tip = title if shown != title else ""
            plot.setToolTip(pi._title_tip)


def set_title(plot, title: str) -> None:
    """A new title in the plot's themed style, fitted to its width (live titles: a frame counter).
    The plot must have been styled (``make_plot``/``style_plot``)."""
    pi = plot.getPlotItem()
    _old, color, size = pi._full_title
    pi._full_title = (title, color, size)
    fit_title(plot)


class _TitleFitter(QObject):
    """Re-fits a plot's title (and a legend below it) whenever the plot is resized."""

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 (Qt name)
        if event.type() == QEvent.Resize:
            fit_title(obj)
            fit_legend_columns(obj)
        return False


def no_si_prefix(axis) -> None:
    """Plain tick values on an axis without units.

    Not ``AxisItem.enableAutoSIPrefix(False)``: pyqtgraph 0.14 still works out a prefix scale from the
    axis's range of that moment and then never revisits it. A plot re-styled (a theme change) while
    its range was below 1, before its data arrived, kept a ×1000 scale: a 0–10 s axis read 0–10000."""
    axis.autoSIPrefix = False
    if axis.autoSIPrefixScale != 1.0 or axis.labelUnitPrefix:
        axis.autoSIPrefixScale = 1.0
        axis.labelUnitPrefix = ""
        axis._updateLabel()
        axis.picture = None
        axis.update()


def style_axis(ax, theme: Theme, label: str | None = None) -> None:
    """Theme colours and text sizes for one axis (a plot's or a colour bar's); keeps its title if ``label`` is None."""
    from PySide6.QtGui import QFont

    font = QFont()
    font.setPointSizeF(theme.point_size * 0.95)
    css = {"color": theme.fg, "font-size": f"{theme.point_size:.0f}pt"}
    ax.setPen(pen(theme.fg, 1))
    ax.setTextPen(pen(theme.fg, 1))
    # Tick text may widen an axis but never narrow it: an edit whose labels are a digit shorter
    # would otherwise re-lay out the plot (a second full repaint) and shift it sideways.
    # Two tick levels, like the grid (explorer.ui.tick_grid): pyqtgraph's third, finest level is
    # tiny marks nobody reads at projector distance, yet it is most of an axis's Python work.
    # A log axis's second level is every 2…9 × 10^k: labelled, they pile up on a short axis.
    ax.setStyle(tickFont=font, autoReduceTextSpace=False, maxTickLevel=1, maxTextLevel=0 if ax.logMode else 1)
    if not ax.labelUnits:   # no units to prefix: skip re-writing the axis title on every range change
        no_si_prefix(ax)
    if label is not None:
        ax.setLabel(label, **css)
    elif ax.labelText:
        ax.setLabel(ax.labelText, units=ax.labelUnits, **css)


def style_plot(w, theme: Theme, title: str | None = None, left: str | None = None, bottom: str | None = None) -> None:
    """(Re)apply theme colours and font sizes to a PlotWidget; keeps existing labels if None."""
    w.setBackground(theme.bg)
    pi = w.getPlotItem()
    for name in ("left", "bottom", "right", "top"):
        style_axis(pi.getAxis(name), theme, left if name == "left" else bottom if name == "bottom" else None)
    if title is None:       # re-styled for the new theme: colour and size follow it
        title = getattr(pi, "_full_title", ("",))[0] or (pi.titleLabel.text if pi.titleLabel.isVisible() else "")
    pi._full_title = (title, theme.fg, theme.point_size * 1.1)
    fit_title(w)
    if getattr(pi, "legend", None) is not None:
        style_legend(pi.legend, theme)
        fit_legend_columns(w)
    from explorer.ui.tick_grid import install_grid

    install_grid(pi, theme.fg)


LEGEND_SCALE = 0.85   # legend text relative to the theme's point size


def style_legend(legend, theme: Theme) -> None:
    """Legend text in the theme's colour at a size that follows the theme: pyqtgraph's fixed 9 pt
    is unreadable at projector distance. New entries take the size too (it is the legend's option)."""
    from PySide6.QtGui import QFont, QFontMetrics

    legend.setLabelTextSize(f"{theme.point_size * LEGEND_SCALE:.1f}pt")
    legend.setLabelTextColor(theme.fg)
    for _sample, label in legend.items:
        label.setText(label.text)          # re-render with the new size and colour
    if hasattr(legend, "fit_columns"):     # a legend below the plot: rows as tall as the new text
        legend.text_font = QFont()
        legend.text_font.setPointSizeF(theme.point_size * LEGEND_SCALE)
        legend.row_height = QFontMetrics(legend.text_font).height() * 1.15 + 10   # + the label margins
        legend.updateSize()
    else:                                  # floating over the data: a backing keeps grid lines off the text
        legend.setBrush(brush(theme.bg, 0.85))
        size_floating_legend(legend)


def size_floating_legend(legend) -> None:
    """A floating legend as large as its entries need now. pyqtgraph's ``updateSize`` adds up the
    entries' last laid-out widths: after presenter text shrinks back, a three-column legend kept its
    presenter width and pushed its last column past the plot's edge."""
    from PySide6.QtCore import QRectF

    legend.layout.invalidate()
    hint = legend.layout.preferredSize()
    legend.setGeometry(QRectF(0, 0, hint.width(), hint.height()))


def legend_below(plot, most: int = 4):
    """A legend in the plot's own layout, under the x axis, in as many columns as the width holds:
    at presenter text sizes a legend floating over the data hides the curves. Items given a
    ``name`` join it as with ``addLegend``; ``style_plot`` sizes its text with the theme."""
    pi = plot.getPlotItem()
    legend = _row_legend_class()(colCount=most, frame=False)
    legend.most = most
    pi.layout.addItem(legend, 5, 1)
    pi.legend = legend
    return legend


def fit_legend_columns(plot) -> None:
    """Columns of a ``legend_below`` legend (other plots: nothing to do) for the plot's width less its
    axes: a row wider than the data column pushes the right axis out of view."""
    from PySide6.QtGui import QFont

    pi = plot.getPlotItem()
    legend = getattr(pi, "legend", None)
    if not hasattr(legend, "most"):
        return
    axes = sum(pi.getAxis(name).width() for name in ("left", "right") if pi.getAxis(name).isVisible())
    legend.fit_columns(max(plot.width() - axes - 20, 150), getattr(legend, "text_font", None) or QFont(), legend.most)


class WrapButton(QPushButton):
    """A push button whose text wraps onto more lines instead of being cut off: an answer in a
    decision tree must be readable in full, at presenter font sizes too."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._label = QLabel(text)
        self._label.setWordWrap(True)
        self._label.setTextFormat(Qt.PlainText)
        self._label.setAttribute(Qt.WA_TransparentForMouseEvents)
        self._label.setStyleSheet("background: transparent;")       # the button's own face shows through
        lay = QHBoxLayout(self)
        lay.setContentsMargins(10, 6, 10, 6)
        lay.addWidget(self._label)
        policy = QSizePolicy(QSizePolicy.Ignored, QSizePolicy.Minimum)   # never widens its column
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)

    def text(self) -> str:  # noqa: D102 (QPushButton API)
        return self._label.text()

    def setText(self, text: str) -> None:  # noqa: N802 (Qt name)
        self._label.setText(text)

    def sizeHint(self):  # noqa: N802 (Qt name)
        return self.layout().sizeHint()

    def minimumSizeHint(self):  # noqa: N802 (Qt name)
        return self.layout().minimumSize()


class ErrorLabel(QLabel):
    """Inline error text shown next to the control that caused it; hidden when empty."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("error")
        self.setWordWrap(True)
        self.hide()

    def show_error(self, text: str | None) -> None:
        if text:
            self.setText("⚠ " + text)
            self.show()
        else:
            self.clear()
            self.hide()


class LabeledSlider(QWidget):
    """A slider with an exact-entry spin box and units: never a bare slider.

    ``valueChanging`` fires during a drag (cheap preview), ``valueCommitted`` on release or typed entry.
    """

    valueChanging = Signal(float)
    valueCommitted = Signal(float)

    def __init__(self, label: str, lo: float, hi: float, value: float, step: float = 1.0,
                 decimals: int = 0, suffix: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._scale = 10 ** decimals
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.caption = QLabel(label)
        self.slider = QSlider(Qt.Horizontal)
        self.slider.setRange(int(round(lo * self._scale)), int(round(hi * self._scale)))
        self.slider.setSingleStep(max(1, int(round(step * self._scale))))
        self.slider.setAccessibleName(label)
        if decimals:
            self.spin = QDoubleSpinBox()
            self.spin.setDecimals(decimals)
        else:
            self.spin = QSpinBox()
        self.spin.setRange(lo, hi) if decimals else self.spin.setRange(int(lo), int(hi))
        self.spin.setSingleStep(step if decimals else int(step))
        if suffix:
            self.spin.setSuffix(" " + suffix)
        self.spin.setAccessibleName(label + " value")
        self.spin.setKeyboardTracking(False)
        self.spin.setSizePolicy(QSizePolicy.Minimum, QSizePolicy.Fixed)
        lay.addWidget(self.caption)
        lay.addWidget(self.slider, 1)
        lay.addWidget(self.spin)
        self._fit_track()
        self.setValue(value)
        self.slider.valueChanged.connect(self._slider_moved)
        self.slider.sliderReleased.connect(lambda: self.valueCommitted.emit(self.value()))
        self.spin.valueChanged.connect(self._spin_changed)

    TRACK_CHARS = 12  # a track shorter than this is a handle, not a slider

    def _fit_track(self) -> None:
        self.slider.setMinimumWidth(self.fontMetrics().averageCharWidth() * self.TRACK_CHARS)

    def changeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        if event.type() == QEvent.FontChange:   # presenter font sizes: a longer track to match
            self._fit_track()
        super().changeEvent(event)

    def value(self) -> float:
        """The value; only on the GUI thread: a job gets its knobs captured before it starts."""
        if QThread.currentThread() is not self.thread():
            raise RuntimeError(f"{self.caption.text()!r} was read from a worker thread: capture the "
                               "value (panel.params) before starting the job")
        return float(self.spin.value())

    def setValue(self, value: float) -> None:
        for w in (self.slider, self.spin):
            w.blockSignals(True)
        self.slider.setValue(int(round(value * self._scale)))
        self.spin.setValue(value if isinstance(self.spin, QDoubleSpinBox) else int(round(value)))
        for w in (self.slider, self.spin):
            w.blockSignals(False)

    def _slider_moved(self, raw: int) -> None:
        v = raw / self._scale
        self.spin.blockSignals(True)
        self.spin.setValue(v if isinstance(self.spin, QDoubleSpinBox) else int(round(v)))
        self.spin.blockSignals(False)
        self.valueChanging.emit(v)
        if not self.slider.isSliderDown():  # keyboard / click steps commit at once
            self.valueCommitted.emit(v)

    def _spin_changed(self, v) -> None:
        self.slider.blockSignals(True)
        self.slider.setValue(int(round(float(v) * self._scale)))
        self.slider.blockSignals(False)
        self.valueChanging.emit(float(v))
        self.valueCommitted.emit(float(v))


class LessonView(QTextBrowser):
    """Offline Markdown explanation with sources (no network: links open nothing remote)."""

    HEADING_SCALE = {1: 1.45, 2: 1.25, 3: 1.1}

    def __init__(self, markdown: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenExternalLinks(False)
        self.setOpenLinks(False)
        self.setAccessibleName("Explanation")
        self.setMinimumWidth(260)
        self._documents: dict[str, object] = {}   # markdown → its formatted QTextDocument, at this font
        self._markdown = ""
        self.setMarkdown(markdown)

    def setMarkdown(self, markdown: str) -> None:  # noqa: N802 (Qt name)
        """Show ``markdown``; each text is formatted once per font size and then swapped in (a panel
        switch or a tour step does not re-parse the panel's whole explanation)."""
        from PySide6.QtGui import QTextDocument

        self._markdown = markdown
        doc = self._documents.get(markdown)
        if doc is None:
            doc = QTextDocument(self)
            doc.setDefaultFont(self.font())
            self.setDocument(doc)
            self._format(markdown)
            self._documents[markdown] = doc
        elif doc is not self.document():
            self.setDocument(doc)

    def changeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        from PySide6.QtCore import QEvent

        super().changeEvent(event)
        if event.type() == QEvent.FontChange and self._documents:
            old, self._documents = self._documents, {}
            self.setMarkdown(self._markdown)           # headings are sized from the font
            for doc in old.values():
                if doc is not self.document():
                    doc.deleteLater()

    def _format(self, markdown: str) -> None:
        """Render Markdown with headings only moderately larger than the text (Qt's are huge), and
        code in the bundled fixed-width font (Qt would take the system's)."""
        from PySide6.QtGui import QTextCharFormat, QTextCursor, QTextFormat

        super().setMarkdown(markdown)
        base = self.font().pointSizeF()
        block = self.document().begin()
        while block.isValid():
            _code_in_mono_font(block)
            level = block.blockFormat().headingLevel()
            if level:
                fmt = QTextCharFormat()
                fmt.setProperty(QTextFormat.FontSizeAdjustment, 0)
                fmt.setFontPointSize(base * self.HEADING_SCALE.get(level, 1.0))
                fmt.setFontWeight(700)
                cur = QTextCursor(block)
                cur.movePosition(QTextCursor.StartOfBlock)
                cur.movePosition(QTextCursor.EndOfBlock, QTextCursor.KeepAnchor)
                cur.mergeCharFormat(fmt)
            block = block.next()
        # Re-formatting after setMarkdown left the body text below the first screen never laid out
        # (blank sections when scrolled to, a scroll range a third too short: memory's lesson);
        # marking the whole document dirty lays it out again as it scrolls into view.
        self.document().markContentsDirty(0, self.document().characterCount())


def _code_in_mono_font(block) -> None:
    """Give a Markdown block's code (inline spans, code blocks) the bundled fixed-width family."""
    from PySide6.QtGui import QTextCharFormat, QTextCursor, QTextFormat

    from explorer.fonts import MONO_FAMILY

    code_block = block.blockFormat().hasProperty(QTextFormat.BlockCodeLanguage)
    it = block.begin()
    while not it.atEnd():
        fragment = it.fragment()
        if code_block or fragment.charFormat().fontFixedPitch():
            fmt = QTextCharFormat()
            fmt.setFontFamilies([MONO_FAMILY])
            cur = QTextCursor(block.document())
            cur.setPosition(fragment.position())
            cur.setPosition(fragment.position() + fragment.length(), QTextCursor.KeepAnchor)
            cur.mergeCharFormat(fmt)
        it += 1


class ElidedCombo(QComboBox):
    """A combo box that ends a choice too long for it with "…": Qt cuts it mid-word ("ZeRO-3 (+ pai")
    where a narrow dock makes the box narrower than its text. The full text is in the drop-down."""

    def shown_text(self) -> str:
        opt = QStyleOptionComboBox()
        self.initStyleOption(opt)
        field = self.style().subControlRect(QStyle.CC_ComboBox, opt, QStyle.SC_ComboBoxEditField, self)
        return self.fontMetrics().elidedText(opt.currentText, Qt.ElideRight, field.width())

    def paintEvent(self, _event) -> None:  # noqa: N802 (Qt name)
        painter = QStylePainter(self)
        opt = QStyleOptionComboBox()
        self.initStyleOption(opt)
        painter.drawComplexControl(QStyle.CC_ComboBox, opt)
        opt.currentText = self.shown_text()
        painter.drawControl(QStyle.CE_ComboBoxLabel, opt)


class Tabs(QTabWidget):
    """A tab widget whose minimum height does not follow its width.

    A QTabWidget reports height-for-width when any page holds wrapped text, and a grid then treats
    that *preferred* height as the cell's minimum: it takes the room and squeezes the charts in the
    other row below their minimum, so they overlap. Without it the pages' minimums count, and each
    page still wraps its text inside the room it gets."""

    def hasHeightForWidth(self) -> bool:  # noqa: N802 (Qt name)
        return False
