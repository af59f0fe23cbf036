"""The quantization panel's serving-side views: formats for serving and the KV cache (QWidgets drawing
the frozen ``engines.quant.study`` result they are handed)."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QEvent, QTimer
from PySide6.QtWidgets import (QComboBox, QGridLayout, QHBoxLayout, QHeaderView, QSpinBox, QTableWidget,
                               QTableWidgetItem, QWidget)

from engines.quant.study import KVStudy, ServingStudy
from explorer.ui.bar_chart import bar_chart
from explorer.ui.fast_items import Bars
from explorer.ui.live_text import LiveText
from explorer.ui.widgets import make_plot
from panels._quant_views import label

SERVING_COLUMNS = ("format", "weight_bits", "weights_gb", "kv_gb", "total_gb", "fits", "decode_tok_s", "bound", "mma",
                   "note")
SERVING_HEADS = ("format", "bits/\nweight", "weights\nGB", "KV\nGB", "total\nGB", "fits one\nGPU", "decode\ntok/s",
                 "bound", "matmul\nin", "note")     # two-line headers: each column as wide as its numbers


class ServingView(QWidget):
    """Memory and decode speed of each weight format for the scenario: every row and column in view."""

    def __init__(self) -> None:
        # The formats for serving get a tab of their own: under the two charts the table pushed the
        # panel past a 1080p projector's height, and its last columns sat behind a sideways scroll.
        super().__init__()
        self.page = self
        g = QGridLayout(self)
        self.title = LiveText()          # word-wrapped: a long scenario line must not widen the panel
        g.addWidget(self.title, 0, 0)
        self.table = QTableWidget()
        self.table.setAccessibleName("Serving memory and decode speed per format")
        self.table.verticalHeader().hide()          # the format names the row; its width goes to text
        self.table.setWordWrap(True)
        self.table.verticalHeader().sectionResized.connect(    # once the header has its new length
            lambda *_a: QTimer.singleShot(0, self.fit))
        g.addWidget(self.table, 1, 0)
        g.setRowStretch(1, 1)

    def show_result(self, s: ServingStudy) -> None:
        rows = s.rows
        bf16 = f" ({s.kv16_gb:,.1f} GB in bf16)" if s.kv_bits != 16 else ""   # what the narrower cache saves
        self.title.setText(
            f"<b>{s.model}</b> on <b>{s.gpu}</b>, batch {s.batch}, context {s.context:,}, KV cache "
            f"{s.kv_bits}-bit{bf16}, your weights {s.weight_bits}-bit. Decode reads all weights and the KV cache "
            f"each step: tokens/s ≈ batch × bandwidth / bytes.")
        table, cols = self.table, SERVING_COLUMNS
        # rows that follow their wrapped text re-measured the table at every cell set (28 ms for B1's
        # 120 cells): they stay as they are while filling; ``fit_columns`` sizes them, at fitted widths
        table.verticalHeader().setSectionResizeMode(QHeaderView.Interactive)
        table.setColumnCount(len(cols))
        table.setHorizontalHeaderLabels(list(SERVING_HEADS))
        table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, key in enumerate(cols):
                v = row[key]
                if key == "mma" and not row["tensor_core"]:
                    v = f"bf16 (no {v} tensor cores here)"      # short: the column wraps at presenter sizes
                text = (f"{v:,.1f}" if isinstance(v, float) and key != "weight_bits" else
                        f"{v:.3f}" if key == "weight_bits" else ("yes" if v is True else "NO" if v is False else str(v)))
                item = QTableWidgetItem(text)
                item.setToolTip(f"{row['format']}: {row['note']}")   # the note, also where its column is hidden
                table.setItem(r, c, item)
        self.fit_columns()

    def fit_columns(self) -> None:
        """Every column in view at the current font and width: the numbers as wide as they are, and the
        width left shared by the format names, the matmul notes and the notes, which wrap. Again after
        a font change (presenter mode) or a resize: widths from the old font cut the numbers."""
        table, cols = self.table, SERVING_COLUMNS
        if table.columnCount() != len(cols) or not self.isVisible():   # a hidden tab has no width yet:
            return                                  # its rows wrapped to one word made the panel too tall
        header = table.horizontalHeader()
        for c in range(len(cols)):
            header.setSectionResizeMode(c, QHeaderView.Interactive)
        table.resizeColumnsToContents()
        note, mma = len(cols) - 1, cols.index("mma")
        fixed = sum(table.columnWidth(c) for c in range(note) if c not in (0, mma))
        room = max(0, table.viewport().width() - fixed)           # what the numbers leave to the words
        chars = table.fontMetrics().averageCharWidth()
        # Too little room (1280×800 presenter) and the notes wrapped every row to three or four lines,
        # pushing the last formats off the slide: the notes then live in each row's tooltip.
        narrow = room < chars * 60
        table.setColumnHidden(note, narrow)
        wrapped = {0: 0.55} if narrow else {0: 0.32, mma: 0.22}   # shares of the room
        for c, share in wrapped.items():
            table.setColumnWidth(c, max(chars * 9, min(table.columnWidth(c), int(room * share))))
        header.setSectionResizeMode(mma if narrow else note, QHeaderView.Stretch)
        table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)   # rows follow the wrapping
        self.fit()

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.FontChange, QEvent.StyleChange):
            QTimer.singleShot(0, self.fit_columns)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        QTimer.singleShot(0, self.fit_columns)

    def hideEvent(self, event) -> None:
        """A hidden tab asks for no height: the panel's other tabs need not make room for these rows."""
        super().hideEvent(event)
        self.table.setMinimumHeight(0)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            QTimer.singleShot(0, self.fit_columns)

    def fit(self) -> None:
        """Every format in view without scrolling the table (at presenter sizes it showed three rows);
        again whenever wrapping changes a row's height."""
        t = self.table
        rows = t.verticalHeader().length() + t.horizontalHeader().height()
        t.setMinimumHeight(rows + 2 * t.frameWidth() + t.horizontalScrollBar().sizeHint().height())


