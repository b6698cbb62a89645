"""Memory the repository's agent instructions name (issue 22): AGENTS.md or CLAUDE.md tells
the agent to read `.docs/ai/`, to append to `diary/`, to keep a journal in `docs/MEMORY.md`.
Those places are memory roots (kind ``notes``, judged by the generic rules only), found by
``memls check`` and checked live by the language server — and code, tooling and project
documents the same instructions mention are not.

Every repository here is written by the test (no text from real repositories)."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from memls.core.instructed import named_above
from memls.core.workspace import RootKind, discover, is_memory_path, memory_files, root_kind
from tests.cli_helpers import run_memls
from tests.lsp_helpers import git, open_params, start, wait_for_diagnostics
from tests.test_secrets import rand

AGENTS = """# Working here

At the start of each session read `.docs/ai/` for context. Before you stop, append a dated
entry to diary/ and write down what you learned in `wisdom/`.
Keep the project journal in [the journal](docs/JOURNAL.md).
Read `src/` for the code, `docs/api.md` for the API and `scripts/` for the tools.
Our commands live in `.claude/commands/`.

```
notes/ is an example folder in a code block, not an instruction
```
"""


def _write(base: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _repo(tmp_path: Path, agents: str = AGENTS, name: str = "AGENTS.md") -> Path:
    repo = tmp_path / "app"
    (repo / ".git").mkdir(parents=True)
    _write(
        repo,
        {
            name: agents,
            "README.md": "# App\n",
            "src/main.py": "print('hi')\n",
            "src/notes.md": "# Code notes\n",
            "scripts/run.md": "# Run\n",
            ".claude/commands/handoff.md": "Write a handoff.\n",
            ".docs/ai/overview.md": "# Overview\n\nSee [the plan](plan.md).\n",
            ".docs/ai/plan.md": "# Plan\n\n- first step\n",
            ".docs/ai/journal/2026-11-02.md": "# 2026-11-02\n\nDid a thing.\n",
            "diary/2026-11-01.md": "# 2026-11-01\n\nStarted.\n",
            "wisdom/tools.md": "# Tools\n\n- use the [runner](../gone.md)\n",
            "docs/JOURNAL.md": "# Journal\n\n## 2026-11-01\nStarted.\n",
            "docs/api.md": "# API\n\nSee [missing](nowhere.md).\n",
            "notes/example.md": "# Example\n",
        },
    )
    return repo


def _check(repo: Path) -> Any:
    proc = run_memls("check", ".", "--format", "json", "--exit-zero", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_folders_and_files_the_instructions_name_are_roots(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    data = _check(repo)
    roots = {r["path"]: r for r in data["roots"]}
    assert set(roots) == {".docs/ai", "diary", "wisdom", "docs"}, sorted(roots)
    for path in roots:
        assert roots[path]["kind"] == "notes", (path, roots[path]["kind"])
    # a named folder is read whole (its journal/ too); a named file's folder only that file
    assert roots[".docs/ai"]["files"] == [
        ".docs/ai/journal/2026-11-02.md",
        ".docs/ai/overview.md",
        ".docs/ai/plan.md",
    ]
    assert roots["docs"]["files"] == ["docs/JOURNAL.md"]
    # what the instructions mention that is not memory is not judged: the dead link in
    # docs/api.md (a project document) is no finding; the one in wisdom/ is
    found = {(d["path"], d["code"]) for d in data["diagnostics"]}
    assert ("wisdom/tools.md", "IX012") in found
    assert not any(p.startswith(("docs/api", "src/", "scripts/", "notes/")) for p, _ in found)


def test_only_generic_rules_judge_named_notes(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / "diary" / "MEMO.md").write_text("# Memo\n\n" + "word " * 20, encoding="utf-8")
    data = _check(repo)
    codes = {d["code"] for d in data["diagnostics"]}
    assert codes <= {"IX012", "MF003", "SZ001", "SC001", "SC002", "SC003", "SC004", "SC005"}
    root = next(r for r in data["roots"] if r["path"] == "diary")
    assert "IX012" in root["rules"]
    assert "MF003" in root["rules"]


def test_code_tooling_and_code_blocks_are_not_named_memory(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    named = named_above(repo)
    names = {p.relative_to(repo).as_posix() for p in named.folders | named.files}
    assert names == {".docs/ai", "diary", "wisdom", "docs/JOURNAL.md"}


def test_a_line_that_does_not_speak_of_memory_names_nothing(tmp_path: Path) -> None:
    text = "Read `guide/` before you change the API; update `reference/` with new endpoints.\n"
    repo = _repo(tmp_path, agents=text)
    _write(repo, {"guide/a.md": "# A\n", "reference/b.md": "# B\n"})
    assert named_above(repo).folders == frozenset()
    assert [r for r in discover(repo).roots if r.name in ("guide", "reference")] == []


def test_claude_md_and_a_sub_project_agents_md_count(tmp_path: Path) -> None:
    repo = _repo(tmp_path, agents="# Project\n", name="CLAUDE.md")
    _write(
        repo,
        {
            "CLAUDE.md": "Remember decisions across sessions: update `memory-notes/`.\n",
            "memory-notes/decisions.md": "# Decisions\n",
            "services/api/AGENTS.md": "Keep a session log in `worklog/` and read it first.\n",
            "services/api/worklog/2026-11-03.md": "# 2026-11-03\n",
        },
    )
    found = {r.relative_to(repo).as_posix() for r in discover(repo).roots}
    assert {"memory-notes", "services/api/worklog"} <= found
    assert root_kind(repo / "services" / "api" / "worklog") is RootKind.NOTES


def test_a_named_folder_of_code_is_not_memory(tmp_path: Path) -> None:
    repo = _repo(tmp_path, agents="Record what each session learned in `tools/memory/`.\n")
    _write(repo, {"tools/memory/a.py": "x = 1\n", "tools/memory/b.py": "y = 2\n"})
    _write(repo, {"tools/memory/c.md": "# C\n"})
    assert repo / "tools" / "memory" not in named_above(repo).folders


def test_where_a_notes_root_keeps_its_files(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    docs = repo / "docs"
    assert root_kind(docs) is RootKind.NOTES
    assert memory_files(docs) == [docs / "JOURNAL.md"]
    assert is_memory_path(docs, docs / "JOURNAL.md")
    assert not is_memory_path(docs, docs / "api.md")
    ai = repo / ".docs" / "ai"
    assert is_memory_path(ai, ai / "journal" / "2026-11-04.md")  # not on disk yet


@pytest_lsp.fixture(  # type: ignore[untyped-decorator]
    params=["visual_studio_code", "neovim"],
    config=ClientServerConfig(server_command=[sys.executable, "-m", "memls.lsp"]),
)
async def client(
    request: pytest.FixtureRequest, lsp_client: LanguageClient, tmp_path: Path
) -> AsyncIterator[None]:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    _write(
        repo,
        {
            "AGENTS.md": "At the start of every session read `.docs/ai/` first.\n",
            ".docs/ai/overview.md": "# Overview\n",
            "memory-bank/activeContext.md": "# Active context\n\nWorking on parsing.\n",
            "memory-bank/progress.md": "# Progress\n\n- parser\n",
            "memory-bank/projectbrief.md": "# Brief\n\nA parser.\n",
            "memory-bank/journal/2026-11-01.md": "# 2026-11-01\n\nStarted.\n",
        },
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    await start(lsp_client, request.param, repo)
    yield
    await lsp_client.shutdown_session()


@pytest.mark.parametrize(
    "rel", [".docs/ai/journal/parser-notes.md", "memory-bank/journal/parser-notes.md"]
)
async def test_the_server_checks_named_notes_and_a_memory_bank_journal_live(
    client: LanguageClient, tmp_path: Path, rel: str
) -> None:
    path = tmp_path / "repo" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "# A day\n\nSee [the plan](no-such-plan.md).\n"
    client.text_document_did_open(open_params(path, text))
    diags = await wait_for_diagnostics(client, path, lambda codes: "IX012" in codes)
    assert any("no-such-plan.md" in d.message for d in diags)


def test_a_memory_path_on_a_line_does_not_make_its_neighbours_memory(tmp_path: Path) -> None:
    text = "Checked for duplicates over `guides/`, `memories/` and `CLAUDE.md`.\n"
    repo = _repo(tmp_path, agents=text)
    _write(repo, {"guides/a.md": "# A\n", "memories/b.md": "# B\n"})
    named = named_above(repo)
    assert repo / "memories" in named.folders
    assert repo / "guides" not in named.folders


def test_a_notes_folder_of_ideas_is_not_memory_by_its_name(tmp_path: Path) -> None:
    text = "- **`docs/ideas/`** and `docs/notes/` — exploration only: brainstorming, research.\n"
    repo = _repo(tmp_path, agents=text)
    _write(repo, {"docs/notes/a.md": "# A\n", "docs/ideas/b.md": "# B\n"})
    assert named_above(repo).folders == frozenset()


def test_folders_of_session_notes_diaries_and_dated_checkpoints(tmp_path: Path) -> None:
    """Memory by a folder's name and its files' names, with no instruction naming it."""
    repo = _repo(tmp_path, agents="# Working here\n")
    _write(
        repo,
        {
            ".claude/sessions/2026-01-24-stats.md": "# Stats\n\nDone.\n",
            ".claude/sessions/2026-01-29-metrics.md": "# Metrics\n\nDone.\n",
            ".claude/sessions/INDEX.md": "# Sessions\n\n- [stats](2026-01-24-stats.md)\n",
            "diary/2026-01-31.md": "# A day\n",
            "docs/checkpoints/2026-04-21-cp03.md": "# CP 3\n\nState.\n",
            "docs/checkpoints/2026-04-24-cp04.md": "# CP 4\n\nState.\n",
            "docs/checkpoints/README.md": "# About checkpoints\n",
            "src/sessions/handler.md": "# Handler\n",  # one undated note: not a folder of notes
        },
    )
    found = {r.relative_to(repo).as_posix(): root_kind(r) for r in discover(repo).roots}
    for rel in (".claude/sessions", "diary", "docs/checkpoints"):
        assert found.get(rel) is RootKind.NOTES, (rel, found)
    assert "src/sessions" not in found
    sessions = repo / ".claude" / "sessions"
    assert [p.name for p in memory_files(sessions)] == [
        "2026-01-24-stats.md",
        "2026-01-29-metrics.md",
        "INDEX.md",
    ]


def test_rule_folders_are_instructions_too(tmp_path: Path) -> None:
    """Claude Code loads `.claude/rules/*.md`, Cursor `.cursor/rules/*.mdc`: a knowledge base
    they tell the agent to keep is memory."""
    repo = _repo(tmp_path, agents="# Working here\n")
    _write(
        repo,
        {
            ".claude/rules/knowledgebase.md": "After each session record what you learned in `kb/`.\n",
            ".cursor/rules/memory.mdc": "Read `.cursor/memory/` at the start of every session.\n",
            "kb/decision-log.md": "# Decisions\n",
            ".cursor/memory/activeState.md": "# State\n",
        },
    )
    names = {p.relative_to(repo).as_posix() for p in named_above(repo).folders}
    assert {"kb", ".cursor/memory"} <= names


def test_more_notes_by_their_names(tmp_path: Path) -> None:
    """A `Memory.md` journal at the top, an agent's workflow folder with its lessons, dated
    checkpoints in `checkpoints-pre-phase3/`, a `handoff/` of dated notes, a lone dated
    note in `.claude/sessions/` — each a notes root reading what it holds."""
    repo = _repo(tmp_path, agents="# Working here\n")
    journal = "# Memory\n\n## 2026-01-02\nStarted.\n\n## 2026-01-03\nMore.\n"
    _write(
        repo,
        {
            "Memory.md": journal,
            "docs/agent-workflow/lessons.md": "# Lessons\n\n- check the cache\n",
            "docs/agent-workflow/todo.md": "# Todo\n\n- ship\n",
            "docs/archive/checkpoints-pre-phase3/2025-11-24-session-10.md": "# S10\n",
            "docs/archive/checkpoints-pre-phase3/2025-11-25-session-11.md": "# S11\n",
            "docs/handoff/2025-12-01-01-REQUEST-schema.md": "# Request\n",
            "docs/handoff/2025-12-02-02-REPLY-schema.md": "# Reply\n",
            ".claude/sessions/2026-07-01-closure.md": "# Closure\n",
            ".claude/sessions/INDEX.md": "# Sessions\n",
            ".claude/sessions/README.md": "# About\n",
        },
    )
    found = {r.relative_to(repo).as_posix(): r for r in discover(repo).roots}
    for rel in (
        ".",
        "docs/agent-workflow",
        "docs/archive/checkpoints-pre-phase3",
        "docs/handoff",
        ".claude/sessions",
    ):
        assert rel in found, (rel, sorted(found))
        assert root_kind(found[rel]) is RootKind.NOTES, rel
    assert memory_files(repo) == [repo / "Memory.md"]  # the top: its journal only


def test_a_handoff_root_reads_the_lessons_its_instructions_name(tmp_path: Path) -> None:
    repo = _repo(tmp_path, agents="Record lessons for the next session in `lessons-learned.md`.\n")
    _write(
        repo,
        {
            "HANDOFF.md": "# Handoff\n\n## Current State\nWorking on `src/main.py`.\n",
            "lessons-learned.md": "# Lessons\n",
            "notes.md": "# Project notes\n",
        },
    )
    assert root_kind(repo) is RootKind.HANDOFF
    assert memory_files(repo) == [repo / "HANDOFF.md", repo / "lessons-learned.md"]


def test_memory_said_of_another_path_in_the_same_list_names_nothing(tmp_path: Path) -> None:
    text = (
        "Choose the right form (a memory bullet in CLAUDE.md, an update to a fragment in "
        "`guides/`, a new skill) and commit it.\n"
        "At the start of each session, read `.docs/ai/`.\n"
    )
    repo = _repo(tmp_path, agents=text)
    _write(repo, {"guides/a.md": "# A\n"})
    names = {p.relative_to(repo).as_posix() for p in named_above(repo).folders}
    assert names == {".docs/ai"}


def test_a_linked_file_is_named_with_the_words_around_the_link(tmp_path: Path) -> None:
    text = "Before you stop, record what changed in [the changes page](docs/CHANGES.md).\n"
    repo = _repo(tmp_path, agents="# x\n")
    _write(repo, {"CLAUDE.md": text, "docs/CHANGES.md": "# Changes\n"})
    assert named_above(repo).files == frozenset()  # no word of memory: a project page
    _write(
        repo, {"CLAUDE.md": "Each session, record what changed in [changes](docs/CHANGES.md).\n"}
    )
    assert named_above(repo).files == frozenset({repo / "docs" / "CHANGES.md"})


@pytest.mark.parametrize(
    "line",
    [
        "Read `context.md` for project orientation; `docs/` is the source of truth.",
        "Whenever a task needs the user, add a bullet to `TRACKER.md § Manual work`.",
        "Add a one-line entry to `DECISIONS.md` itself, newest on top.",
        "Update [the status](docs/STATUS.md) when you finish a task.",
        "Keep `NEXT_STEPS.md` current.",
    ],
)
def test_a_state_file_the_agent_is_told_to_read_or_update_is_memory(
    tmp_path: Path, line: str
) -> None:
    """A file that keeps the project's state by its name (status, todo, tracker, decisions,
    context, next steps) is memory when the instructions tell the agent to read or update
    it, with or without a word of memory; named in passing, it is not."""
    repo = _repo(tmp_path, agents="# x\n")
    names = ["context.md", "TRACKER.md", "DECISIONS.md", "docs/STATUS.md", "NEXT_STEPS.md"]
    _write(repo, dict.fromkeys(names, "# State\n") | {"CLAUDE.md": line + "\n"})
    [named] = named_above(repo).files
    assert named.relative_to(repo).as_posix() in names
    _write(repo, {"CLAUDE.md": "The build is described in `docs/STATUS.md` and `TRACKER.md`.\n"})
    assert named_above(repo).files == frozenset()


def test_a_sentence_wrapped_across_lines_is_read_whole(tmp_path: Path) -> None:
    """Instructions are soft-wrapped prose: the sentence that names a file on one line and
    says the reading on the next still names it; a lead-in and its lone paths stay apart."""
    text = (
        "When a session ends, update\n"
        "`HANDBOOK.md` with what changed. Other notes live in `docs/notes.md`.\n\n"
        "Project files:\n"
        "`docs/plan.md`\n"
    )
    repo = _repo(tmp_path, agents="# x\n")
    notes = {"HANDBOOK.md": "# H\n", "docs/notes.md": "# N\n", "docs/plan.md": "# P\n"}
    _write(repo, {"CLAUDE.md": text} | notes)
    assert named_above(repo).files == frozenset({repo / "HANDBOOK.md"})


def test_roots_the_blind_holdouts_showed(tmp_path: Path) -> None:
    """NEXT_SESSION handoffs, a SESSION_LOG.md journal, a CHECKPOINT.md, `checkpoints/`
    holding only `latest.md`, an `agent-notes/` folder, a memory bank reorganised into
    subfolders — found; a commands folder describing checkpoints and a plan named
    `…-handoff.md` in `plans/` — not."""
    repo = _repo(tmp_path, agents="# Working here\n")
    dated = "# Log\n\n## 2026-01-02\nStarted.\n\n## 2026-01-03\nMore.\n"
    state = "# Next session\n\n## Current State\nWorking on `src/main.py`.\n"
    _write(
        repo,
        {
            "NEXT_SESSION.md": state,
            "docs/dev/NEXT_SESSION_2026-06-01.md": state,
            "tools/SESSION_LOG.md": dated,
            "state/CHECKPOINT.md": "# Checkpoint\n\nWhere we are.\n",
            ".claude/checkpoints/latest.md": "# Latest\n\nWhere we are.\n",
            "agent-notes/README.md": "# Timeline\n",
            "memory-bank/current/activeContext.md": "# Active\n",
            "memory-bank/history/2026-01.md": "# January\n",
            ".claude/commands/checkpoint-save.md": "Save a checkpoint.\n",
            ".claude/commands/checkpoint-load.md": "Load a checkpoint.\n",
            "docs/plans/2026-06-23-foreign-handoff.md": "# Plan\n\n## Next Steps\n- build\n",
        },
    )
    found = {r.relative_to(repo).as_posix(): root_kind(r) for r in discover(repo).roots}
    assert found.get(".") is RootKind.HANDOFF
    assert found.get("docs/dev") is RootKind.HANDOFF
    for rel in ("tools", "state", ".claude/checkpoints", "agent-notes", "memory-bank"):
        assert found.get(rel) is RootKind.NOTES, (rel, found)
    assert ".claude/commands" not in found
    assert "docs/plans" not in found
    assert memory_files(repo / "tools") == [repo / "tools" / "SESSION_LOG.md"]


def test_nothing_under_skills_is_memory(tmp_path: Path) -> None:
    """A skill's references (`optional-skills/mlops/x/references/checkpoint.md`, a page on
    model checkpointing) are instructions, however their files are named."""
    repo = _repo(tmp_path, agents="# Working here\n")
    _write(
        repo,
        {
            "optional-skills/mlops/x/references/checkpoint.md": "# Checkpointing\n",
            "optional-skills/mlops/x/references/CHECKPOINT.md": "# Checkpointing\n",
            "skills/y/sessions/2026-01-01-a.md": "# A\n",
            "skills/y/sessions/2026-01-02-b.md": "# B\n",
            "docs/checkpoint.md": "# How checkpointing works\n",
        },
    )
    found = [r.relative_to(repo).as_posix() for r in discover(repo).roots]
    assert not [r for r in found if "skills" in r or r == "docs"], found


def test_roots_the_third_holdout_showed(tmp_path: Path) -> None:
    """Session snapshots handed to each new session (`SNAPSHOT-app.md` at the top, a
    `snapshots/` series), a `SESSION_LOG.md` whose entries are headed by phase, not date,
    `docs/ai/` beside its `learnings/`, a Portuguese `contexto/` holding the current state,
    a dated `docs/PLANOS_SESSAO/`, a `memory/` with its own `MEMORY_INDEX.md`, a
    `sessions/` holding its first note and a handoff dated in Spanish — found; a release's `PRODUCTION_SNAPSHOT_….md`, a
    `context/` of other pages and a repository named for agents — not."""
    repo = _repo(tmp_path, agents="# Working here\n")
    snapshot = "# Snapshot\n\n> Give this to the agent as a session starts. Updated 2026-03-30.\n"
    _write(
        repo,
        {
            "SNAPSHOT-app.md": snapshot,
            "snapshots/SNAPSHOT-2026-03-18-auth.md": snapshot,
            "snapshots/SNAPSHOT-2026-03-19-deploy.md": snapshot,
            "snapshots/README.md": "# Snapshots\n",
            "tools/SESSION_LOG.md": "# Session log\n\n## Phase 1\nDone.\n\n## Phase 2\nNext.\n",
            "docs/ai/index.md": "# Overview\n",
            "docs/ai/context.md": "# Gotchas\n",
            "docs/ai/learnings/auth.md": "# Auth\n\nTokens expire.\n",
            "docs/ai/learnings/teams.md": "# Teams\n\nOne owner each.\n",
            "contexto/ESTADO_ATUAL.md": "# Estado atual\n",
            "contexto/COMO_AGIR.md": "# Como agir\n",
            "docs/PLANOS_SESSAO/2026-04-28_revisao.md": "# Revisão\n",
            "docs/PLANOS_SESSAO/2026-04-29_verdade.md": "# Verdade\n",
            "docs/PLANOS_SESSAO/README.md": "# Planos\n",
            "home/memory/MEMORY_INDEX.md": "# Memory index\n\n| File | Who |\n|---|---|\n",
            "home/memory/team.md": "# Team\n",
            "docs/sessions/session-01.md": "# Session 1\n\nSet up the project.\n",
            "chat/BRAND_HANDOFF.md": "# Handoff\n\n> Última actualización: 22 de julio de 2026.\n",
            "release/PRODUCTION_SNAPSHOT_20261201.md": "# Release\n",
            "release/notes.txt": "release\n",
            "web/context/overview.md": "# Overview\n",
            "web/context/routing.md": "# Routing\n",
        },
    )
    found = {r.relative_to(repo).as_posix(): root_kind(r) for r in discover(repo).roots}
    assert found.get(".") is RootKind.HANDOFF, found
    assert found.get("snapshots") is RootKind.HANDOFF, found
    for rel in ("tools", "docs/ai", "contexto", "docs/PLANOS_SESSAO"):
        assert found.get(rel) is RootKind.NOTES, (rel, found)
    assert found.get("docs/ai/learnings") is RootKind.MEMORY, found
    assert found.get("home/memory") is RootKind.MEMORY, found  # an index of its own
    assert found.get("docs/sessions") is RootKind.NOTES, found  # the first of a series
    assert found.get("chat") is RootKind.HANDOFF, found  # dated in Spanish
    assert "release" not in found, found
    assert "web/context" not in found, found
    assert memory_files(repo / "tools") == [repo / "tools" / "SESSION_LOG.md"]

    named = tmp_path / "ai-config"
    (named / ".git").mkdir(parents=True)
    _write(named, {"AGENTS.md": "# Agents\n", "GEMINI.md": "# Gemini\n", "memory/a.md": "# A\n"})
    assert named not in discover(named).roots


def test_a_folder_named_as_knowledge_kept_across_sessions(tmp_path: Path) -> None:
    """A past tense says it as well: "`docs/findings/` — standing knowledge kept across
    sessions" names memory; the same line of another folder without memory words does not."""
    text = (
        "# Project\n\n"
        "- `docs/findings/` — standing knowledge kept across sessions\n"
        "- `docs/guide/` — kept up to date by hand\n"
    )
    repo = _repo(tmp_path, agents=text, name="CLAUDE.md")
    _write(
        repo,
        {
            "docs/findings/build-cache.md": "# Build cache\n\nClear it after a toolchain bump.\n",
            "docs/findings/flaky-tests.md": "# Flaky tests\n\nThe e2e suite needs a retry.\n",
            "docs/guide/a.md": "# A\n",
        },
    )
    assert named_above(repo).folders == frozenset({(repo / "docs/findings").resolve()})
    roots = {r.relative_to(repo).as_posix() for r in discover(repo).roots}
    assert "docs/findings" in roots
    assert "docs/guide" not in roots


