"""Compute, power and cost (lessons D1–D3): scaling laws in closed form and fitted to measured losses,
the power a cluster draws, the all-reduce a step waits for, and the cost of one GPU-hour.

Public API: :func:`training_flops` (6ND), :func:`chinchilla_loss`, :func:`chinchilla_optimum` (fits
``"hoffmann"``, ``"hoffmann-unrounded"``, ``"besiroglu"``), Kaplan's laws, :func:`fit_scaling_law` → :class:`Fit`.
"""
from engines.compute.fit import Fit, fit_scaling_law
from engines.compute.scaling import (FITS, KAPLAN, PF_DAY, KaplanLaws, LawConstants, chinchilla_frontier,
                                     chinchilla_loss, chinchilla_loss_grid, chinchilla_optimum,
                                     inference_flops_per_token, iso_flop_curve, kaplan_allocation, kaplan_loss_c,
                                     kaplan_loss_d, kaplan_loss_n, optimum_exponents, tokens_per_param_at_optimum,
                                     training_flops)

__all__ = ["Fit", "fit_scaling_law", "FITS", "KAPLAN", "PF_DAY", "KaplanLaws", "LawConstants", "chinchilla_frontier",
           "chinchilla_loss", "chinchilla_loss_grid", "chinchilla_optimum", "inference_flops_per_token",
           "iso_flop_curve", "kaplan_allocation", "kaplan_loss_c", "kaplan_loss_d", "kaplan_loss_n",
           "optimum_exponents", "tokens_per_param_at_optimum", "training_flops"]
