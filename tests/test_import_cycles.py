"""No import cycles among the project's modules (engines/, explorer/, panels/), read from the source
(ast, nothing imported, no Qt). Every import counts, including those inside functions: a function-level
import only hides a cycle until the function runs."""
from __future__ import annotations

import ast
import functools
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("engines", "explorer", "panels")

def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


def _imported(path: Path, name: str, known: set[str]) -> set[str]:
    """The project modules ``name`` imports anywhere in its file: ``from pkg import submodule`` counts
    as the submodule, relative imports are resolved, string imports (``__import__``,
    ``importlib.import_module``) with a literal name count too."""
    is_pkg = path.name == "__init__.py"
    package = name if is_pkg else name.rpartition(".")[0]
    found: set[str] = set()

    def add(dotted: str) -> None:
        while dotted and dotted not in known:       # `import a.b.c` of a name in a.b: the nearest module
            dotted = dotted.rpartition(".")[0]
        if dotted:
            found.add(dotted)

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                add(sub if sub in known else module)
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)
              and ((isinstance(node.func, ast.Name) and node.func.id == "__import__")
                   or (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module"))):
            add(node.args[0].value)
    found.discard(name)
    return found


@functools.lru_cache(maxsize=1)
def _graph() -> dict[str, frozenset[str]]:
    mods = _modules()
    known = set(mods)
    return {name: frozenset(_imported(path, name, known)) for name, path in mods.items()}


def import_graph() -> dict[str, set[str]]:
    return {k: set(v) for k, v in _graph().items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each as a sorted list."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for v in sorted(graph):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return out


def _describe(comp: list[str], graph: dict[str, set[str]]) -> str:
    inside = set(comp)
    edges = [f"    {a} -> {b}" for a in comp for b in sorted(graph[a] & inside)]
    return "cycle among " + ", ".join(comp) + ":\n" + "\n".join(edges)


def test_the_graph_sees_function_level_relative_submodule_and_string_imports(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    src = pkg / "a.py"
    src.write_text("from . import b\nfrom .c import thing\n"
                   "def later():\n    from pkg.d import x\n    import pkg.e.deep\n"
                   "    return __import__('pkg.f'), importlib.import_module('pkg.g')\n"
                   "if TYPE_CHECKING:\n    from pkg import h\n", encoding="utf-8")
    known = {"pkg", "pkg.a", "pkg.b", "pkg.c", "pkg.d", "pkg.e", "pkg.f", "pkg.g", "pkg.h"}
    assert _imported(src, "pkg.a", known) == known - {"pkg", "pkg.a"}
    init = pkg / "__init__.py"
    init.write_text("from .a import later\nfrom pkg import name_not_a_module\n", encoding="utf-8")
    assert _imported(init, "pkg", known) == {"pkg.a"}


def test_the_real_graph_has_the_lazy_edges():
    graph = import_graph()
    assert "explorer.lessons.shell" in graph["explorer.main_window"]     # imported inside a method
    assert "engines.core.scenario" in graph["engines.k8s.scenarios"]     # likewise


def test_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    graph = import_graph()
    found = cycles(graph)
    assert not found, "import cycles (move the shared piece to the module that owns it):\n" + "\n".join(
        _describe(c, graph) for c in found)

