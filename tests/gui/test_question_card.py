"""The one decision-tree question card: node text is shown as written (a ``<b>`` or ``&`` in a tree file
is text, not markup), and both tree views (law, self-hosting privacy) use this card."""
from __future__ import annotations

import dataclasses

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QTextDocument

from engines.law.trees import Answer, load_trees
from explorer.fonts import TEXT_FAMILY
from explorer.ui.question_card import REASONS_HEAD, QuestionCard, in_columns, outcome_html

RAW = "Is <b>this</b> a product & a service?"


def shown(label) -> str:
    """The text a label draws, as a reader sees it (markup rendered, entities resolved)."""
    if label.textFormat() == Qt.PlainText:
        return label.text()
    doc = QTextDocument()
    doc.setHtml(label.text())
    return doc.toPlainText()


def _node(**changes):
    node = next(iter(load_trees()["cra-scope"].nodes.values()))
    return dataclasses.replace(node, **changes)


def test_node_text_with_markup_and_ampersands_is_shown_literally(qtbot):
    card = QuestionCard()
    qtbot.addWidget(card)
    node = _node(text=RAW, help="a <i>help</i> & more", article="Art <1>", quote="x < y & z", summary="<s>s</s>",
                 kind="outcome", obligations=(("do <u>this</u>", "Art & 2"),))
    card.show_node(node, "Tree <&>", [Answer(id="y", label="<b>Yes</b> & go", next="z")],
                   outcome_html("head <b>", node.obligations, "Duties & <more>", (("Art <9>", "why & how"),)),
                   continue_title="Next <tree>")
    assert shown(card.title) == RAW
    assert shown(card.kind).endswith("Tree <&>")
    assert shown(card.help) == "a <i>help</i> & more"
    for part in ("Art <1>", "“x < y & z”", "<s>s</s>"):
        assert part in shown(card.source)
    outcome = shown(card.outcome)
    for part in ("head <b>", "Duties & <more>", "do <u>this</u> (Art & 2)", "Art <9>: why & how"):
        assert part in outcome
    assert card.buttons[0].text() == "▸ <b>Yes</b> & go"
    assert card.continue_btn.text() == "Continue ▶ Next <tree>"


def test_an_answer_button_emits_its_id_and_only_offered_answers_are_shown(qtbot):
    card = QuestionCard()
    qtbot.addWidget(card)
    node = _node()
    card.show_node(node, "t", node.answers[1:])
    assert [b.text() for b in card.buttons] == ["▸ " + a.label for a in node.answers[1:]]
    assert card.continue_btn.isHidden() and card.outcome.isHidden()
    with qtbot.waitSignal(card.answered) as got:
        card.buttons[0].click()
    assert got.args == [node.answers[1].id]


def test_both_tree_views_use_the_one_card(make_panel):
    from panels.law import LawPanel
    from panels.selfhost import SelfHostPanel

    law, host = make_panel(LawPanel), make_panel(SelfHostPanel)
    assert isinstance(law.card_scroll, QuestionCard) and isinstance(host.privacy.card, QuestionCard)
    assert law.answer_buttons and law.answer_buttons == law.card_scroll.buttons
    assert host.privacy.buttons and host.privacy.buttons == host.privacy.card.buttons


def _card_in_the_apps_font(qtbot, ctx) -> QuestionCard:
    """A card whose text is the window's (the shipped font at the theme's size): whether a card
    overflows depends on it, and the application font a test starts with depends on the tests run
    before it in that process."""
    card = QuestionCard()
    qtbot.addWidget(card)
    font = QFont(TEXT_FAMILY)
    font.setPointSizeF(ctx.theme.point_size)
    card.setFont(font)
    return card


def test_a_part_a_tour_points_at_is_shown_whole_and_the_rest_folds(qtbot, ctx):
    """A card taller than its view left a slide with text half scrolled away: the part a step names
    is shown whole, the others wait behind one button, which (like the next node) opens everything."""
    card = _card_in_the_apps_font(qtbot, ctx)
    card.resize(420, 360)
    card.show()
    node = _node(help="A long help text. " * 12, summary="A long paraphrase of the article. " * 10,
                 obligations=(("Keep a policy", "Art 24"),))
    outcome = outcome_html("Rule engine: in scope", node.obligations, "Obligations", (("Art 2", "why " * 60),))
    card.show_node(node, "t", node.answers, outcome)
    assert card.source.isVisible() and card.help.isVisible() and not card.more_btn.isVisible()
    card.show_part(card.outcome)
    assert card.outcome.isVisible() and not card.source.isVisible() and not card.help.isVisible()
    assert card.more_btn.isVisible() and not card.answers_widget.isVisible()
    assert card.body.layout().totalHeightForWidth(card.viewport().width()) <= card.viewport().height()
    assert "Rule engine: in scope" in shown(card.outcome) and "why why" not in shown(card.outcome)
    card.show_part(card.continue_btn)                  # the node has no continue button: nothing changes
    assert card.outcome.isVisible() and not card.source.isVisible()
    card.more_btn.click()
    assert card.source.isVisible() and card.help.isVisible() and "why why" in shown(card.outcome)
    card.show_part(card.source)
    card.show_node(node, "t", node.answers, outcome)   # the next node: the whole card again
    assert card.source.isVisible() and card.outcome.isVisible() and not card.more_btn.isVisible()


