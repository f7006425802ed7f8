"""No import cycles inside the dlfuzz package.

A cycle between two modules means neither can be read, tested or moved without the other;
it also makes import order matter (a half-initialized module seen through the cycle).
The package is laid out a file per responsibility, and responsibilities form a layered
graph, so any cycle is a layout mistake. This test reads the sources with `ast` (nothing
is imported, so no DL library is needed) and counts every import: at module level, inside
functions and under `if TYPE_CHECKING:` alike, because hiding an import in a function
dodges the interpreter but not the dependency.

An edge goes from a module to the module it names: `from a.b import c` points at `a.b.c`
when that is a module of the package and at `a.b` (its `__init__`) otherwise. A package's
`__init__` that re-exports its submodules is not by itself a cycle with them; it becomes
one only when a submodule imports the package back.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = "dlfuzz"


def _module_names(src: Path, package: str) -> dict[str, Path]:
    """Every module of the package by dotted name (packages by their own name)."""
    modules: dict[str, Path] = {}
    for path in sorted((src / package).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _resolve_relative(module: str, is_package: bool, level: int, name: str | None) -> str:
    """The absolute dotted name that `from <level dots><name> import ...` refers to."""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def _imports_of(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package modules that `module` imports anywhere in its body."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    targets: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                targets.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _resolve_relative(module, is_package, node.level, node.module)
            else:
                base = node.module or ""
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                targets.add(sub if sub in modules else base)
    # `import a.b.c` names the deepest module that exists.
    found: set[str] = set()
    for target in targets:
        while target and target not in modules:
            target = target.rpartition(".")[0]
        if target and target != module:
            found.add(target)
    return found


def import_graph(src: Path = SRC, package: str = PACKAGE) -> dict[str, set[str]]:
    """Module -> the package modules it imports."""
    modules = _module_names(src, package)
    return {name: _imports_of(name, path, modules) for name, path in modules.items()}


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components with more than one module: each one holds at least one cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0

    def visit(start: str) -> None:
        # Iterative, so a deep graph cannot hit the recursion limit.
        nonlocal counter
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return sorted(components)


def shortest_cycle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """One shortest cycle through the first module of a component, for the message."""
    members = set(component)
    start = component[0]
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        next_frontier = []
        for node in frontier:
            for child in sorted(graph[node] & members):
                if child == start:
                    return paths[node] + [start]
                if child not in paths:
                    paths[child] = paths[node] + [child]
                    next_frontier.append(child)
        frontier = next_frontier
    return component


def describe(graph: dict[str, set[str]], components: list[list[str]]) -> str:
    """Each tangle: its modules, one cycle through it, and every edge inside it."""
    lines = [f"{len(components)} import cycle(s) in {PACKAGE}:"]
    for component in components:
        members = set(component)
        lines.append(f"- {len(component)} modules: " + ", ".join(component))
        lines.append("    cycle: " + " -> ".join(shortest_cycle(graph, component)))
        for node in component:
            inside = sorted(graph[node] & members)
            if inside:
                lines.append(f"    {node} imports {', '.join(inside)}")
    return "\n".join(lines)


def test_checker_sees_relative_and_function_level_imports(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..a import x\n")
    (pkg / "c.py").write_text("from pkg import a\n")
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg.a"] == {"pkg.sub.b"}
    assert graph["pkg.sub.b"] == {"pkg.a"}
    assert graph["pkg.c"] == {"pkg.a"}
    assert strongly_connected(graph) == [["pkg.a", "pkg.sub.b"]]


def test_no_import_cycles() -> None:
    graph = import_graph()
    assert len(graph) > 50, "the checker found too few modules; is SRC right?"
    components = strongly_connected(graph)
    if components:
        pytest.fail(describe(graph, components), pytrace=False)


def folder_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The import graph one level up: ``dlfuzz.<folder or top module>`` -> those it uses.

    The folders are the floors of the flow (engines, executor, oracles, triage, store,
    report ...); a cycle between two folders means neither floor stands on its own even
    when no two modules import each other.
    """
    def floor(module: str) -> str:
        return ".".join(module.split(".")[:2])

    out: dict[str, set[str]] = {}
    for module, targets in graph.items():
        here = floor(module)
        out.setdefault(here, set()).update(floor(t) for t in targets if floor(t) != here)
    return out


def test_folders_depend_one_way() -> None:
    floors = folder_graph(import_graph())
    assert {"dlfuzz.engines", "dlfuzz.oracles", "dlfuzz.triage"} <= set(floors)
    components = strongly_connected(floors)
    if components:
        pytest.fail(describe(floors, components), pytrace=False)
