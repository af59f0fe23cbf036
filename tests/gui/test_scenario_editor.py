"""The scenario dock builds and binds its controls from the Scenario's field declarations, through
the same binder as the panels' Params: no table of its own, no echo, errors beside the field."""
from __future__ import annotations

import pytest

from engines.core.scenario import STRATEGY_LABELS, Scenario


@pytest.fixture
def editor(qtbot, ctx):
    from explorer.scenario_editor import ScenarioEditor

    ed = ScenarioEditor(ctx.scenario)
    qtbot.addWidget(ed)
    ed.show()          # the error lines clear only visible reasons
    return ed


def test_controls_take_label_range_and_choices_from_the_declaration(editor):
    spin = editor.widgets["gpus_per_node"]
    assert (spin.minimum(), spin.maximum()) == (1, 64) == Scenario.limits("gpus_per_node")
    assert spin.toolTip() == "GPUs joined by NVLink inside one server"
    combo = editor.widgets["strategy"]
    assert [combo.itemText(i) for i in range(combo.count())] == list(STRATEGY_LABELS.values())
    assert editor.widgets["internode_gbps"].suffix() == " GB/s" and editor.widgets["internode_gbps"].minimum() > 0
    assert editor.widgets["offload_params"].text() == "Offload parameters"


def test_a_change_from_elsewhere_shows_without_an_undo_step_of_its_own(editor, ctx):
    stack = ctx.scenario.undo_stack
    ctx.scenario.update(strategy="zero1", serve_batch=32, offload_optimizer=True)
    assert stack.count() == 1                                        # the dock did not echo the change
    assert editor.widgets["strategy"].currentText() == STRATEGY_LABELS["zero1"]
    assert editor.widgets["serve_batch"].value() == 32 and editor.widgets["offload_optimizer"].isChecked()
    stack.undo()
    assert editor.widgets["strategy"].currentText() == STRATEGY_LABELS[Scenario().strategy]
    assert stack.count() == 1 and stack.index() == 0


def test_a_user_edit_is_one_undo_step_and_a_bad_one_is_explained_beside_its_field(editor, ctx):
    editor.widgets["strategy"].setCurrentText(STRATEGY_LABELS["fsdp"])
    assert ctx.scenario.value.strategy == "fsdp" and ctx.scenario.undo_stack.count() == 1
    editor.widgets["kv_bits"].setCurrentText("8-bit")
    assert ctx.scenario.value.kv_bits == 8                           # the label maps back to the value
    editor.widgets["sequence_parallel"].setChecked(True)             # needs TP > 1; TP is 1
    assert editor.errors["sequence_parallel"].isVisibleTo(editor) and "TP > 1" in editor.errors["sequence_parallel"].text()
    assert ctx.scenario.value.sequence_parallel is False
    editor.widgets["tp"].setValue(2)                                 # a fix elsewhere clears the stale reason
    assert ctx.scenario.value.tp == 2 and not editor.errors["sequence_parallel"].isVisibleTo(editor)
