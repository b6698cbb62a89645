"""SZ002–SZ004: generated roots just under and just over each limit. The snapshot limits
apply to roots that use snapshots (an ``instance`` configured, or a snapshot ref); elsewhere
size is judged as the agent meets it (files it reads whole), never on logs it searches."""

from __future__ import annotations

import os
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from memls.core.config import Config
from memls.core.gitfacade import run_git
from memls.core.model import Diagnostic
from memls.core.rules import check_document
from memls.core.rules.size import MAX_ITEM_BYTES, MAX_ITEMS, MAX_TOTAL_BYTES
from memls.core.workspace import Workspace

from .conftest import NOW

SNAPSHOTS = Config(instance="team")
"""A root that uses snapshots: its instance is configured."""


def _diags(root: Path, code: str, config: Config = SNAPSHOTS) -> list[Diagnostic]:
    ws = Workspace(root, replace(config, select=(code,)))
    out = []
    for path in ws.paths():
        doc = ws.document(path)
        assert doc is not None
        out += check_document(ws, doc, NOW)
    return out


def _findings(root: Path, code: str, config: Config = SNAPSHOTS) -> list[tuple[str, int]]:
    return [(d.path.name, d.range.start.line) for d in _diags(root, code, config)]


def _topic(path: Path, size: int) -> None:
    head = f"# {path.stem}\n\n"
    path.write_text(head + "x" * (size - len(head) - 1) + "\n")


def test_sz002_item_over_the_limit(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("# Project Memory\n")
    _topic(tmp_path / "big.md", MAX_ITEM_BYTES + 1)
    _topic(tmp_path / "edge.md", MAX_ITEM_BYTES)
    assert _findings(tmp_path, "SZ002") == [("big.md", 0)]


def test_sz003_root_over_the_total(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("# Project Memory\n")
    index_size = (tmp_path / "MEMORY.md").stat().st_size
    per_file = (MAX_TOTAL_BYTES - index_size) // 4
    for i in range(4):
        _topic(tmp_path / f"t{i}.md", per_file)
    assert _findings(tmp_path, "SZ003") == []
    _topic(tmp_path / "one-more.md", 200)
    assert _findings(tmp_path, "SZ003") == [("MEMORY.md", 0)]


def test_sz004_too_many_items(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("# Project Memory\n")
    for i in range(MAX_ITEMS - 1):
        _topic(tmp_path / f"t{i:02d}.md", 40)
    assert _findings(tmp_path, "SZ004") == []
    _topic(tmp_path / "extra.md", 40)
    assert _findings(tmp_path, "SZ004") == [("MEMORY.md", 0)]


def test_without_snapshots_root_totals_are_no_finding(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("# Project Memory\n")
    for i in range(MAX_ITEMS + 1):
        _topic(tmp_path / f"t{i:02d}.md", 5000)
    assert _findings(tmp_path, "SZ003", Config()) == []
    assert _findings(tmp_path, "SZ004", Config()) == []
    assert _findings(tmp_path, "SZ003") == [("MEMORY.md", 0)]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_snapshot_ref_means_the_root_uses_snapshots(tmp_path: Path) -> None:
    from memls.core.snapshot import save_snapshot

    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    run_git(tmp_path, "init", "-q", "-b", "main", env=env)
    (tmp_path / "MEMORY.md").write_text(
        "# Project Memory\n\n- [small](small.md)\n- [big](big.md)\n"
    )
    _topic(tmp_path / "small.md", 100)
    _topic(tmp_path / "big.md", MAX_ITEM_BYTES + 1)
    [diag] = _diags(tmp_path, "SZ002", Config())
    assert "tokens" in diag.message  # read whole, no snapshot in sight
    assert "snapshot" not in diag.message
    (tmp_path / "big.md").unlink()
    assert save_snapshot(tmp_path, initial=True).status == "saved"
    _topic(tmp_path / "big.md", MAX_ITEM_BYTES + 1)
    [diag] = _diags(tmp_path, "SZ002", Config())
    assert "item limit of a snapshot (this root uses snapshots" in diag.message


def test_logs_and_archives_the_agent_searches_get_no_size_finding(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("# Memory\n")
    (tmp_path / "AGENTS.md").write_text("# Agents\n")
    (tmp_path / "SOUL.md").write_text("# Soul\n")
    memory = tmp_path / "memory"
    memory.mkdir()
    for day in range(1, 8):
        _topic(memory / f"2026-11-{day:02d}.md", MAX_ITEM_BYTES + 10)
    (tmp_path / "LOG.md").write_text("# Log\n\n" + "## 2026-11-01 — e\n" * 5000)
    assert _findings(tmp_path, "SZ002", Config()) == []
    assert _findings(tmp_path, "SZ003", Config()) == []


def test_a_workspace_bootstrap_file_past_what_is_injected(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("# Memory\n")
    (tmp_path / "SOUL.md").write_text("# Soul\n")
    (tmp_path / "AGENTS.md").write_text("# Agents\n\n" + "- a rule for the agent\n" * 1000)
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "2026-11-01.md").write_text("# day\n")
    [diag] = _diags(tmp_path, "SZ002", Config())
    assert diag.path.name == "AGENTS.md"
    assert "injects the first 20,000 at session start" in diag.message


def test_a_big_handoff_is_told_what_a_handoff_needs(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("# Memory\n")
    (tmp_path / ".handoff.md").write_text("# Handoff\n\n" + "- history line\n" * 6000)
    [diag] = _diags(tmp_path, "SZ002", Config())
    assert "a handoff is read whole by the next agent" in diag.message
    assert "topic files" not in diag.message
