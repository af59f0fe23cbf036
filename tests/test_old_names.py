"""The alias table (``engines.OLD_NAMES``, ``explorer.OLD_NAMES``): every old module name imports as the
very module at its package path, which keeps its own ``__name__`` and ``__spec__``; importing the
packages imports no target; and nothing in the project itself still uses an old name."""
from __future__ import annotations

import ast
import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import engines
import explorer

ROOT = Path(__file__).resolve().parents[1]
TABLE = {**engines.OLD_NAMES, **explorer.OLD_NAMES}
THIS = Path(__file__).resolve()
ALIAS_HOMES = {ROOT / "engines" / "__init__.py", ROOT / "explorer" / "__init__.py", THIS}


def test_the_table_names_every_moved_module_once_and_no_file_shadows_it():
    assert {"engines.mfu", "engines.reliability", "engines.scenario", "engines.fsdp_probe",
            "explorer.widgets"} <= set(TABLE)
    for old, new in TABLE.items():
        assert old != new and new not in TABLE, (old, new)
        parts = old.split(".")
        assert not (ROOT.joinpath(*parts[:-1]) / f"{parts[-1]}.py").exists(), f"{old}: a file shadows the alias"


def test_every_old_name_is_the_same_module_as_its_target_in_a_fresh_interpreter():
    # each old name imported first, before its target: the finder's own import path
    code = f"""
import importlib, json, sys
import engines, explorer
before = sorted(n for n in {sorted(set(TABLE.values()))!r} if n in sys.modules)
torch = 'torch' in sys.modules
out = {{}}
for old, new in {TABLE!r}.items():
    mod = importlib.import_module(old)
    real = importlib.import_module(new)
    out[old] = [mod is real, sys.modules[old] is real, real.__name__, real.__spec__.name,
                getattr(real.__spec__, 'origin', None) == getattr(real, '__file__', None)]
print(json.dumps({{'before': before, 'torch': torch, 'out': out}}))
"""
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=180,
                         env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got["before"] == [] and not got["torch"], "importing engines/explorer must not import the targets"
    for old, new in TABLE.items():
        assert got["out"][old] == [True, True, new, new, True], old


def test_old_names_work_in_every_import_form():
    import engines.mfu
    import engines.scale.mfu
    from engines.mfu import mfu
    from engines.reliability import young_interval
    from engines import memory_measure

    assert engines.mfu is engines.scale.mfu and mfu is engines.scale.mfu.mfu
    assert young_interval is importlib.import_module("engines.scale.reliability").young_interval
    assert memory_measure is importlib.import_module("engines.memory.measure")
    assert engines.scale.mfu.__spec__.name == "engines.scale.mfu"
    assert importlib.util.find_spec("engines.reliability").name == "engines.scale.reliability"


def test_an_unknown_name_still_fails():
    try:
        importlib.import_module("engines.no_such_module")
    except ModuleNotFoundError:
        return
    raise AssertionError("the finder must answer only for names in its table")


# --- nobody in the project uses an old name ---------------------------------------------------------

OLD = sorted(TABLE, key=len, reverse=True)
PATTERN = re.compile(r"(?<![\w.])(" + "|".join(re.escape(o) for o in OLD) + r")\b")
SHORT = {pkg: {o.split(".", 1)[1] for o in TABLE if o.startswith(pkg + ".")} for pkg in ("engines", "explorer")}


def _project_files() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "build.spec"]
    for folder in ("engines", "explorer", "panels", "tests", "benchmarks", "scripts"):
        files += sorted((ROOT / folder).rglob("*.py"))
    files += sorted((ROOT / "docs").rglob("*.md"))
    return [f for f in files if f.exists() and f.resolve() not in ALIAS_HOMES]


def _uses(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    found = [f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(1)}"
             for m in PATTERN.finditer(text)]
    if path.suffix == ".py":          # from engines import mfu / from explorer import widgets
        for node in ast.walk(ast.parse(text, filename=str(path))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in SHORT:
                found += [f"{path.relative_to(ROOT)}:{node.lineno}: from {node.module} import {a.name}"
                          for a in node.names if a.name in SHORT[node.module]]
    return found


def test_the_scan_finds_an_old_name():
    assert PATTERN.search("import engines.mfu") and not PATTERN.search("import engines.scale.mfu")
    assert not PATTERN.search("explorer.ui.widgets") and PATTERN.search("`explorer.widgets`")
    assert not PATTERN.search("engines.core.models") and PATTERN.search("(engines.models)")


def test_no_file_in_the_project_uses_an_old_name():
    found = [hit for f in _project_files() for hit in _uses(f)]
    assert not found, "use the package paths (engines.OLD_NAMES is for outside scripts):\n" + "\n".join(found)
