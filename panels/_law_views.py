"""Drawing helpers for the law panel: the decision tree as a graph with the path highlighted, the
walk's button bar, and dated deadline timelines. Pure view code: positions come from engines.law.trees.layout."""
from __future__ import annotations

from datetime import date, datetime, time

import pyqtgraph as pg
from PySide6.QtCore import QSize, Qt, QTimer
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from engines.law.trees import Tree, layout
from explorer.ui.tree_graph import TreeGraph as _TreeGraph
from explorer.ui.label_layer import range_end_for_label
from explorer.ui.tick_grid import MIN_MEAN_GAP_PX
from explorer.theme import Theme
from explorer.ui.widgets import brush, pen


class WalkBar(QWidget):
    """The decision walk's two rows of controls (tree, back, undo, restart; example, start, exports)
    and the line that says what was last done; the panel connects the buttons to the walk."""

    def __init__(self, trees: dict[str, str], examples: dict[str, str]) -> None:
        super().__init__()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.tree_box, self.example_box = QComboBox(), QComboBox()
        self.tree_box.setAccessibleName("Decision tree")
        self.example_box.setAccessibleName("Example product")
        for box, items in ((self.tree_box, trees), (self.example_box, examples)):
            for key, title in items.items():
                box.addItem(title, key)
            box.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)   # long titles must not
            box.setMinimumContentsLength(14)                                          # set the panel's width
        self.example_btn = QPushButton("Start")
        self.example_btn.setToolTip("Start from this example: its answers are filled in")
        self.back_btn = QPushButton("◀ Back")
        self.back_btn.setToolTip("Go back one answer")
        self.undo_btn = QPushButton("↶ Undo")
        self.undo_btn.setToolTip("Revert the last action (answer, back, restart, example)")
        self.restart_btn = QPushButton("⟲ Restart")
        self.md_btn = QPushButton("Export .md…")
        self.md_btn.setToolTip("Export the record of your answers as Markdown")
        self.html_btn = QPushButton("Export .html…")
        self.html_btn.setToolTip("Export the record of your answers as HTML")
        # two rows, so the panel fits in ~1000 px and leaves the side docks their width
        for row in (((QLabel("Tree:"), 0), (self.tree_box, 1), (self.back_btn, 0), (self.undo_btn, 0),
                     (self.restart_btn, 0)),
                    ((QLabel("Example:"), 0), (self.example_box, 1), (self.example_btn, 0), (self.md_btn, 0),
                     (self.html_btn, 0))):
            bar = QHBoxLayout()
            for w, stretch in row:
                bar.addWidget(w, stretch)
            lay.addLayout(bar)
        self.export_status = QLabel()             # as panels._law_tools.label makes it (that module imports this one)
        self.export_status.setWordWrap(True)
        self.export_status.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.export_status.setObjectName("muted")
        lay.addWidget(self.export_status)


class TreeGraph(_TreeGraph):
    """The toolkit's tree graph laid out by the law engine's tidy layout. It draws the last walk it
    was given when it next paints (or in the next event-loop pass): a tour step sets the walk, then
    the timeline's kept frame, then the step's frame, and only the last is worth drawing. On a tab
    that is not showing nothing is drawn until it is shown."""

    def __init__(self, theme: Theme) -> None:
        super().__init__(theme)
        self._pending = None
        self._soon = QTimer(self)
        self._soon.setSingleShot(True)
        self._soon.setInterval(0)
        self._soon.timeout.connect(self._render)

    def draw(self, tree: Tree, path: list[str]) -> None:
        self._pending = (tree, list(path))
        if self.isVisible():
            self._soon.start()

    def showEvent(self, event) -> None:  # noqa: N802 (Qt name)
        super().showEvent(event)
        if self._pending is not None:
            self._soon.start()

    def paintEvent(self, event) -> None:  # noqa: N802 (Qt name)
        self._render()              # never paint a walk that has been replaced
        super().paintEvent(event)

    def _render(self) -> None:
        if self._pending is None or not self.isVisible():
            return
        (tree, path), self._pending = self._pending, None
        self._soon.stop()
        super().draw(tree, path, layout(tree))


