"""The Kubernetes panel: scenarios load as timelines, frames draw, pods explain, YAML runs."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6")


@pytest.fixture
def panel(make_panel):
    from panels.k8s import K8sPanel
    return make_panel(K8sPanel)


def test_scenarios_and_frames(panel):
    keys = [panel.chooser.itemData(i) for i in range(panel.chooser.count())]
    assert "crashloop" in keys and "model-server" in keys
    panel.chooser.setCurrentIndex(keys.index("crashloop"))
    spec = panel.timeline()
    assert spec.n_frames > 100
    panel.show_frame(spec.n_frames - 1)
    assert "ProgressDeadlineExceeded" in panel.result()["deployments"][0]["progressing"]
    panel.cluster.repaint()
    assert panel.cluster.tiles                     # pod tiles were drawn
    panel.cluster.pod_clicked.emit(panel.result()["pods"][0]["name"])
    panel.tabs.setCurrentWidget(panel.explainer)           # tabs not showing draw when shown
    assert "Placement" in panel.explainer.toHtml()


def test_the_explainer_shows_each_point_as_its_own_paragraph(panel):
    """Run together with line breaks, a short explanation left most of a slide's pane blank (E4 step 12)."""
    from engines.k8s import explain_pod

    panel.chooser.setCurrentIndex(panel.chooser.findData("model-server"))
    panel.show_frame(panel.timeline().n_frames - 1)
    panel.tabs.setCurrentWidget(panel.explainer)
    pod = next(p for p in panel.result()["pods"] if p["name"] in panel.explainer.toPlainText())
    lines = explain_pod(pod).lines
    assert len(lines) > 3 and panel.explainer.document().blockCount() == len(lines)
    assert panel.explainer.document().firstBlock().text().startswith(pod["name"])


def test_yaml_runs_and_reports_unsupported(panel):
    panel.yaml.setPlainText(panel.yaml.toPlainText().replace("      containers:", "      hostNetwork: true\n      containers:"))
    panel.run_yaml()
    assert panel.settle()
    assert panel.timeline_data.key == "yaml"
    assert "hostNetwork" in panel.yaml_report.text()


def deployment(name: str, replicas: int) -> str:
    return (f"apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}}}\nspec: {{replicas: {replicas}, "
            f"selector: {{matchLabels: {{app: {name}}}}}, template: {{metadata: {{labels: {{app: {name}}}}}, "
            f"spec: {{containers: [{{name: c, image: i}}]}}}}}}")


def apply_button(panel):
    from PySide6.QtWidgets import QPushButton
    return next(b for b in panel.findChildren(QPushButton) if b.text().startswith("Apply"))


def test_yaml_runs_in_the_worker_and_shows_its_result_when_done(panel, qtbot, monkeypatch):
    import threading

    import engines.k8s.yaml_run as yaml_run
    from PySide6.QtCore import Qt

    threads, played = [], yaml_run.play_guide

    def play(*args, **kwargs):
        threads.append(threading.current_thread())
        return played(*args, **kwargs)
    monkeypatch.setattr(yaml_run, "play_guide", play)
    before = panel.timeline_data
    texts = []
    panel.tasks.progressed.connect(lambda _f, text: texts.append(text))
    button = apply_button(panel)
    qtbot.mouseClick(button, Qt.LeftButton)
    # the click returns at once: the cluster runs in the worker, the button says so
    assert panel.tasks.running
    assert panel.timeline_data is before
    assert not button.isEnabled() and not button.text().startswith("Apply")
    qtbot.waitUntil(lambda: not panel.tasks.running, timeout=60_000)
    assert threads and threads[0] is not threading.main_thread()
    assert panel.timeline_data.key == "yaml" and len(panel.timeline_data.frames) == 61
    assert panel.index == 0 and panel.result()["scenario"] == "yaml"
    assert panel.yaml_report.text().startswith("Applied")
    assert button.isEnabled() and button.text() == "Apply and run 60 s"
    assert sum("of 60 s" in t for t in texts) >= 61          # one progress report per simulated second


