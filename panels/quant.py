"""Quantization on real tensors: the affine mapping, outliers, the three fixes, GPTQ/AWQ, formats, KV cache.

All numbers come from ``engines.quant`` (one engine call per background job); this module binds
the ``Params`` fields to their controls and hands each frozen result to its view (``panels._quant_*``).
The shipped pack holds real SmolLM2-135M and all-MiniLM-L6-v2 tensors.
"""
from __future__ import annotations

from dataclasses import asdict, replace
from functools import partial

import pyqtgraph as pg
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QComboBox, QFileDialog, QInputDialog, QLabel, QPushButton, QSpinBox, QTabWidget

from engines.core.errors import ValidationError
from engines.core.result_cache import EngineCall, engine_call
from engines.quant.params import (GROUP_LABELS, KV_BLOCK_LABELS, PACK_LAYERS, PROFILE_MODELS, PROFILE_SITES, Params,
                                  parse_user_ref, user_tensor_ref)
from engines.quant.results import LayerAnalysis
from engines.quant.study import (fixes_study, heat_profile, kv_study, live_profile, run_analysis, serving_study,
                                 LayerSetup, setup_layer, with_memory)
from explorer.binder import ParamBinder, param_slider
from explorer.ui.flow_layout import FlowLayout, keep_together
from explorer.panel import Panel, TimelineSpec
from explorer.tasks import Delivered
from explorer.ui.widgets import ErrorLabel
from panels._quant_serving_views import KVView, ServingView
from panels._quant_views import AffineView, OutlierView, SummaryView, tidy
from panels._quant_weight_views import FixesView, GroupsView, WeightView

AFFINE_TAB, GPTQ_TAB = 0, 3


