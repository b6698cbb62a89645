"""Where recall finds transcripts: the root, Claude Code's project folder, configured folders."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memls.core.config import load_config
from memls.core.recall import api
from memls.core.workspace import is_claude_memory_dir, transcript_files
from tests.recall_fixtures.roots import write_session


def test_claude_code_sessions_beside_the_memory_folder(tmp_path: Path) -> None:
    project = tmp_path / ".claude" / "projects" / "-home-me-proj"
    memory = project / "memory"
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text("# Project Memory\n")
    write_session(project / "s1.jsonl", [("where is the deploy key", "in the vault")])
    assert is_claude_memory_dir(memory)
    assert not is_claude_memory_dir(project)
    assert transcript_files(memory) == [project / "s1.jsonl"]


def test_configured_transcript_folder_is_indexed_and_found(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    sessions = tmp_path / "sessions"
    root.mkdir()
    sessions.mkdir()
    (root / "MEMORY.md").write_text("# Project Memory\n")
    (root / "memls.toml").write_text('recall_model = "memls-hash"\ntranscripts = ["../sessions"]\n')
    write_session(sessions / "pi.jsonl", [("why did the drip line stop", "a clogged filter")])
    assert load_config(root).transcripts == (sessions.resolve(),)

    report = api.backfill(root)
    assert report["files"] == 1  # MEMORY.md is an index, not a recall source
    assert report["errors"] == []
    found = api.search(root, "drip line filter", mode="text")
    assert [r.path for r in found.results] == ["../sessions/pi.jsonl"]
    assert (root / found.results[0].path).resolve() == (sessions / "pi.jsonl").resolve()


def test_configured_minilm_dir_reaches_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # setenv first so monkeypatch restores the variable's absence: status() sets it from the
    # config, and a leaked empty folder would break every later test that loads MiniLM.
    monkeypatch.setenv("MEMLS_MINILM_DIR", "")
    monkeypatch.delenv("MEMLS_MINILM_DIR")
    weights = tmp_path / "weights"
    weights.mkdir()
    (tmp_path / "memls.toml").write_text('minilm_dir = "weights"\nrecall_model = "memls-minilm"\n')
    (tmp_path / "MEMORY.md").write_text("# Project Memory\n\n## Notes\nsome text\n")
    info = api.status(tmp_path)
    assert os.environ["MEMLS_MINILM_DIR"] == str(weights.resolve())
    # The folder is empty: recall says which folder lacks the weights and stays in text mode.
    assert info["mode"] != "semantic"
    assert str(weights.resolve()) in info["message"] or "MEMLS_MINILM_DIR" in info["message"]