def test_cancel_stops_a_long_yaml_run_and_leaves_the_panel_usable(panel, qtbot):
    from PySide6.QtCore import QElapsedTimer, Qt

    before = panel.timeline_data
    texts = []
    panel.tasks.progressed.connect(lambda _f, text: texts.append(text))
    panel.yaml.setPlainText(deployment("big", 800))            # ~10 s of simulation
    button = apply_button(panel)
    qtbot.mouseClick(button, Qt.LeftButton)
    assert panel.tasks.running and not button.isEnabled()
    qtbot.waitUntil(lambda: any(t.startswith("simulating your YAML: 2 of") for t in texts), timeout=60_000)
    bar = panel.tasks.widget()
    assert bar.cancel_button.isEnabled()
    qtbot.mouseClick(bar.cancel_button, Qt.LeftButton)
    assert not panel.tasks.running
    assert panel.timeline_data is before                      # nothing of the cancelled run is shown
    assert "Cancelled" in panel.yaml_report.text()
    assert button.isEnabled() and button.text() == "Apply and run 60 s"
    clock = QElapsedTimer()
    clock.start()
    assert panel.tasks.join(5_000)                            # the worker stopped at the next second
    assert clock.elapsed() < 5_000
    n_reports = len(texts)
    qtbot.wait(200)
    assert len(texts) == n_reports and panel.timeline_data is before   # no late frames from the old run
    # usable: a new run completes and shows
    panel.yaml.setPlainText(deployment("small", 2))
    qtbot.mouseClick(button, Qt.LeftButton)
    assert panel.settle()
    assert panel.timeline_data.key == "yaml"
    assert {d["name"] for d in panel.result()["deployments"]} == {"small"}
    assert panel.yaml_report.text().startswith("Applied")


def test_a_newer_yaml_run_supersedes_the_older(panel, qtbot):
    panel.yaml.setPlainText(deployment("old", 400))
    panel.run_yaml()
    assert panel.tasks.running
    panel.yaml.setPlainText(deployment("new", 2))
    panel.run_yaml()
    assert panel.settle()
    qtbot.wait(100)
    assert {d["name"] for d in panel.result()["deployments"]} == {"new"}


def test_huge_replicas_are_refused_up_front_naming_the_field(panel, qtbot, monkeypatch):
    import time

    import engines.k8s.scenarios as scenarios
    from PySide6.QtCore import Qt

    class NoCluster:                 # a refused manifest must never reach the simulator
        def __init__(self, *a, **k):
            raise AssertionError("a refused manifest was simulated")
    monkeypatch.setattr(scenarios, "Cluster", NoCluster)
    before = panel.timeline_data
    button = apply_button(panel)
    panel.yaml.setPlainText(deployment("x", 1_000_000_000))   # past the engine's own limit (10,000)
    t0 = time.perf_counter()
    qtbot.mouseClick(button, Qt.LeftButton)
    assert time.perf_counter() - t0 < 1.0
    assert "spec.replicas: 1000000000 is more than this simulator runs" in panel.yaml_report.text()
    panel.yaml.setPlainText(deployment("x", 5_000))           # valid, but too many tiles to animate
    qtbot.mouseClick(button, Qt.LeftButton)
    text = panel.yaml_report.text()
    assert "spec.replicas: 5000 pods is more than this simulator animates (at most 2000)" in text
    assert "Deployment/x" in text
    assert not panel.tasks.running and button.isEnabled() and panel.timeline_data is before
    # the bound is on the total across the pasted objects, not silently truncated
    panel.yaml.setPlainText(deployment("a", 1500) + "\n---\n" + deployment("b", 600))
    qtbot.mouseClick(button, Qt.LeftButton)
    text = panel.yaml_report.text()
    assert "spec.replicas: 2100 pods in total" in text and "Deployment/a 1500" in text and "at most 2000" in text
    assert not panel.tasks.running and panel.timeline_data is before
    # exactly the limit is accepted
    from engines.k8s import MAX_YAML_PODS, pod_limit_error
    objs = [{"kind": "Deployment", "metadata": {"name": "a"}, "spec": {"replicas": MAX_YAML_PODS - 1}},
            {"kind": "Pod", "metadata": {"name": "p"}, "spec": {}}]
    assert pod_limit_error(objs) is None
    assert "2001 pods" in pod_limit_error(objs + [{"kind": "ReplicaSet", "metadata": {"name": "r"}, "spec": {}}])