class KVView(QWidget):
    """K and V errors by scale layout, the keys' per-channel maxima, and the scenario's KV memory."""

    def __init__(self, theme) -> None:
        super().__init__()
        self.theme = theme
        self.page = self
        g = QGridLayout(self)
        row = QHBoxLayout()
        self.block_box = QComboBox()
        self.block_box.setAccessibleName("Block whose keys and values are quantized")
        self.bits_spin = QSpinBox()
        self.bits_spin.setRange(2, 8)
        self.bits_spin.setPrefix("KV bits: ")
        self.bits_spin.setKeyboardTracking(False)
        row.addWidget(self.block_box)
        row.addWidget(self.bits_spin)
        row.addStretch(1)
        g.addLayout(row, 0, 0, 1, 2)
        self.plot = make_plot(theme, "Relative error of K and V by scale layout", "", "relative error")
        g.addWidget(self.plot, 1, 0)
        self.chan_plot = make_plot(theme, "Keys: max|k| per channel (fixed outlier channels)", "max|k|",
                                   "channel (3 heads × 64)")
        g.addWidget(self.chan_plot, 1, 1)
        self.text = label(g, 2, 0, 2)
        g.setRowStretch(1, 1)
        self._key = None
        self._channels: Bars | None = None   # max|k| per channel, and what it shows
        self._channels_state: tuple | None = None
        self.result: KVStudy | None = None

    def apply_theme(self, theme) -> None:
        self.theme = theme
        if self.result is not None:
            self.show_result(self.result)

    def _draw_channels(self, kv: KVStudy, th) -> None:
        """One item, updated in place and only when its data or colour changed (new KV bits keep
        the keys): clearing the plot and adding a new item cost a redraw of the whole chart."""
        state = (tuple(np.asarray(kv.channel_max, float).tolist()), th.color(0))
        if state == self._channels_state:
            return
        self._channels_state = state
        look = dict(x=np.arange(len(kv.channel_max)), height=kv.channel_max, width=0.9, brush=th.color(0), pen=None)
        if self._channels is None:
            self._channels = Bars(**look)
            self.chan_plot.addItem(self._channels)
        else:
            self._channels.setOpts(**look)

    def show_result(self, kv: KVStudy) -> None:
        """The comparison of ``kv`` (its bars redrawn only for a new block, width or theme) and its memory."""
        self.result, th = kv, self.theme
        key = (kv.block, kv.bits, kv.rows, th.name, th.font_scale)
        if key != self._key:
            self._key = key
            bar_chart(self.plot, th, [f"{r['tensor']} per {r['axis']}" for r in kv.rows],
                      [r["relative_error"] for r in kv.rows], "{:.3f}")
            self._draw_channels(kv, th)
        mem, m = "", kv.memory
        if m is not None:
            mem = (f" For {m.model} at batch {m.batch} and context {m.context:,}: KV cache "
                   + ", ".join(f"{b}-bit {gb:,.1f} GB" for b, gb in m.gb) + " (scales not counted).")
        self.text.setText(
            f"SmolLM2 block {kv.block} pre-RoPE keys: channels {', '.join(map(str, kv.top_channels))} dominate. "
            f"Per-token scales (one per token and head) must cover them: K error {kv.error('K', 'token'):.3f}; "
            f"per-channel scales isolate them: {kv.error('K', 'channel'):.3f}. Values: per-token "
            f"{kv.error('V', 'token'):.3f} vs per-channel {kv.error('V', 'channel'):.3f} (KIVI pairs keys "
            f"per-channel with values per-token; the Hadamard on the head dimension is QuaRot's alternative)." + mem)
