"""A decision tree drawn left to right with the path taken highlighted: questions as squares, outcomes
as diamonds, Yes/No written on the edges where they fit. Any tree-shaped data with ``nodes`` (id →
node with ``label``, ``answers``, ``is_outcome``) and ``graph()`` can be drawn; the caller gives the
positions (the law and self-hosting trees use :func:`engines.law.trees.layout`)."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, QTimer
from PySide6.QtGui import QFont, QFontInfo, QFontMetrics

from explorer.theme import Theme
from explorer.ui.widgets import brush, pen


NODE_PX = 26    # the largest node symbol, in pixels


LABEL_ABOVE = (0.5, 1.25)
LANES = (LABEL_ABOVE, (0.5, -0.3), (0.5, 2.3))   # a question's label: over its node, under it, a line higher
FORMER_CAP_PT = 12.0   # the labels' old fixed cap: the least they get, as before
BURIED = 0.25          # share of a Yes/No word under other text at which it is left out: it cannot be read
ROW_TEXT_SHARE = 0.4   # a label's pixel size against a row's height: its own line, the node's and a gap
LEAST_TEXT_SHARE = 0.88   # of the theme's label size, however many rows: in presenter mode the labels stayed at
                          # 12 pt while the slide's other text grew to 2.2 % of the screen's height (issue 38)


class TreeGraph(pg.PlotWidget):
    """The tree laid out left to right; squares are questions, diamonds outcomes. The path taken is
    drawn thick and solid with filled nodes, the rest thin and dashed; the current node is starred
    (its symbol and its label)."""

    def __init__(self, theme: Theme) -> None:
        super().__init__()
        self.theme = theme
        self.setMenuEnabled(False)
        self.hideAxis("left")
        self.hideAxis("bottom")
        self.setMouseEnabled(x=False, y=False)
        self.setAccessibleName("Decision tree graph")
        self.getViewBox().sigResized.connect(lambda *_a: self._place_edge_words())
        self._words = QTimer(self)            # a draw and the resizes a layout pass sends place the words once
        self._words.setSingleShot(True)
        self._words.setInterval(0)
        self._words.timeout.connect(self._place_edge_words_now)
        # the items are made once and updated on each draw, stacked as listed (later on top)
        self._cold, self._hot = self._layer(pg.PlotDataItem(), 1), self._layer(pg.PlotDataItem(), 2)
        self._word_pool = _TextPool(self, 3)
        self._label_pool = _TextPool(self, 4)
        self._nodes = self._layer(pg.ScatterPlotItem(), 5)
        self._star = self._layer(pg.ScatterPlotItem(), 6)

    def _layer(self, item, z: float):
        item.setZValue(z)
        self.addItem(item)
        return item

    def draw(self, tree, path: list[str], pos: dict[str, tuple[float, float]]) -> None:
        """``tree``: nodes (id → node with label, answers, is_outcome) and graph(); ``pos``: node id → (x, y)."""
        th = self.theme
        self._args = (tree, path, pos)
        label_px = self._label_px_size(pos)
        drawn = (id(tree), tuple(path), th, label_px)
        if drawn == getattr(self, "_drawn", None):     # a step sets the walk and then its frame: draw once
            return
        self._drawn = drawn
        self.setBackground(th.bg)
        on_path = set(path)
        path_edges = set(zip(path, path[1:]))
        g = tree.graph()
        accent, other = th.palette[0], th.muted
        for hot, line in ((False, self._cold), (True, self._hot)):   # one item per style, its edges as segments
            xs, ys = [], []
            for u, v in g.edges:
                if ((u, v) in path_edges) == hot:
                    xs += [pos[u][0], pos[v][0]]
                    ys += [pos[u][1], pos[v][1]]
            line.setData(xs, ys, connect="pairs", pen=pen(accent if hot else other, 5 if hot else 1.2,
                                                          Qt.SolidLine if hot else Qt.DashLine))
            line.setVisible(bool(xs))
        font = QFont()
        font.setPixelSize(label_px)
        backing = brush(th.bg, 0.85)
        small = QFont(font)
        small.setPixelSize(label_px)                    # italic tells the words from the labels
        small.setItalic(True)
        self._edge_words: list[tuple[pg.TextItem, tuple[float, float], tuple[float, float]]] = []
        self._word_pool.begin()
        for nid, node in tree.nodes.items():      # yes/no splits: the answer written on its edge
            words: dict[str, list[str]] = {}      # target → its words (both answers may lead there)
            for a in node.answers:
                word = _yes_no(a.label)
                if word and a.next in pos:
                    words.setdefault(a.next, []).append(word)
            for target, said in words.items():
                item = self._word_pool.take(" / ".join(said), th.fg, small, (0.5, 0.5), backing)
                item._split = len(words) == 2     # one of two branches: the other word tells it apart
                item._either = len(said) > 1      # "Yes / No": taken whatever the answer
                self._edge_words.append((item, pos[nid], pos[target]))
        self._word_pool.end()
        self._label_px: list[tuple[float, float, float]] = []  # (node x, px left of it, px right of it)
        self._node_labels: list[pg.TextItem] = []
        self._question_labels: list[tuple[pg.TextItem, float, float, float]] = []   # (item, x, y, px wide)
        self._label_pool.begin()
        metrics = QFontMetrics(font)
        spots = []                                # every node symbol in one item
        for nid, node in tree.nodes.items():
            x, y = pos[nid]
            hot = nid in on_path
            spots.append({"pos": (x, y), "symbol": "d" if node.is_outcome else "s", "size": 26 if hot else 18,
                          "brush": brush(accent if hot else th.panel_bg), "pen": pen(th.fg, 2.5 if hot else 1)})
            # passed nodes are ticked; the current one is starred in its own label (a separate
            # "you are here" line ran into the Yes/No words and the labels of the next layer)
            text = node.label + (" ★" if path and nid == path[-1] else " ✓" if hot else "")
            # outcomes end a row: their label reads on to the right; a question's sits above it
            anchor = (-0.12, 0.5) if node.is_outcome else LABEL_ABOVE
            item = self._label_pool.take(text, th.fg, font, anchor, backing)
            item.setPos(x, y)
            # the item's own box (text plus its document margins) with the anchor's offset: the
            # advance alone left the widest outcome labels cut at the chart's right edge
            w = max(item.textItem.boundingRect().width(), metrics.horizontalAdvance(text)) + 6
            self._label_px.append((x, 0.0, w * 1.12 + 6) if node.is_outcome else (x, w / 2, w / 2))
            self._node_labels.append(item)
            if not node.is_outcome:
                self._question_labels.append((item, x, y, w))
        self._label_pool.end()
        shown = [(s["pos"], s["symbol"], s["size"]) for s in spots], th   # setData costs milliseconds
        if shown != getattr(self, "_nodes_shown", None):
            self._nodes_shown = shown
            self._nodes.setData(spots=spots)
        if path:
            x, y = pos[path[-1]]
            if ((x, y), th) != getattr(self, "_star_shown", None):
                self._star_shown = ((x, y), th)
                self._star.setData([x], [y], symbol="star", size=30, brush=brush(th.palette[5]), pen=pen(th.fg, 1.5))
        self._star.setVisible(bool(path))
        xs = [p[0] for p in pos.values()]
        ys = [p[1] for p in pos.values()]
        self._x_span = (min(xs), max(xs))
        self.setYRange(min(ys) - 0.8, max(ys) + 1.0, padding=0)
        self._fit_x(now=True)

    def _label_px_size(self, pos: dict[str, tuple[float, float]]) -> int:
        """Label text in pixels: the theme's size (so presenter mode and Ctrl+= reach the tree) as far
        as a row of the tree holds it (one row per leaf: a label above its node, and the node); never
        below the 12 pt × 0.9 the labels had when the size was capped there, nor below LEAST_TEXT_SHARE of the theme's."""
        theme_px = QFontInfo(self._theme_font()).pixelSize() * 0.9
        floor_px = max(min(theme_px, QFontInfo(self._theme_font(FORMER_CAP_PT)).pixelSize() * 0.9),
                       theme_px * LEAST_TEXT_SHARE)   # presenter text reaches the labels even in a crowded tree
        ys = [p[1] for p in pos.values()] or [0.0]
        rows = max(ys) - min(ys) + 1.8                       # the y range draw() sets
        height = self.getViewBox().height()
        row_px = height / rows if height > 50 else theme_px * 3
        return int(max(floor_px, min(theme_px, row_px * ROW_TEXT_SHARE)))

    def _theme_font(self, points: float | None = None) -> QFont:
        font = QFont()
        font.setPointSizeF(points if points is not None else self.theme.point_size)
        return font

    def _fit_x(self, now: bool = False) -> None:
        """Room on both sides for the labels, worked out in pixels at the chart's width."""
        if not getattr(self, "_x_span", None):
            return
        lo0, hi0 = self._x_span
        width = max(self.getViewBox().width(), 200.0)
        lo, hi = lo0 - 0.6, hi0 + 0.6
        for _ in range(4):                                   # the scale depends on the range: settle it
            per_px = (hi - lo) / width
            lo = min([lo0 - 0.6] + [x - left * per_px for x, left, _right in self._label_px])
            hi = max([hi0 + 0.6] + [x + right * per_px for x, _left, right in self._label_px])
        self.setXRange(lo, hi, padding=0)
        self._stagger((hi - lo) / width)
        self._place_edge_words_now() if now else self._place_edge_words()

    def _stagger(self, per_px: float) -> None:
        """Questions in a row (a chain of one-way questions) sit closer than their labels are wide:
        each label goes above its node where it clears the last one there, else below the node, else
        a line higher (the lanes), so neighbours no longer write over each other."""
        rows: dict[float, list[tuple[float, float, pg.TextItem]]] = {}
        for item, x, y, w in getattr(self, "_question_labels", []):
            rows.setdefault(round(y, 6), []).append((x / per_px, w, item))
        for row in rows.values():
            ends = [float("-inf")] * len(LANES)            # right end, in pixels, of each lane's last label
            for centre, w, item in sorted(row, key=lambda r: r[0]):
                left = centre - w / 2
                lane = next((i for i, end in enumerate(ends) if left >= end), ends.index(min(ends)))
                ends[lane] = left + w
                anchor = LANES[lane]
                if (item.anchor.x(), item.anchor.y()) != anchor:
                    item.setAnchor(anchor)
                    item._style = (*item._style[:2], anchor)    # the pool's record of what it set

    def _place_edge_words(self) -> None:
        self._words.start()

    def _place_edge_words_now(self) -> None:
        """Each Yes/No at the first point along its edge (middle first, then either way) where its box clears the node labels, the node symbols and the words
        already placed: in a narrow chart the layers are close and a word at a fixed fraction ran
        into the next question's label. Of a two-way split that has no clear spot for one word, the
        other word alone tells the branches apart; a crowded "Yes / No" (either answer leads there)
        is left out, since the edge needs no word to be read."""
        if not getattr(self, "_edge_words", None):
            return
        vb = self.getViewBox()
        vb.updateMatrix()                 # boxes in scene pixels, with the range just set
        to_vb, to_scene = vb.childGroup.transform(), vb.sceneTransform()   # vb.mapViewToScene, once

        def scene_at(p: QPointF) -> QPointF:
            return to_scene.map(to_vb.map(p))

        def box_at(item: pg.TextItem, x: float, y: float) -> QRectF:
            r = item.textItem.boundingRect()             # text size in pixels (TextItems do not scale)
            p = scene_at(QPointF(x, y))
            ax, ay = item.anchor.x(), item.anchor.y()
            return QRectF(p.x() - ax * r.width(), p.y() - ay * r.height(), r.width(), r.height())

        taken = [box_at(item, item.pos().x(), item.pos().y()) for item in self._node_labels]
        for item in self._node_labels:
            p = scene_at(item.pos())
            taken.append(QRectF(p.x() - NODE_PX / 2, p.y() - NODE_PX / 2, NODE_PX, NODE_PX))
        clean: dict[tuple[float, float], bool] = {}     # source node → one of its words placed cleanly
        crowded = []
        for item, (x0, y0), (x1, y1) in self._edge_words:
            best = None
            for f in (0.5, 0.4, 0.6, 0.3, 0.7, 0.22, 0.78):   # on its own edge only: beside it, a word
                box = box_at(item, x0 + f * (x1 - x0), y0 + f * (y1 - y0))   # reads as the neighbour's
                clash = sum(_area(box.intersected(t)) for t in taken if box.intersects(t))
                if best is None or clash < best[0]:
                    best = (clash, f, box)
                if clash == 0:
                    break
            clash, f, box = best
            item.setPos(x0 + f * (x1 - x0), y0 + f * (y1 - y0))
            item.setVisible(True)
            taken.append(box)
            clean[(x0, y0)] = clean.get((x0, y0), False) or clash == 0
            if clash:
                crowded.append((item, (x0, y0), clash > BURIED * _area(box)))
        for item, source, buried in crowded:   # an edge taken either way needs no word; one mostly under
            if (item._split and clean[source]) or item._either or buried:   # a label's backing can't be read
                item.setVisible(False)

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        super().resizeEvent(event)
        if self.plotItem is None:             # close() drops the plot, then resizes the view
            return
        args = getattr(self, "_args", None)
        if args is not None and self._label_px_size(args[2]) != self._drawn[3]:
            TreeGraph.draw(self, *args)       # taller or shorter: labels follow the room per row
        else:
            self._fit_x()