def test_model_server_follows_the_scenario_in_the_worker(panel, ctx):
    panel.chooser.setCurrentIndex(panel.chooser.findData("model-server"))
    gpus_8b = panel.plan.gpus_needed
    assert panel.result()["pods"][0]["requests"]["nvidia.com/gpu"] == gpus_8b
    ctx.scenario.update(model="llama3-70b")
    assert panel.tasks.running                     # the edit returns at once; the cluster runs in the worker
    assert "llama3-70b" in panel.chooser.currentText()
    panel.settle()
    assert panel.plan.gpus_needed > gpus_8b        # 70B needs more GPU memory per replica
    assert panel.result()["pods"][0]["requests"]["nvidia.com/gpu"] == panel.plan.gpus_needed
    ctx.scenario.update(model="llama3-8b")         # an earlier plan comes from the cache
    assert not panel.tasks.running
    assert panel.result()["pods"][0]["requests"]["nvidia.com/gpu"] == gpus_8b


def test_other_guides_ignore_scenario_edits(panel, ctx):
    panel.chooser.setCurrentIndex(panel.chooser.findData("rolling"))
    timeline = panel.timeline_data
    ctx.scenario.update(model="llama3-70b")
    assert panel.timeline_data is timeline and not panel.tasks.running
    assert "llama3-70b" in panel.chooser.itemText(panel.chooser.findData("model-server"))


def test_frames_redraw_in_place_and_fit_a_narrow_panel(panel):
    panel.chooser.setCurrentIndex(panel.chooser.findData("rolling"))
    panel.show_frame(20)
    cell = panel.events.item(0, 0)
    panel.show_frame(21)
    assert panel.events.item(0, 0) is cell          # cells re-texted, not recreated
    assert panel.minimumSizeHint().width() <= 700   # usable in a ~1000 px central area
    panel.resize(620, 700)
    panel.cluster.repaint()
    assert len(panel.cluster.tiles) >= 8            # every pod of the 3 nodes still drawn


def test_graph_pod_labels_show_the_whole_name_when_it_fits(panel, monkeypatch):
    import panels._k8s_views as views

    drawn = []
    fit_name = views.fit_name
    monkeypatch.setattr(views, "fit_name", lambda *a, **k: drawn.append(fit_name(*a, **k)) or drawn[-1])
    panel.chooser.setCurrentIndex(panel.chooser.findData("memory-pressure"))
    panel.show_frame(0)
    panel.graph.repaint()
    assert {"besteffort", "burstable", "guaranteed"} <= set(drawn)   # not "ffort / table / nteed"
    # too narrow: the distinguishing suffix stays, the front is elided
    fm = panel.graph.fontMetrics()
    name = "web-677bbd867b-jxkk8"
    short = fit_name(fm, fm.horizontalAdvance("web-6…jxkk8"), name)
    assert short.endswith("jxkk8") and short.startswith("web") and "…" in short


@pytest.mark.parametrize("theme_name", ["light", "dark"])
def test_capacity_bar_text_contrasts_with_the_fill(theme_name):
    from explorer.theme import THEMES, contrast, ink_on

    theme = THEMES[theme_name]
    fill = theme.palette[4]                                                 # the bars' fill
    assert contrast(ink_on(fill, theme), fill) >= 4.5                       # text over the filled part
    assert contrast(theme.fg, theme.panel_bg) >= 4.5                        # text past it
    assert contrast(theme.fg, fill) < 4.5                                   # why plain text was not enough


