"""ARCHITECTURE.md's code map matches the tree.

The rule the map keeps (stated at the top of its "Code map" section):

- Every ``*.py`` the map names exists. A name is looked up in the folder its bullet starts
  with (``- `recall/` — …``), then in its section's folder (``### `core/` ``), then from the
  repository root. A section's folders and a bullet's leading folder exist too.
- Every module and package of the fronts and the core (``core/``, ``lsp/``, ``cli/``,
  ``notebook/``, ``mcpserver/``) is named: a module by its file name, a package by its
  folder (``formats/``). Where a bullet or paragraph says *one module per* something (a
  rule family, a feature), the folder it named last before saying so — else the bullet's
  folder, else the section's — has each of its modules named, but not its
  ``__init__.py``. An ``__init__.py`` is named like any module, unless it holds nothing
  but a docstring.

Other backticked names (``.memls/``, ``transcripts/``, ``MEMORY.md``) are things in a memory
root, not in this repository, and are not checked.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
PACKAGES = ("core", "lsp", "cli", "notebook", "mcpserver")

_TOKEN = re.compile(r"`([^`\s]+)`")
_LEAD = re.compile(r"^- `([\w./-]+/)`")
_COVERS = re.compile(r"one module per", re.IGNORECASE)


@dataclass
class CodeMap:
    """What a code map names, resolved against a tree."""

    files: set[Path] = field(default_factory=set)
    """Modules (and other files) the map names that exist."""
    folders: set[Path] = field(default_factory=set)
    """Folders the map names that exist."""
    covered: set[Path] = field(default_factory=set)
    """Folders whose every module the map names by saying "one module per"."""
    missing: list[str] = field(default_factory=list)
    """What the map names that is not there, as ``section: name``."""


def _code_map_text(markdown: str) -> str:
    found = re.search(r"^## Code map\n(.*?)(?=^## )", markdown + "\n## end\n", re.M | re.S)
    assert found, "ARCHITECTURE.md has no '## Code map' section"
    return found.group(1)


def _blocks(section: str) -> list[str]:
    """A section's bullets and paragraphs, each as one string."""
    blocks: list[str] = []
    for line in section.splitlines():
        if not line.strip():
            blocks.append("")
        elif line.startswith("- ") or not blocks:
            blocks.append(line)
        else:
            blocks[-1] = (blocks[-1] + " " + line.strip()).strip()
    return [b for b in blocks if b]


def read_code_map(markdown: str, root: Path) -> CodeMap:
    out = CodeMap()
    sections = re.split(r"^### (.*)$", _code_map_text(markdown), flags=re.M)
    for heading, body in zip(sections[1::2], sections[2::2], strict=True):
        bases = [root / t for t in _TOKEN.findall(heading) if t.endswith("/")]
        for base in bases:
            if base.is_dir():
                out.folders.add(base)
            else:
                out.missing.append(f"{heading}: the folder {base.relative_to(root)}/")
        home = bases[0] if len(bases) == 1 else None
        for block in _blocks(body):
            lead: Path | None = None
            started = _LEAD.match(block)
            if started:
                lead = (home or root) / started.group(1)
                if lead.is_dir():
                    out.folders.add(lead)
                else:
                    out.missing.append(f"{heading}: the folder {started.group(1)}")
            places = [p for p in (lead, home, root) if p is not None]
            for name in _TOKEN.findall(block):
                if name.endswith(".py"):
                    found = next((p / name for p in places if (p / name).is_file()), None)
                    if found is None:
                        out.missing.append(f"{heading}: {name}")
                    else:
                        out.files.add(found)
                elif name.endswith("/"):
                    out.folders.update(p / name for p in places if (p / name).is_dir())
            for phrase in _COVERS.finditer(block):
                before = [t for t in _TOKEN.findall(block[: phrase.start()]) if t.endswith("/")]
                if before:
                    folder = next(
                        (p / before[-1] for p in places if (p / before[-1]).is_dir()), None
                    )
                    if folder is None:
                        out.missing.append(f"{heading}: the folder {before[-1]}")
                else:
                    folder = lead or home
                if folder is not None:
                    out.covered.add(folder)
    return out