def test_a_lead_in_names_the_list_below_it_in_any_language(tmp_path: Path) -> None:
    """A line ending in ':' introduces the list (or the lone path) below it: "Voir les
    fichiers de mémoire projet :" names the files listed under it, and so does "mettre à
    jour :" under a heading that speaks of memory; a lead-in of code reading names
    nothing."""
    text = (
        "# CLAUDE.md — Règles\n\n## Contexte du projet\n\n"
        "Voir les fichiers de mémoire projet :\n\n"
        "- `docs/ai/PROJECT.md` — objectif, stack\n"
        "- `docs/ai/PROGRESS.md` — terminé / en cours\n\n"
        "## Mise à jour de la mémoire projet\n\n"
        "Quand une fonctionnalité est terminée, mettre à jour :\n\n"
        "`notes/STATE.md`\n\n"
        "## Code\n\nRead these before you change the API:\n\n- `docs/api/endpoints.md`\n"
    )
    repo = _repo(tmp_path, agents=text, name="CLAUDE.md")
    _write(
        repo,
        {
            "docs/ai/PROJECT.md": "# Projet\n\nUn planificateur de repas.\n",
            "docs/ai/PROGRESS.md": "# Progrès\n\n## Terminé\n- recettes\n",
            "notes/STATE.md": "# État\n\nLa liste de courses est à moitié faite.\n",
            "docs/api/endpoints.md": "# Endpoints\n",
        },
    )
    files = {p.relative_to(repo).as_posix() for p in named_above(repo).files}
    assert files == {"docs/ai/PROJECT.md", "docs/ai/PROGRESS.md", "notes/STATE.md"}
    roots = {r.relative_to(repo).as_posix() for r in discover(repo).roots}
    assert {"docs/ai", "notes"} <= roots
    assert "docs/api" not in roots