def test_yaml_editor_is_fixed_pitch_and_does_not_wrap(panel):
    """Indentation is YAML syntax: narrow and wide glyphs take one width as drawn. Qt's fixedPitch
    flag is not asked: it is False for Noto Sans Mono, whose glyphs all have the same advance."""
    from PySide6.QtGui import QFontInfo, QFontMetricsF
    from PySide6.QtWidgets import QPlainTextEdit

    from explorer.fonts import MONO_FAMILY

    metrics = QFontMetricsF(panel.yaml.font())
    advances = {c: metrics.horizontalAdvance(c) for c in "iWm. -:"}
    assert max(advances.values()) - min(advances.values()) < 0.01, advances
    assert QFontInfo(panel.yaml.font()).family() == MONO_FAMILY     # the bundled font, on every machine
    assert panel.yaml.lineWrapMode() == QPlainTextEdit.NoWrap
    assert abs(panel.yaml.font().pointSizeF() - panel.theme.point_size) < 0.01


def test_event_messages_are_readable_without_sideways_scrolling(make_panel, qtbot):
    from panels.k8s import K8sPanel

    panel = make_panel(K8sPanel, size=(950, 900))    # the panel's width in a 1600 px window
    panel.chooser.setCurrentIndex(panel.chooser.findData("rolling"))
    panel.show_frame(20)
    panel.tabs.setCurrentWidget(panel.events)
    qtbot.wait(50)
    table, events = panel.events, panel.timeline_data.frames[20].events
    viewport = table.viewport().width()
    assert table.horizontalHeader().length() <= viewport                     # no column past the edge
    texts = {table.item(r, c).text(): (r, c) for r in range(table.rowCount()) for c in range(table.columnCount())
             if table.item(r, c)}
    message = events[-1]["message"]                                          # the newest event
    rect = table.visualRect(table.model().index(*texts[message]))
    assert rect.left() >= 0 and rect.right() <= viewport and rect.width() >= viewport * 0.9
    assert any(events[-1]["reason"] in t and events[-1]["object"] in t for t in texts)


@pytest.mark.parametrize("yaml_shown", [True, False])
def test_a_saved_view_reopens_the_same_scenario_yaml_pod_and_frame(window, qtbot, tmp_path, yaml_shown, new_window):
    """A non-default guide, edited YAML (its run shown, or applied and then left for the guide), a
    clicked pod and frame 3 come back in a new window."""
    from explorer.view_state import load_view_state, save_view_state

    panel = window.show_panel("k8s")
    assert window.current_panel().settle()
    panel.chooser.setCurrentIndex(panel.chooser.findData("limits"))
    edited = deployment("api", 2)
    panel.yaml.setPlainText(edited)
    apply_button(panel).click()
    assert window.current_panel().settle()
    assert panel.timeline_data.key == "yaml"
    if not yaml_shown:
        panel.chooser.setCurrentIndex(panel.chooser.findData("rolling"))
    assert panel.params.yaml == edited and panel.params.yaml_shown is yaml_shown
    window.ctx.timeline.set_position(3)
    pod = panel.result()["pods"][-1]["name"]
    panel.cluster.pod_clicked.emit(pod)
    assert panel.params.pod == pod
    path = save_view_state(window.view_state(), tmp_path / "k8s.json")

    other = new_window()
    other.apply_view_state(load_view_state(path))
    assert other.current_panel().settle()
    again = other.current_panel()
    assert again.key == "k8s" and again.params == panel.params
    assert again.chooser.currentData() == panel.params.scenario
    assert again.yaml.toPlainText() == edited
    assert again.timeline_data.key == ("yaml" if yaml_shown else "rolling")
    assert other.ctx.timeline.position == 3 and again.index == 3
    assert again.result() == panel.result()                      # the same frame, pod for pod
    assert f"<b>{pod}</b>" in again.explainer.property("html_source")
    assert other.view_state() == window.view_state()


def test_choosing_a_guide_leaves_the_yaml_run_and_undo_returns(panel, ctx):
    panel.run_yaml()
    assert panel.settle() and panel.timeline_data.key == "yaml"
    assert panel.params.yaml == "" and panel.params.yaml_shown          # the example: stored as ""
    panel.chooser.setCurrentIndex(panel.chooser.findData("quota"))
    assert panel.timeline_data.key == "quota" and not panel.params.yaml_shown
    ctx.scenario.undo_stack.undo()                                      # one step: back to the YAML run
    assert panel.params.yaml_shown and panel.chooser.currentData() == "self-heal"
    assert panel.settle() and panel.timeline_data.key == "yaml"