class _TextPool:
    """Text labels reused across draws: creating a TextItem (a text document of its own) and adding
    it to the plot cost most of a draw, while updating one whose text, font and colour did not
    change costs next to nothing. Labels not used by a draw are hidden and emptied."""

    def __init__(self, plot: pg.PlotWidget, z: float) -> None:
        self.plot, self.z = plot, z
        self.items: list[pg.TextItem] = []
        self.used = 0

    def begin(self) -> None:
        self.used = 0

    def take(self, text: str, color: str, font: QFont, anchor: tuple[float, float], fill) -> pg.TextItem:
        if self.used == len(self.items):
            item = pg.TextItem()
            item.setZValue(self.z)
            item._style = None
            self.plot.addItem(item)
            self.items.append(item)
        item = self.items[self.used]
        self.used += 1
        style = (color, font.key(), tuple(anchor))
        if item._style != style:
            item._style = style
            item.setColor(color)
            item.setFont(font)
            item.setAnchor(anchor)
        if item.fill != fill:
            item.fill = fill
            item.update()
        item.setPlainText(text)
        item.setVisible(True)
        return item

    def end(self) -> None:
        for item in self.items[self.used:]:
            item.setVisible(False)
            item.setPlainText("")


def _area(r: QRectF) -> float:
    return r.width() * r.height()


def _yes_no(label: str) -> str | None:
    """"Yes" or "No" when an answer's label starts with one ("No, never", "Yes (paid…)"), else None:
    other answers name their target, whose label the graph already shows."""
    head = label.split(":")[0].split("(")[0].split(",")[0].strip()
    return head if head in ("Yes", "No") else None
