"""The project's import graph, read from the source: layers and cycles.

``python -m tests.architecture`` prints every import that climbs a layer and every import
cycle, between packages or inside one, and nothing else; ``tests/test_architecture.py``
asserts that it prints nothing. Every import counts, wherever it stands (inside a function,
under ``TYPE_CHECKING``): a lazy import hides a cycle from the interpreter, not from a reader.

The layers, lowest first; a module may import only from its own layer or those below:

0. ``replay.base``: errors, file formats (case, snapshot manifest and state), the blob
   store, git helpers, the vocabularies (event kinds, outcomes). Imports nothing of the
   project but itself.
1. ``fakes``: the fake services. Imports only ``replay.base``.
2. the orchestrator: every other package of ``replay`` (snapshot, world, gateway, sandbox,
   harness, grade, results, ...).
3. the command line: ``replay.cli`` and ``replay.__main__``.

``replay/__init__.py`` (the package's public surface) counts as the base layer: every
import of ``replay.base`` runs it, so it may import only the base.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("replay", "fakes")

LAYERS = ("base", "fakes", "orchestrator", "cli")


def layer_of(module: str) -> int:
    """The layer a module belongs to (an index into :data:`LAYERS`)."""
    if module in ("replay", "replay.base") or module.startswith("replay.base."):
        return 0
    if module == "fakes" or module.startswith("fakes."):
        return 1
    if module in ("replay.cli", "replay.__main__") or module.startswith("replay.cli."):
        return 3
    return 2


def unit_of(module: str) -> str:
    """The package a module counts towards for cycles between packages.

    ``replay.gateway.addons`` and ``replay.gateway`` count towards ``replay.gateway``;
    a module directly under ``replay`` or ``fakes`` is its own unit.
    """
    parts = module.split(".")
    return ".".join(parts[:2])


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    line: int


def modules() -> dict[str, Path]:
    """Every module of the project's packages, by dotted name."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).with_suffix("")
            parts = list(rel.parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The longest prefix of ``name`` that is one of the project's modules."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in known:
            return candidate
        parts.pop()
    return None


def edges(known: dict[str, Path]) -> Iterator[Edge]:
    for module, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        is_package = path.name == "__init__.py"
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = module.split(".")
                    if not is_package:
                        base = base[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    prefix = ".".join(base + ([node.module] if node.module else []))
                else:
                    prefix = node.module or ""
                # ``from pkg import mod`` imports the module pkg.mod when there is one.
                targets = [f"{prefix}.{alias.name}" for alias in node.names] or [prefix]
            seen: set[str] = set()
            for name in targets:
                target = _resolve(name, known)
                if target is not None and target != module and target not in seen:
                    seen.add(target)
                    yield Edge(module, target, node.lineno)


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm: every component of more than one node, sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph.get(node, ())):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def problems() -> list[str]:
    """Every layer violation and every import cycle, one line each."""
    known = modules()
    all_edges = list(edges(known))
    lines: list[str] = []
    for e in all_edges:
        if layer_of(e.target) > layer_of(e.source):
            lines.append(
                f"layer: {known[e.source].relative_to(ROOT)}:{e.line} {e.source} "
                f"({LAYERS[layer_of(e.source)]}) imports {e.target} "
                f"({LAYERS[layer_of(e.target)]})"
            )
    by_module: dict[str, set[str]] = {}
    by_unit: dict[str, set[str]] = {}
    for e in all_edges:
        by_module.setdefault(e.source, set()).add(e.target)
        su, tu = unit_of(e.source), unit_of(e.target)
        if su != tu:
            by_unit.setdefault(su, set()).add(tu)
    lines += [f"cycle between packages: {' <-> '.join(c)}" for c in strongly_connected(by_unit)]
    lines += [f"cycle between modules: {' <-> '.join(c)}" for c in strongly_connected(by_module)]
    return lines


def main(argv: Iterable[str] = ()) -> int:
    found = problems()
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
