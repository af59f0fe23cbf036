"""What stays private: three question trees (what leaves the premises per set-up, whether a rule
demands locality, and the reasons that hold up better than privacy) in the law panel's tree format,
loaded, validated and walked with :mod:`engines.law.trees`. Educational, not legal advice."""
from __future__ import annotations

from functools import lru_cache

import yaml

from engines.core.assets import asset_path
from engines.law.trees import Tree, parse_trees, validate_all

TREE_FILE = "privacy.yaml"
FIRST_TREE = "selfhost-flow"


@lru_cache(maxsize=1)
def load_privacy_trees() -> dict[str, Tree]:
    """The shipped trees, in file order (a broken file raises a ValidationError naming ``trees``)."""
    with open(asset_path("selfhost", TREE_FILE), encoding="utf-8") as fh:
        return parse_trees(yaml.safe_load(fh))


def privacy_problems() -> list[str]:
    """Every structural problem of the shipped trees (empty when valid)."""
    return validate_all(load_privacy_trees())


__all__ = ["TREE_FILE", "FIRST_TREE", "load_privacy_trees", "privacy_problems"]
