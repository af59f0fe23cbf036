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

from PySide6.QtCore import QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QFrame, QGridLayout, QLabel, QLayout, QScrollArea, QVBoxLayout, QWidget
from shiboken6 import isValid

from explorer.ui.paint_settle import SettleBeforePaint
from explorer.ui.widgets import WrapButton

TITLE_SCALE = 1.35      # the question reads larger than the card's other text
REASONS_HEAD = "<b>The rule engine's reasons</b>"   # where an outcome's reading may be folded (see QuestionCard.reveal)
MAX_COLUMNS = 3         # a long answer list a tour points at may take up to this many columns to show whole
COLUMN_WIDTH = 350      # px: a narrower column would wrap nearly every line of a list
COMPACT = 0.9           # a list in columns reads a little smaller (still above a slide's least text size)


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


def in_columns(html: str, cols: int, point_size: float) -> str:
    """``html`` from :func:`outcome_html` with its obligations list (the first list before the
    reasons) side by side in ``cols`` columns, read down each, each item in the column its middle
    falls in, the items at ``COMPACT`` of ``point_size``: a long list a tour points at, one column as
    wide as the card, left most lines half empty and ran below the card. Item text is escaped, so
    ``<ul>`` and ``</li>`` are only markup."""
    head, reasons, rest = html.partition(REASONS_HEAD)
    start = head.find("<ul>")
    if cols < 2 or start < 0:
        return html
    end = head.index("</ul>", start)
    items = [i + "</li>" for i in head[start + 4:end].split("</li>") if i]
    total, done, groups = sum(map(len, items)), 0, [[] for _ in range(cols)]
    for item in items:
        groups[min(cols - 1, (done + len(item) // 2) * cols // max(1, total))].append(item)
        done += len(item)
    ul = f"<ul style='margin-top:0px; font-size:{point_size * COMPACT:.1f}pt'>"
    cells = "".join(f"<td valign='top' width='{100 // cols}%'>{ul}{''.join(g)}</ul></td>" for g in groups if g)
    return f"{head[:start]}<table width='100%' cellspacing='0'><tr>{cells}</tr></table>{head[end + 5:]}{reasons}{rest}"


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
        html += REASONS_HEAD + "<ul>" + "".join(
            f"<li><b>{escape(a)}</b>: {escape(t)}</li>" for a, t in reasons) + "</ul>"
    return html


class QuestionCard(QScrollArea):
    """The card in a scroll area that never scrolls sideways. ``answered(id)`` is emitted for an answer
    button, ``continued()`` for the continue button; :meth:`show_node` draws a node; panels add their
    own rows (back, restart, an error line) with :meth:`add`.

    A part a tour points at (:meth:`reveal`) is shown whole: when the card is taller than its view, the
    other parts (and an outcome's reasons) fold behind one "show the whole card" button rather than
    leaving a slide with text half scrolled away (issue 38); a long answer list or list of obligations on
    a wide card goes into columns, and the heading folds too when even that is not enough; the next node
    opens the whole card. Text parts sit at the top of whatever room a fold gives them."""

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
        self._answer_grid = QGridLayout()        # the buttons when a tour needs more than one column
        self._answer_grid.setContentsMargins(0, 0, 0, 0)
        self.answers_box.addLayout(self._answer_grid)
        self._columns = 1
        self.outcome = card_label()
        self.continue_btn = WrapButton()         # a long tree title wraps, not widens the card
        self.continue_btn.clicked.connect(self.continued)
        self.more_btn = WrapButton("▾ Show the whole card")   # the folded parts, one click away
        self.more_btn.setObjectName("muted")
        self.more_btn.clicked.connect(self.unfold)
        self.more_btn.hide()
        for w in (self.kind, self.title, self.help, self.source, self.answers_widget, self.outcome,
                  self.continue_btn, self.more_btn):
            self._lay.addWidget(w)
            if w is not self.answers_widget:     # text at its own height, at the top of the room a tour's
                self._lay.setAlignment(w, Qt.AlignTop)   # fold gives it, not centred in white
        self._shown: dict[QWidget, bool] = {}   # each part: has something to show for this node
        self._outcome_html = ""
        self._focus: QWidget | None = None
        self._fold_due = False                   # a resize asked for a fold before the next paint
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
        self.help.setText(escape(node.help))
        self.source.setText(source_html(node))
        for b in self.buttons:
            self.answers_box.removeWidget(b)
            self._answer_grid.removeWidget(b)
            b.hide()
            b.setParent(None)
            b.deleteLater()
        self.buttons = []
        for a in offered:
            b = WrapButton("▸ " + a.label)       # plain text: shown as written
            b.setAccessibleName(f"Answer: {a.label}")
            b.clicked.connect(lambda _=False, aid=a.id: self.answered.emit(aid))
            self.buttons.append(b)
        self._answer_columns(1, new=True)
        self._outcome_html = outcome
        if continue_title is not None:
            self.continue_btn.setText(f"Continue ▶ {continue_title}")
        self._shown = {self.help: bool(node.help), self.source: True, self.answers_widget: bool(self.buttons),
                       self.outcome: bool(outcome), self.continue_btn: continue_title is not None}
        self.unfold()
        self.verticalScrollBar().setValue(0)     # a new node is read from its top

    def unfold(self) -> None:
        """Every part of the node, as the card shows it when no tour points into it."""
        self._focus = None
        self._title_scale(TITLE_SCALE)
        self.outcome.setText(self._outcome_html)
        self._answer_columns(1)
        self.title.show()
        self.kind.show()
        for w, shown in self._shown.items():
            w.setVisible(shown)
        self.more_btn.hide()

    def _fold(self) -> None:
        """Show the focused part whole if the card cannot show everything: the other parts (and, if
        still too tall, an outcome's reasons) wait behind ``more_btn``. Heights are measured at the
        view's width (height-for-width of the card's layout), never painted to find out."""
        self._fold_due = False
        focus = self._focus
        self.unfold()
        self._focus = focus
        width, room = self.viewport().width(), self.viewport().height()
        if focus is None or width < 50 or self._need(width) <= room:
            return
        folded = [w for w, shown in self._shown.items() if shown and w is not focus]
        for w in folded:
            w.hide()
        names = [self._part_name(w) for w in folded]
        self.more_btn.show()
        if self._need(width) > room:      # the question no larger than the rest
            self._title_scale(1.0)
        for cols in range(2, MAX_COLUMNS + 1):               # a long answer list side by side on a wide card
            if focus is not self.answers_widget or self._need(width) <= room \
                    or width < COLUMN_WIDTH * cols:
                break
            self._answer_columns(cols)
        head, reasons, _rest = self._outcome_html.partition(REASONS_HEAD)
        if focus is self.outcome and reasons and self._need(width) > room:
            self.outcome.setText(head)
            names.append("the rule engine's reasons")
        if focus in (self.outcome, self.answers_widget) and self._need(width) > room:
            self.title.hide()                    # the rule engine's head line, or the tour's caption, says it
            self.kind.hide()
            names.insert(0, "the heading")
        if focus is self.outcome and self._need(width) > room:   # a long list of obligations side by side
            self._outcome_columns(width, room)
        self.more_btn.setToolTip("Folded to fit: " + ", ".join(names))
        self.more_btn.setVisible(bool(names))
        # laid out now at its new height, not in a later pass (a slide is judged as shown)
        self.body.resize(width, max(room, self._need(width)))
        self._lay.activate()

    def _outcome_columns(self, width: int, room: int) -> None:
        """The outcome's obligations in the fewest columns that fit ``room``, else in the shortest."""
        one, size = self.outcome.text(), self.outcome.font().pointSizeF()
        best, shortest = one, self._need(width)
        for cols in range(2, min(MAX_COLUMNS, width // COLUMN_WIDTH) + 1):
            self.outcome.setText(in_columns(one, cols, size))
            if self._need(width) < shortest:
                best, shortest = self.outcome.text(), self._need(width)
            if shortest <= room:
                break
        self.outcome.setText(best)

    def _need(self, width: int) -> int:
        """The body's height at ``width`` as the scroll area lays it out: its height for that width, or
        while answers show its layout's minimum if taller (a wrapping button's minimum is two lines, so
        one column of answers came out taller than the height for width said, and ran off the window;
        text parts sit at the top of their room, so their minimum does not stretch them)."""
        least = self._lay.totalMinimumSize().height() if self.answers_widget.isVisibleTo(self) else 0
        return max(self._lay.totalHeightForWidth(width), least)

    def _answer_columns(self, cols: int, new: bool = False) -> None:
        """The answer buttons in ``cols`` columns, read down each column (the tree file's order). One
        column is the box layout itself: a grid sizes wrapped text by its narrowest, tallest minimum.
        Moved only when the count changes (or the buttons are ``new``): a moved button measures short
        until it is laid out again."""
        if cols == self._columns and not new:
            return
        self._columns = cols
        rows = max(1, -(-len(self.buttons) // cols))
        for b in self.buttons:
            self.answers_box.removeWidget(b)
            self._answer_grid.removeWidget(b)
        for i, b in enumerate(self.buttons):
            if cols == 1:
                self.answers_box.addWidget(b)
            else:
                self._answer_grid.addWidget(b, i % rows, i // rows)
        for c in range(MAX_COLUMNS):
            self._answer_grid.setColumnStretch(c, 1 if c < cols else 0)
        pad = 6 if cols == 1 else 2              # side by side, the buttons' borders part them: slimmer
        self._answer_grid.setSpacing(-1 if cols == 1 else 4)
        for b in self.buttons:
            b.layout().setContentsMargins(10, pad, 10, pad)

    def _title_scale(self, scale: float) -> None:
        font = QFont(self.title.font())
        font.setPointSizeF((self.title_point_size or self.font().pointSizeF()) * scale)
        if font != self.title.font():
            self.title.setFont(font)

    def _part_name(self, w: QWidget) -> str:
        return {id(self.help): "what it means", id(self.source): "the article", id(self.answers_widget): "the answers",
                id(self.outcome): "the outcome", id(self.continue_btn): "continue"}[id(w)]

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        super().resizeEvent(event)
        if self._focus is not None and event.size() != event.oldSize():
            self._fold_before_paint()

    def _fold_before_paint(self) -> None:
        """Fold for the size the card has when the window next paints: a tour step resizes it several
        times while the window lays out (F1 8: four folds, 33 of the step's 73 ms). A card in a
        window without :class:`SettleBeforePaint` folds at once."""
        settle = SettleBeforePaint.of(self)
        if settle is None:
            self._fold()
        elif not self._fold_due:
            self._fold_due = True
            settle.before_paint(self._fold_if_due)

    def _fold_if_due(self) -> None:
        if self._fold_due and isValid(self):
            self._fold_due = False
            if self._focus is not None:
                self._fold()

    def show_part(self, widget: QWidget | None) -> None:
        """A tour points at ``widget`` (help, source, answers_widget, outcome or continue_btn): fold the
        other parts away if the card cannot show them all (a part the node lacks changes nothing).
        ``None``, a step about the whole walk: the outcome or else the answers, unless a part was named.
        The part is then scrolled to, now and once a presenter fold has resized the card."""
        if widget is None:
            if self._focus is not None:
                return
            widget = self.outcome if self._shown.get(self.outcome) else self.answers_widget
        if self._shown.get(widget) and widget is not self._focus:
            self._focus = widget
            self._fold()
            self.verticalScrollBar().setValue(0)
        for ms in (0, 150):
            QTimer.singleShot(ms, widget, lambda w=widget: self.reveal(w))   # dropped if it is deleted

    def reveal(self, widget: QWidget) -> None:
        """Scroll so ``widget`` (inside the card) shows whole where it fits, else its first lines; a
        late call for a part other than the one :meth:`show_part` was given (a past step's) is ignored."""
        if self._focus is not None and widget is not self._focus:
            return
        if not widget.isVisible():
            return
        top = widget.mapTo(self.body, QPoint(0, 0)).y()
        bar, seen = self.verticalScrollBar(), self.viewport().height()
        if top < bar.value() or top + widget.height() > bar.value() + seen:
            fits = widget.height() + 16 <= seen
            bar.setValue(top + widget.height() + 8 - seen if fits and top >= bar.value() else top - 8)
