"""Locate shipped data files, frozen (PyInstaller) or not, and read JSON safely."""
from __future__ import annotations

import json
from importlib import resources
from pathlib import Path


def asset_path(*parts: str) -> Path:
    """Path of a file under ``assets/``; works from a checkout, an install and the frozen bundle."""
    return Path(str(resources.files("assets").joinpath(*parts)))


def load_json_asset(*parts: str):
    with open(asset_path(*parts), encoding="utf-8") as fh:
        return json.load(fh)
