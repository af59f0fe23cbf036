"""Every topic package exports its panel's ``Params`` from ``__init__``, and importing the packages stays
light (no torch): the panels and scripts write ``from engines.<topic> import Params``."""
from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOPICS = sorted(p.parent.name for p in (ROOT / "engines").glob("*/params.py") if p.parent.name != "core")


def test_the_topic_packages_are_found():
    assert {"compute", "k8s", "law", "memory", "overview", "pipeline", "qeval", "quant", "scale", "selfhost",
            "serving", "trading"} <= set(TOPICS)


@pytest.mark.parametrize("topic", TOPICS)
def test_package_exports_its_params(topic):
    package = importlib.import_module(f"engines.{topic}")
    assert package.Params is importlib.import_module(f"engines.{topic}.params").Params
    assert "Params" in getattr(package, "__all__", ["Params"])


def test_importing_every_topic_package_does_not_import_torch():
    code = ("import sys;" + "".join(f"import engines.{t};" for t in TOPICS)
            + "print('TORCH' if 'torch' in sys.modules else 'NO_TORCH')")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "NO_TORCH" in out.stdout
