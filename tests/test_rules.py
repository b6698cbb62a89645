"""Data-driven rule tests: one folder per case under tests/rule_cases/.

A case folder is a memory root plus ``expected.txt``::

    # select: CP001,CP002          <- the codes under test (findings of other codes are ignored)
    checkpoint-x.md:1:1 CP001      <- expected findings, 1-based line:column

and optionally ``fixed/<file>``: the file's text after every safe fix. Fixes must be
idempotent and leave a file the rules then accept. Clock: 2026-11-30 12:00; no git.

Two more directives build cases that are repositories with memory inside::

    # repo                         <- the case folder is a repository (a `.git` folder is made)
    # root: .claude/memory         <- the memory root inside the case folder (paths in the
                                      expected lines are relative to it)
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from memls.core.config import load_config
from memls.core.fixes import fix_text
from memls.core.rules import check_document
from memls.core.workspace import Workspace

from .conftest import NOW

CASES = Path(__file__).parent / "rule_cases"


def _cases() -> list[Path]:
    return sorted(p for p in CASES.iterdir() if (p / "expected.txt").is_file())


def _load(case: Path, tmp_path: Path) -> tuple[Workspace, tuple[str, ...], set[str]]:
    copy = tmp_path / "root"
    shutil.copytree(case, copy, ignore=shutil.ignore_patterns("expected.txt", "fixed"))
    select: tuple[str, ...] = ()
    expected: set[str] = set()
    root = copy
    for raw in (case / "expected.txt").read_text().splitlines():
        line = raw.strip()
        if line.startswith("# select:"):
            select = tuple(c.strip() for c in line.split(":", 1)[1].split(",") if c.strip())
        elif line == "# repo":
            (copy / ".git").mkdir()
        elif line.startswith("# root:"):
            root = copy / line.split(":", 1)[1].strip()
        elif line and not line.startswith("#"):
            expected.add(line)
    assert select, f"{case.name}: expected.txt needs a '# select:' line"
    config = replace(load_config(root), select=select)  # a case's memls.toml applies
    return Workspace(root, config), select, expected


def _findings(ws: Workspace) -> set[str]:
    out = set()
    for path in ws.paths():
        doc = ws.document(path)
        assert doc is not None
        for d in check_document(ws, doc, NOW):
            rel = path.relative_to(ws.root).as_posix()
            out.add(f"{rel}:{d.range.start.line + 1}:{d.range.start.character + 1} {d.code}")
    return out


@pytest.mark.parametrize("case", _cases(), ids=lambda p: p.name)
def test_rule_case(case: Path, tmp_path: Path) -> None:
    ws, _, expected = _load(case, tmp_path)
    assert _findings(ws) == expected


@pytest.mark.parametrize(
    "case", [c for c in _cases() if (c / "fixed").is_dir()], ids=lambda p: p.name
)
def test_rule_fix(case: Path, tmp_path: Path) -> None:
    ws, _, _ = _load(case, tmp_path)
    for fixed in sorted((case / "fixed").rglob("*")):
        if not fixed.is_file():
            continue
        rel = fixed.relative_to(case / "fixed")
        path = ws.root / rel
        text, applied = fix_text(ws, path, NOW)
        assert applied > 0, f"{rel}: no fix applied"
        assert text == fixed.read_text(encoding="utf-8"), f"{rel}: unexpected text after fixes"
        path.write_text(text, encoding="utf-8")
        ws.invalidate(path)
        again, applied_again = fix_text(ws, path, NOW)
        assert applied_again == 0, f"{rel}: fixes are not idempotent"
        assert again == text
        doc = ws.document(path)
        assert doc is not None
        remaining = [d for d in check_document(ws, doc, NOW) if d.fix is not None]
        assert not remaining, f"{rel}: fixable findings remain after fixing: {remaining}"
