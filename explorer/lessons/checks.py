"""Checks that a tour step, applied in a window, shows what its file says: the panel, its
parameters, the inner tabs, the frame, and views that exist under the names it uses. The test suite
and ``scripts/check_tours.py`` (for authors) run these."""
from __future__ import annotations

import re
from dataclasses import dataclass

from PySide6.QtGui import QImage

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


# --- the slide check: is each step a good slide? ------------------------------------------------
# Issue 38. A step is shown in a window of a given size, in presenter mode or not, and its focus view
# is judged as a slide: (a) inside the window, uncut; (b) every figure its caption cites is drawn;
# (c) it fills the room; (d) its text neither overlaps nor is cut; (e) in presenter mode its smallest
# text is at least MIN_TEXT_SHARE of the screen's height (≈ 24 px at 1080, 18 px at 800).

MIN_TEXT_SHARE = 0.022
MIN_ROOM_SHARE = 0.6                       # focus view's area / the panel's, in presenter mode
MIN_INK_SHARE = 0.4                        # share of the focus view's grid cells with something drawn
INK_GRID = 8
CLIP_SLACK = 4                             # pixels a frame may overlap the focus view's edge
OVERLAP_SHARE = 0.25                       # two texts overlap when this much of the smaller is covered

_NUMBER = re.compile(r"(?<![\w.,\-−/])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w]|[.,]\d)"
                     r"|(?<![\w.,\-−/])\d+(?:\.\d+)?(?![\w]|[.,]\d)")
_ORDINAL = re.compile(r"(?:\b(?:Fix|Step|Stage|Figure|Fig\.|Table|Eq\.|Section|Lesson|Chapter|point|Presumption)|§)\s*$"
                      r"|\b(?:Arts?|Articles?)\.?\s+(?:\d+(?:\(\w+\))*(?:-\(?)?)?\(?$"   # Art 13(3)-(4): a reference, like §
                      r"|\b(?:Llama|Qwen|Gemma|Mistral|GPT|Phi|DeepSeek)[ -]?$", re.IGNORECASE)      # model names
_DRAWN_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")


@dataclass(frozen=True)
class SlideProblem:
    """One failed check: ``check`` is "a" … "e" as in issue 38."""

    check: str
    detail: str

    def __str__(self) -> str:
        return f"({self.check}) {self.detail}"


def cited_numbers(text: str) -> list[str]:
    """The figures a caption cites: numbers standing alone ("0.45", "2,765×", "42 %"), not parts of
    names (H100, fp16, Llama-3-70B, LLM.int8) and not years in a citation."""
    found = []
    for m in _NUMBER.finditer(text):
        s = m.group(0)
        if re.fullmatch(r"(19[5-9]\d|20[0-4]\d)", s) or _ORDINAL.search(text[:m.start()]):
            continue
        found.append(s)
    return found


def _value(s: str) -> float:
    return float(s.replace(",", ""))


def number_drawn(cited: str, drawn: set[str]) -> bool:
    """``cited`` appears among the drawn numbers, as written or as their rounding to its digits (a
    caption may say 0.0615 for a drawn 0.06152; a one-digit integer must be drawn as itself)."""
    v = _value(cited)
    decimals = len(cited.split(".")[1]) if "." in cited else 0
    significant = len(cited.replace(",", "").replace(".", "").lstrip("0"))
    for d in drawn:
        w = _value(d)
        if w == v or (significant >= 2 and abs(round(w, decimals) - v) < 1e-9):
            return True
    return False


def slide_problems(win, step, presenter: bool) -> list[SlideProblem]:
    """Judge the step now shown in ``win`` (applied, settled, window at its size) as a slide."""
    from explorer.lessons.slide_text import collect

    panel = win.current_panel()
    target = panel.view_widget(step.focus) if step.focus else None
    if target is None:
        return [SlideProblem("a", f"no focus view ({step.focus!r})")]
    return view_problems(win, panel, target, f"{step.caption} {step.claim}", presenter, collect(panel, win))


