"""Quantization on real tensors: affine/RTN, GPTQ, AWQ, SmoothQuant, LLM.int8, rotation, KV cache.

Weights ``w`` are (out, in), activations ``x`` are (tokens, in), both torch tensors. torch is
imported lazily inside the functions, so importing this package is cheap.
"""
from engines.quant.affine import QuantResult, bits_per_value, levels_used, quantize, rtn, worked_example
from engines.quant.awq import awq
from engines.quant.formats import fp8_e4m3, nf4
from engines.quant.gptq import gptq, gptq_reference
from engines.quant.int8_decomp import Int8Result, llm_int8
from engines.quant.kv import kv_cache_bytes, kv_comparison, quantize_kv
from engines.quant.params import Params
from engines.quant.metrics import channel_absmax, outlier_ratio, per_channel_error, relative_output_error, sqnr_db
from engines.quant.rotate import hadamard, rotate, rotation_matrix
from engines.quant.schemes import FORMATS, scheme_errors, serving_table, w8a8
from engines.quant.smooth import SmoothResult, smooth_scales, smoothquant

__all__ = ["QuantResult", "quantize", "rtn", "bits_per_value", "levels_used", "worked_example", "gptq",
           "gptq_reference", "awq", "fp8_e4m3", "nf4", "llm_int8", "Int8Result", "smoothquant", "smooth_scales",
           "SmoothResult", "rotate", "rotation_matrix", "hadamard", "quantize_kv", "kv_comparison", "kv_cache_bytes",
           "relative_output_error", "sqnr_db", "per_channel_error", "channel_absmax", "outlier_ratio",
           "w8a8", "scheme_errors", "serving_table", "FORMATS", "Params"]
