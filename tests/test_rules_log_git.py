"""LG001 against real temporary git repositories, plus rules that read beyond the text.

LOG.md is committed, then edited by the test: appending is fine; changing or deleting
committed text is reported at the first differing line. HO004's file-time fallback and the
MF003 similarity-provider hook are exercised here too, since they need real files.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from memls.core.config import Config
from memls.core.gitfacade import run_git
from memls.core.model import Diagnostic
from memls.core.rules import check_document, memoryfile
from memls.core.workspace import Workspace

from .conftest import NOW

GIT_ENV = {
    "GIT_AUTHOR_NAME": "memls test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "memls test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}

LOG = (
    "# Log\n"
    "\n"
    "## 2026-11-28 09:00 — recall fallback decision\n"
    "Chose text search as the degraded mode.\n"
    "\n"
    "## 2026-11-29 · checkpoint\n"
    "Scope: recall.\n"
)


def _git(root: Path, *args: str) -> None:
    run_git(root, *args, env=GIT_ENV)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "mem"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    (root / "LOG.md").write_text(LOG, encoding="utf-8")
    (root / "MEMORY.md").write_text("# Project Memory\n", encoding="utf-8")
    _git(root, "add", "LOG.md", "MEMORY.md")
    _git(root, "commit", "-q", "-m", "memory")
    return root


def _lg001(root: Path, select: str = "LG001") -> list[Diagnostic]:
    ws = Workspace(root, Config(select=(select,)))
    doc = ws.document(root / "LOG.md")
    assert doc is not None
    return check_document(ws, doc, NOW)


def test_append_is_fine(repo: Path) -> None:
    text = LOG + "\n## 2026-11-30 10:00 — new entry\nAppended.\n"
    (repo / "LOG.md").write_text(text, encoding="utf-8")
    assert _lg001(repo) == []


def test_unchanged_and_trailing_whitespace_at_end_are_fine(repo: Path) -> None:
    assert _lg001(repo) == []
    (repo / "LOG.md").write_text(LOG.rstrip("\n") + "   \n\n\n", encoding="utf-8")
    assert _lg001(repo) == []
    (repo / "LOG.md").write_text(LOG.replace("\n", "\r\n"), encoding="utf-8")
    assert _lg001(repo) == []


def test_changed_old_line_is_reported_at_that_line(repo: Path) -> None:
    text = LOG.replace("Chose text search", "Chose vector search") + "\n## 2026-11-30 · later\n"
    (repo / "LOG.md").write_text(text, encoding="utf-8")
    diags = _lg001(repo)
    assert [(d.code, d.range.start.line, d.range.start.character) for d in diags] == [
        ("LG001", 3, 0)
    ]
    assert diags[0].range.end.character == len("Chose vector search as the degraded mode.")
    assert "changed" in diags[0].message
    assert "new entry" in diags[0].message


def test_deleted_lines_are_reported(repo: Path) -> None:
    lines = LOG.splitlines(keepends=True)
    # Delete the first entry's body line: the line now there differs.
    (repo / "LOG.md").write_text("".join(lines[:3] + lines[4:]), encoding="utf-8")
    assert [(d.code, d.range.start.line) for d in _lg001(repo)] == [("LG001", 3)]
    # Truncate the last entry: reported at the end of what is left.
    (repo / "LOG.md").write_text("".join(lines[:5]), encoding="utf-8")
    diags = _lg001(repo)
    assert [d.code for d in diags] == ["LG001"]
    assert diags[0].range.start.line == 5
    assert "removed" in diags[0].message
    # Delete everything.
    (repo / "LOG.md").write_text("", encoding="utf-8")
    assert [(d.code, d.range.start.line) for d in _lg001(repo)] == [("LG001", 0)]


def test_editor_buffer_is_checked_not_disk(repo: Path) -> None:
    ws = Workspace(repo, Config(select=("LG001",)))
    ws.set_text(repo / "LOG.md", LOG.replace("# Log", "# History"))
    doc = ws.document(repo / "LOG.md")
    assert doc is not None
    assert [(d.code, d.range.start.line) for d in check_document(ws, doc, NOW)] == [("LG001", 0)]


def test_uncommitted_log_and_no_repository_are_skipped(repo: Path, tmp_path: Path) -> None:
    # A LOG.md that was never committed has no history to protect yet.
    (repo / "memory").mkdir()
    (repo / "memory" / "LOG.md").write_text("## 2026-11-30 · x\n", encoding="utf-8")
    ws = Workspace(repo, Config(select=("LG001",)))
    doc = ws.document(repo / "memory" / "LOG.md")
    assert doc is not None
    assert check_document(ws, doc, NOW) == []
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "LOG.md").write_text("changed\n", encoding="utf-8")
    assert _lg001(plain) == []


def test_later_commit_moves_the_baseline(repo: Path) -> None:
    edited = LOG.replace("Scope: recall.", "Scope: recall and LOG.")
    (repo / "LOG.md").write_text(edited, encoding="utf-8")
    assert [d.range.start.line for d in _lg001(repo)] == [6]
    _git(repo, "commit", "-q", "-am", "rewrite history on purpose")
    assert _lg001(repo) == []


def _set_mtime(path: Path, when: dt.datetime) -> None:
    stamp = when.timestamp()
    os.utime(path, (stamp, stamp))


def test_handoff_without_a_date_uses_its_file_time(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    root.mkdir()
    (root / "checkpoint-main.md").write_text(
        "# Checkpoint: main\n\n- **Branch:** `main`\n- **Saved:** 2026-11-29 14:00\n",
        encoding="utf-8",
    )
    handoff = root / ".handoff.md"
    handoff.write_text("# Handoff\n\n## Current State\nx\n", encoding="utf-8")
    _set_mtime(handoff, dt.datetime(2026, 11, 29, 13, 0))
    ws = Workspace(root, Config(select=("HO004",)))
    doc = ws.document(handoff)
    assert doc is not None
    diags = check_document(ws, doc, NOW)
    assert [(d.code, d.range.start.line) for d in diags] == [("HO004", 0)]
    assert "file time" in diags[0].message
    assert "checkpoint 'main'" in diags[0].message
    _set_mtime(handoff, dt.datetime(2026, 11, 29, 15, 0))
    assert check_document(ws, doc, NOW) == []


@pytest.fixture
def provider() -> Iterator[list[tuple[Path, Path, float]]]:
    pairs: list[tuple[Path, Path, float]] = []

    def similar(ws: Workspace) -> Iterable[tuple[Path, Path, float]]:
        return list(pairs)

    memoryfile.SIMILARITY_PROVIDERS.append(similar)
    try:
        yield pairs
    finally:
        memoryfile.SIMILARITY_PROVIDERS.remove(similar)


def test_similarity_providers_feed_mf003(
    tmp_path: Path, provider: list[tuple[Path, Path, float]]
) -> None:
    root = tmp_path / "mem"
    root.mkdir()
    (root / "MEMORY.md").write_text("# Project Memory\n", encoding="utf-8")
    for name, body in (("a", "Run the tests."), ("b", "Always test."), ("c", "Other.")):
        (root / f"{name}.md").write_text(f"# {name}\n\n{body}\n", encoding="utf-8")
    ws = Workspace(root, Config(select=("MF003",), duplicate_threshold=0.9))
    provider.extend([(root / "a.md", root / "b.md", 0.95), (root / "a.md", root / "c.md", 0.5)])

    def codes(name: str) -> list[str]:
        doc = ws.document(root / name)
        assert doc is not None
        return [d.message for d in check_document(ws, doc, NOW)]

    assert len(codes("a.md")) == 1
    assert "b.md" in codes("a.md")[0]
    assert len(codes("b.md")) == 1
    assert "0.95" in codes("b.md")[0]
    assert codes("c.md") == []

    def broken(ws: Workspace) -> Iterable[tuple[Path, Path, float]]:
        raise RuntimeError("recall index unavailable")

    memoryfile.SIMILARITY_PROVIDERS.append(broken)
    try:
        assert len(codes("a.md")) == 1
    finally:
        memoryfile.SIMILARITY_PROVIDERS.remove(broken)


def test_duplicate_index_follows_edits(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    root.mkdir()
    (root / "a.md").write_text("# Same\n\nbody\n", encoding="utf-8")
    (root / "b.md").write_text("# Other\n\nbody\n", encoding="utf-8")
    ws = Workspace(root, Config(select=("MF003",)))
    doc_a = ws.document(root / "a.md")
    assert doc_a is not None
    assert check_document(ws, doc_a, NOW) == []
    ws.set_text(root / "b.md", "# Same\n\n  body  \n")
    doc_b = ws.document(root / "b.md")
    assert doc_b is not None
    assert [d.code for d in check_document(ws, doc_b, NOW)] == ["MF003"]  # the copy, once
    doc_a = ws.document(root / "a.md")
    assert doc_a is not None
    assert check_document(ws, doc_a, NOW) == []  # the one to keep
    ws.set_text(root / "b.md", None)
    doc_a = ws.document(root / "a.md")
    assert doc_a is not None
    assert check_document(ws, doc_a, NOW) == []
