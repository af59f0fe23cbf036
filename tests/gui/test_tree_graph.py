"""The toolkit's tree graph reuses its items between draws: a redraw shows exactly what a fresh
graph shows, leaves no label of an earlier tree behind and creates no new items."""
from __future__ import annotations

import pyqtgraph as pg

from engines.law.trees import load_trees, layout
from explorer.theme import THEMES
from explorer.ui.tree_graph import TreeGraph

TREES = load_trees()


def _texts(graph: TreeGraph) -> list[str]:
    return sorted(i.toPlainText() for i in graph.getPlotItem().items if isinstance(i, pg.TextItem) and i.isVisible())


def _fresh(qtbot, tree, path) -> TreeGraph:
    graph = TreeGraph(THEMES["light"])
    qtbot.addWidget(graph)
    graph.resize(700, 450)
    graph.show()
    graph.draw(tree, path, layout(tree))
    return graph


def test_a_redrawn_graph_shows_what_a_fresh_one_shows(qtbot):
    big, small = sorted(TREES.values(), key=lambda t: len(t.nodes))[-1], sorted(TREES.values(), key=lambda t: len(t.nodes))[0]
    reused = _fresh(qtbot, big, [big.root])
    items = list(reused.getPlotItem().items)
    for tree in (small, big, small):
        path = [tree.root]
        reused.draw(tree, path, layout(tree))
        assert _texts(reused) == _texts(_fresh(qtbot, tree, path))
    assert set(reused.getPlotItem().items) <= set(items)      # the big tree's items served the small one
    hidden = [i for i in reused.getPlotItem().items if isinstance(i, pg.TextItem) and not i.isVisible()]
    assert hidden and all(i.toPlainText() in ("", "Yes", "No", "Yes / No") for i in hidden)


def _label_px(graph: TreeGraph) -> int:
    from PySide6.QtGui import QFontInfo

    return max(QFontInfo(i.textItem.font()).pixelSize() for i in graph._node_labels)


def test_labels_grow_with_the_room_and_the_theme_not_a_fixed_cap(qtbot):
    """Labels were capped at 12 pt: 12–14 px on a 1080-line projector. They now follow the theme's
    size, as far as a row of the tree holds them, and a resized chart redraws them to fit."""
    tree = sorted(TREES.values(), key=lambda t: len(t.nodes))[-1]     # many rows: the room limits first
    graph = _fresh(qtbot, tree, [tree.root])
    graph.resize(700, 1000)
    qtbot.wait(20)
    graph.draw(tree, [tree.root], layout(tree))
    plain = _label_px(graph)
    graph.theme = THEMES["light"].scaled(2.4)                         # presenter text, Ctrl+=
    graph.draw(tree, [tree.root], layout(tree))
    large = _label_px(graph)
    assert large > plain and large > 17                                # 12 pt × 0.9 was 14 px
    graph.resize(700, 300)
    qtbot.waitUntil(lambda: _label_px(graph) < large)                  # a short chart: rows hold less


def test_presenter_labels_stay_near_the_theme_size_in_a_crowded_tree(qtbot):
    """In presenter mode a short chart of the thirteen-leaf scope tree kept its labels at the old 12 pt
    floor (14 px at 1280×800 beside 23 px slide text): the slide check's 2.2 % rule failed on every walk."""
    from PySide6.QtGui import QFont, QFontInfo

    tree = sorted(TREES.values(), key=lambda t: len(t.nodes))[-1]
    graph = _fresh(qtbot, tree, [tree.root])
    graph.theme = THEMES["light"].scaled(1.6)
    graph.resize(700, 300)
    qtbot.wait(20)
    graph.draw(tree, [tree.root], layout(tree))
    font = QFont()
    font.setPointSizeF(graph.theme.point_size)
    theme_px = QFontInfo(font).pixelSize()
    assert _label_px(graph) >= int(theme_px * 0.9 * 0.88) > 14
