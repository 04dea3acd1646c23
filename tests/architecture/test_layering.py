"""The import graph between packages has no cycles, and layers point the right way.

Nodes are packages: ``harness.<sub>`` for each subpackage (a top-level module of ``harness`` is
its own node), ``scaffolds``, ``strategy_tests`` and ``galapagos`` (the public Python API, the
top layer: nothing imports it).  Edges are imports anywhere in a module
(function-level ones too: a lazy import is still a dependency), except under
``if TYPE_CHECKING:``.

The offline model is a test double shipped with the product: production code may start it
(``harness.llm.offline``'s surface) but never reaches its internals (responders, markers,
fault injection), and scaffolds do not know it exists.

Blocks: the reusable ones (``harness.components``) build on ``core`` alone; a method's own
blocks and code live in its scaffold folder, which reaches containers only through the sandbox's
session seam; only the CLI imports a scaffold by name (everything else finds blocks through the
registry), and ``core`` imports none.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOP = ("galapagos", "harness", "scaffolds", "strategy_tests")


def _node(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] not in TOP:
        return None
    if parts[0] != "harness":
        return parts[0]
    return ".".join(parts[:2]) if len(parts) > 1 else "harness"


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base if is_package else base[:-1]
                base = base[: len(base) - (node.level - 1)]
                name = ".".join([*base, node.module] if node.module else base)
            else:
                name = node.module or ""
            found.add(name)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def package_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for top in TOP:
        for path in (ROOT / top).rglob("*.py"):
            module = _module_name(path)
            src = _node(module)
            if src is None:
                continue
            tree = ast.parse(path.read_text(), str(path))
            for name in _imports(tree, module, path.name == "__init__.py"):
                dst = _node(name)
                if dst is not None and dst != src:
                    graph[src].add(dst)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strong(w)
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

    for v in sorted(set(graph) | {w for ws in graph.values() for w in ws}):
        if v not in index:
            strong(v)
    return out


def test_packages_import_each_other_without_cycles() -> None:
    assert _cycles(package_graph()) == []


def test_core_depends_on_no_other_package() -> None:
    assert package_graph().get("harness.core", set()) == set()


def test_the_public_api_is_the_top_layer() -> None:
    graph = package_graph()
    assert "harness.runs" in graph["galapagos"]  # the graph sees it
    assert [src for src, deps in graph.items() if "galapagos" in deps] == []


def test_scaffolds_do_not_reach_into_private_modules() -> None:
    offenders = []
    for path in (ROOT / "scaffolds").rglob("*.py"):
        module = _module_name(path)
        tree = ast.parse(path.read_text(), str(path))
        for name in _imports(tree, module, path.name == "__init__.py"):
            if name.startswith("harness") and any(p.startswith("_") for p in name.split(".")):
                offenders.append(f"{module} imports {name}")
    assert offenders == []


def test_reusable_blocks_build_on_core_alone() -> None:
    assert package_graph()["harness.components"] <= {"harness.core", "harness.diffs"}


def test_only_the_cli_imports_a_scaffold() -> None:
    """The rest of ``harness`` finds blocks through the registry (``importlib``)."""
    graph = package_graph()
    importers = {src for src, dsts in graph.items() if "scaffolds" in dsts}
    assert importers <= {"harness.cli"}


#: What of the sandbox a scaffold may use: the session seam (long-lived servers such as EvoX
#: strategies, served by the run's Runtime), its limits record and its usage meter.
SANDBOX_SEAM = {
    "harness.sandbox",
    "harness.sandbox.sessions",
    "harness.sandbox.protocol",
    "harness.sandbox.usage",
}


def test_scaffolds_reach_the_sandbox_only_through_its_session_seam() -> None:
    offenders = []
    for path in (ROOT / "scaffolds").rglob("*.py"):
        module = _module_name(path)
        tree = ast.parse(path.read_text(), str(path))
        for name in _imports(tree, module, path.name == "__init__.py"):
            if name.startswith("harness.sandbox") and name not in SANDBOX_SEAM:
                offenders.append(f"{module} imports {name}")
            if name.split(".")[0] in ("docker", "requests"):
                offenders.append(f"{module} imports {name}")
    assert offenders == []


OFFLINE = "harness.llm.offline"


def _production_modules() -> list[tuple[str, set[str]]]:
    """(module, what it imports) for every module of the product, the offline model excluded."""
    found = []
    for top in TOP:
        for path in (ROOT / top).rglob("*.py"):
            module = _module_name(path)
            if module == OFFLINE or module.startswith(OFFLINE + "."):
                continue
            tree = ast.parse(path.read_text(), str(path))
            found.append((module, _imports(tree, module, path.name == "__init__.py")))
    return found


def offline_model_leaks(modules: list[tuple[str, set[str]]]) -> list[str]:
    """Imports of the offline model's internals, and any import of it outside ``harness``."""
    leaks = []
    for module, names in modules:
        for name in sorted(names):
            inside = name == OFFLINE or name.startswith(OFFLINE + ".")
            if inside and (name != OFFLINE or not module.startswith("harness.")):
                leaks.append(f"{module} imports {name}")
    return leaks


def test_production_code_never_reaches_into_the_offline_model() -> None:
    assert offline_model_leaks(_production_modules()) == []


def test_the_offline_model_check_can_fail() -> None:
    modules = [
        ("scaffolds.adaevolve.paradigms", {"harness.llm.offline.paradigm_responder"}),
        ("scaffolds.evox", {"harness.llm.offline"}),
        ("harness.llm.client", {"harness.llm.offline"}),
        ("scaffolds.evox.meta", {"harness.llm.offline.strategy_faults"}),
    ]
    assert offline_model_leaks(modules) == [
        "scaffolds.adaevolve.paradigms imports harness.llm.offline.paradigm_responder",
        "scaffolds.evox imports harness.llm.offline",
        "scaffolds.evox.meta imports harness.llm.offline.strategy_faults",
    ]


def module_cycles(package: str) -> list[list[str]]:
    """Cycles between the modules of one package (function-level imports included)."""
    folder = ROOT.joinpath(*package.split("."))
    graph: dict[str, set[str]] = defaultdict(set)
    for path in folder.glob("*.py"):
        module = _module_name(path)
        tree = ast.parse(path.read_text(), str(path))
        for name in _imports(tree, module, path.name == "__init__.py"):
            if name.startswith(package + ".") and name != module:
                graph[module].add(name)
    return _cycles(graph)


def test_the_offline_models_modules_import_each_other_without_cycles() -> None:
    """Its composition root (``server``, with ``default_responders``) sits on top; the
    responders build on ``responders`` and never import back (no cycle kept apart by a local
    import)."""
    assert module_cycles(OFFLINE) == []


def test_the_detector_finds_a_cycle() -> None:
    """The cycle check itself can fail (a test that cannot fail proves nothing)."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
