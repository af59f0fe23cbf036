"""Self-hosting a language model (lessons C1 and C2): the honest total cost against an API, what
stays private, and what operating the deployment means.

Public API (Qt-free; a month is 730 hours): :func:`cost_per_million_output_tokens`,
:func:`break_even_utilisation` (above 1: no break-even), :func:`api_monthly_cost`,
:func:`owned_cost_per_gpu_hour`, :func:`replicas_for_peak`; the price book (:func:`load_prices`);
the views' computations :func:`tco`, :func:`day_of_traffic`, :func:`capacity_plan`,
:func:`upgrade_cost`, :func:`retirement_signals` (all four: :func:`operations`; the three without the
simulated day: :func:`outlook`) and the privacy
trees (:func:`load_privacy_trees`).
"""
from engines.selfhost.cost import (HOURS_PER_MONTH, HOURS_PER_YEAR, annuity_factor, api_monthly_cost,
                                   break_even_utilisation, break_even_volume, commit_pays_off,
                                   cost_per_million_output_tokens, owned_cost_per_gpu_hour, price_mix,
                                   replicas_for_peak, staff_monthly, surge_cost)
from engines.selfhost.params import OWNERSHIP, Params
from engines.selfhost.prices import (SHIPPED_WHERE, STALE_DAYS, ApiPrice, GpuRental, HardwarePrice, PriceBook, age_days,
                                     age_words, checked_book, dump_prices, is_stale, load_prices, open_book,
                                     parse_price_text, parse_prices)
from engines.selfhost.study import (INCLUDED_IN_API, Curve, GpuPrice, Tco, api_alternatives, cost_curve, gpu_price,
                                    peak_rate, sizing_inputs, sizing_key, tco, tco_sizing)
from engines.selfhost.operate import (SECURITY, Day, Hour, Month, Operations, Outlook, Signal, Upgrade, capacity_plan,
                                      day_of_traffic, diurnal_shape, operations, outlook, retirement_signals,
                                      upgrade_cost)
from engines.selfhost.privacy import load_privacy_trees, privacy_problems

__all__ = ["HOURS_PER_MONTH", "HOURS_PER_YEAR", "annuity_factor", "api_monthly_cost", "break_even_utilisation",
           "break_even_volume", "commit_pays_off", "cost_per_million_output_tokens", "owned_cost_per_gpu_hour",
           "price_mix", "replicas_for_peak", "staff_monthly", "surge_cost", "OWNERSHIP", "Params", "STALE_DAYS",
           "ApiPrice", "GpuRental", "HardwarePrice", "PriceBook", "age_days", "age_words", "dump_prices", "is_stale",
           "load_prices", "parse_price_text", "parse_prices", "SHIPPED_WHERE", "checked_book", "open_book",
           "INCLUDED_IN_API", "Curve", "GpuPrice", "Tco",
           "api_alternatives", "cost_curve", "gpu_price", "peak_rate", "sizing_inputs", "sizing_key", "tco", "tco_sizing", "Outlook", "outlook", "SECURITY", "Day", "Hour", "Month", "Operations",
           "Signal", "Upgrade", "capacity_plan", "day_of_traffic", "diurnal_shape", "operations",
           "retirement_signals", "upgrade_cost", "load_privacy_trees", "privacy_problems"]
