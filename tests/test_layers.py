"""The import layering (the contracts themselves are in pyproject.toml and run by `lint-imports` in CI).

Two rules import-linter has no contract type for are checked here on the same import graph (grimp): no module
imports another package's private module, and no two modules import each other, directly or round a circle.
"""

from __future__ import annotations

from typing import Any

import grimp
import pytest

PACKAGES = ("overseer", "overseer_langgraph", "overseer_mcp")


@pytest.fixture(scope="module")
def graph() -> Any:
    return grimp.build_graph(*PACKAGES, exclude_type_checking_imports=True)


def _private_parent(module: str) -> str | None:
    """``a.b`` for ``a.b._c`` or ``a.b._c.d``: the package whose private module it is (None if it is public)."""
    parts = module.split(".")
    for i, part in enumerate(parts[1:], 1):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:i])
    return None


def test_no_module_imports_another_packages_private_module(graph: Any) -> None:
    wrong = []
    for importer in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            parent = _private_parent(imported)
            if parent is not None and importer != parent and not importer.startswith(parent + "."):
                wrong.append(f"{importer} imports {imported}")
    assert wrong == []


def test_there_is_no_import_cycle(graph: Any) -> None:
    """Depth-first search over the module graph, lazy imports included; a back edge is a cycle."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles: list[list[str]] = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for nxt in sorted(graph.find_modules_directly_imported_by(module)):
            if nxt.startswith(module + "."):  # a package importing its own submodules is its __init__ re-exporting
                continue
            if state.get(nxt) == 1:
                cycles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[module] = 2

    for module in sorted(graph.modules):
        if module not in state:
            visit(module, [module])
    assert cycles == []


def test_the_rules_can_fail() -> None:
    """The two checks above see what they look for: on a graph with one wrong import and one circle."""
    assert _private_parent("overseer.prm._model") == "overseer.prm"
    assert _private_parent("overseer.store") is None
    graph = grimp.build_graph(*PACKAGES, exclude_type_checking_imports=True)
    graph.add_import(importer="overseer.steps", imported="overseer._pipeline")
    with pytest.raises(AssertionError):
        test_there_is_no_import_cycle(graph)
    graph.add_import(importer="overseer_mcp._run", imported="overseer.prm._model")
    with pytest.raises(AssertionError):
        test_no_module_imports_another_packages_private_module(graph)
