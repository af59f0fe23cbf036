"""Checks that a tour step, applied in a window, shows what its file says: the panel, its
parameters, the inner tabs, the frame, and views that exist under the names it uses. The test suite
and ``scripts/check_tours.py`` (for authors) run these."""
from __future__ import annotations

from explorer.lessons.tour import Tour


def step_problems(win, tour: Tour, index: int) -> list[str]:
    """Apply step ``index`` of ``tour`` in ``win`` and list what does not match (empty: all good)."""
    step = tour.steps[index]
    where = f"{tour.lesson} step {index + 1}"
    shown = win.tour.go(index) if win.tour.tour is tour else win.tour.start(tour, index)
    if not shown:
        return [f"{where}: {win.tour.error}"]
    panel = win.current_panel()
    if panel is None or panel.key != step.panel:
        return [f"{where}: shows {panel.key if panel else None!r}, not {step.panel!r}"]
    problems = [] if panel.settle() else [f"{where}: the panel's jobs were still running after 120 s"]
    if panel.Params is not None:
        want = panel.Params.from_dict(dict(step.params), step.params_version)
        if panel.params != want:
            diff = {k: v for k, v in panel.params.to_dict().items() if want.to_dict().get(k) != v}
            problems.append(f"{where}: parameters differ from the step's: {diff}")
    elif step.params:
        problems.append(f"{where}: panel {panel.key} has no parameters, the step sets {sorted(step.params)}")
    if step.tabs:
        from explorer.panel import _as_shown

        shown = panel.inner_tabs()
        if tuple(shown[:len(step.tabs)]) != tuple(_as_shown(t) for t in step.tabs):
            problems.append(f"{where}: inner tabs {shown}, the step asks for {step.tabs}")
    timeline = win.ctx.timeline
    if step.frame is not None and not step.play:
        if timeline.spec is None:
            problems.append(f"{where}: frame {step.frame} but the panel has no timeline now")
        elif timeline.position != step.frame:
            problems.append(f"{where}: timeline at frame {timeline.position}, the step asks for {step.frame} "
                            f"(of {timeline.n_frames})")
    for key in ("focus", "highlight"):
        name = getattr(step, key)
        if name and panel.view_widget(name) is None:
            problems.append(f"{where}: {key} {name!r} is neither a named view of {panel.key} "
                            f"({', '.join(panel.views()) or 'none'}) nor one of its parameters")
    if step.scenario.get("model") and win.ctx.scenario.value.model != step.scenario["model"]:
        problems.append(f"{where}: model is {win.ctx.scenario.value.model}")
    return problems
