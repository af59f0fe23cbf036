"""The panels hand their engines the AppContext's one device, never a choice of their own.

The engine calls are replaced by spies that record the device and stop the job, so the test needs no
torch and no GPU; each panel is driven with ``cpu`` and with ``cuda`` and must pass each one through.
"""
from __future__ import annotations

import pytest

import panels.compute as compute_panel
import panels.trading as trading_panel
from panels.compute import ComputePanel
from panels.trading import TradingPanel


class Recorded(RuntimeError):
    """Stops the job once the spy has seen its arguments."""


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_trading_extraction_runs_on_the_app_device(make_panel, ctx, monkeypatch, device):
    seen = []

    def spy(params, progress=None, cancelled=None, device="unset"):
        seen.append(device)
        raise Recorded("spy")

    monkeypatch.setattr(trading_panel, "run_extraction", spy)
    ctx.device = device
    p = make_panel(TradingPanel)
    p._start_extraction()
    p.settle(10_000)
    assert seen == [device]


@pytest.mark.parametrize("device, measured", [("cpu", ("cpu",)), ("cuda", ("cpu", "cuda"))])
def test_compute_measurement_runs_on_the_app_device(make_panel, ctx, monkeypatch, device, measured):
    seen = []

    def spy(devices, **_kwargs):
        seen.append(devices)
        raise Recorded("spy")

    monkeypatch.setattr(compute_panel, "measure_machine", spy)
    ctx.device = device
    p = make_panel(ComputePanel)
    p._start_measure()
    p.settle(10_000)
    assert seen == [measured]
