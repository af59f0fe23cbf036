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


def test_every_old_engine_path_still_imports_its_names():
    from engines.law.cra import assess  # noqa: F401
    from engines.k8s import Cluster  # noqa: F401
    from engines.memory import model_state_bytes  # noqa: F401
    from engines.pipeline import schedule  # noqa: F401
    from engines.quant import gptq  # noqa: F401
    from engines.reliability import young_interval  # noqa: F401
    from engines.scenario import Scenario  # noqa: F401
    from engines.serving import kv_cache_bytes  # noqa: F401
    import engines.core.scenario
    import engines.scenario

    assert engines.scenario is engines.core.scenario