def _holds_nothing(init: Path) -> bool:
    """An ``__init__.py`` with nothing but a docstring and ``from __future__`` imports."""
    body = ast.parse(init.read_text(encoding="utf-8")).body
    return all(
        (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
        or (isinstance(node, ast.ImportFrom) and node.module == "__future__")
        for node in body
    )


def unnamed(code_map: CodeMap, root: Path, packages: tuple[str, ...] = PACKAGES) -> list[str]:
    """Modules and packages under ``packages`` that the map does not name."""
    out: list[str] = []
    for package in packages:
        top = root / package
        if not top.is_dir():
            continue
        for path in sorted(top.rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            if path.name == "__init__.py":
                if path.parent not in code_map.folders:
                    out.append(f"{path.parent.relative_to(root)}/ (a package)")
                if _holds_nothing(path):
                    continue
            covered = path.parent in code_map.covered and path.name != "__init__.py"
            if path not in code_map.files and not covered:
                out.append(str(path.relative_to(root)))
    return out


def _project_map() -> CodeMap:
    return read_code_map((PROJECT / "ARCHITECTURE.md").read_text(encoding="utf-8"), PROJECT)


def test_every_path_the_code_map_names_exists() -> None:
    missing = list(dict.fromkeys(_project_map().missing))
    assert not missing, "ARCHITECTURE.md's code map names what is not there:\n" + "\n".join(missing)


def test_every_file_an_entry_point_names_exists() -> None:
    """The "Entry points" section names files from the repository root."""
    markdown = (PROJECT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    found = re.search(r"^## Entry points\n(.*?)(?=^## )", markdown, re.M | re.S)
    assert found, "ARCHITECTURE.md has no '## Entry points' section"
    named = [t for t in _TOKEN.findall(found.group(1)) if t.endswith(".py")]
    assert named
    assert [name for name in named if not (PROJECT / name).is_file()] == []


def test_every_module_and_package_is_in_the_code_map() -> None:
    left_out = unnamed(_project_map(), PROJECT)
    assert not left_out, "ARCHITECTURE.md's code map does not name:\n" + "\n".join(left_out)


SAMPLE = """# Architecture

## Code map

Read it this way.

### `pkg/`

- `text.py` — text.
- `rules/` — the registry (`__init__.py`) and one module per rule family; `gone.py`
  and `base.py` (from the section's folder).
- `store/` — `disk.py` and `memory.py`, in `.memls/` of a root.

### `front/`

One module per command group; `common.py` holds the options.

### `lsp/`

`server.py` starts it. A feature is a module in `features/`. One module per feature.

## Invariants

- `pkg/unmapped.py` is only named outside the map.
"""


def _sample_tree(root: Path) -> None:
    files = [
        "pkg/__init__.py",
        "pkg/text.py",
        "pkg/base.py",
        "pkg/unmapped.py",
        "pkg/rules/__init__.py",
        "pkg/rules/cp.py",
        "pkg/store/__init__.py",
        "pkg/store/disk.py",
        "pkg/store/memory.py",
        "pkg/store/cache.py",
        "pkg/newpkg/__init__.py",
        "front/__init__.py",
        "front/check.py",
        "front/common.py",
        "lsp/server.py",
        "lsp/features/hover.py",
    ]
    for name in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text('"""Docstring only."""\n' if name.endswith("__init__.py") else "X = 1\n")
    (root / "pkg/rules/__init__.py").write_text("REGISTRY: list[str] = []\n")


def test_the_rule_on_a_small_map(tmp_path: Path) -> None:
    """Names resolve in the bullet's folder, then the section's; "one module per" covers a
    folder's modules; what is not there, or not named, is reported."""
    _sample_tree(tmp_path)
    code_map = read_code_map(SAMPLE, tmp_path)
    assert code_map.missing == ["`pkg/`: gone.py"]
    assert tmp_path / "pkg/rules" in code_map.covered
    assert tmp_path / "front" in code_map.covered  # the paragraph names no folder: the section's
    assert tmp_path / "pkg/store" not in code_map.covered
    assert tmp_path / "lsp/features" in code_map.covered  # named earlier in the paragraph
    assert tmp_path / "lsp" not in code_map.covered
    (tmp_path / "front/__init__.py").write_text("GROUPS: list[str] = []\n")
    assert unnamed(code_map, tmp_path, ("pkg", "front")) == [
        "pkg/newpkg/ (a package)",
        "pkg/store/cache.py",
        "pkg/unmapped.py",
        "front/__init__.py",  # "one module per" covers the modules, not the package's own code
    ]