def test_instructions_in_japanese_and_a_progress_log_name_memory(tmp_path: Path) -> None:
    """A line in Japanese (or Korean) telling the agent to append to a timeline at each
    session's end names it; a `progress-log.md` is memory by its name on a line that updates it; a line
    about a requirements document names nothing."""
    repo = _repo(
        tmp_path,
        agents=(
            "# 作業ルール\n\n"
            "各セッション終了時、`docs/history/TIMELINE.md` の末尾にその回の決定を追記すること。\n"
            "Update `docs/progress-log.md` at the end of each phase.\n"
            "각 세션이 끝나면 `docs/decisions/RECORD.md` 에 결정을 기록하세요.\n"
            "Requirements: `docs/product/PRD.md`\n"
        ),
    )
    _write(
        repo,
        {
            "docs/history/TIMELINE.md": "# Timeline\n\n## 第1回\n- parser\n",
            "docs/progress-log.md": "# Progress log\n\n- phase 1 done\n",
            "docs/decisions/RECORD.md": "# 결정\n\n- 파서\n",
            "docs/product/PRD.md": "# PRD\n\nWhat we build.\n",
        },
    )
    roots = {r["path"]: r for r in _check(repo)["roots"]}
    assert roots["docs/history"]["files"] == ["docs/history/TIMELINE.md"]
    assert roots["docs"]["files"] == ["docs/progress-log.md"]
    assert roots["docs/decisions"]["files"] == ["docs/decisions/RECORD.md"]  # in Korean
    assert "docs/product" not in roots


