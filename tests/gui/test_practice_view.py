"""Practice in the window: answer, feedback, solution, Show me, knobs, progress across a restart."""
from __future__ import annotations

import json
import os
from pathlib import Path

from PySide6.QtCore import Qt

from engines.practice import lesson_templates


def _pick(view, template_id: str) -> None:
    """Draw until the view shows ``template_id`` (seeded, so this is quick and repeatable)."""
    for _ in range(200):
        if view.variant.template.id == template_id:
            return
        view.next_question()
    raise AssertionError(f"never drew {template_id}")


def test_numeric_answer_feedback_solution_and_show_me(qtbot, window):
    dlg = window.open_practice("A3")
    qtbot.addWidget(dlg)
    view = dlg.view
    _pick(view, "A3-bubble")
    v = view.variant
    mistake = next(m for m in v.outcome.mistakes if m.key == "total_denominator")
    qtbot.keyClicks(view.number, f"{float(mistake.value):.3f}")
    qtbot.keyClick(view.number, Qt.Key.Key_Return)
    assert view.feedback.text().startswith("✗") and "share of the total time" in view.feedback.text()
    view.number.clear()
    qtbot.keyClicks(view.number, f"{float(v.outcome.answer):.2f} %")
    qtbot.keyClick(view.number, Qt.Key.Key_Return)
    assert view.feedback.text().startswith("✓")
    assert view.solution.isVisible() and "(p − 1)/m" in view.solution.toPlainText()
    view.show_btn.click()                                   # Show me: the pipeline panel at the question's p, m
    assert window.current_panel().key == "pipeline"
    assert window.ctx.scenario.value.pp == v.params["pp"]
    assert window.ctx.scenario.value.grad_accum == v.params["m"]


def test_choice_by_keyboard_and_progress_survives_a_restart(qtbot, window):
    from PySide6.QtWidgets import QApplication

    dlg = window.open_practice("A2")
    qtbot.addWidget(dlg)
    dlg.activateWindow()                                     # keys go to the active window
    qtbot.waitUntil(lambda: QApplication.activeWindow() is dlg, timeout=3000)
    view = dlg.view
    _pick(view, "A2-lowest-stage")
    v = view.variant
    key = next(iter(v.outcome.answer))
    button = dict(view.choice_buttons)[key]
    button.setFocus()
    qtbot.keyClick(button, Qt.Key.Key_Space)
    view.check_btn.click()
    assert view.feedback.text().startswith("✓")
    saved = Path(os.environ["EXPLORER_CONFIG_DIR"]) / "practice.json"
    doc = json.loads(saved.read_text())
    assert doc["lessons"]["A2"]["correct"] >= 1 and "A2-lowest-stage" in doc["lessons"]["A2"]["solved"]
    again = window.open_practice("A2")                      # a fresh view reads the saved progress
    qtbot.addWidget(again)
    assert "A2-lowest-stage" in again.view.progress.of("A2").solved
    assert again.view.variant.template.id != "A2-lowest-stage"      # unsolved kinds come first
    assert f"of {len(lesson_templates('A2'))} kinds" in again.view.status.text()


def test_knobs_question_checks_the_window(qtbot, window):
    dlg = window.open_practice("A2")
    qtbot.addWidget(dlg)
    view = dlg.view
    _pick(view, "A2-fit-fewest")
    target = view.variant.outcome.target
    dlg.apply_show_me(dict(view.variant.outcome.start))       # the starting view does not fit
    view.check_btn.click()
    assert view.feedback.text().startswith("✗")
    view.show_btn.click()                                    # the solution's view passes
    assert window.ctx.scenario.value.n_gpus == target["n_gpus"]
    view.check_btn.click()
    assert view.feedback.text().startswith("✓")


