"""The compute panel's knobs as one frozen value. Defaults of the user's assumptions (prices, PUE,
lives, grid intensity) are read from ``assets/compute/assumptions.json``, where each one is dated and cited."""
from __future__ import annotations

from dataclasses import dataclass

from engines.compute.data import assumption
from engines.compute.scaling import FITS
from engines.core.params import ParamsBase, param

FIT_LABELS = {k: v.label for k, v in FITS.items()}
GEMM_SIZES = (256, 512, 1024, 2048)


def _tip(key: str) -> str:
    return f"Default: {assumption(key).citation}"


@dataclass(frozen=True)
class Params(ParamsBase):
    """D1 scaling and demand, D2 the machine and its cost, D3 power."""

    # D1: scaling laws and the scenario's run
    fit: str = param("besiroglu", label="Chinchilla fit", choices=tuple(FITS),
                     tip="Printed constants (Hoffmann 2022), the same unrounded, or the Besiroglu 2024 refit")
    tokens_b: float = param(15_000.0, 1.0, 1_000_000.0, label="Training tokens", unit="B tok", step=100, decimals=0,
                            tip="Tokens the scenario's model trains on (Llama 3: about 15T)")
    mfu_pct: int = param(round(assumption("mfu").value * 100), 5, 80, label="MFU", unit="%", tip=_tip("mfu"))
    # D1: training against inference
    serve_req_per_s: float = param(1000.0, 0.0, 1_000_000.0, label="Requests served", unit="req/s", step=100,
                                   decimals=0, tip="Steady traffic on the trained model: your assumption")
    tokens_per_request: int = param(640, 1, 1_000_000, label="Tokens per request", unit="tok", step=16,
                                    tip="Prompt + output (the serving panel's defaults: 512 + 128)")
    # D3: power
    pue: float = param(assumption("pue").value, 1.0, 3.0, label="PUE", step=0.01, decimals=2, tip=_tip("pue"))
    load_pct: int = param(round(assumption("load_factor").value * 100), 10, 100, label="Average draw",
                          unit="% of nameplate", tip=_tip("load_factor"))
    price_c_per_kwh: float = param(round(assumption("price_per_kwh").value * 100, 2), 0.0, 100.0,
                                   label="Electricity price", unit="¢/kWh", step=0.1, decimals=2,
                                   tip=_tip("price_per_kwh"))
    grid_kg_per_mwh: int = param(round(assumption("grid_t_per_mwh").value * 1000), 0, 1500, label="Grid intensity",
                                 unit="kg CO2/MWh", step=10, tip=_tip("grid_t_per_mwh"))
    waiting_pct: int = param(30, 0, 100, label="Waiting GPU draw", unit="% of TDP",
                             tip="Board power while a GPU waits on a collective or a checkpoint: your assumption "
                                 "(no published figure ships with the app)")
    checkpoint_every: int = param(10, 1, 100, label="Checkpoint every", unit="steps",
                                  tip="The trace shows two checkpoint intervals")
    checkpoint_s: float = param(10.0, 0.0, 600.0, label="Checkpoint write", unit="s", step=1, decimals=0,
                                tip="Time the GPUs wait while a checkpoint is written: your assumption")
    # D2: the machine
    gemm_n: int = param(1024, label="GEMM size n", choices=GEMM_SIZES,
                        tip="n×n matrix multiply on the CPU (4n on CUDA): 2n³ FLOP")
    efficiency_pct: int = param(50, 5, 100, label="Kernel efficiency", unit="% of peak",
                                tip="Share of the dense peak the step's matrix multiplies reach (step-time engine)")
    # D2: the cost of a GPU-hour
    server_capex_k: float = param(assumption("server_capex_per_gpu").value / 1000, 1.0, 200.0,
                                  label="Server capex per GPU", unit="k$", step=1, decimals=0,
                                  tip=_tip("server_capex_per_gpu"))
    server_life_years: float = param(assumption("server_life_years").value, 1.0, 10.0, label="Server life",
                                     unit="years", step=0.5, decimals=1, tip=_tip("server_life_years"))
    facility_m_per_mw: float = param(assumption("facility_capex_per_mw").value / 1e6, 1.0, 50.0,
                                     label="Building capex", unit="M$/MW IT", step=0.1, decimals=1,
                                     tip=_tip("facility_capex_per_mw"))
    facility_life_years: float = param(assumption("facility_life_years").value, 1.0, 40.0, label="Building life",
                                       unit="years", step=1, decimals=0, tip=_tip("facility_life_years"))
    utilisation_pct: int = param(round(assumption("utilisation").value * 100), 5, 100, label="Utilisation",
                                 unit="%", tip=_tip("utilisation"))
    opex_per_gpu_hour: float = param(assumption("opex_per_gpu_hour").value, 0.0, 10.0, label="Operations",
                                     unit="$/GPU-h", step=0.05, decimals=2, tip=_tip("opex_per_gpu_hour"))
    rate_pct: float = param(assumption("rate").value * 100, 0.0, 30.0, label="Cost of capital", unit="%/yr",
                            step=0.5, decimals=1, tip=_tip("rate"))

    @property
    def mfu(self) -> float:
        return self.mfu_pct / 100.0

    @property
    def tokens(self) -> float:
        return self.tokens_b * 1e9
