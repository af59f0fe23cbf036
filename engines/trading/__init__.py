"""Language models in trading (lessons H1–H4): the statistics that separate a result from a strategy,
the headline study read by version, look-ahead bias simulated, a model call priced against the stack,
and an extraction classifier evaluated without returns (H4).

Public API (daily data, 252 periods a year unless given): :func:`t_stat`, :func:`sharpe_se` (Lo 2002,
annualised), :func:`bonferroni_threshold`, :func:`days_for_t`, :func:`net_daily_return`,
:func:`break_even_cost`, :func:`expected_max_sharpe`, :func:`deflated_sharpe` (raw kurtosis),
:func:`hit_rate`, :func:`cohen_kappa`, :func:`f1`, :func:`psi`; and the views' computations
:func:`study`, :func:`simulate_lookahead`, :func:`price_stack`, :func:`run_extraction`.
"""
from engines.trading.evaluation import (PSI_BANDS, PSI_BANDS_NOTE, ClassScores, Reliability, brier, class_scores,
                                        confusion_matrix, psi_band, psi_counts, psi_scores, reliability)
from engines.trading.extraction import (CLASS_TITLES, ExtractionParams, ExtractionRun, SetScores, audit_json,
                                        export_audit, load_headlines, run_extraction)
from engines.trading.governance import GOVERNANCE, Duty
from engines.trading.lookahead import (MC_TOLERANCE_SE, REMEDIES, REMEDY_SOURCES, LookaheadRun, Moments,
                                       effective_skill, mixture_sharpe, moments, simulate_lookahead)
from engines.trading.params import Params
from engines.trading.stack import (BCS_FIBRE_RTT_S, BCS_MICROWAVE_RTT_S, STAGES, Stage, StackPricing, StageVerdict,
                                   price_stack, verdict)
from engines.trading.stats import (EULER_GAMMA, HLZ_HURDLE_T, PERIODS_PER_YEAR, bonferroni_threshold,
                                   break_even_cost, cohen_kappa, cumulative_return, days_for_t, deflated_sharpe,
                                   expected_max_sharpe, f1, hit_rate, min_backtest_years, net_daily_return,
                                   probabilistic_sharpe, psi, sharpe_se, sharpe_t, sign_portfolio_sharpe, t_stat)
from engines.trading.study import FIGURES, LLT_PERIODS, LLT_REPORTED_COSTS, LLT_REPORTED_NET_SHARPE, Figure, PeriodStat, Study, study

__all__ = ["t_stat", "sharpe_se", "sharpe_t", "bonferroni_threshold", "days_for_t", "net_daily_return",
           "break_even_cost", "cumulative_return", "expected_max_sharpe", "probabilistic_sharpe", "deflated_sharpe",
           "min_backtest_years", "hit_rate", "sign_portfolio_sharpe", "cohen_kappa", "f1", "psi", "EULER_GAMMA",
           "HLZ_HURDLE_T", "PERIODS_PER_YEAR", "Params", "Figure", "FIGURES", "LLT_PERIODS", "LLT_REPORTED_COSTS", "LLT_REPORTED_NET_SHARPE",
           "PeriodStat", "Study", "study", "REMEDIES", "REMEDY_SOURCES", "MC_TOLERANCE_SE", "Moments", "moments",
           "mixture_sharpe", "effective_skill", "LookaheadRun", "simulate_lookahead", "Stage", "STAGES",
           "StageVerdict", "StackPricing", "verdict", "price_stack", "BCS_FIBRE_RTT_S", "BCS_MICROWAVE_RTT_S",
           "confusion_matrix", "class_scores", "ClassScores", "reliability", "Reliability", "brier", "psi_counts",
           "psi_scores", "psi_band", "PSI_BANDS", "PSI_BANDS_NOTE", "ExtractionParams", "ExtractionRun", "SetScores",
           "CLASS_TITLES", "load_headlines", "run_extraction", "audit_json", "export_audit", "GOVERNANCE", "Duty"]
