"""Privacy view of the self-hosting panel: the three question trees drawn with the toolkit's tree graph
(as the law panel draws its own) beside a card with the question, its source and the answers."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSplitter, QVBoxLayout, QWidget

from engines.law.trees import CONTINUE, Walk, layout
from explorer.ui.question_card import QuestionCard, outcome_html
from explorer.ui.tree_graph import TreeGraph
from explorer.ui.widgets import WrapButton


def _label(text: str = "", name: str = "") -> QLabel:
    lab = QLabel(text)
    lab.setWordWrap(True)
    lab.setTextFormat(Qt.RichText)
    if name:
        lab.setObjectName(name)
    return lab


class PrivacyView(QWidget):
    """Emits ``moved(tree, moves)`` for every answer, back, continue or restart; draws a given walk."""

    moved = Signal(str, tuple)

    def __init__(self, theme) -> None:
        super().__init__()
        self.theme = theme
        self.walk: Walk | None = None
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        split = QSplitter(Qt.Horizontal)
        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        self.graph = TreeGraph(theme)
        self.graph.setAccessibleName("What stays private: decision tree")
        self.graph.setMinimumHeight(220)
        ll.addWidget(self.graph, 1)
        ll.addWidget(_label("■ question   ◆ outcome   thick = your path   ★ = where you are   dashed = not taken. "
                            "Educational, not legal advice.", "muted"))
        split.addWidget(left)
        scroll = QuestionCard()
        scroll.answered.connect(lambda aid: self._move((*self.walk.moves, aid)))
        scroll.continued.connect(lambda: self._move((*self.walk.moves, CONTINUE)))
        self.kind, self.title, self.help, self.source = scroll.kind, scroll.title, scroll.help, scroll.source
        self.answers_widget, self.answers_box = scroll.answers_widget, scroll.answers_box
        self.outcome, self.continue_btn = scroll.outcome, scroll.continue_btn
        row = QHBoxLayout()
        self.back_btn = QPushButton("◂ Back")
        self.back_btn.clicked.connect(lambda: self._move(self.walk.moves[:-1]))
        self.restart_btn = QPushButton("Start again")
        self.restart_btn.clicked.connect(lambda: self._move(()))
        row.addWidget(self.back_btn)
        row.addWidget(self.restart_btn)
        row.addStretch(1)
        scroll.add(row)
        split.addWidget(scroll)
        split.setSizes([560, 620])       # the card holds an outcome whole on a 1280x800 slide
        lay.addWidget(split, 1)
        self.card = scroll

    @property
    def buttons(self) -> list[WrapButton]:
        """The answers offered at the current node, one button each."""
        return self.card.buttons

    def _move(self, moves) -> None:
        self.moved.emit(self.walk.start, tuple(moves))

    def show_walk(self, walk: Walk) -> None:
        self.walk = walk
        node, tree = walk.current, walk.tree
        self.graph.theme = self.theme
        self.graph.draw(tree, walk.path(), layout(tree))
        self.card.title_point_size = getattr(self.theme, "point_size", None)
        outcome = outcome_html(obligations=node.obligations, obligations_title="What leaves, what stays, what it "
                               "takes") if node.is_outcome else ""
        nxt = walk.trees.get(node.continue_to) if node.continue_to else None
        self.card.show_node(node, tree.title, walk.offered(), outcome,
                            nxt.title if nxt is not None and walk.can_continue() else None)
        self.back_btn.setEnabled(bool(walk.moves))
