"""Scenario overview: the model's size from its architecture, what 16 B/param means, the GPU and layout."""
from __future__ import annotations

from html import escape

import numpy as np
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QFrame, QGridLayout, QVBoxLayout, QWidget

from engines.memory.analytic import optimizer_bytes_per_param, weight_bytes
from engines.overview import Overview, Params, human_bytes, human_count, summarize
from engines.overview.summary import BYTES_PER_PARAM_MIXED_ADAM
from explorer.ui.fast_items import Bars
from explorer.ui.label_layer import PAD, Label, label_layer, range_end_for_label
from explorer.ui.live_text import LiveText
from explorer.panel import Panel
from explorer.ui.widgets import brush, log_axes, make_plot, pen


class _Card(QFrame):
    """A big number with a caption underneath, readable from the back of a lecture hall.

    LiveText, not QLabel: a QLabel.setText re-lays out the whole window on every edit."""

    def __init__(self, caption: str) -> None:
        super().__init__()
        self.setFrameShape(QFrame.StyledPanel)
        lay = QVBoxLayout(self)
        self.value = LiveText(min_lines=1)
        self.caption = LiveText(min_lines=2)
        self._held: dict[LiveText, int] = {}
        self._caption = caption
        self._value: tuple[str, float] | None = None
        lay.addWidget(self.value)
        lay.addWidget(self.caption)
        self.set_caption(caption)

    def set(self, value: str, scale: float) -> None:
        """The number on one line: where the card is too narrow for it (presenter text on a 1280-px
        projector) its type shrinks, down to 55 %, instead of breaking "8,030,261,248" mid-number."""
        self._value = (value, scale)
        size = 11 * 1.6 * scale
        room = self.value.width() - 10
        if room > 1:
            font = QFont(self.value.font())
            font.setBold(True)
            font.setPointSizeF(size)
            need = QFontMetrics(font).horizontalAdvance(value)
            if need > room:
                size = max(size * room / need, size * 0.55)
        self.value.setText(f"<div align='center' style='font-size:{size:.1f}pt; font-weight:bold'>"
                           f"{escape(value)}</div>")
        self._hold_height(self.value)

    def set_caption(self, text: str) -> None:
        self.caption.setText(f"<div align='center'>{escape(text)}</div>")
        self._hold_height(self.caption)

    def _hold_height(self, text: LiveText) -> None:
        """Keep the tallest height seen at this width: a number or caption that re-wraps to a line fewer
        (e.g. 128 → 64 GPUs) would otherwise resize the chart below, re-rendering all of it each edit."""
        if text.width() <= 1:
            return
        height = max(self._held.get(text, 0), text.heightForWidth(text.width()))
        if height != self._held.get(text):
            self._held[text] = height
            text.setMinimumHeight(height)

    def resizeEvent(self, event) -> None:  # noqa: N802
        if event.oldSize().width() != event.size().width():  # a new width re-wraps: start over
            self._held.clear()
            for text, lines in ((self.value, 1), (self.caption, 2)):
                text.reserve_lines(lines)
        super().resizeEvent(event)
        if event.oldSize().width() != event.size().width() and self._value is not None:
            self.set(*self._value)                              # the number's size follows the card's width

    def text(self) -> str:
        return self.value.text()


