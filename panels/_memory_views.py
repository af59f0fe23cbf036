"""The training-memory panel's upper views: the fit verdict, stacked bars per strategy and the
sharding animation. Drawing only: every number comes from the ``engines.memory.study.MemoryStudy``
the panel hands over with ``show_result``."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics

from engines.core.scenario import STRATEGIES
from engines.memory import CATEGORIES, CATEGORY_LETTERS, STRATEGY_SHORT, STRATEGY_TICKS
from engines.memory.study import MemoryStudy
from explorer.ui.label_layer import PAD as LABEL_PAD
from explorer.ui.live_text import LiveText
from explorer.ui.pool import ItemPool
from explorer.ui.widgets import cache_static, make_plot
from panels._memory_style import CATEGORY_COLOR, CATEGORY_PATTERN, _gb  # noqa: F401 (importable here)
from panels._memory_style import SMALL_LABEL, MemoryChart

DRAWN_GPUS = 4


class VerdictView(LiveText):
    """Whether the scenario's strategy fits, what is free or over, and the smallest GPU count that
    fits for every strategy."""

    def __init__(self, theme) -> None:
        super().__init__(min_lines=3)
        self.theme = theme
        self.setAccessibleName("Fit verdict")

    def apply_theme(self, theme) -> None:
        self.theme = theme
        self.reset_height()

    def show_result(self, study: MemoryStudy) -> None:
        b, sc = study.own, study.scenario
        state = "<b>fits</b>" if b.fits else "<b>does NOT fit</b>"
        free = f"{_gb(b.headroom)} free" if b.fits else f"{_gb(-b.headroom)} over"
        smallest = study.sweep.smallest_fit
        parts = [f"{STRATEGY_SHORT[s]} {smallest[s] if smallest[s] else '> 1024'}" for s in STRATEGIES]
        cpu = f"; CPU RAM per GPU for offload: {_gb(b.cpu)}" if b.cpu else ""
        cpu += f"; NVMe per GPU for offload: {_gb(b.nvme)}" if b.nvme else ""
        self.setText(
            f"<span style='font-size:{self.theme.point_size * 1.25:.0f}pt'>{b.label} on {sc.n_gpus} × "
            f"{study.gpu_label} (TP {sc.tp} × PP {sc.pp} × DP {sc.dp}): {_gb(b.total)} of {_gb(b.gpu_memory)} "
            f"per GPU — {state} ({free}){cpu}.</span><br>Smallest GPU count that fits (≤ 1024, multiples of "
            f"TP×PP): {', '.join(parts)}." + ("<br><i>" + "; ".join(b.notes) + "</i>" if b.notes else ""))


class BarsView(MemoryChart):
    """Per-GPU memory of every strategy that applies as stacked, lettered, patterned blocks, with
    the GPU's memory as a dashed line."""

    def __init__(self, theme) -> None:
        super().__init__(theme)
        self.study: MemoryStudy | None = None
        self._bar_plot("Per-GPU memory by strategy", "GB per GPU", "",
                       "Stacked per-GPU memory for every strategy, with the GPU's memory")

    def apply_theme(self, theme) -> None:
        super().apply_theme(theme)
        self.plot.setMinimumHeight(int(theme.point_size * 14))   # title and axis leave the data room

    def _resized(self, *_args) -> None:
        """Label spacing is worked out in pixels: a resized chart lays its labels out again."""
        self._drawn.pop("bars", None)
        if self.study is not None:
            self.show_result(self.study)

    def show_result(self, study: MemoryStudy) -> None:
        self.study = study
        self.show_setup(study.scenario)
        by = study.by_strategy()
        yours = study.scenario.strategy
        shown = [s for s in STRATEGIES if by.get(s) is not None]
        values = {c: [getattr(by[s], c) for s in shown] for c in CATEGORIES}
        cap = study.own.gpu_memory / 1e9
        if not self._changed("bars", (tuple(shown), str(values), cap, yours)):
            return
        p, pool = self.plot, self.pool
        pool.begin()
        xs = list(range(len(shown)))
        left, right = -0.7, len(xs) + 0.8                   # room for the memory line's label on the right
        room = p.getViewBox().width() / (right - left)       # pixels per stack
        mark = "yours ▼" if QFontMetrics(self._font(0.75)).horizontalAdvance("yours ▼") + 2 * LABEL_PAD + 6 <= room \
            else "▼"                                          # the key above the charts says what ▼ means
        tops = [(by[s].total / 1e9, 3 if s == yours else 2) for s in shown] + [(cap, 2)]
        y_top = max(self._top_with_labels(p, tops, 0.75), max(v for v, _n in tops) * 1.1)
        line_h = self._text_height(p, y_top, 0.75)
        # a block gets a label only when some of it still shows above and below the label's box: a label
        # as tall as its block hid the block, and the stack read as floating pieces at presenter sizes
        label_min = max(0.07 * y_top, 1.5 * self._text_height(p, y_top, SMALL_LABEL))
        self._stack(xs, values, 0.62, label_min=label_min, avoid=(cap - 0.6 * line_h, cap + 0.6 * line_h),
                    room_px=room)
        pool.line(cap, 0, self._pen(self.theme.error, 2.5, Qt.DashLine))  # labelled in the free right margin
        pool.text(f"GPU memory\n{cap:,.0f} GB", (right - 0.05, cap), (1, 1), self._font(0.75), self.theme.fg)
        backing = self._brush(self.theme.bg)  # a total label may sit on the memory line: hide it there
        for x, s in zip(xs, shown):
            b = by[s]
            above = f"{mark}\n" if s == yours else ""       # the y axis says GB
            pool.text(f"{above}{b.total / 1e9:,.1f}\n{'fits' if b.fits else 'too big'}", (x, b.total / 1e9),
                      (0.5, 1), self._font(0.75), self.theme.fg, backing)
        pool.end()
        names = next((names for names in STRATEGY_TICKS[:-1] if self._ticks_fit(p, [names[s] for s in shown], room)),
                     STRATEGY_TICKS[-1])
        self._set_axes(p, "bars", bottom=[(x, names[s]) for x, s in zip(xs, shown)],
                       x_range=(left, right), y_range=(0, y_top))

    def _stack(self, xs: list[float], values: dict[str, list[float]], width: float,
               label_min: float = float("inf"), avoid: tuple[float, float] = (0.0, 0.0),
               room_px: float = float("inf")) -> float:
        """Draw stacked category blocks at ``xs`` (patterned, lettered); returns the tallest stack in GB.

        A block label whose centre falls in the band ``avoid`` (the memory line and its label) moves
        to the middle of the larger part of its block outside the band, or is dropped. Labels wider
        than ``room_px`` (the pixels between two stacks) would run into their neighbours': all of
        the chart's labels are shortened alike ("W 16.06" → "W 16" → "W")."""
        pool = self.pool
        base = np.zeros(len(xs))
        lo, hi = avoid
        blocks = {"x": [], "y0": [], "height": [], "fill": [], "hatch": []}  # all blocks in two bar items
        placed = []                                                          # (letter, value, x, y)
        for cat in CATEGORIES:
            if cat not in values:
                continue
            h = np.array(values[cat]) / 1e9
            fill, hatch = self._category_brushes(cat)
            blocks["x"] += list(xs)
            blocks["y0"] += list(base)
            blocks["height"] += list(h)
            blocks["fill"] += [fill] * len(xs)
            blocks["hatch"] += [hatch] * len(xs)
            for x, b0, hh in zip(xs, base, h):
                if hh < label_min:
                    continue
                y = b0 + hh / 2
                if lo < y < hi:
                    below, above = lo - b0, b0 + hh - hi
                    if max(below, above) < label_min / 2:
                        continue
                    y = b0 + below / 2 if below >= above else hi + above / 2
                placed.append((CATEGORY_LETTERS[cat], float(hh), x, y))
            base = base + h
        if placed:   # one format for the whole chart: the longest that fits between two stacks
            metrics = QFontMetrics(self._font(SMALL_LABEL))
            widest = max(placed, key=lambda p: p[1])
            fmt = next((f for f in ("{} {:,.2f}", "{} {:,.0f}")
                        if metrics.horizontalAdvance(f.format("W", widest[1])) + 2 * LABEL_PAD + 6 <= room_px), "{}")
            backing = self._brush(self.theme.bg)
            for letter, value, x, y in placed:
                pool.text(fmt.format(letter, value), (x, y), (0.5, 0.5), self._font(SMALL_LABEL), self.theme.fg,
                          backing)
        pool.bar(x=blocks["x"], y0=blocks["y0"], height=blocks["height"], width=width, brushes=blocks["fill"],
                 hatches=blocks["hatch"], pen=self._pen(self.theme.fg, 1))
        return float(base.max()) if len(xs) else 0.0


