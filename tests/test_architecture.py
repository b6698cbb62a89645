"""Architecture invariants that a grep can enforce."""

from __future__ import annotations

import ast
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
FORBIDDEN_IN_CORE = {"pygls", "lsprotocol", "ipywidgets", "mcp", "mcp_types"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_core_never_imports_lsp_or_widgets() -> None:
    offenders = {
        str(p.relative_to(PROJECT)): sorted(_imports(p) & FORBIDDEN_IN_CORE)
        for p in (PROJECT / "core").rglob("*.py")
        if _imports(p) & FORBIDDEN_IN_CORE
    }
    assert offenders == {}


def test_only_lsp_converts_to_lsp_types() -> None:
    """lsprotocol types are built in lsp/ only; notebook/ and cli/ never import them."""
    for folder in ("notebook", "cli"):
        for p in (PROJECT / folder).rglob("*.py"):
            assert not (_imports(p) & {"lsprotocol"}), p
