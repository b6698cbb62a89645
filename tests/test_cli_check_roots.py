"""`memls check` on a repository: which memory roots it finds, and what it says about them.

Issue 16: a repository whose memory is in `.claude/memory/` must not get "All checks
passed" without being looked at, and the project's own documents are not memory files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memls.core.workspace import Layout, claude_memory_dir, layout_choice
from tests.cli_helpers import run_memls

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "app"
    (repo / ".git").mkdir(parents=True)
    (repo / "README.md").write_text("# App\n\n" + "A long readme line.\n" * 4000)
    (repo / "CLAUDE.md").write_text("# App\n\nMemory: `.claude/memory/MEMORY.md`.\n")
    (repo / "docs").mkdir()
    (repo / "docs" / "PLAN.md").write_text("# Plan\n")
    mem = repo / ".claude" / "memory"
    mem.mkdir(parents=True)
    (mem / "MEMORY.md").write_text(
        "- [Reader](reader.md) — the CSV reader\n- `docs/PLAN.md` — the plan\n"
    )
    (mem / "reader.md").write_text(
        "---\nname: reader\ndescription: How the reader streams\ntype: project\n---\n"
        "Streams rows; see [[never-written]].\n"
    )
    return repo


def test_check_in_a_repository_finds_claude_memory(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    proc = run_memls("check", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Checked root: .claude/memory (claude, 2 files)" in proc.stdout
    assert ".claude/memory/reader.md:6:" in proc.stdout
    assert "IX012" in proc.stdout
    assert "README.md" not in proc.stdout
    assert "All checks passed" not in proc.stdout


def test_json_names_roots_layout_and_evidence(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    proc = run_memls("check", str(repo), "--format", "json", cwd=tmp_path)
    data = json.loads(proc.stdout)
    (root,) = data["roots"]
    assert root["path"] == "app/.claude/memory"
    assert root["layout"] == "claude"
    assert any(".claude/memory" in e for e in root["evidence"])
    assert root["repository"] == "app"
    assert [d["code"] for d in data["diagnostics"]] == ["IX012"]


def test_verbose_says_why(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    proc = run_memls("check", "--verbose", cwd=repo)
    assert "Checked .claude/memory: 2 memory files" in proc.stdout
    assert "layout: claude (the folder is a project's .claude/memory" in proc.stdout
    assert "links resolve against" in proc.stdout


def test_repository_level_memory_folder_is_its_own_root(tmp_path: Path) -> None:
    repo = tmp_path / "svc"
    (repo / ".git").mkdir(parents=True)
    (repo / "README.md").write_text("# Service\n")
    (repo / "backlog.md").write_text("# Backlog\n")
    (repo / "memory").mkdir()
    (repo / "memory" / "MEMORY.md").write_text("- [Ops](ops.md) — on-call notes\n")
    (repo / "memory" / "ops.md").write_text("# Ops\n")
    proc = run_memls("check", ".", "--format", "json", cwd=repo)
    data = json.loads(proc.stdout)
    assert [r["path"] for r in data["roots"]] == ["memory"]
    assert data["roots"][0]["layout"] != "orchestrator"
    assert data["diagnostics"] == []


def test_no_memory_says_where_it_looked(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("# Notes\n")
    proc = run_memls("check", cwd=tmp_path)
    assert proc.returncode == 0
    assert proc.stdout.startswith("No memory found in .")
    assert ".claude/memory" in proc.stdout


def test_claude_auto_memory_of_the_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    project = tmp_path / "work" / "my-app"
    (project / ".git").mkdir(parents=True)
    (project / "docs").mkdir()
    (project / "docs" / "PLAN.md").write_text("# Plan\n")
    auto = claude_memory_dir(project, home)
    auto.mkdir(parents=True)
    (auto / "MEMORY.md").write_text("- `docs/PLAN.md` — the plan\n- `docs/GONE.md` — lost\n")
    monkeypatch.setenv("HOME", str(home))
    proc = run_memls("check", "--format", "json", cwd=project)
    data = json.loads(proc.stdout)
    (root,) = data["roots"]
    assert root["layout"] == "claude"
    assert root["repository"] == "."  # the slug "-…-work-my-app" decoded to the project
    # docs/PLAN.md resolves in the project the slug names; docs/GONE.md exists nowhere
    assert [(d["code"], d["line"]) for d in data["diagnostics"]] == [("IX009", 2)]
    assert proc.returncode == 1


def test_layout_needs_evidence_not_one_file_name(tmp_path: Path) -> None:
    (tmp_path / "IDENTITY.md").write_text("# Identity\n")
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "notes.md").write_text("# Notes\n")
    choice = layout_choice(tmp_path)
    assert choice.layout is Layout.FLAT
    assert layout_choice(EXAMPLES / "orchestrator").layout is Layout.ORCHESTRATOR
    assert "LOG.md" in layout_choice(EXAMPLES / "orchestrator").evidence
    assert layout_choice(EXAMPLES / "flat").layout is Layout.FLAT
    for name in ("AGENTS.md", "SOUL.md", "TOOLS.md"):
        (tmp_path / name).write_text("# x\n")
    (tmp_path / "memory" / "2026-03-18.md").write_text("# day\n")
    assert layout_choice(tmp_path).layout is Layout.WORKSPACE
