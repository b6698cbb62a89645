"""What is not memory is left alone (Agent Skills, project documents in docs/), and the
answer follows edits: once the index points at a document, it is memory and judged."""

from __future__ import annotations

from pathlib import Path

from memls.core.config import Config
from memls.core.fixes import fix_text
from memls.core.rules import check_document
from memls.core.rules.memoryfile import not_memory
from memls.core.workspace import Workspace

from .conftest import NOW

TYPED = "---\nname: storage\ndescription: Why sqlite\ntype: project\n---\nOne file.\n"
DOC = "---\ntitle: HTTP API\ndescription: The endpoints\n---\n# HTTP API\n"


def _codes(ws: Workspace, name: str) -> list[str]:
    doc = ws.document(ws.root / name)
    assert doc is not None
    return [d.code for d in check_document(ws, doc, NOW)]


def test_a_docs_document_becomes_memory_when_the_index_points_at_it(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "MEMORY.md").write_text("# Memory\n\n- [Storage](project-storage.md)\n")
    (docs / "project-storage.md").write_text(TYPED)
    (docs / "api.md").write_text(DOC)
    ws = Workspace(docs, Config(select=("MF001", "IX010")))
    api = ws.document(docs / "api.md")
    assert api is not None
    assert not_memory(ws, api) == "a project document in docs/ that the index does not point at"
    assert _codes(ws, "api.md") == []
    ws.set_text(
        docs / "MEMORY.md", "# Memory\n\n- [Storage](project-storage.md)\n- [API](api.md)\n"
    )
    api = ws.document(docs / "api.md")
    assert api is not None
    assert not_memory(ws, api) is None
    assert _codes(ws, "api.md") == ["MF001", "MF001"]  # lacks name and type, in a Claude-style root


def test_skill_frontmatter_is_recognised_by_its_keys_folder_or_wording(tmp_path: Path) -> None:
    root = tmp_path / ".claude" / "memory"
    root.mkdir(parents=True)
    (root / "MEMORY.md").write_text("- [Storage](project_storage.md)\n")
    (root / "project_storage.md").write_text(TYPED)
    cases = {
        "a.md": "---\nname: a\ndescription: Drafts notes\nallowed-tools: Read\n---\n",
        "b.md": "---\nname: b\ndescription: Drafts notes. Use when asked for notes.\n---\n",
        "c.md": "---\nname: c\ndescription: the user's editor preferences\n---\n",  # a memory slip
    }
    for name, text in cases.items():
        (root / name).write_text(text)
    ws = Workspace(root, Config(select=("MF001",)))
    found = {}
    for name in cases:
        doc = ws.document(root / name)
        assert doc is not None
        found[name] = not_memory(ws, doc)
    assert found["a.md"] is not None
    assert found["b.md"] is not None
    assert found["c.md"] is None
    assert _codes(ws, "c.md") == ["MF001"]  # the memory lacking `type` is still reported


def test_fix_never_writes_an_empty_type(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    (tmp_path / "LOG.md").write_text("# Log\n")
    (memory / "MEMORY.md").write_text("# Memory\n\n- [Notes](notes.md)\n")
    (memory / "notes.md").write_text("---\nname: notes\ndescription: loose notes\n---\nText.\n")
    ws = Workspace(tmp_path, Config(select=("MF001",)))
    text, applied = fix_text(ws, memory / "notes.md", NOW)
    assert applied == 0  # no type can be derived: the finding stays, without a fix
    assert "type:" not in text
    assert _codes(ws, "memory/notes.md") == ["MF001"]


def test_verbose_notes_say_what_was_left_alone(tmp_path: Path) -> None:
    from memls.core.rules.recognise import recognised

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "MEMORY.md").write_text("# Memory\n\n- [Storage](project-storage.md)\n")
    (docs / "project-storage.md").write_text(TYPED)
    (docs / "api.md").write_text(DOC)
    (docs / "LOG.md").write_text(
        "# Log\n\nNewest entry on top.\n\n## 2026-11-02 — b\n\n## 2026-11-01 — a\n"
    )
    ws = Workspace(docs)
    notes = recognised(ws, ws.paths())
    assert (
        "api.md: a project document in docs/ that the index does not point at: not judged as memory"
        in notes
    )
    assert any(n.startswith("LOG.md: newest first (line 3 says so)") for n in notes)


def _long_index(lines: int) -> str:
    return "# Notes\n" + "".join(f"- note {i}\n" for i in range(lines))


def test_ix011_leaves_a_repository_memory_folder_that_claude_code_does_not_cut(
    tmp_path: Path,
) -> None:
    """A persona's memory/MEMORY.md inside a repository is read whole by what reads it:
    the 200-line cut is Claude Code's own index's (its folder, .claude, memls checkpoints)."""
    (tmp_path / ".git").mkdir()
    memory = tmp_path / "persona" / "memory"
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text(_long_index(260))
    ws = Workspace(memory, Config(select=("IX011",)))
    assert ws.repo_root is not None
    assert _codes(ws, "MEMORY.md") == []
    # the same folder once it keeps memls checkpoints is Claude Code's index: cut at 200
    (memory / "checkpoint-main.md").write_text("# Checkpoint: main\n")
    ws = Workspace(memory, Config(select=("IX011",)))
    assert _codes(ws, "MEMORY.md") == ["IX011"]
    # and outside any repository (Claude Code's own ~/.claude/projects/<slug>/memory)
    alone = tmp_path.parent / (tmp_path.name + "-alone")
    alone.mkdir()
    (alone / "MEMORY.md").write_text(_long_index(260))
    ws = Workspace(alone, Config(select=("IX011",)))
    if ws.repo_root is None:
        assert _codes(ws, "MEMORY.md") == ["IX011"]


def test_ix010_a_file_the_repositorys_hooks_write_and_inject_is_reached(tmp_path: Path) -> None:
    """A session log a Claude Code hook writes (and SessionStart injects) needs no index
    link; the same file no hook, command or setting names is unreachable."""
    (tmp_path / ".git").mkdir()
    memory = tmp_path / ".claude" / "memory"
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text("# Memory\n\n- [Decisions](decisions.md)\n")
    (memory / "decisions.md").write_text("- sqlite\n")
    (memory / "session-log.md").write_text("# Session log\n\n- worked on auth\n")
    ws = Workspace(memory, Config(select=("IX010",)))
    assert _codes(ws, "session-log.md") == ["IX010"]
    hooks = tmp_path / ".claude" / "hooks"
    hooks.mkdir()
    (hooks / "precompact.sh").write_text(
        '#!/bin/sh\necho "- $(date)" >> "$CLAUDE_PROJECT_DIR/.claude/memory/session-log.md"\n'
    )
    ws = Workspace(memory, Config(select=("IX010",)))
    assert _codes(ws, "session-log.md") == []
