"""The rooms of ``lib/`` (each folder, and each module at its top) import each other without a loop
(issue 32 item 4): every import counts, those inside functions too, since a loop of rooms is one
whichever import makes it."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from lib.io.paths import ROOT

KNOWN = [{"lib.inputs", "lib.ranking"}]
"""The one loop left: ``lib.inputs`` reads the style columns a user names with ``lib.ranking.style``'s reader,
and ``lib.ranking.run`` takes its ``AnalysisInput`` (no loop of files; a module at the top and a folder)."""


def room(module: str) -> str:
    """``lib.irt.fit`` -> ``lib.irt``; ``lib.cli`` -> ``lib.cli``."""
    return ".".join(module.split(".")[:2])


def imported(tree: ast.AST) -> Iterable[str]:
    """Every module of ``lib`` a file imports, anywhere in it."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield from ([f"lib.{alias.name}" for alias in node.names] if node.module == "lib" else [node.module])


def arrows() -> dict[str, set[str]]:
    """Room -> the other rooms its files import."""
    out: dict[str, set[str]] = {}
    for path in (ROOT / "lib").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if len(parts) < 2 or parts[1] in {"__init__", "__main__"}:
            continue
        here = room(".".join(parts))
        for module in imported(ast.parse(path.read_text(encoding="utf-8"))):
            if module.startswith("lib.") and room(module) != here:
                out.setdefault(here, set()).add(room(module))
    return out


def loops(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one node (Tarjan 1972)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = {stack.pop()}
            while node not in component:
                component.add(stack.pop())
            if len(component) > 1:
                found.append(component)

    for node in sorted(set(graph) | {n for targets in graph.values() for n in targets}):
        if node not in index:
            visit(node)
    return found


def test_loops_are_found():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"d"}}
    assert loops(graph) == [{"a", "b", "c"}]


def test_lib_rooms_import_each_other_without_a_loop():
    assert [loop for loop in loops(arrows()) if loop not in KNOWN] == []