class ShardingView(MemoryChart):
    """The DP → ZeRO-3 animation on a handful of GPUs, with its caption: each GPU keeps its own 1/N
    shard (solid) while the part it will drop fades out."""

    def __init__(self, theme) -> None:
        super().__init__(theme)
        self.caption = LiveText(min_lines=2)
        self.caption.setAccessibleName("Sharding frame")
        self.plot = make_plot(theme, "Sharding, DP → ZeRO-3 (play the timeline)", "GB per GPU", "GPU")
        self.plot.setAccessibleName("Sharding animation across a handful of GPUs")
        self.plot.setMouseEnabled(x=False, y=False)
        self.box.addWidget(self.caption)      # the caption and its chart are one view (a tour's focus)
        self.box.addWidget(self.plot, 1)
        self.box.addWidget(self.setup)
        cache_static(self.plot)
        self.pool = ItemPool(self.plot)
        self.study: MemoryStudy | None = None
        self.index = 0
        self.plot.getViewBox().sigResized.connect(self._resized)

    def _label_ys(self, blocks, cap: float, line_h: float, y_top: float, metrics) -> list[float]:
        """Each block's label height: its block's middle, one line above the label below, clear of
        the memory line's label (data units of a chart ``y_top`` high)."""
        per_px = y_top / max(self.plot.getViewBox().height(), 120.0)          # data units per pixel
        base, next_label = 0.0, (metrics.height() / 2 + LABEL_PAD + 1) * per_px   # on the axis, not across it
        ys = []
        for block in blocks:
            total = block.total / 1e9
            label_y = max(base + total / 2, next_label)
            if cap - 0.7 * line_h < label_y < cap + 1.6 * line_h:  # keep clear of the memory line's label
                label_y = cap - 0.7 * line_h if label_y < cap and cap - 0.7 * line_h >= next_label \
                    else cap + 1.6 * line_h
            next_label = label_y + line_h
            ys.append(label_y)
            base += total
        return ys

    def apply_theme(self, theme) -> None:
        super().apply_theme(theme)
        self.caption.reset_height()
        self.plot.setMinimumHeight(int(theme.point_size * 12))

    def _resized(self, *_args) -> None:
        self._drawn.pop("frame", None)
        if self.study is not None:
            self.show_frame(self.index)

    def show_result(self, study: MemoryStudy) -> None:
        """Take ``study``'s frames; draw the frame shown now (the panel moves it with ``show_frame``)."""
        self.study = study
        self.show_setup(study.scenario)
        self.show_frame(self.index)

    def show_frame(self, index: int) -> None:
        """Draw one sharding frame. All blocks go into four multi-bar items so a frame costs a few
        milliseconds."""
        study = self.study
        if study is None or not study.frames:
            return
        frames = study.frames
        index = max(0, min(int(index), len(frames) - 1))
        self.index = index
        frame = frames[index]
        cap = study.own.gpu_memory / 1e9
        if not self._changed("frame", (frame, frames[0].bytes, cap)):
            return
        p, pool = self.plot, self.pool
        pool.begin()
        n = frame.dp
        drawn = min(DRAWN_GPUS, n)
        xs = list(range(drawn))
        blocks = study.shard_blocks(index)
        metrics = QFontMetrics(self._font(SMALL_LABEL))
        y_top = max(frames[0].total / 1e9 * 1.12, self._top_with_labels(p, [(cap, 1)], 0.75))
        for _ in range(12):   # the labels' stack must end inside the chart: a short chart needs a higher top
            line_h = self._text_height(p, y_top, SMALL_LABEL)
            label_ys = self._label_ys(blocks, cap, line_h, y_top, metrics)
            if not label_ys or label_ys[-1] + 0.6 * line_h <= y_top:
                break
            y_top *= 1.15
        label_px = 0.0
        solid = {"x": [], "y0": [], "height": [], "fill": [], "hatch": []}
        fading = {"x": [], "y0": [], "height": [], "fill": [], "hatch": []}
        base = 0.0
        for block, label_y in zip(blocks, label_ys):
            cat, split, sharding = block.category, block.split, block.sharding
            total, kept = block.total / 1e9, block.kept / 1e9
            fill, hatch = self._category_brushes(cat)
            for group, y0, height, brushes in ((solid, base, kept, (fill, hatch)),
                                               (fading, base + kept, total - kept,
                                                self._category_brushes(cat, alpha=max(0.12, 1 - split)))):
                if height <= 1e-12:
                    continue
                group["x"] += xs
                group["y0"] += [y0] * drawn
                group["height"] += [height] * drawn
                group["fill"] += [brushes[0]] * drawn
                group["hatch"] += [brushes[1]] * drawn
            label = block.label                  # the engine says what the block is and where it goes
            text = f"{CATEGORY_LETTERS[cat]} {label}: {total:,.2f}"
            widest = text.replace(f"1/{block.shard}", "1/8888") if sharding else text   # the room does not change
            label_px = max(label_px, metrics.horizontalAdvance(widest) + 2 * LABEL_PAD)  # with a GPU count
            pool.text(text, (drawn - 1 + 0.33, label_y), (0, 0.5), self._font(SMALL_LABEL), self.theme.fg)
            base += total
        for group, edge in ((solid, self._pen(self.theme.fg, 1)), (fading, self._pen(self.theme.fg, 1, Qt.DotLine))):
            if group["x"]:
                pool.bar(x=group["x"], y0=group["y0"], height=group["height"], width=0.6, brushes=group["fill"],
                         hatches=group["hatch"], pen=edge)
        right = max(drawn + 2.3, self._right_with_labels(p, drawn - 1 + 0.33, -0.5, label_px + 4))  # labels end inside
        pool.line(cap, 0, self._pen(self.theme.error, 2.5, Qt.DashLine))   # the GPU's memory, labelled at its right end
        pool.text(f"GPU memory {cap:,.0f} GB", (right - 0.1, cap), (1, 1), self._font(0.75), self.theme.fg)
        pool.end()
        ticks = [(x, str(r)) for x, r in zip(xs, xs[:-1] + [n - 1])]   # GPUs 0, 1, 2 and the last one
        title = f"{frame.stage_label} — {frame.total / 1e9:,.2f} GB per GPU × {n} GPUs (data-parallel)"
        if n > drawn:
            title += f"; {drawn} drawn"
        if frame.host:
            where = next(iter(frame.offloaded.values()), "host")      # the engine names the target
            title += f"; {_gb(frame.host)} offloaded to {where}"
        self.caption.setText(f"<b>{title}</b>")
        self._set_axes(p, "shard", bottom=ticks, x_range=(-0.5, right), y_range=(0, y_top))