def _ts(moment: date | datetime) -> float:
    if not isinstance(moment, datetime):
        moment = datetime.combine(moment, time())
    return moment.timestamp()


LANES = 6          # most heights a deadline's label can be written at (as many as the chart's height holds)


class DayAxis(pg.DateAxisItem):
    """Pyqtgraph's date axis, less the day ticks that crowd a month's name: "Dec" on the 1st and "03"
    two days later read as one label, "Dec03"; and less a level of ticks too close to label or read
    (a month tick every 5 px over sixteen years: pyqtgraph wrote and measured each one's text, 8 ms
    of a tour step, to draw none of them)."""

    def tickValues(self, minVal, maxVal, size):  # noqa: N802, N803 (pyqtgraph names)
        levels = super().tickValues(minVal, maxVal, size)
        per_px = (maxVal - minVal) / max(size, 1.0)
        levels = levels[:1] + [(spacing, vals) for spacing, vals in levels[1:]
                               if spacing / max(per_px, 1e-9) >= MIN_MEAN_GAP_PX]
        months = [vals for spacing, vals in levels if spacing >= 28 * 86400]
        if not months or len(levels) < 2:
            return levels
        firsts = months[0]
        out = []
        for spacing, vals in levels:
            if spacing < 28 * 86400:
                step = min((b - a for a, b in zip(vals, vals[1:])), default=spacing)   # days skipped: 5, not 1
                vals = [v for v in vals if all(abs(v - m) >= 0.6 * step for m in firsts)]
            out.append((spacing, vals))
        return out


