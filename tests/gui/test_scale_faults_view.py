"""The fault-run page of the training-at-scale panel: hidden it costs nothing; shown, it trains,
draws both runs and logs the alarm and the triage with their sources."""
from panels.scale import ScalePanel


def test_the_fault_run_starts_only_when_its_page_is_shown(make_panel, qtbot):
    p = make_panel(ScalePanel)
    view = p.fault_view
    view.kind.setCurrentText("bit flip in weights")            # the real control, bound to the parameter
    assert p.params.fault_kind == "weight_flip"
    assert not p.jobs("faults").running and not p._fault_timer.isActive()
    p.pages.setCurrentWidget(view.page)
    assert p.settle(240_000) and p.fault_study is not None
    r = p.fault_study.run
    assert (r.first_alarm().step, r.first_alarm().rule) == (p.params.fault_step, "checksum")
    assert view.loss_box.isAncestorOf(view.first_alarm)        # the loss chart's slide says what the ✖ found
    assert view.first_alarm.text() == f"✖ first alarm, step {r.first_alarm().step}: {r.first_alarm().detail}"
    assert [a.kind for a in r.actions] == ["replay"]
    assert len(view.items["loss"]["kept"].xData) == len(r.kept)
    assert view.items["loss"]["lost"].xData.size > 0             # the undone steps are drawn apart
    assert "replica checksums differ" in view.log.toPlainText() and "Gemini" in view.log.toPlainText()
    assert "every kept step identical" in view.text.text()
    assert p.result()["measured"]["fault_actions"][0]["kind"] == "replay"
    assert p.inner_tabs()[0] == "Fault run and triage"


def test_a_fault_run_for_older_knobs_is_never_drawn(make_panel):
    """Knobs edited while a run trains on a page since hidden: that run's study is for other knobs and
    must not be drawn, and the hidden page starts nothing new."""
    p = make_panel(ScalePanel)
    p.pages.setCurrentWidget(p.fault_view.page)
    p.flush_pending()
    assert p.jobs("faults").running
    p.pages.setCurrentIndex(0)
    assert p.pages.currentWidget() is not p.fault_view.page
    assert p.update_params(fault_step=60) is None
    assert p.settle(240_000)
    assert p.fault_study is None and p.fault_view.items["loss"]["kept"].xData is None


def test_bad_fault_settings_name_the_field(make_panel):
    p = make_panel(ScalePanel)
    err = p.update_params(fault_replica=3)                        # two replicas: 0 or 1
    assert err and "fault_replica" in err and p.params.fault_replica == 1


def test_selftest_drives_the_panel(make_panel):
    p = make_panel(ScalePanel)
    p.selftest()
    assert p.params.fault_kind == "bad_batch" and p.fault_study is None
