"""The Kubernetes panel's left column: the cluster drawing over the ownership graph, in a splitter
that gives the graph room only where it can be drawn."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSplitter

from panels._k8s_views import ClusterView, GraphView


class ClusterSplit(QSplitter):
    """The cluster over the graph, ``share`` of the height to the cluster (the user's drag sets it); a
    graph that would be too short to draw gives its room to the cluster instead of a blank strip."""

    def __init__(self, cluster: ClusterView, graph: GraphView, share: float = 470 / 700) -> None:
        super().__init__(Qt.Vertical)
        self.addWidget(cluster)
        self.addWidget(graph)
        self.graph, self.share = graph, share
        self.splitterMoved.connect(self._moved)

    def _moved(self, *_args) -> None:
        sizes = self.sizes()
        if sizes[1] and sum(sizes):
            self.share = sizes[0] / sum(sizes)

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        if self.graph.isHidden() or self.widget(0).isHidden():   # a slide of one of them: it has it all
            return
        total = sum(self.sizes())
        graph = total - max(round(total * self.share), self.widget(0).minimumHeight())
        graph = graph if graph >= self.graph.least_height() else 0
        if self.sizes() != [total - graph, graph]:
            self.setSizes([total - graph, graph])
