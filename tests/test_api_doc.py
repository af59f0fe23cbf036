"""docs/API.md lists the engines' public API as the code has it (regenerate: python scripts/api_doc.py)."""
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_api_doc_is_current():
    spec = importlib.util.spec_from_file_location("api_doc", ROOT / "scripts" / "api_doc.py")
    api_doc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(api_doc)
    assert (ROOT / "docs" / "API.md").read_text(encoding="utf-8") == api_doc.render(), \
        "docs/API.md is stale: run python scripts/api_doc.py"


def test_the_package_paths_import_their_names():
    # the old module names (the alias table in engines/__init__.py) are tested in tests/test_old_names.py
    from engines.law.cra import assess  # noqa: F401
    from engines.k8s import Cluster  # noqa: F401
    from engines.memory import model_state_bytes  # noqa: F401
    from engines.pipeline import schedule  # noqa: F401
    from engines.quant import gptq  # noqa: F401
    from engines.scale.reliability import young_interval  # noqa: F401
    from engines.core.scenario import Scenario  # noqa: F401
    from engines.serving import kv_cache_bytes  # noqa: F401