class QuantPanel(Panel):
    key = "quant"
    title = "Quantization"
    order = 45
    Params = Params
    reads = frozenset({"model", "arch", "gpu", "serve_batch", "serve_context", "kv_bits", "weight_bits"})
    lesson = "quant.md"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        # job slots: "main" (self.tasks) the analysis; "kv" and "live" their own, so neither cancels it
        self.analysis = None
        self.steps: tuple = ()
        self.serving: list[dict] = []
        self.kv = None                  # engines.quant.study.KVStudy on screen
        self.fix_study = None           # engines.quant.study.FixesStudy on screen
        self.live = None                # engines.quant.study.LiveProfile of the user's text
        self.user_files: dict = {}      # path → tensors of the files opened
        self._scenario = None
        self._kv_pending: tuple[int, int] | None = None    # (block, bits) being computed
        self._group_note: str | None = None                 # why the group asked for was replaced
        self._frame_shown: int | None = None                # the timeline frame drawn last
        self._tabs_pinned = False                           # a view just chose the tab: frames leave it

        top = FlowLayout()          # wraps at presenter font sizes instead of pushing the panel sideways
        self.layer_box = QComboBox()
        self.layer_box.setAccessibleName("Tensor to quantize")
        self.layer_box.addItems(list(PACK_LAYERS))
        top.addWidget(keep_together(QLabel("Tensor:"), self.layer_box))
        self.open_button = QPushButton("Open tensor file…")
        self.open_button.setToolTip(".safetensors, .npy or a torch file (loaded with weights_only=True)")
        self.open_button.clicked.connect(self._open_file)
        top.addWidget(self.open_button)
        self.bits_spin = QSpinBox()
        self.bits_spin.setRange(Params.spec("bits")["lo"], Params.spec("bits")["hi"])
        self.bits_spin.setPrefix("bits: ")
        self.bits_spin.setAccessibleName("Weight bits")
        self.bits_spin.setKeyboardTracking(False)
        top.addWidget(self.bits_spin)
        self.group_box = QComboBox()
        self.group_box.addItems(list(GROUP_LABELS.values()))
        self.group_box.setAccessibleName("Group size")
        top.addWidget(keep_together(QLabel("group:"), self.group_box))
        top.addWidget(self.tasks.widget())
        self.body.addLayout(top)
        self.error = ErrorLabel()
        self.body.addWidget(self.error)
        self.summary = SummaryView()
        self.body.addWidget(self.summary)

        self.tabs = QTabWidget()
        self.body.addWidget(self.tabs, 1)
        th = self.theme
        self.alpha_slider = param_slider(Params, "sq_alpha")
        self.affine, self.outliers = AffineView(th), OutlierView(th, self.jobs("live").widget())
        self.fixes, self.weights, self.groups = FixesView(th, self.alpha_slider), WeightView(th), GroupsView(th)
        self.serving_view, self.kv_view = ServingView(), KVView(th)
        for view, title in ((self.affine, "Affine mapping"), (self.outliers, "Outliers"),
                            (self.fixes, "Three fixes (W8A8)"), (self.weights, "GPTQ && AWQ"),
                            (self.groups, "Groups && schemes"), (self.serving_view, "Formats for serving"),
                            (self.kv_view, "KV cache")):
            self.tabs.addTab(view, title)
        for plot in self.findChildren(pg.PlotWidget):
            tidy(plot, th)
        self._name_views()
        o, k = self.outliers, self.kv_view
        o.model_box.addItems(list(PROFILE_MODELS))
        o.site_box.addItems(list(PROFILE_SITES.values()))
        k.block_box.addItems(list(KV_BLOCK_LABELS.values()))
        self.alpha_slider.valueChanging.connect(self._draw_fixes)      # a drag previews; release commits
        o.capture_requested.connect(self._capture_live)
        self.binder = ParamBinder(
            self, {"sq_alpha": self.alpha_slider, "tensor": self.layer_box, "bits": self.bits_spin,
                   "group_size": self.group_box, "profile_model": o.model_box, "profile_site": o.site_box,
                   "kv_block": k.block_box, "kv_bits": k.bits_spin},
            choices={"tensor": {key: key for key in PACK_LAYERS}, "group_size": GROUP_LABELS,
                     "profile_model": {m: m for m in PROFILE_MODELS}, "profile_site": PROFILE_SITES,
                     "kv_block": KV_BLOCK_LABELS},
            error=lambda text: self.error.show_error(text or self._group_note))
        self._analyse()

    def _name_views(self) -> None:
        """The views a tour step can focus on or point at (each tab, and its charts)."""
        o, f, w, g = self.outliers, self.fixes, self.weights, self.groups
        for name, widget, title in (
                ("summary", self.summary, "Errors of the layer at these bits"),
                ("affine", self.affine, "Affine mapping, worked by hand"),
                ("outliers", o, "Outliers"),
                ("heatmap", o.heat_cell, "Activation maxima per channel, block after block"),
                ("collapse", o.collapse_cell, "Per-tensor int8 codes with and without the outliers"),
                ("fixes", f, "Three fixes (W8A8)"),
                ("fix_errors", f.fix_plot, "W8A8 output error with each fix"),
                ("channel_max", f.dist_plot, "Per-channel max|x| before and after smoothing or rotation"),
                ("alpha_sweep", f.sq_plot, "SmoothQuant error against α"),
                ("gptq_awq", w, "GPTQ and AWQ"),
                ("gptq_trace", w.gptq_cell, "GPTQ column by column"),
                ("awq_alpha", w.awq_plot, "AWQ's α search"),
                ("weight_errors", w.wonly_plot, "Weight-only output error per method"),
                ("weight_hist", w.hist_plot, "Weight histogram before and after"),
                ("groups", g, "Groups and schemes"),
                ("group_bits", g.group_plot, "Bits per weight against error by group size"),
                ("schemes", g.scheme_plot, "W4A16, W8A8 and W4A4 on this layer"),
                ("formats_table", self.serving_view, "Memory and decode speed per format"),
                ("kv", self.kv_view, "KV cache"),
                ("kv_errors", self.kv_view.plot, "K and V error by scale layout"),
                ("key_channels", self.kv_view.chan_plot, "Keys' per-channel maxima")):
            self.name_view(name, widget, title)

    # --- parameters ------------------------------------------------------------------------
    def params_updated(self, changed: frozenset[str]) -> None:
        if "tensor" in changed and not self._show_tensor(self.params.tensor):
            return
        if changed & {"tensor", "bits", "group_size"}:
            self._analyse()              # its result draws the fixes at the α then set
        elif "sq_alpha" in changed:      # not the outgoing layer's fixes at the new α: a redraw shown for nothing
            self._draw_fixes()
        if changed & {"profile_model", "profile_site"}:
            self._draw_heatmap()
        if changed & {"kv_block", "kv_bits"}:
            self._draw_kv()

    def _show_tensor(self, ref: str) -> bool:
        """A file tensor from a saved view or undo: read its file again and list it (False if unreadable)."""
        labels = self.binder.choices["tensor"]
        if ref in labels:
            return True
        path, name = parse_user_ref(ref)
        try:
            from engines.quant.tensors import read_user_file

            if path not in self.user_files:
                self.user_files[path] = read_user_file(path)
        except ValidationError as exc:
            self.tasks.cancel()          # the layer being read or analysed is no longer the one asked for
            self.error.show_error(str(exc))
            return False
        self.binder.set_choice("tensor", ref, f"{name} ({path.rsplit('/', 1)[-1]})")
        return True

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
        self.user_files[path] = tensors
        self.error.show_error(self.update_params(tensor=user_tensor_ref(path, name)))

    # --- engine calls ----------------------------------------------------------------------
    def _analyse(self) -> None:
        """Read the layer (the tensor pack, and torch the first time: tenths of a second to seconds) on
        the main slot, then analyse it there. The job carries the params it was started for, and its
        completion applies exactly those; a newer run in the slot drops it (the slot's staleness rule).
        An analysis already in the result cache comes back with the layer: one result, one repaint."""
        p, files, device = self.params, dict(self.user_files), self.ctx.device
        self._group_note = None
        self.error.show_error(None)

        def read(progress, cancelled):
            from explorer.job_cache import stored

            setup = setup_layer(p, files)
            hit = None if setup.group.note else stored(_analysis_call(setup, p.sq_alpha, device))
            return (setup, None) if hit is None else Delivered((setup, hit[0]), hit[1])

        self.tasks.run(read, lambda ready: self._set_up(*ready, p, device), label=f"Reading {p.tensor}",
                       on_error=lambda text: self.error.show_error(text.splitlines()[0]))

    def _set_up(self, setup: LayerSetup, analysis: LayerAnalysis | None, p: Params, device: str) -> None:
        """Draw the layer read for ``p`` and its analysis at ``p``'s α (from the cache, or started now).
        Only a run for the same tensor, bits and group reaches here (any change to those starts a new
        run, dropping this one), so the group fallback below replaces that one field of the params now
        shown, keeping edits to other knobs made while the layer was read."""
        if setup.group.note:             # 128 does not divide 576: the view takes the largest group that does
            self.set_params(replace(self.params, group_size=setup.group.group_size), record=False)
            self._group_note = setup.group.note
            self.error.show_error(setup.group.note)
            return
        self.steps = setup.steps
        self.draw_when_shown(self.affine, partial(self.affine.show_result, setup))
        self.timeline_changed.emit()
        self.show_frame(0)
        self.summary.show_setup(setup)
        if analysis is not None:
            self._analysed(analysis)
            return
        self.tasks.run(_analysis_call(setup, p.sq_alpha, device), self._analysed,
                       label=f"Quantizing {setup.inputs.name} ({p.bits}-bit) on {device}",
                       on_error=lambda text: self.error.show_error(text.splitlines()[0]))

    @classmethod
    def planned_jobs(cls, scenario, params, tabs, device) -> list[EngineCall]:
        setup = setup_layer(params)          # a step's tensor is a shipped one (a user's file is not planned)
        return [] if setup.group.note else [_analysis_call(setup, params.sq_alpha, device)]

    def _analysed(self, a) -> None:
        self.analysis = a
        self.summary.show_result(a)
        self._draw_analysis()            # first: the timeline's new GPTQ frames draw from the views' result
        self.timeline_changed.emit()

    def _capture_live(self, text: str) -> None:
        model, device = self.params.profile_model, self.ctx.device
        self.outliers.live_bar.show()
        self.jobs("live").run(lambda progress, cancelled: live_profile(model, text, device, progress, cancelled),
                              self._live_done, label=f"Live capture ({model})",
                              on_error=lambda t: self.error.show_error(t.splitlines()[0]))

    def _live_done(self, live) -> None:
        self.live = live
        self._draw_heatmap()

    # --- scenario / timeline ---------------------------------------------------------------
    def set_scenario(self, scenario) -> None:
        first = self._scenario is None
        self._scenario = scenario
        study = serving_study(scenario)
        self.serving = list(study.rows)
        self.draw_when_shown(self.serving_view, partial(self.serving_view.show_result, study))
        if first:                      # the activation heat-map and the KV tensors do not depend on the scenario
            self._draw_heatmap()
        self._draw_kv()

    def timeline(self) -> TimelineSpec | None:
        n_trace = len(self.analysis.gptq_trace) if self.analysis is not None else 0
        chapters = [(0, "Affine mapping, by hand")]
        if n_trace:
            chapters.append((len(self.steps), "GPTQ error feedback, column by column"))
        return TimelineSpec(n_frames=max(1, len(self.steps) + n_trace), chapters=chapters, fps=2.0)

    def show_frame(self, index: int) -> None:
        """Draw frame ``index``; a frame the timeline moves to brings its tab forward, but a redraw of
        the same frame (a result arriving) or one set off by a restored view's own tab does not."""
        moved = index != self._frame_shown and not self._tabs_pinned
        self._frame_shown = index
        if index < len(self.steps):
            self.draw_when_shown(self.affine, partial(self.affine.show_frame, index), "frame")
            if moved:
                self.tabs.setCurrentIndex(AFFINE_TAB)
        elif self.analysis is not None and self.analysis.gptq_trace:
            self.draw_when_shown(self.weights, partial(self.weights.show_frame, index - len(self.steps)), "frame")
            if moved:
                self.tabs.setCurrentIndex(GPTQ_TAB)

    def set_inner_tabs(self, titles) -> None:
        """A view's tab wins over the timeline position the same view sets right after it (a tour step
        on *Formats for serving* starts the timeline at frame 0, whose own tab is *Affine mapping*)."""
        super().set_inner_tabs(titles)
        self._tabs_pinned = True
        QTimer.singleShot(0, self._unpin_tabs)

    def _unpin_tabs(self) -> None:
        """Unpinned once the results the view set off are drawn: a new layer's result moves the
        timeline to its first frame and back, and would show the affine tab in between."""
        if self.busy:
            QTimer.singleShot(20, self._unpin_tabs)
        else:
            self._tabs_pinned = False

    # --- drawing: the views draw; the panel picks what and when ------------------------------
    def _draw_analysis(self) -> None:
        a = self.analysis
        for view in (self.weights, self.groups, self.outliers.collapse):
            self.draw_when_shown(view, partial(view.show_result, a))
        self._draw_fixes()

    def _draw_fixes(self, alpha: float | None = None) -> None:
        """The three fixes at ``alpha`` (a slider drag previews it; default the committed α), an
        O(channels) engine call."""
        self.fix_study = fixes_study(self.analysis, self.params.sq_alpha if alpha is None else alpha)
        self.draw_when_shown(self.fixes, partial(self.fixes.show_result, self.fix_study))

    @property
    def preview(self):
        """The smoothed activation maxima on screen (``engines.quant.study.SmoothPreview``) or None."""
        return None if self.fix_study is None else self.fix_study.preview

    def _draw_heatmap(self) -> None:
        p = self.params
        h = heat_profile(p.profile_model, p.profile_site, self.live)
        o = self.outliers
        self.draw_when_shown(o, partial(o.show_missing, p.profile_model, PROFILE_SITES[p.profile_site])
                             if h is None else partial(o.show_result, h))

    def _draw_kv(self) -> None:
        """The K/V comparison (real torch, 20–40 ms) runs on its own worker when block or bits change;
        the charts are redrawn from its result, the memory sentence from the scenario at once."""
        inputs = (self.params.kv_block, self.params.kv_bits)
        if self.kv is None or (self.kv.block, self.kv.bits) != inputs:
            if inputs != self._kv_pending:
                self._kv_pending = inputs
                self.jobs("kv").run(lambda progress, cancelled: kv_study(*inputs), self._kv_done,
                                    label="comparing KV scale layouts", on_error=self._kv_failed)
            return
        s = self._scenario
        kv = self.kv if s is None else with_memory(self.kv, s.arch, s.serve_batch, s.serve_context)
        self.draw_when_shown(self.kv_view, partial(self.kv_view.show_result, kv))

    def _kv_done(self, kv) -> None:
        self._kv_pending = None
        self.kv = kv
        self._draw_kv()                  # draws, or starts the comparison for inputs changed meanwhile

    def _kv_failed(self, text: str) -> None:
        self._kv_pending = None
        self.error.show_error(text.splitlines()[0])

    # --- exports / theme / selftest --------------------------------------------------------
    @property
    def kv_rows(self) -> list[dict]:
        return list(self.kv.rows) if self.kv is not None else []

    def result(self) -> object:
        out = {"serving": self.serving, "kv": self.kv_rows, "worked_example": list(self.steps)}
        if self.analysis is not None:
            out["analysis"] = asdict(self.analysis)
        return out

    def table(self) -> list[dict]:
        rows = []
        a = self.analysis
        if a is not None:
            rows += [{"section": "weight-only", "item": m.label, "relative_error": m.error,
                      "bits_per_weight": m.bits_per_weight} for m in a.methods]
            rows += [{"section": "W8A8", "item": f.label, "relative_error": f.error} for f in a.fixes]
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
        for plot in self.findChildren(pg.PlotWidget):    # title, axes and some data readable at any text
            plot.setMinimumHeight(int(theme.point_size * 11))   # size: the tab scrolls rather than shrink them;
            # 11 lines, not more: one chart with its text still fits a 1280 × 800 projector under a tour caption
        for view in (self.outliers, self.affine, self.weights, self.groups, self.fixes, self.kv_view):
            view.apply_theme(theme)

    def selftest(self) -> None:
        self.layer_box.setCurrentText("minilm.l2.query")
        if not self.settle(300_000) or self.analysis is None:
            raise RuntimeError(self.tasks.last_error or "quantization analysis did not finish")
        for i in range(self.timeline().n_frames):
            self.show_frame(i)
        self.alpha_slider.setValue(0.8)
        self.alpha_slider.valueCommitted.emit(0.8)
        assert self.params.sq_alpha == 0.8
        self.kv_view.bits_spin.setValue(2)
        if not self.settle() or self.kv is None or (self.kv.block, self.kv.bits) != (self.params.kv_block, 2):
            raise RuntimeError(self.jobs("kv").last_error or "KV comparison did not finish")
        self.outliers.site_box.setCurrentIndex(1)


def _analysis_call(setup: LayerSetup, alpha: float, device: str) -> EngineCall:
    return engine_call(run_analysis, setup, alpha, device)


PANEL = QuantPanel