def test_a_broken_progress_file_explains_itself_and_is_left_alone(qtbot, window):
    saved = Path(os.environ["EXPLORER_CONFIG_DIR"]) / "practice.json"
    saved.parent.mkdir(parents=True, exist_ok=True)
    saved.write_text('{"kind": "explorer-practice-progress", "schema_version": 99}')
    before = saved.read_bytes()
    dlg = window.open_practice("A3")
    qtbot.addWidget(dlg)
    view = dlg.view
    assert "schema_version" in view.status.text()
    _pick(view, "A3-dp-degree")
    qtbot.keyClicks(view.number, str(int(view.variant.outcome.answer)))
    qtbot.keyClick(view.number, Qt.Key.Key_Return)
    assert view.feedback.text().startswith("✓")
    assert saved.read_bytes() == before


def test_ask_the_class_shows_the_question_large_and_reveals_on_a_key(qtbot, window):
    dlg = window.open_practice("A3")
    qtbot.addWidget(dlg)
    view = dlg.view
    normal = view.question.font().pointSizeF()
    view.ask_btn.click()
    assert view.question.font().pointSizeF() >= 1.9 * normal
    assert not view.answers.isVisible() and not view.check_btn.isVisible() and not view.solution.isVisible()
    view.reveal()                                            # Ctrl+H in the room
    assert view.solution.isVisible() and view.variant.answer_text() in view.solution.toPlainText()
    view.next_question()                                     # the next question stays large, its answer hidden
    assert not view.solution.isVisible() and not view.answers.isVisible()
    view.ask_btn.click()
    assert view.answers.isVisible() and view.question.font().pointSizeF() == normal


def test_pdf_worksheet_has_pages_and_a_separate_key(qapp, tmp_path):
    import re

    from engines.practice.export import variants, worksheet_blocks
    from explorer.practice_export import export_exercises, pdf_bytes

    path, n = export_exercises("A3", tmp_path / "A3.pdf", count=1)
    pdf = path.read_bytes()
    assert pdf.startswith(b"%PDF") and n == len(lesson_templates("A3"))
    pages = len(re.findall(rb"/Type\s*/Page\b(?!s)", pdf))
    head, qs, key_head, key = worksheet_blocks("A3", "t", variants(lesson_templates("A3"), 1))
    questions_only = len(re.findall(rb"/Type\s*/Page\b(?!s)", pdf_bytes(head, qs, "", [])))
    assert pages > questions_only >= 1                       # the key adds pages of its own


def test_start_page_navigator_and_tour_end_open_the_lessons_practice(qtbot, window):
    from engines.practice import shipped_lessons
    from explorer.lessons.catalog import lesson_tour
    from explorer.lessons.navigator import LESSON, PRACTICE

    shell = window.lessons
    shell.show_start()
    page = shell.start_page
    assert set(page.practice_buttons) == set(shipped_lessons()) & set(page.buttons)
    page.practice_buttons["C1"].click()                      # the start page's entry
    qtbot.addWidget(window._practice)
    assert window._practice.view.variant.template.lesson == "C1"
    item = shell.nav._items[(PRACTICE, "G1")]                # the navigator's entry under the lesson
    assert item.parent() is shell.nav._items[(LESSON, "G1")].parent()
    shell.nav._clicked(item)
    qtbot.addWidget(window._practice)
    assert window._practice.view.variant.template.lesson == "G1"
    n = len(lesson_tour("A3").steps)
    assert shell.start_lesson("A3", n - 2)
    assert shell.bar.practice_button.isHidden()              # not before the last step
    shell.player.next()
    assert not shell.bar.practice_button.isHidden()
    shell.bar.practice_button.click()                        # the end of the tour offers the lesson's practice
    qtbot.addWidget(window._practice)
    assert window._practice.view.variant.template.lesson == "A3"



def test_pipeline_knobs_question_checks_the_micro_batches(qtbot, window):
    dlg = window.open_practice("A3")
    qtbot.addWidget(dlg)
    view = dlg.view
    _pick(view, "A3-fewest-microbatches")
    target = view.variant.outcome.target
    dlg.apply_show_me(dict(view.variant.outcome.start))       # m = p: the bubble is far over the limit
    view.check_btn.click()
    assert view.feedback.text().startswith("✗") and "Not yet" in view.feedback.text()
    view.show_btn.click()
    assert window.ctx.scenario.value.grad_accum == target["m"]
    view.check_btn.click()
    assert view.feedback.text().startswith("✓")
