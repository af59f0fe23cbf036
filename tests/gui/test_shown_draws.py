"""Views on tabs not showing draw when shown, and end up as an immediate draw would have left them."""
from __future__ import annotations

from PySide6.QtWidgets import QLabel, QTabWidget

from explorer.ui.shown_draws import DrawWhenShown


def _tabs(qtbot, show=True):
    tabs = QTabWidget()
    qtbot.addWidget(tabs)
    seen, hidden = QLabel(), QLabel()
    tabs.addTab(seen, "seen")
    tabs.addTab(hidden, "hidden")
    if show:
        tabs.show()
    return tabs, seen, hidden, DrawWhenShown(tabs)


def test_a_hidden_view_draws_on_its_show_with_the_latest_call_of_each_part_in_order(qtbot):
    tabs, seen, hidden, draws = _tabs(qtbot)
    log = []
    draws.draw(seen, lambda: log.append("seen"))
    assert log == ["seen"]                                   # showing: at once
    draws.draw(hidden, lambda: log.append("frame 3"), "frame")
    draws.draw(hidden, lambda: log.append("result 1"))
    draws.draw(hidden, lambda: log.append("result 2"))       # replaces result 1, after the frame
    assert log == ["seen"] and draws.waiting == 1
    tabs.setCurrentWidget(hidden)
    assert log == ["seen", "frame 3", "result 2"] and draws.waiting == 0
    draws.draw(hidden, lambda: log.append("result 3"))       # showing now: at once
    assert log[-1] == "result 3"


def test_flush_draws_what_waits_and_an_unshown_owner_draws_at_once(qtbot):
    tabs, seen, hidden, draws = _tabs(qtbot)
    log = []
    draws.draw(hidden, lambda: log.append("hidden"))
    draws.flush()
    assert log == ["hidden"] and draws.waiting == 0
    tabs.setCurrentWidget(hidden)
    assert log == ["hidden"]                                 # drawn once, not again on its show
    _t, _s, hidden2, unshown = _tabs(qtbot, show=False)
    unshown.draw(hidden2, lambda: log.append("unshown"))     # a panel nobody shows (a test's): nothing to save
    assert log[-1] == "unshown"


def test_a_view_deleted_while_waiting_is_skipped(qtbot):
    tabs, seen, hidden, draws = _tabs(qtbot)
    log = []
    draws.draw(hidden, lambda: log.append("never"))
    tabs.removeTab(1)
    hidden.deleteLater()
    qtbot.wait(10)
    draws.flush()
    assert log == [] and draws.waiting == 0


def test_while_held_every_draw_waits_and_only_the_views_showing_at_the_end_draw(qtbot):
    """A view applied as a whole (a tour step: a clock changes, then the tab) draws the tab it ends on,
    not the one it leaves."""
    tabs, seen, hidden, draws = _tabs(qtbot)
    log = []
    draws.hold()
    draws.draw(seen, lambda: log.append("seen 1"))           # showing, yet it waits
    draws.draw(hidden, lambda: log.append("hidden"))
    draws.draw(seen, lambda: log.append("seen 2"))
    tabs.setCurrentWidget(hidden)                            # shown while held: still waits
    assert log == [] and draws.waiting == 2
    draws.release()
    assert log == ["hidden"] and draws.waiting == 1          # the tab left draws when shown again
    tabs.setCurrentWidget(seen)
    assert log == ["hidden", "seen 2"] and draws.waiting == 0


def test_a_hold_on_a_panel_not_showing_draws_what_it_held_not_what_waited_before(qtbot):
    """B4 11 applies a step to the qeval panel while the quantization panel still shows: the hold's
    end drew every view of the hidden panel that had been waiting for its tab (83 ms in the step's
    go(), against 43 before the hold). It draws what the hold kept, as an unheld draw would have."""
    tabs, seen, hidden, draws = _tabs(qtbot)
    log = []
    draws.draw(hidden, lambda: log.append("waited"))         # the panel showed, this tab did not
    tabs.hide()                                              # another panel is shown now
    draws.hold()
    draws.draw(seen, lambda: log.append("held"))
    draws.release()
    assert log == ["held"] and draws.waiting == 1
    tabs.show()
    tabs.setCurrentWidget(hidden)
    assert log == ["held", "waited"]