def test_a_long_answer_list_a_tour_points_at_goes_into_columns_on_a_wide_card(qtbot, ctx):
    """Annex III's nineteen class I entries ran off the card at every size: on a wide card the answers
    go side by side, read down each column in the tree's order, and the heading folds if need be;
    a narrow card keeps one column (a column would wrap every word), and the next node has one."""
    node = _node(answers=tuple(Answer(f"a{i}", f"I-{i} an entry of the class I list", "o") for i in range(21)))
    for width, columns in ((1200, True), (420, False)):
        card = _card_in_the_apps_font(qtbot, ctx)
        card.resize(width, 420)
        card.show()
        qtbot.waitExposed(card)                  # as in the panel: the card is laid out before a tour step
        card.show_node(node, "t", node.answers)
        qtbot.wait(20)                           # the new buttons shown, so their heights count
        card.show_part(card.answers_widget)
        qtbot.wait(20)                           # laid out
        xs = sorted({b.x() for b in card.buttons})
        assert (len(xs) > 1) == columns
        if columns:
            assert card.buttons[0].x() == card.buttons[1].x() < card.buttons[-1].x()   # down, then across
            assert card.body.layout().totalHeightForWidth(card.viewport().width()) <= card.viewport().height()
        card.show_node(node, "t", node.answers)
        qtbot.wait(20)
        assert len({b.x() for b in card.buttons}) == 1


def test_in_columns_splits_only_the_obligations_in_order_by_length():
    """The list halves by text, keeps the tree file's order down each column, leaves the head and the
    reasons as they were, and a node without obligations is unchanged."""
    duties = (("short one", "Art 1"), ("a much longer duty " * 8, "Art 2"), ("short two", "Art 3"),
              ("short three", "Art 4"), ("another long duty " * 8, "Art 5"))
    html = outcome_html("Rule engine: head", duties, "Obligations", (("Art 9", "a reason"),))
    two = in_columns(html, 2, 12.0)
    cells = two.split("<td")[1:]
    assert len(cells) == 2 and two.partition(REASONS_HEAD)[0].count("<li>") == len(duties)
    assert "Art 1" in cells[0] and "Art 2" in cells[0] and "Art 5" in cells[1]   # the long ones apart
    doc = QTextDocument()
    doc.setHtml(two)
    text = doc.toPlainText()
    assert [text.index(f"(Art {i})") for i in (1, 2, 3, 4, 5)] == sorted(text.index(f"(Art {i})") for i in (1, 2, 3, 4, 5))
    assert two.startswith("<p><b>Rule engine: head</b></p>") and two.endswith(html.partition(REASONS_HEAD)[2])
    assert "font-size:10.8pt" in two                                               # a little smaller
    assert in_columns(outcome_html("head", (), "", (("Art 9", "r"),)), 2, 12.0) == outcome_html("head", (), "", (("Art 9", "r"),))
    assert in_columns(html, 1, 12.0) == html


def test_a_long_list_of_obligations_a_tour_points_at_goes_into_columns_and_shows_whole(qtbot):
    """F2 7 and G4 11: the manufacturer's obligations were taller than the whole card, so the slide cut
    them; on a wide card they go side by side and the outcome fits the card's view."""
    duties = tuple((f"Duty {i}: " + "keep doing it " * 5, f"Art {i}") for i in range(16))   # a line each, half empty
    node = _node(obligations=duties)
    card = QuestionCard()
    qtbot.addWidget(card)
    card.resize(1200, 600)
    card.show()
    qtbot.waitExposed(card)
    card.show_node(node, "t", (), outcome_html("Rule engine: in scope", duties, "Obligations"))
    qtbot.wait(20)
    one_column = card.outcome.heightForWidth(card.outcome.width())
    card.resize(1200, int(one_column * 0.8))      # whatever the font: one column is taller than the view
    qtbot.wait(20)
    card.show_part(card.outcome)
    assert "<table" in card.outcome.text()

    def whole() -> bool:
        top = card.outcome.mapTo(card.body, card.outcome.rect().topLeft()).y()
        return top + card.outcome.height() <= card.viewport().height() \
            and card.outcome.height() >= card.outcome.heightForWidth(card.outcome.width())

    qtbot.waitUntil(whole, timeout=2000)         # laid out: the whole outcome inside the card's view
    card.more_btn.click()                                                          # the whole card: one column
    assert "<table" not in card.outcome.text()



def test_a_tour_step_folds_the_card_for_the_size_it_is_painted_at(window, qtbot, monkeypatch):
    """F1 8 points at Annex III's answer list: the window's layout passes resized the card four times
    in the step and each resize folded it again (six folds, 33 of the step's 73 ms). Now it folds when
    the step points into the card, then before the paint for the card's final size (again if that
    fold took the scroll bar away)."""
    from explorer.lessons import lesson_tour

    folds = []
    fold = QuestionCard._fold
    monkeypatch.setattr(QuestionCard, "_fold", lambda self: (folds.append(self), fold(self)))
    assert window.tour.start(lesson_tour("F1"), 6)
    qtbot.wait(300)
    folds.clear()
    try:
        assert window.tour.go(7)
        qtbot.wait(300)
        card = window.current_panel().card_scroll
        assert card._focus is card.answers_widget
        assert 1 <= folds.count(card) <= 3, len(folds)
        assert card.body.layout().totalHeightForWidth(card.viewport().width()) <= card.viewport().height()
    finally:
        window.tour.stop()