def test_a_refused_yaml_changes_no_parameter(panel):
    before = panel.params
    panel.yaml.setPlainText(deployment("x", 5_000))
    panel.run_yaml()
    assert panel.params == before and "Error: Deployment/x spec.replicas" in panel.yaml_report.text()


def test_views_are_named_for_tours(panel):
    views = panel.views()
    assert {"caption", "cluster", "graph", "cluster_graph", "loop", "events", "explainer", "yaml"} <= set(views)
    assert views["cluster"] is panel.cluster and views["explainer"] is panel.explainer
    assert panel.view_widget("scenario") is panel.chooser       # the parameter's control


def test_loop_rules_are_shown_as_plain_text(panel):
    """"3 observed < 4 desired → create 1": the "<" must not start an HTML tag and swallow the rest."""
    panel.chooser.setCurrentIndex(panel.chooser.findData("self-heal"))
    panel.show_frame(12)
    assert "3 observed < 4 desired → create 1" in panel.loop.toPlainText()


def test_terminating_pods_are_drawn_on_their_node(panel):
    """A stopped node's deleted pods stay Terminating while it is away: the cluster view shows them."""
    panel.chooser.setCurrentIndex(panel.chooser.findData("stop-node"))
    panel.show_frame(355)
    stuck = {p["name"] for p in panel.result()["pods"] if p["badge"] == "Terminating"}
    assert len(stuck) == 2
    panel.cluster.repaint()
    assert stuck <= {name for _rect, name in panel.cluster.tiles}


def test_an_evicted_pod_says_when_it_was_evicted(panel):
    """The pod keeps no timestamp of its eviction; its tile reads it from the kubelet's event, and only
    on the evicted pod (E2's first step cites the second)."""
    panel.chooser.setCurrentIndex(panel.chooser.findData("memory-pressure"))
    panel.show_frame(45)
    panel.resize(1000, 700)
    panel.cluster.repaint()
    rows = [text for text, _rect, _font in panel.cluster.drawn_texts()]
    evicted = [r for r in rows if r.startswith("Evicted")]
    assert evicted and evicted[0].startswith("Evicted at t = 11 s")
    assert not any(" at t = " in r for r in rows if r.startswith("Running"))


# --- hands-on: commands, Why?, addresses, autoscaler, dumps -------------------------------------
def test_a_command_forks_the_timeline_at_the_frame_shown(panel, qtbot):
    panel.chooser.setCurrentIndex(panel.chooser.findData("self-heal"))
    panel.show_frame(8)
    panel.commands.line.setText("kubectl scale deploy/web --replicas=6")
    panel.commands.run.click()
    assert panel.settle(60_000)
    qtbot.waitUntil(lambda: panel.params.command_list == ((8, "scale deploy/web --replicas=6"),), timeout=10_000)
    assert panel.index == 9 and panel.timeline_data.frames[9].commands[0].accepted
    assert "accepted" in panel.commands.result.text() and panel.commands.result.isVisible()
    assert len([p for p in panel.timeline_data.frames[-1].pods if p["active"]]) == 6
    panel.show_frame(4)                                  # a command before the first: the later one goes
    panel.give("cordon node-0")
    assert panel.settle(60_000)
    assert panel.params.command_list == ((4, "cordon node-0"),)
    rejected = "delete pod nope"
    panel.give(rejected)
    assert panel.settle(60_000)
    assert "NotFound" in panel.commands.result.text() and "rejected" in panel.commands.result.text()


