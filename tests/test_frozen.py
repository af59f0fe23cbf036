"""The packaged app: build it from build.spec, then run it offscreen and under a real X server."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DIST = ROOT / "dist" / "explorer" / "explorer"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400)]   # the first test also builds the bundle


@pytest.fixture(scope="module")
def frozen_app() -> Path:
    pyinstaller = Path(sys.executable).with_name("pyinstaller")
    if not pyinstaller.exists():
        pytest.skip("PyInstaller is not installed (pip install '.[test]')")
    r = subprocess.run([str(pyinstaller), "--noconfirm", "--log-level", "ERROR", "build.spec"], cwd=ROOT,
                       capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stderr[-4000:]
    assert DIST.exists()
    return DIST


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(extra)
    return env


def test_frozen_selftest_offscreen(frozen_app, tmp_path):
    r = subprocess.run([str(frozen_app), "--selftest"], capture_output=True, text=True, timeout=900,
                       env=_env(QT_QPA_PLATFORM="offscreen", EXPLORER_CONFIG_DIR=str(tmp_path)))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]

    # every panel in the source tree made it into the bundle
    panels = [p.stem for p in (ROOT / "panels").glob("*.py") if not p.stem.startswith("_")]
    assert f"SELFTEST OK: {len(panels)} panels" in r.stdout, r.stdout


def test_frozen_screenshot(frozen_app, tmp_path):
    out = tmp_path / "shot.png"
    r = subprocess.run([str(frozen_app), "--screenshot", str(out), "--panel", "overview", "--preset", "llama3-70b"],
                       capture_output=True, text=True, timeout=300,
                       env=_env(QT_QPA_PLATFORM="offscreen", EXPLORER_CONFIG_DIR=str(tmp_path)))
    assert r.returncode == 0, r.stderr[-3000:]
    assert out.stat().st_size > 10_000


@pytest.mark.skipif(shutil.which("xvfb-run") is None, reason="xvfb-run not installed (scripts/setup.sh --test)")
def test_frozen_selftest_under_xvfb(frozen_app, tmp_path):
    """A real X server and the xcb platform plugin, as on a user's desktop."""
    r = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24", str(frozen_app), "--selftest"],
                       capture_output=True, text=True, timeout=900,
                       env=_env(QT_QPA_PLATFORM="xcb", EXPLORER_CONFIG_DIR=str(tmp_path)))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "SELFTEST OK" in r.stdout