class OverviewPanel(Panel):
    key = "overview"
    title = "Scenario overview"
    order = 0
    reads = frozenset({"model", "arch", "gpu", "n_gpus", "gpus_per_node", "tp", "pp"})
    lesson = "overview.md"
    Params = Params          # no knobs: the view follows the scenario alone

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.summary: Overview | None = None
        self._y_range: tuple[float, float] | None = None
        grid = QGridLayout()
        self.cards = {k: _Card(c) for k, c in (
            ("params", "parameters, counted from the architecture"),
            ("state", "training state at 16 B/param (mixed-precision Adam)"),
            ("gpu", "per GPU"),
            ("layout", "GPUs = DP × TP × PP"),
            ("sharded", "state per GPU if fully sharded (ZeRO-3 over all GPUs)"),
            ("min_gpus", "GPUs needed just to hold the state"),
        )}
        for i, card in enumerate(self.cards.values()):
            grid.addWidget(card, i // 3, i % 3)
        headline = QWidget()                    # the six cards as one view (a tour's focus)
        headline.setLayout(grid)
        grid.setContentsMargins(0, 0, 0, 0)
        self.body.addWidget(headline)
        self.name_view("headline", headline, "Headline numbers")
        for key, title in (("params", "Parameter count"), ("state", "Training state"), ("gpu", "GPU memory"),
                           ("layout", "Parallel layout"), ("sharded", "State per GPU, fully sharded"),
                           ("min_gpus", "GPUs to hold the state")):
            self.name_view(key, self.cards[key], title)     # each card can be pointed at by its key
        # Log scale: the lesson is state against ONE GPU (128 GB against 80 GB for Llama 3 8B), which
        # a linear axis squashed to slivers beside the whole cluster's memory (5,120 GB on 64 GPUs).
        self.plot = make_plot(ctx.theme, "Where the bytes of training state sit (16 B/param; log scale)",
                              "GB (log scale)", "")
        log_axes(self.plot, y=True)   # bars are drawn in log10 units: pyqtgraph maps only curves
        self.plot.setAccessibleName("Training state compared with GPU memory")
        self.bars = Bars(x=[0, 1, 2], height=[0, 0, 0], width=0.6)
        self.plot.addItem(self.bars)
        self.labels = label_layer(self.plot)  # painted at the bars' tops: no second paint when the range moves
        self._ticks: list | None = None
        self.plot.setMouseEnabled(x=False, y=False)
        self.body.addWidget(self.plot, 1)
        self.name_view("state_chart", self.plot, "Training state against GPU memory")
        self.plot.getViewBox().sigResized.connect(lambda *_a: self._draw())   # label room follows the height

    def set_scenario(self, scenario) -> None:
        o = self.summary = summarize(scenario)
        sc = self.theme.font_scale
        self.cards["params"].set(f"{o.params:,}", sc)
        self.cards["params"].set_caption(f"{o.model_label}: parameters counted from the architecture "
                                             f"({o.layers} layers × {human_count(o.layer_params)} + "
                                             f"{human_count(o.embedding_params)} embedding)")
        self.cards["state"].set(human_bytes(o.training_state_bytes), sc)
        w, k = weight_bytes("bf16"), optimizer_bytes_per_param("adamw", "bf16")   # the 16 B/param, part by part
        self.cards["state"].set_caption(f"training state at {BYTES_PER_PARAM_MIXED_ADAM} B/param: {w:g} bf16 weight "
                                        f"+ {w:g} bf16 gradient + {k:g} fp32 master and Adam moments")
        self.cards["gpu"].set(human_bytes(o.gpu_memory_bytes), sc)
        self.cards["gpu"].set_caption(f"{o.gpu_label}, per GPU (1 GB = 10⁹ B)")
        self.cards["layout"].set(f"{o.n_gpus} = {o.dp} × {o.tp} × {o.pp}", sc)
        self.cards["layout"].set_caption(f"GPUs = DP {o.dp} × TP {o.tp} × PP {o.pp}, on {o.nodes} node(s)")
        self.cards["sharded"].set(human_bytes(o.state_per_gpu_if_fully_sharded), sc)
        self.cards["min_gpus"].set(f"{o.gpus_to_hold_state:,}", sc)
        self._draw()

    def _draw(self) -> None:
        o, t = self.summary, self.theme
        if o is None:
            return
        gb = np.array([o.training_state_bytes, o.gpu_memory_bytes, o.cluster_memory_bytes]) / 1e9
        tops = np.log10(np.maximum(gb, 1e-9))
        base = float(np.floor(tops.min()))              # bars rise from the decade below the smallest
        self.bars.setOpts(y0=[base] * 3, height=tops - base,
                          brushes=[brush(t.color(5)), brush(t.color(4)), brush(t.color(2))], pens=[pen(t.fg, 1)] * 3)
        ticks = [(0, f"state: {o.gpus_to_hold_state:,} GPUs' worth"), (1, "one GPU"), (2, f"all {o.n_gpus:,} GPUs")]
        if ticks != self._ticks:   # the slide names the counts under the bars (a tour shows the chart alone)
            self._ticks = ticks
            self.plot.getAxis("bottom").setTicks([ticks])
        font = QFont()
        font.setPointSizeF(t.point_size)
        self.labels.set_labels([Label(f"{v:,.1f} GB", float(x), float(h), (0.5, 1.0), font, t.fg)
                                for x, (v, h) in enumerate(zip(gb, tops))])
        # one call: two calls would announce an x-range change too, re-rendering the fixed x axis;
        # the top is a whole or half decade with room for the labels, and it stays put while the
        # bars fit under it with at most a decade to spare: an axis that jumps on every edit is
        # hard to read while dragging, and re-rendering it costs more than the bars
        # the labels' room is in pixels: a short chart (presenter text, a small screen) needs more decades
        view_px = max(self.plot.getViewBox().height(), 60.0)
        label_px = QFontMetrics(font).height() + 2 * PAD + 4
        room = range_end_for_label(float(tops.max()), base, label_px, view_px, 0.4 * view_px)
        need = np.ceil(max(room, tops.max() + 0.25) * 2) / 2
        kept = self._y_range
        top = kept[1] if kept and kept[0] == base and need <= kept[1] <= need + 1 else need
        if (base, top) != kept:
            self._y_range = (base, top)
            self.plot.setRange(xRange=(-0.6, 2.6), yRange=(base, top), padding=0)

    def apply_theme(self, theme) -> None:
        super().apply_theme(theme)
        if self.summary is not None:
            self.set_scenario(self.ctx.scenario.value)

    def result(self) -> object:
        return self.summary

    def table(self) -> list[dict]:
        return self.summary.rows() if self.summary else []

    def selftest(self) -> None:
        for model in ("llama3-70b", "smollm2-135m", "llama3-8b"):
            err = self.ctx.scenario.try_update(model=model)
            if err:
                raise RuntimeError(err)
            assert self.summary is not None and self.summary.params == self.ctx.scenario.value.arch.param_count()


PANEL = OverviewPanel