def test_operator_menu_aims_at_the_selected_pod(panel):
    panel.chooser.setCurrentIndex(panel.chooser.findData("self-heal"))
    panel.show_frame(10)
    pod = panel.timeline_data.frames[10].pods[1]["name"]
    panel.update_params(pod=pod, why=f"Pod/{pod}")
    assert panel.commands.commands["delete pod"] == f"delete pod/{pod}"
    action = panel.commands.actions_by_name["drain"]
    assert action.isEnabled() and "kubectl drain node-" in action.text()
    action.trigger()
    assert panel.settle(60_000)
    assert panel.params.command_list[0][1].startswith("drain node-")


def test_why_addresses_and_autoscaler_tabs_follow_the_frame(panel, qtbot):
    panel.chooser.setCurrentIndex(panel.chooser.findData("unschedulable"))
    panel.show_frame(30)
    pending = next(p["name"] for p in panel.timeline_data.frames[30].pods if not p["node"])
    panel.update_params(why=f"Pod/{pending}")
    panel.tabs.setCurrentWidget(panel.why)
    assert "Insufficient cpu" in panel.why.text.toPlainText()
    panel.tabs.setCurrentWidget(panel.addresses)
    assert "ClusterIP 10." in panel.addresses.toPlainText() and "EndpointSlice" in panel.addresses.toPlainText()
    panel.chooser.setCurrentIndex(panel.chooser.findData("autoscale"))
    assert panel.settle(120_000)
    qtbot.waitUntil(lambda: panel.timeline_data.key == "autoscale", timeout=10_000)
    panel.show_frame(300)
    panel.tabs.setCurrentWidget(panel.hpa)
    text = panel.hpa.text.toPlainText()
    assert "Pending" in text and "capacity, not YAML" in text


def test_a_dump_opens_and_a_broken_one_changes_nothing(panel, qtbot, tmp_path):
    from pathlib import Path
    dump = Path(__file__).resolve().parents[1] / "data" / "k8s_dump_shop.yaml"
    panel.open_dump(str(dump))
    assert panel.settle(60_000)
    qtbot.waitUntil(lambda: panel.timeline_data is not None and panel.timeline_data.key == "dump", timeout=60_000)
    assert panel.params.dump_shown and "namespaces: default, kube-system, shop" in panel.commands.result.text()
    before = (panel.params, panel.timeline_data)
    broken = tmp_path / "broken.yaml"
    broken.write_text("kind: List\nitems:\n- {kind: Deployment, metadata: {name: x}, spec: {replicas: -1}}\n")
    panel.open_dump(str(broken))
    assert panel.settle(60_000)
    assert (panel.params, panel.timeline_data) == before
    assert "nothing changed" in panel.error.text() and "spec.replicas" in panel.error.text()


def test_apply_at_this_second_runs_the_editor_on_the_cluster_shown(panel):
    panel.chooser.setCurrentIndex(panel.chooser.findData("self-heal"))
    panel.show_frame(6)
    panel.yaml.setPlainText("apiVersion: v1\nkind: Service\nmetadata: {name: api}\nspec: {selector: {app: web}, "
                            "ports: [{port: 81}]}\n")
    panel.apply_now_button.click()
    assert panel.settle(60_000)
    (second, command), = panel.params.command_list
    assert second == 6 and command.startswith("apply -f -\napiVersion: v1")
    assert panel.timeline_data.frames[7].commands[0].message == "service/api created"
    assert any(s["name"] == "api" and s["cluster_ip"] for s in panel.timeline_data.frames[-1].services)


# --- what a slide cites (issue 38) ----------------------------------------------------------------
def test_the_drawings_say_what_the_frame_follows_from_without_waiting_for_a_repaint(panel):
    """A slide of one frame cites the second of the action before it (E1 8: power off at t = 10 s). The
    slide check reads a painted view's texts right after the step is shown, before Qt repaints it."""
    panel.chooser.setCurrentIndex(panel.chooser.findData("stop-node"))
    panel.show_frame(5)
    panel.cluster.repaint()
    panel.graph.repaint()
    before = [text for text, _rect, _font in panel.cluster.drawn_texts()]
    assert not any("since t =" in t for t in before) and any(t.startswith("t = 5 s") for t in before)
    panel.show_frame(50)                                  # no repaint: the texts must follow anyway
    for view in (panel.cluster, panel.graph):
        texts = [text for text, _rect, _font in view.drawn_texts()]
        assert any("since t = 10 s: power off the node" in t for t in texts), (view, texts)
        assert any(t.startswith("t = 50 s") for t in texts), (view, texts)


