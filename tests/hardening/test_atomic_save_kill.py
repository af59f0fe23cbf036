"""Scenario saves are atomic: SIGKILL a process while it saves over and over; the file on disk is
always a complete scenario (old or new), never a torn one, and no temp file is mistaken for it."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engines.core.scenario import Scenario

ROOT = Path(__file__).resolve().parents[2]

SAVER = r"""
import sys
from engines.core.models import PRESETS
from engines.core.scenario import Scenario
from explorer.files import atomic_write_text
target = sys.argv[1]
# a big scenario: the custom arch label padded so each write takes a while (≈ 900 KB)
arch = PRESETS["llama3-70b"]
i = 0
print("ready", flush=True)
while True:
    i += 1
    s = Scenario(model="custom", arch=arch.__class__(**{**arch.to_dict(), "label": f"save {i} " + "x" * 900_000}),
                 n_gpus=8 * (1 + i % 8))
    atomic_write_text(target, s.to_json() + "\n")
    print(f"saved {i}", flush=True)
"""


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals")
@pytest.mark.parametrize("delay", [0.0, 0.01, 0.03, 0.07])
def test_sigkill_mid_save_keeps_a_complete_file(tmp_path, delay):
    target = tmp_path / "scenario.json"
    old = Scenario(n_gpus=128).to_json() + "\n"
    target.write_text(old, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    # stderr goes to a file: a saver that fails prints a traceback holding its 900 KB label, which
    # fills a pipe nobody reads and blocks it, and the test then hung on stdout instead of failing
    err = tmp_path / "saver.err"
    with err.open("w") as err_file:
        proc = subprocess.Popen([sys.executable, "-c", SAVER, str(target)], cwd=ROOT, env=env,
                                stdout=subprocess.PIPE, stderr=err_file, text=True)
    why = lambda: err.read_text()[-2000:]  # noqa: E731  the traceback's end, not the label
    try:
        assert proc.stdout.readline().strip() == "ready", why()
        assert proc.stdout.readline().startswith("saved"), why()  # one new file is in place
        time.sleep(delay)  # now kill somewhere inside a later save
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    text = target.read_text(encoding="utf-8")
    s = Scenario.from_json(text)  # parses: complete old or complete new
    assert text != old and s.model == "custom" and s.arch.label.startswith("save ")
    # leftovers are hidden temp files next to it, never the target name
    leftovers = [p.name for p in tmp_path.iterdir() if p.name not in ("scenario.json", "saver.err")]
    assert all(n.startswith(".scenario.json.") and n.endswith(".tmp") for n in leftovers), leftovers