def view_problems(win, panel, target, caption: str, presenter: bool, texts=None) -> list[SlideProblem]:
    """The checks on ``target`` (a view of ``panel``, shown in the window ``win``)."""
    from PySide6.QtCore import QRect

    from explorer.lessons.slide_text import visible_rect, collect

    problems: list[SlideProblem] = []
    texts = collect(panel, win) if texts is None else texts
    screen = QRect(0, 0, win.width(), win.height())
    # (a) inside the window and uncut
    full = QRect(target.mapTo(win, target.rect().topLeft()), target.size())
    seen = visible_rect(target, win)
    if not target.isVisible() or seen.isEmpty():
        problems.append(SlideProblem("a", "focus view not visible"))
        return problems
    if not screen.contains(full):
        problems.append(SlideProblem("a", f"focus view {_r(full)} outside the window {screen.width()}×{screen.height()}"))
    elif max(abs(a - b) for a, b in zip(seen.toRect().getCoords(), full.getCoords())) > CLIP_SLACK:
        problems.append(SlideProblem("a", f"focus view clipped to {_r(seen.toRect())} of {_r(full)}"))
    # (b) every cited figure drawn in the panel as shown
    # only text wholly in view counts: a readout scrolled half away may hold the figure in its hidden half
    drawn = {n for t in texts if not t.cut
             for n in _DRAWN_NUMBER.findall(t.text.replace("\u2009", "").replace("\u202f", ""))}
    missing = [n for n in cited_numbers(caption) if not number_drawn(n, drawn)]
    if missing:
        problems.append(SlideProblem("b", "not drawn: " + ", ".join(dict.fromkeys(missing))))
    # (c) the focus view fills the room, and is not mostly blank
    room = panel.width() * panel.height()
    share = seen.width() * seen.height() / room if room else 0.0
    if presenter and share < MIN_ROOM_SHARE:     # the normal window shows the whole panel, the view marked
        problems.append(SlideProblem("c", f"focus view has {share:.0%} of the panel (< {MIN_ROOM_SHARE:.0%})"))
    ink = ink_share(target)
    if ink < MIN_INK_SHARE:
        problems.append(SlideProblem("c", f"focus view is mostly blank ({ink:.0%} of it drawn on)"))
    # (d) no overlapping or cut text in the focus view
    inside = [t for t in texts if t.kind != "control" and seen.intersects(t.rect)]
    cut: dict[str, list[str]] = {}
    for t in inside:
        if t.cut:
            cut.setdefault(t.where, []).append(_short(t.text))
    for where, items in cut.items():
        more = f" and {len(items) - 3} more" if len(items) > 3 else ""
        problems.append(SlideProblem("d", f"cut in {where}: {', '.join(map(repr, items[:3]))}{more}"))
    free = [t for t in inside if t.kind == "text"]
    for i, a in enumerate(free):
        for b in free[i + 1:]:
            common = a.rect.intersected(b.rect)
            least = min(a.rect.width() * a.rect.height(), b.rect.width() * b.rect.height())
            if not common.isEmpty() and least > 0 and common.width() * common.height() > OVERLAP_SHARE * least \
                    and not (a.rect.contains(b.rect) or b.rect.contains(a.rect)):
                problems.append(SlideProblem("d", f"overlap: {_short(a.text)!r} and {_short(b.text)!r}"))
    # (e) readable from the back row
    if presenter and inside:
        least = min(inside, key=lambda t: t.px)
        need = MIN_TEXT_SHARE * win.height()
        if least.px < need - 0.5:
            problems.append(SlideProblem("e", f"text {least.px:.0f} px < {need:.0f} px: {_short(least.text)!r} "
                                              f"({least.where})"))
    return problems


def ink_share(widget, grid: int = INK_GRID) -> float:
    """The share of a ``grid``×``grid`` division of ``widget`` with anything drawn in it (rendered small)."""
    from PySide6.QtCore import QPoint
    from PySide6.QtGui import QPainter
    from PySide6.QtWidgets import QWidget

    image = QImage(max(1, widget.width() // 4), max(1, widget.height() // 4), QImage.Format_RGB32)
    image.fill(widget.palette().window().color())
    painter = QPainter(image)
    painter.scale(0.25, 0.25)
    QWidget.render(widget, painter, QPoint(0, 0))
    painter.end()
    w, h = image.width(), image.height()
    if w < grid or h < grid:
        return 0.0
    bg = image.pixel(1, 1)
    inked = 0
    for gx in range(grid):
        for gy in range(grid):
            x0, x1 = gx * w // grid, (gx + 1) * w // grid
            y0, y1 = gy * h // grid, (gy + 1) * h // grid
            if any(image.pixel(x, y) != bg for x in range(x0, x1) for y in range(y0, y1)):
                inked += 1
    return inked / (grid * grid)


def _r(r) -> str:
    return f"{r.width()}×{r.height()}+{r.x()}+{r.y()}"


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 40 else text[:37] + "…"


SIZES = ((1280, 800), (1920, 1080))


@dataclass(frozen=True)
class SlideResult:
    lesson: str
    step: int                  # 1-based, as the tour bar says
    mode: str                  # "presenter" or "window"
    size: str                  # "1280x800"
    problems: tuple[SlideProblem, ...]

    def key(self, problem: SlideProblem) -> str:
        """The line naming this failure in the allow-list of known failing steps."""
        return f"{self.lesson} {self.step} {self.mode} {self.size} {problem.check}"


def check_slides(win, tours, sizes=SIZES, modes=("presenter", "window")):
    """Yield a :class:`SlideResult` for every step of ``tours`` at every size in every mode. In
    presenter mode sizes are the outer loop: text follows the window's height, and a new text size
    re-styles the whole application (most of a second), so it changes once per size, not per step.
    In the window each step is applied once and judged at every size."""
    from PySide6.QtWidgets import QApplication

    for mode in modes:
        presenting = mode == "presenter"
        if win.presenting != presenting:
            win.set_presenter(presenting, full_screen=False)
        # presenting: one size for all steps (each size re-styles); else each step once, at every size
        for outer in (sizes if presenting else [None]):
            for tour in tours:
                for i, step in enumerate(tour.steps):
                    for w, h in ([outer] if presenting else sizes):
                        if (win.width(), win.height()) != (w, h):
                            win.resize(w, h)
                            QApplication.processEvents()
                            win.fit_presenter()
                        applied = (win.tour.tour is tour and win.tour.index == i)
                        problems = [] if applied else [SlideProblem("a", p) for p in step_problems(win, tour, i)]
                        QApplication.processEvents()
                        yield SlideResult(tour.lesson, i + 1, mode, f"{w}x{h}",
                                          tuple(problems + slide_problems(win, step, presenting)))
    if win.presenting:
        win.set_presenter(False)


def read_allow_list(path) -> set[str]:
    """Known failing checks, one ``LESSON STEP MODE SIZE CHECK`` a line (``#`` starts a comment)."""
    from pathlib import Path

    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return {" ".join(line.split("#")[0].split()) for line in lines if line.split("#")[0].strip()}
