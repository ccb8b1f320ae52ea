"""Fail when the modules of a plait package import each other in a cycle (issue 27).

Run from the repository root: ``python tools/check_import_cycles.py``. It prints every
cycle found (a strongly connected component of two or more modules) and exits 1 when
one is not in ``ALLOWED`` below, 0 otherwise.

What counts as an import. Only the imports that run when a module is imported: the
statements at module level, including those inside module-level ``if``/``try``/``with``
blocks and class bodies. Not counted:

* imports inside a function or method: they run later, when the function is called,
  so they cannot make an import-time cycle (they are the way around one, and the
  project's rule is that each such import carries a comment saying why it is lazy);
* imports under ``if TYPE_CHECKING:``: they never run; a cycle made only of annotations
  is harmless and is the usual way to name a type defined above the importing module.

An import of ``a.b.c`` (``import a.b.c`` or ``from a.b import c``) is an edge to the
module ``a.b.c`` when that is a module of the package, else to the deepest existing
module named (``from a.b import name`` is an edge to ``a.b``). The parent packages that
Python imports on the way are not counted as edges (as grimp does); every submodule
would otherwise be in a cycle with its package's ``__init__``.

The source is parsed with :mod:`ast` rather than read from grimp's graph because grimp
records function-level imports too, and telling them apart is the point here.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: The source folder of each package checked, by top-level package name.
PACKAGES: dict[str, Path] = {
    "plait_core": ROOT / "packages/core/src/plait_core",
    "plait_autodiff": ROOT / "packages/autodiff/src/plait_autodiff",
    "plait_batching": ROOT / "packages/batching/src/plait_batching",
    "plait_masking": ROOT / "packages/masking/src/plait_masking",
    "plait_dispatch": ROOT / "packages/dispatch/src/plait_dispatch",
    "plait": ROOT / "src/plait",
}

#: Cycles known and accepted, each a frozenset of its modules, with why. A cycle found
#: that is not exactly one of these fails the check, so only new cycles fail CI.
ALLOWED: dict[frozenset[str], str] = {}


def module_files(package: str, folder: Path) -> dict[str, Path]:
    """Every module of the package, by dotted name."""
    modules: dict[str, Path] = {}
    for path in sorted(folder.rglob("*.py")):
        parts = list(path.relative_to(folder).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join([package, *parts])] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    if isinstance(test, ast.Attribute):
        return test.attr == "TYPE_CHECKING"
    return False


def _import_time_imports(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements of ``body`` that run when the module is imported."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        elif isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                yield from _import_time_imports(node.body)
            yield from _import_time_imports(node.orelse)
        elif isinstance(node, ast.Try):
            yield from _import_time_imports(node.body)
            for handler in node.handlers:
                yield from _import_time_imports(handler.body)
            yield from _import_time_imports(node.orelse)
            yield from _import_time_imports(node.finalbody)
        elif isinstance(node, (ast.With, ast.ClassDef)):
            yield from _import_time_imports(node.body)


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The deepest module of ``modules`` that the dotted ``name`` names."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of ``modules`` that ``module`` imports at import time."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    targets: set[str] = set()
    for node in _import_time_imports(tree.body):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            names = [f"{base}.{alias.name}" for alias in node.names]
        for name in names:
            target = _resolve(name, modules)
            if target is not None and target != module:
                targets.add(target)
    return targets


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative; the components of two or more nodes."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            advanced = False
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = counter
                    counter += 1
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph[succ]))))
                    advanced = True
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def one_cycle(component: list[str], graph: dict[str, set[str]]) -> list[str]:
    """A shortest path around the component from its first module back to it."""
    members = set(component)
    start = component[0]
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for succ in sorted(graph[node] & members):
                if succ == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [*reversed(path), start]
                if succ not in previous:
                    previous[succ] = node
                    following.append(succ)
        frontier = following
    return component


def main() -> int:
    failed = False
    total = 0
    for package, folder in PACKAGES.items():
        if not folder.is_dir():
            print(f"{package}: no source folder at {folder}", file=sys.stderr)
            return 2
        modules = module_files(package, folder)
        graph = {name: imports_of(name, path, modules) for name, path in modules.items()}
        for component in strongly_connected(graph):
            total += 1
            allowed = ALLOWED.get(frozenset(component))
            status = f"allowed: {allowed}" if allowed else "NEW"
            failed = failed or allowed is None
            print(f"{package}: cycle of {len(component)} modules ({status})")
            print("    " + " -> ".join(one_cycle(component, graph)))
            if len(component) > 2:
                print("    all: " + ", ".join(component))
    print(f"{total} import cycle(s), {'some not allowed' if failed else 'none new'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
