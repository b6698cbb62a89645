"""Names and links that would lead out of the root are refused or sanitised; nothing is written outside."""

from __future__ import annotations

import datetime as dt
import subprocess
from pathlib import Path

import pytest

from memls.core.formats.checkpoint import sanitize_name
from memls.core.fsutil import UnsafePathError
from memls.core.gitfacade import Git
from memls.core.ops.checkpoint import save_checkpoint
from memls.core.ops.log import append_log
from tests.cli_helpers import run_memls

NOW = dt.datetime(2026, 11, 30, 12, 0)


def _tree(base: Path) -> dict[str, bytes]:
    return {
        p.relative_to(base).as_posix(): p.read_bytes()
        for p in sorted(base.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "MEMORY.md").write_text("# Not yours\n")
    (outside / "x").write_text("precious\n")
    return root, outside


def _save(root: Path, name: str) -> subprocess.CompletedProcess[str]:
    return run_memls("checkpoint", "save", "--root", str(root), "--", name, cwd=root)


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("../x", "'..'"),
        ("a/../../x", "'..'"),
        ("/etc/x", "absolute"),
        ("~/x", "absolute"),
        ("a\\b", "backslash"),
        ("bad\x07name", "control character"),
        ("--", "empty after sanitising"),
        ("a*b", "breaks the index bullet"),
    ],
)
def test_escaping_names_are_refused_with_exit_2(
    layout: tuple[Path, Path], name: str, why: str
) -> None:
    root, outside = layout
    before = _tree(outside)
    proc = _save(root, name)
    assert proc.returncode == 2
    assert why in proc.stderr
    assert proc.stderr.startswith("Error: checkpoint name")
    assert list(root.iterdir()) == []
    assert _tree(outside) == before


def test_nul_in_a_name_is_refused() -> None:
    # argv cannot carry NUL, so this one goes through the API every front uses.
    with pytest.raises(UnsafePathError, match="control character or NUL"):
        sanitize_name("a\x00b")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("a/b", "a-b"),
        ("Feature/Login", "feature-login"),
        ("-lead", "lead"),
        ("/-x", None),
        ("my task", "my-task"),
        ("My Feature/Login", "my-feature-login"),  # the README's example
        ("  two   words ", "two-words"),
    ],
)
def test_sanitising(name: str, expected: str | None) -> None:
    if expected is None:
        with pytest.raises(UnsafePathError):
            sanitize_name(name)
    else:
        assert sanitize_name(name) == expected


def test_separator_is_sanitised_into_the_root(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    proc = _save(root, "a/b")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith('Checkpoint "a-b" saved -> checkpoint-a-b.md')
    assert sorted(p.name for p in root.iterdir()) == ["MEMORY.md", "checkpoint-a-b.md"]


def test_memory_symlink_out_of_root_is_refused(layout: tuple[Path, Path]) -> None:
    root, outside = layout
    (root / "MEMORY.md").symlink_to(outside / "MEMORY.md")
    before = _tree(outside)
    proc = _save(root, "x")
    assert proc.returncode == 2
    assert "symlink" in proc.stderr
    assert "outside the memory root" in proc.stderr
    assert _tree(outside) == before
    assert sorted(p.name for p in root.iterdir()) == ["MEMORY.md"]
    assert (root / "MEMORY.md").is_symlink()


def test_checkpoint_symlink_out_of_root_is_refused(layout: tuple[Path, Path]) -> None:
    root, outside = layout
    (root / "checkpoint-x.md").symlink_to(outside / "x")
    before = _tree(outside)
    with pytest.raises(UnsafePathError):
        save_checkpoint(root, "x", now=NOW, git=Git(root))
    assert _tree(outside) == before


def test_log_symlink_out_of_root_is_refused(layout: tuple[Path, Path]) -> None:
    root, outside = layout
    (root / "LOG.md").symlink_to(outside / "x")
    with pytest.raises(UnsafePathError):
        append_log(root, "t", now=NOW)
    assert (outside / "x").read_text() == "precious\n"