def test_a_command_is_cited_at_the_second_it_was_given():
    """A command's chapter is the frame of its answer (t = 21 s); the second it was given is t = 20 s."""
    from engines.k8s.scenarios import run_guide
    from panels._k8s_frames import context_lines

    timeline = run_guide("self-heal", None, commands=[(20, "drain node-1")])
    assert context_lines(timeline, timeline.frames[26])[-1] == "since t = 20 s: kubectl drain node-1"
    assert context_lines(timeline, timeline.frames[15])[-1] == "since t = 12 s: kubectl delete pod"
    assert context_lines(timeline, timeline.frames[3]) == (timeline.title,)


def test_the_twin_says_since_when_its_count_holds(panel):
    panel.chooser.setCurrentIndex(panel.chooser.findData("dropped-events"))
    for frame, count, since in ((29, "2/3", None), (30, "3/3", 30), (40, "3/3", 30)):
        panel.show_frame(frame)
        footer = next(t for t, _r, _f in panel.cluster.drawn_texts() if t.startswith(f"t = {frame} s"))
        assert f"twin: {count} pods" in footer
        if since is not None:
            assert f"since t = {since} s" in footer
        else:
            assert "since t = 30 s" not in footer


def test_the_graph_names_each_replicasets_revision(panel):
    panel.chooser.setCurrentIndex(panel.chooser.findData("rolling"))
    panel.show_frame(22)
    labels = [t for t, _r, _f in panel.graph.drawn_texts() if t.startswith("rs/")]
    assert any(t.endswith("(revision 1)") for t in labels) and any(t.endswith("(revision 2)") for t in labels)


def test_the_events_table_shows_only_whole_rows(panel, qtbot):
    panel.chooser.setCurrentIndex(panel.chooser.findData("crashloop"))
    panel.show_frame(73)
    events = panel.events
    panel.tabs.setCurrentWidget(events)
    for height in (230, 317, 401):
        events.resize(events.width(), height)
        qtbot.waitUntil(lambda: events.viewport().height() < events.height())
        port = events.viewport().height()
        shown = [r for r in range(events.rowCount()) if events.rowViewportPosition(r) < port]
        assert len(shown) < events.rowCount()             # more rows than room: it scrolls
        last = shown[-1]
        assert events.rowViewportPosition(last) + events.rowHeight(last) <= port


def test_a_graph_too_short_to_draw_gives_its_room_to_the_cluster(panel):
    from panels._k8s_split import ClusterSplit

    split = panel.cluster.parentWidget()
    assert isinstance(split, ClusterSplit)
    split.resize(split.width(), 700)
    cluster, graph = split.sizes()
    assert graph >= panel.graph.least_height() and cluster == pytest.approx(700 * split.share, abs=12)
    split.resize(split.width(), panel.cluster.minimumHeight() + panel.graph.least_height() - 20)
    assert split.sizes()[1] == 0


def test_the_autoscaler_tab_cites_its_run_and_its_plan(panel, qtbot):
    panel.chooser.setCurrentIndex(panel.chooser.findData("autoscale"))
    assert panel.settle(120_000)
    qtbot.waitUntil(lambda: panel.timeline_data.key == "autoscale", timeout=10_000)
    panel.show_frame(300)
    panel.tabs.setCurrentWidget(panel.hpa)
    text = panel.hpa.text.toPlainText()
    desired = [f.hpas[0]["desired"] for f in panel.timeline_data.frames]
    first_down = next(i for i in range(1, len(desired)) if desired[i] < desired[i - 1])
    assert f"t = {panel.timeline_data.frames[first_down].t:.0f} s → {desired[first_down]}" in text
    assert "ratio 1.19" in text                           # the HPA's own decision this second
    assert panel.autoplan.summary in text
