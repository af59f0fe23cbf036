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
