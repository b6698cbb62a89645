"""The layers of core: rules and operations never import each other, and the file formats
below them import neither (issue 25, item 1).

Read from the source (every ``import``/``from`` statement, at module level or inside a
function), so a lazy import cannot slip past.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[1] / "core"
PACKAGE = "memls.core"


def _modules(package: str) -> list[Path]:
    folder = CORE / package
    return sorted(folder.rglob("*.py"))


def _module_name(path: Path) -> str:
    rel = path.relative_to(CORE).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return ".".join([PACKAGE, *parts])


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports (relative imports resolved)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    return _imports_in(path.read_text(encoding="utf-8"), package)


def _imports_in(source: str, package: str) -> set[str]:
    tree = ast.parse(source)
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            out.add(module)
            out.update(f"{module}.{alias.name}" for alias in node.names)
    return out


def _violations(package: str, forbidden: tuple[str, ...]) -> list[str]:
    found = []
    for path in _modules(package):
        for imported in sorted(_imports(path)):
            if any(imported == f or imported.startswith(f + ".") for f in forbidden):
                found.append(f"{path.relative_to(CORE.parent)} imports {imported}")
    return found


RULES = f"{PACKAGE}.rules"
OPS = f"{PACKAGE}.ops"


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [
        ("rules", (OPS,)),
        ("ops", (RULES,)),
        ("formats", (RULES, OPS)),
    ],
)
def test_layer_imports(package: str, forbidden: tuple[str, ...]) -> None:
    assert (CORE / package).is_dir()
    assert _violations(package, forbidden) == []


def test_the_contract_sees_lazy_and_relative_imports() -> None:
    source = (
        "import memls.core.model\n"
        "def f():\n"
        "    from memls.core.ops.checkpoint import save_checkpoint\n"
        "    from ..ops import index\n"
    )
    found = _imports_in(source, f"{PACKAGE}.rules")
    assert f"{OPS}.checkpoint" in found
    assert f"{OPS}.index" in found
    assert f"{PACKAGE}.model" in found
