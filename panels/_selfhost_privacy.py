"""Privacy view of the self-hosting panel: the three question trees drawn with the toolkit's tree graph
(as the law panel draws its own) beside a card with the question, its source and the answers."""
from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QScrollArea, QSplitter, QVBoxLayout, QWidget

from engines.law.trees import CONTINUE, Walk, layout
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
        card = QWidget()
        cl = QVBoxLayout(card)
        self.kind = _label(name="muted")
        self.title = _label()
        self.help = _label()
        self.source = _label()
        self.answers_widget = QWidget()
        self.answers_box = QVBoxLayout(self.answers_widget)
        self.answers_box.setContentsMargins(0, 0, 0, 0)
        self.outcome = _label()
        self.continue_btn = WrapButton()
        self.continue_btn.clicked.connect(lambda: self._move((*self.walk.moves, CONTINUE)))
        row = QHBoxLayout()
        self.back_btn = QPushButton("◂ Back")
        self.back_btn.clicked.connect(lambda: self._move(self.walk.moves[:-1]))
        self.restart_btn = QPushButton("Start again")
        self.restart_btn.clicked.connect(lambda: self._move(()))
        row.addWidget(self.back_btn)
        row.addWidget(self.restart_btn)
        row.addStretch(1)
        for w in (self.kind, self.title, self.help, self.source, self.answers_widget, self.outcome, self.continue_btn):
            cl.addWidget(w)
        cl.addLayout(row)
        cl.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        scroll.setWidget(card)
        split.addWidget(scroll)
        split.setSizes([700, 480])
        lay.addWidget(split, 1)
        self.card = scroll
        self.buttons: list[WrapButton] = []

    def _move(self, moves) -> None:
        self.moved.emit(self.walk.start, tuple(moves))

    def show_walk(self, walk: Walk) -> None:
        self.walk = walk
        node, tree = walk.current, walk.tree
        self.graph.theme = self.theme
        self.graph.draw(tree, walk.path(), layout(tree))
        self.kind.setText(("OUTCOME" if node.is_outcome else "QUESTION") + f" · {escape(tree.title)}")
        self.title.setText(f"<span style='font-size:large'><b>{escape(node.text)}</b></span>")
        self.help.setText(escape(node.help))
        self.help.setVisible(bool(node.help))
        if node.quote:
            cite = f"<b>{escape(node.article)}</b> (text): <i>“{escape(node.quote)}”</i>"
            if node.summary:
                cite += f"<br><b>In short</b> (our paraphrase): {escape(node.summary)}"
        else:
            cite = f"<b>{escape(node.article)}</b>, in short (our paraphrase): {escape(node.summary)}"
        self.source.setText(cite)
        for b in self.buttons:
            self.answers_box.removeWidget(b)
            b.hide()
            b.setParent(None)
            b.deleteLater()
        self.buttons = []
        for a in walk.offered():
            b = WrapButton("▸ " + a.label)
            b.setAccessibleName(f"Answer: {a.label}")
            b.clicked.connect(lambda _=False, aid=a.id: self._move((*self.walk.moves, aid)))
            self.answers_box.addWidget(b)
            self.buttons.append(b)
        self.answers_widget.setVisible(bool(self.buttons))
        html = ""
        if node.is_outcome and node.obligations:
            html = "<b>What leaves, what stays, what it takes</b><ul>" + "".join(
                f"<li>{escape(t)} <b>({escape(a)})</b></li>" for t, a in node.obligations) + "</ul>"
        self.outcome.setText(html)
        self.outcome.setVisible(bool(html))
        nxt = walk.trees.get(node.continue_to) if node.continue_to else None
        self.continue_btn.setVisible(nxt is not None and walk.can_continue())
        if nxt is not None:
            self.continue_btn.setText(f"Continue: {nxt.title} ▸")
        self.back_btn.setEnabled(bool(walk.moves))
