"""The architecture's two hard rules: engines never import Qt, and start-up never imports torch."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QT_MODULES = ("PySide6", "PyQt5", "PyQt6", "PySide2", "pyqtgraph", "shiboken6", "qtpy")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_engines_never_import_qt():
    offenders = {str(p.relative_to(ROOT)): sorted(_imports(p) & set(QT_MODULES))
                 for p in (ROOT / "engines").rglob("*.py")}
    offenders = {k: v for k, v in offenders.items() if v}
    assert not offenders, f"engines/ must stay Qt-free: {offenders}"


def test_engines_never_import_panels_or_shell():
    bad = {str(p.relative_to(ROOT)) for p in (ROOT / "engines").rglob("*.py")
           if _imports(p) & {"explorer", "panels"}}
    assert not bad, f"engines/ must not depend on the UI layers: {sorted(bad)}"


def test_startup_path_does_not_import_torch():
    code = ("import os, sys; os.environ['QT_QPA_PLATFORM']='offscreen';"
            "from explorer.app import make_app; app = make_app();"
            "from explorer.context import AppContext; from explorer.main_window import MainWindow;"
            "w = MainWindow(AppContext(), remember_layout=False); w.show(); app.processEvents();"
            "print('TORCH' if 'torch' in sys.modules else 'NO_TORCH')")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "NO_TORCH" in out.stdout, "something on the start-up path imports torch; import it lazily"


def _full_imports(path: Path) -> set[str]:
    """Dotted module names a file imports (absolute imports only)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_panels_never_import_each_other():
    """A topic view may use its own private sub-views (panels/_<key>_*.py), never another topic's."""
    bad = {}
    for p in (ROOT / "panels").glob("*.py"):
        if p.name == "__init__.py":
            continue
        own = p.stem.lstrip("_").split("_")[0]          # panel keys have no underscore: memory, k8s …
        others = {m for m in _full_imports(p) if m.startswith("panels.")
                  and m.split(".")[1].lstrip("_").split("_")[0] != own}
        if others:
            bad[p.name] = sorted(others)
    assert not bad, f"panels must not import each other: {bad}"



def test_the_toolkit_imports_neither_engines_nor_panels():
    bad = {str(p.relative_to(ROOT)): sorted(_imports(p) & {"engines", "panels"})
           for p in (ROOT / "explorer" / "ui").rglob("*.py")}
    bad = {k: v for k, v in bad.items() if v}
    assert not bad, f"explorer/ui is the chart toolkit: it must not depend on topics: {bad}"
    within = {str(p.relative_to(ROOT)): sorted(m for m in _full_imports(p) if m.startswith("explorer.")
                                               and not m.startswith(("explorer.ui", "explorer.theme", "explorer.fonts")))
              for p in (ROOT / "explorer" / "ui").rglob("*.py")}
    within = {k: v for k, v in within.items() if v}
    assert not within, f"the toolkit uses only itself, the theme and the fonts: {within}"


def test_every_panel_declares_its_params_in_its_topic_package():
    """Each panel key has a Qt-free topic package under engines/ whose Params the panel uses."""
    from explorer.panel import registered_panels

    missing = []
    for info in registered_panels():
        cls = info.load()
        pkg = ROOT / "engines" / info.key
        if not (pkg / "__init__.py").exists() or cls.Params is None or \
                not cls.Params.__module__.startswith(f"engines.{info.key}"):
            missing.append(info.key)
    assert not missing, f"panels without a topic package and Params: {missing}"