class DeadlineTimeline(pg.PlotWidget):
    """Events and deadlines on a date axis: each a vertical line with its name and date written next
    to it (line style, not colour alone, separates events from deadlines)."""

    def __init__(self, theme: Theme, title: str) -> None:
        super().__init__(axisItems={"bottom": DayAxis()})
        self.theme = theme
        self.title = title
        self.hideAxis("left")
        self.setMouseEnabled(y=False)
        self.setMinimumHeight(170)
        self._marks: list[tuple[pg.InfiniteLine, pg.TextItem]] = []   # kept between drawings, see _mark

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt name)
        """Its least height: the chart takes the room it is given. A graphics view's hint follows its
        last size, so a page in a scroll area kept the height presenter mode gave it, and scrolled."""
        return QSize(400, self.minimumHeight())

    def draw(self, marks: list[tuple[date | datetime, str, str]]) -> None:
        """``marks``: (moment, text, kind) with kind "event", "deadline" or "rule". A chart on a tab
        that is not showing draws when it is shown, and the same marks in the same theme are not
        drawn twice (a tour step changes one clock, not the five charts)."""
        self._pending = list(marks)
        if self.isVisible():
            self._render()

    def showEvent(self, event) -> None:  # noqa: N802 (Qt name)
        """Render what waits, after the show: a tab shows its children before itself, and the panel
        then replays the tab's waiting draws (``Panel.draw_when_shown``), which may bring newer marks.
        Rendering here too drew the chart twice (F3 step 11: 4 renders, 36 of the step's 64 ms)."""
        super().showEvent(event)
        if getattr(self, "_pending", None) is not None:
            QTimer.singleShot(0, self, self._render_pending)

    def _render_pending(self) -> None:
        if self._pending is not None and self.isVisible():
            self._render()

    def _render(self) -> None:
        marks, self._pending = self._pending, None
        th = self.theme
        key = (tuple(marks), id(th), th.point_size, th.fg, th.bg)
        if key == getattr(self, "_drawn", None):
            return
        self._drawn = key
        self._label_px: list[tuple[float, float]] = []   # (x, pixels its label needs right of the line)
        self._labels: list[pg.TextItem] = []
        title = (self.title, th.fg, th.point_size)
        if title != getattr(self, "_titled", None):
            self._titled = title
            self.setTitle(self.title, color=th.fg, size=f"{th.point_size:.0f}pt")
        font = QFont()
        font.setPointSizeF(th.point_size * 0.85)
        styles = {"event": (th.palette[4], Qt.SolidLine, 2), "deadline": (th.palette[5], Qt.DashLine, 3),
                  "rule": (th.muted, Qt.DotLine, 2)}
        ordered = sorted(marks, key=lambda m: _ts(m[0]))
        metrics = QFontMetrics(font)
        self._label_h = 2 * metrics.lineSpacing() + 12       # two lines, the item's margins and a gap
        for i, (moment, text, kind) in enumerate(ordered):
            color, style, width = styles[kind]
            x = _ts(moment)
            line, label = self._mark(i)
            line.setPen(pen(color, width, style))
            line.setValue(x)
            words = (f"{text}\n{moment.astimezone():%d %b %Y %H:%M}" if isinstance(moment, datetime)
                     else f"{text}\n{moment:%d %b %Y}")
            label.setText(words, color=th.fg)
            label.fill = brush(th.bg, 0.85)
            label.setFont(font)
            label.setPos(x, 1.0 - (i % LANES) * 0.55)
            self._label_px.append((x, max(metrics.horizontalAdvance(row) for row in words.split("\n")) + 12))
            self._labels.append(label)
        for line, label in self._marks[len(ordered):]:
            line.hide()
            label.hide()
        if ordered:
            self._fit_x()
            self.setYRange(-1.0, 1.5, padding=0)

    def _mark(self, i: int) -> tuple[pg.InfiniteLine, pg.TextItem]:
        """The ``i``-th line and its label, shown: kept from the last drawing, where a new clock moved
        them (a tour step changes the dates, not how many there are), or made now."""
        marks = self._marks
        if i == len(marks):
            line = pg.InfiniteLine(angle=90)
            label = pg.TextItem(anchor=(0, 0.5))
            label.setZValue(10)                  # over every line: a later line no longer strikes it through
            self.addItem(line)
            self.addItem(label)
            marks.append((line, label))
        line, label = marks[i]
        line.show()
        label.show()
        return line, label

    def _fit_x(self, now: bool = False) -> None:
        """Room right of each line for its label, in pixels at the chart's width: the last deadline's
        date was cut off ("final repor", "23 Oct 20")."""
        marks = getattr(self, "_label_px", None)
        if not marks:
            return
        lo, hi = marks[0][0], marks[-1][0]
        span = max(hi - lo, 86400.0)
        left = lo - 0.05 * span
        view_px = max(self.getViewBox().width(), 200.0)
        right = max([hi + 0.1 * span] + [range_end_for_label(x, left, px, view_px, 0.3 * view_px) for x, px in marks])
        self.setXRange(left, right, padding=0)
        self._lanes((right - left) / view_px)

    def _lanes(self, per_px: float) -> None:
        """Each label in the first of the lanes (top down) where it clears the last label there, at the
        chart's scale, the lanes a label's height apart: every fourth label in a fixed lane ran two close
        deadlines' labels into each other."""
        # a label's height in y units (the range is 2.5), at most the old fixed 0.55 a short chart needs
        pitch = min(0.55, getattr(self, "_label_h", 40) * 2.5 / max(self.getViewBox().height(), 100.0))
        ends = [float("-inf")] * min(LANES, int(1.65 / pitch + 1e-9) + 1)   # each lane's last label's right end, px
        for label, (x, px) in zip(getattr(self, "_labels", []), self._label_px):
            left = x / per_px
            lane = next((i for i, end in enumerate(ends) if left >= end), ends.index(min(ends)))
            ends[lane] = left + px
            label.setPos(x, 1.0 - lane * pitch)       # lanes from 1.0 down to -0.65 at most

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        super().resizeEvent(event)
        self._fit_x()