def test_a_plain_text_progress_file_the_instructions_update_is_memory(tmp_path: Path) -> None:
    """The long-running harness pattern: the agent keeps its state between context windows
    in `claude-progress.txt` (or `docs/progress.txt`) and its instructions tell it to read
    and update the file. Such a file is memory by its name on a line that reads or updates
    it, and judged (a token written into it is found); a requirements file and a document
    whose name merely contains "progress" are not."""
    token = "ghp_" + rand(36)
    repo = _repo(
        tmp_path,
        agents=(
            "# Working here\n\n"
            "Update docs/progress.txt briefly if significant work was done.\n"
            "First read `claude-progress.txt` and the git log.\n"
            "Install with `pip install -r requirements.txt` and read requirements.txt first.\n"
            "Read `docs/design/thesis-and-progress-architecture.md` for the design.\n"
        ),
    )
    _write(
        repo,
        {
            "docs/progress.txt": "Progress\n\n2026-11-01\n- parser done\n",
            "claude-progress.txt": f"Session 3: tests green, pushed with {token}.\n",
            "requirements.txt": "pygls\n",
            "docs/design/thesis-and-progress-architecture.md": "# Design\n",
        },
    )
    data = _check(repo)
    roots = {r["path"]: r for r in data["roots"]}
    assert roots["docs"]["files"] == ["docs/progress.txt"], roots.get("docs")
    assert "claude-progress.txt" in roots["."]["files"], roots.get(".")
    assert "requirements.txt" not in roots["."]["files"]
    assert "docs/design" not in roots
    found = [d for d in data["diagnostics"] if d["path"] == "claude-progress.txt"]
    assert [d["code"] for d in found] == ["SC001"], found
    assert token not in json.dumps(data)
