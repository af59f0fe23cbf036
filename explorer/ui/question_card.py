"""The card beside a decision-tree graph: the node's kind, question, help, source (article text quoted,
paraphrase marked as such), the answers offered as wrapping buttons, an outcome's obligations and the
"continue" button. One widget for every tree view (the law panel's and the self-hosting privacy
trees), so both show a node the same way; every piece of node text is HTML-escaped, so a ``<`` or
``&`` in a tree file is shown as written, never read as markup. Any node with ``text``, ``help``,
``article``, ``quote``, ``summary``, ``obligations`` and ``is_outcome`` can be shown (the toolkit
imports no topic)."""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QFrame, QLabel, QLayout, QScrollArea, QVBoxLayout, QWidget

from explorer.ui.widgets import WrapButton

TITLE_SCALE = 1.35      # the question reads larger than the card's other text


def card_label(name: str = "") -> QLabel:
    """A wrapping, selectable rich-text label: the card escapes what it puts in."""
    lab = QLabel()
    lab.setWordWrap(True)
    lab.setTextFormat(Qt.RichText)
    lab.setTextInteractionFlags(Qt.TextSelectableByMouse)
    if name:
        lab.setObjectName(name)
    return lab


def source_html(node) -> str:
    """The node's article with its quoted text (marked as the article's words) and/or our paraphrase."""
    art = escape(node.article)
    if node.quote:
        cite = f"<b>{art}</b> (article text): <i>“{escape(node.quote)}”</i>"
        if node.summary:
            cite += f"<br><b>In short</b> (our paraphrase): {escape(node.summary)}"
        return cite
    return f"<b>{art}</b>, in short (our paraphrase, not the article text): {escape(node.summary)}"


def outcome_html(head: str = "", obligations: Iterable[tuple[str, str]] = (), obligations_title: str = "",
                 reasons: Iterable[tuple[str, str]] = ()) -> str:
    """An outcome's reading: the result line first, then (text, article) obligations, then the
    rule engine's (article, text) reasons; all escaped. Empty when there is nothing to say."""
    html = f"<p><b>{escape(head)}</b></p>" if head else ""
    obligations, reasons = list(obligations), list(reasons)
    if obligations:
        html += f"<b>{escape(obligations_title)}</b><ul>" + "".join(
            f"<li>{escape(t)} <b>({escape(a)})</b></li>" for t, a in obligations) + "</ul>"
    if reasons:
        html += "<b>The rule engine's reasons</b><ul>" + "".join(
            f"<li><b>{escape(a)}</b>: {escape(t)}</li>" for a, t in reasons) + "</ul>"
    return html


class QuestionCard(QScrollArea):
    """The card in a scroll area that never scrolls sideways. ``answered(id)`` is emitted for an answer
    button, ``continued()`` for the continue button; :meth:`show_node` draws a node; panels add their
    own rows (back, restart, an error line) with :meth:`add`."""

    answered = Signal(str)
    continued = Signal()

    def __init__(self, framed: bool = False, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.body = QFrame()
        if framed:
            self.body.setFrameShape(QFrame.StyledPanel)
        self._lay = QVBoxLayout(self.body)
        self.kind = card_label("muted")
        self.title = card_label()
        self.help = card_label()
        self.source = card_label()
        self.answers_widget = QWidget()          # a widget, so a tour can point at the answers
        self.answers_box = QVBoxLayout(self.answers_widget)
        self.answers_box.setContentsMargins(0, 0, 0, 0)
        self.outcome = card_label()
        self.continue_btn = WrapButton()         # a long tree title wraps, not widens the card
        self.continue_btn.clicked.connect(self.continued)
        for w in (self.kind, self.title, self.help, self.source, self.answers_widget, self.outcome,
                  self.continue_btn):
            self._lay.addWidget(w)
        self._lay.addStretch(1)
        self.buttons: list[WrapButton] = []
        self.title_point_size: float | None = None
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setWidget(self.body)

    def add(self, item: QWidget | QLayout) -> None:
        """Put a panel's own widget or row at the end of the card (above the closing stretch)."""
        at = self._lay.count() - 1
        if isinstance(item, QLayout):
            self._lay.insertLayout(at, item)
        else:
            self._lay.insertWidget(at, item)

    def show_node(self, node, tree_title: str, offered: Sequence, outcome: str = "",
                  continue_title: str | None = None) -> None:
        """Draw ``node`` of the tree titled ``tree_title``: ``offered`` answers (``id``, ``label``) as
        buttons, ``outcome`` (HTML from :func:`outcome_html`) below them, and the continue button only
        when ``continue_title`` names the next tree."""
        self.kind.setText(("OUTCOME" if node.is_outcome else "QUESTION") + f" · {escape(tree_title)}")
        self.title.setText(f"<b>{escape(node.text)}</b>")
        font = QFont(self.title.font())
        font.setPointSizeF((self.title_point_size or self.font().pointSizeF()) * TITLE_SCALE)
        self.title.setFont(font)
        self.help.setText(escape(node.help))
        self.help.setVisible(bool(node.help))
        self.source.setText(source_html(node))
        for b in self.buttons:
            self.answers_box.removeWidget(b)
            b.hide()
            b.setParent(None)
            b.deleteLater()
        self.buttons = []
        for a in offered:
            b = WrapButton("▸ " + a.label)       # plain text: shown as written
            b.setAccessibleName(f"Answer: {a.label}")
            b.clicked.connect(lambda _=False, aid=a.id: self.answered.emit(aid))
            self.answers_box.addWidget(b)
            self.buttons.append(b)
        self.answers_widget.setVisible(bool(self.buttons))
        self.outcome.setText(outcome)
        self.outcome.setVisible(bool(outcome))
        self.continue_btn.setVisible(continue_title is not None)
        if continue_title is not None:
            self.continue_btn.setText(f"Continue ▶ {continue_title}")
        self.verticalScrollBar().setValue(0)     # a new node is read from its top

    def reveal(self, widget: QWidget) -> None:
        """Scroll so ``widget`` (inside the card) shows whole where it fits, else its first lines."""
        if not widget.isVisible():
            return
        top = widget.mapTo(self.body, QPoint(0, 0)).y()
        bar, seen = self.verticalScrollBar(), self.viewport().height()
        if top < bar.value() or top + widget.height() > bar.value() + seen:
            fits = widget.height() + 16 <= seen
            bar.setValue(top + widget.height() + 8 - seen if fits and top >= bar.value() else top - 8)
