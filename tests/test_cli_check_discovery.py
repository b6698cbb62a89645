"""`memls check REPO` finds memory by evidence, and says honestly what it read (issue 22).

Every repository here is written by the test (no text from real repositories): one kind of
memory per test — checkpoint folders, memory banks, docs/MEMORY.md, handoffs by their other
names, sub-project handoffs, memory subfolders, `.MD`, Serena, Codex, the memory tool's
folder, Hermes — and what memls must not take for memory (a design note named MEMORY.md, a
slash command named handoff.md, a memory bank inside node_modules).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memls.core.workspace import Layout, RootKind, discover, layout_choice, root_kind
from tests.cli_helpers import run_memls


def _git_in(repo: Path) -> Callable[..., None]:
    """A git runner for ``repo`` (a fixed author, output captured)."""

    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
            cwd=repo,
            check=True,
            capture_output=True,
        )

    return git


def _repo(tmp_path: Path, name: str = "app") -> Path:
    repo = tmp_path / name
    (repo / ".git").mkdir(parents=True)
    (repo / "README.md").write_text("# App\n\nWhat the app does.\n")
    (repo / "src").mkdir()
    (repo / "src" / "main.py").write_text("print('hi')\n")
    return repo


def _write(base: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _check(repo: Path, *args: str) -> Any:
    proc = run_memls("check", ".", "--format", "json", "--exit-zero", *args, cwd=repo)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _fake_github_token() -> str:
    """A token of GitHub's shape made at run time (never a literal in the repository)."""
    import secrets as random_source
    import string

    return "ghp_" + "".join(
        random_source.choice(string.ascii_letters + string.digits) for _ in range(36)
    )


def _roots(data: Any) -> dict[str, Any]:
    return {r["path"]: r for r in data["roots"]}


def _codes(data: Any) -> list[tuple[str, str]]:
    return [(d["path"], d["code"]) for d in data["diagnostics"]]


CHECKPOINT = (
    "# Checkpoint: {name}\n\nBranch: main\nSaved: 2026-11-20 10:00\n\n## Next Action\nShip it.\n\n"
    "## Done This Session\n- wrote the parser\n\n## Failed Approaches\nNone\n\n"
    "## Modified Files\n- src/main.py\n"
)


def test_checkpoint_folders_anywhere_are_roots(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            "checkpoints/checkpoint-parser.md": CHECKPOINT.format(name="parser"),
            "checkpoints/checkpoint-lexer.md": CHECKPOINT.format(name="lexer"),
            "docs/checkpoints/checkpoint-api.md": CHECKPOINT.format(name="api"),
            "docs/checkpoints/README.md": "# About these checkpoints\n",
            "docs/guide.md": "# Guide\n",
        },
    )
    data = _check(repo)
    roots = _roots(data)
    assert set(roots) == {"checkpoints", "docs/checkpoints"}
    assert roots["checkpoints"]["file_count"] == 2
    # the checkpoints folder of docs/: its README is the project's, not a memory file
    assert roots["docs/checkpoints"]["files"] == ["docs/checkpoints/checkpoint-api.md"]
    skipped = roots["docs/checkpoints"]["skipped"]
    assert [s["path"] for s in skipped] == ["docs/checkpoints/README.md"]


def test_a_checkpoint_named_note_among_other_notes_is_no_checkpoint_folder(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    notes = {f"issues/issue-{i}.md": f"# Issue {i}\n" for i in range(5)}
    notes["issues/checkpoint-cadence-plan.md"] = "# Plan for checkpoint cadence\n"
    _write(repo, notes)
    assert _check(repo)["roots"] == []


def test_memory_bank_is_found_and_judged_as_a_memory_bank(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            "memory-bank/projectbrief.md": "# Brief\n\nA CSV tool. See techContext.md.\n",
            "memory-bank/productContext.md": "# Product\n\nWho uses it.\n",
            "memory-bank/progress.md": "# Progress\n\n- reader done\n",
            "memory-bank/systemPatterns.md": "# Patterns\n",
            "memory-bank/journal/2026-11-20.md": "# Day\n\nWrote the reader.\n",
            "memory-bank/notes-on-csv.md": "# CSV\n\nQuirks; see [the spec](missing-spec.md).\n",
        },
    )
    data = _check(repo)
    (root,) = data["roots"]
    assert root["path"] == "memory-bank"
    assert root["kind"] == "memory-bank"
    assert "memory-bank/journal/2026-11-20.md" in root["files"]
    codes = _codes(data)
    assert ("memory-bank/projectbrief.md", "MB001") in codes  # no activeContext.md, techContext
    assert ("memory-bank/systemPatterns.md", "MB002") in codes  # only a heading
    assert ("memory-bank/notes-on-csv.md", "IX012") in codes  # a broken link is still found
    # memls's own format rules are not a memory bank's: no orphan, frontmatter or size notes
    assert not [c for _, c in codes if c.startswith(("IX010", "MF001", "SZ00", "CP", "HO"))]
    message = next(d["message"] for d in data["diagnostics"] if d["code"] == "MB001")
    assert "activeContext.md" in message
    assert "techContext.md" in message
    assert "productContext" not in message  # present


def test_a_complete_memory_bank_passes(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    names = ("projectbrief", "productContext", "activeContext", "systemPatterns", "techContext")
    _write(repo, {f".cursor/memory-bank/{n}.md": f"# {n}\n\nText.\n" for n in names})
    _write(repo, {".cursor/memory-bank/progress.md": "# Progress\n\n- done\n"})
    proc = run_memls("check", ".", cwd=repo)
    assert proc.returncode == 0
    assert "Checked root: .cursor/memory-bank (memory-bank, 6 files)" in proc.stdout
    assert "All checks passed." in proc.stdout


def test_memory_bank_activecontext_stale_in_git(tmp_path: Path) -> None:
    repo = tmp_path / "app"
    repo.mkdir()

    git = _git_in(repo)

    git("init", "-q", "-b", "main")
    _write(repo, {"memory-bank/memls.toml": "stale_commits = 3\n"})
    names = ("projectbrief", "productContext", "activeContext", "systemPatterns", "techContext")
    _write(repo, {f"memory-bank/{n}.md": f"# {n}\n\nText.\n" for n in names})
    _write(repo, {"memory-bank/progress.md": "# Progress\n\n- started\n"})
    git("add", "-A")
    git("commit", "-q", "-m", "bank")
    for i in range(4):
        _write(repo, {f"src/step{i}.py": f"x = {i}\n", "memory-bank/progress.md": f"- {i}\n"})
        git("add", "-A")
        git("commit", "-q", "-m", f"step {i}")
    data = _check(repo)
    stale = [d for d in data["diagnostics"] if d["code"] == "MB003"]
    assert [d["path"] for d in stale] == ["memory-bank/activeContext.md"]  # progress.md is kept
    assert "4 commits ago" in stale[0]["message"]
    assert "4 files outside" in stale[0]["message"]
    # an unfilled template holds no state to go stale: it is empty (MB002), not old
    _write(repo, {"memory-bank/activeContext.md": "# Active\n\n## Focus\n<!-- what now? -->\n"})
    git("add", "-A")
    git("commit", "-q", "-m", "template")
    for i in range(4):
        _write(repo, {f"src/more{i}.py": f"x = {i}\n", "memory-bank/progress.md": f"- m{i}\n"})
        git("add", "-A")
        git("commit", "-q", "-m", f"more {i}")
    codes = _codes(_check(repo))
    assert ("memory-bank/activeContext.md", "MB003") not in codes
    assert ("memory-bank/activeContext.md", "MB002") in codes


def test_dependency_bumps_do_not_make_a_memory_bank_stale(tmp_path: Path) -> None:
    """Renovate's and Dependabot's commits (`chore(deps): update helm release x to v2`,
    `Bump axios from 1.2.0 to 1.3.0`) move no work the bank describes; the project's own
    commits still do."""
    repo = tmp_path / "cluster"
    repo.mkdir()
    git = _git_in(repo)
    git("init", "-q", "-b", "main")
    _write(repo, {"memory-bank/memls.toml": "stale_commits = 3\n"})
    _write(
        repo, {f"memory-bank/{n}.md": f"# {n}\n\nText.\n" for n in ("activeContext", "progress")}
    )
    git("add", "-A")
    git("commit", "-q", "-m", "bank")
    bumps = (
        "chore(deps): update helm release cilium to v1.16.1",
        "fix(deps): update module github.com/acme/kit to v2",
        "Bump axios from 1.2.0 to 1.3.0",
        "chore(deps): update docker tag nginx to v1.27",
    )
    for i, subject in enumerate(bumps):
        _write(repo, {"infrastructure/versions.yaml": f"v: {i}\n"})
        git("add", "-A")
        git("commit", "-q", "-m", subject)
    assert [c for _, c in _codes(_check(repo)) if c == "MB003"] == []
    for i in range(3):
        _write(repo, {f"infrastructure/bgp{i}.yaml": f"peer: {i}\n"})
        git("add", "-A")
        git("commit", "-q", "-m", f"BGP peer {i}")
    stale = [d for d in _check(repo)["diagnostics"] if d["code"] == "MB003"]
    assert {d["path"] for d in stale} == {"memory-bank/activeContext.md", "memory-bank/progress.md"}
    assert "3 commits changed 3 files" in stale[0]["message"]
    # a bank that says it is no longer kept (`OBSOLETE.md`) is the record it was
    _write(repo, {"memory-bank/OBSOLETE.md": "# Obsolete\n\nThe bank moved to docs/.\n"})
    assert [c for _, c in _codes(_check(repo)) if c == "MB003"] == []


def test_a_sub_projects_memory_bank_is_stale_only_by_its_own_projects_commits(
    tmp_path: Path,
) -> None:
    """A repository of several projects (`day-1-app/`, `day-2-app/`, each with its own
    manifest): commits to a sibling project say nothing about `day-1-app/memory-bank/`; its
    own project's commits do. A bank kept under `docs/history/` is a record, never stale."""
    repo = tmp_path / "days"
    repo.mkdir()

    git = _git_in(repo)

    git("init", "-q", "-b", "main")
    bank = {
        f"day-1-app/memory-bank/{n}.md": f"# {n}\n\nText.\n" for n in ("activeContext", "progress")
    }
    old = {
        f"docs/history/memory-bank/{n}.md": f"# {n}\n\nOld.\n"
        for n in ("activeContext", "progress")
    }
    _write(repo, bank | old | {"day-1-app/package.json": "{}\n", "day-2-app/package.json": "{}\n"})
    toml = "stale_commits = 3\n"
    _write(
        repo,
        {"day-1-app/memory-bank/memls.toml": toml, "docs/history/memory-bank/memls.toml": toml},
    )
    git("add", "-A")
    git("commit", "-q", "-m", "banks")
    for i in range(4):
        _write(repo, {f"day-2-app/src/s{i}.js": f"x = {i}\n"})
        git("add", "-A")
        git("commit", "-q", "-m", f"day 2 step {i}")
    stale = [c for _, c in _codes(_check(repo)) if c == "MB003"]
    assert stale == []
    for i in range(4):
        _write(repo, {f"day-1-app/src/s{i}.js": f"x = {i}\n"})
        git("add", "-A")
        git("commit", "-q", "-m", f"day 1 step {i}")
    data = _check(repo)
    found = [d for d in data["diagnostics"] if d["code"] == "MB003"]
    assert {d["path"] for d in found} == {
        "day-1-app/memory-bank/activeContext.md",
        "day-1-app/memory-bank/progress.md",
    }
    assert "4 commits changed 4 files in day-1-app/" in found[0]["message"]


def test_docs_memory_index_with_dead_pointers_is_found(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            "docs/MEMORY.md": "# Memory Index\n\n- [Overview](overview.md) — what was built\n"
            "- [Decisions](decisions.md) — why\n- [Bugs](bugs.md) — fixed ones\n",
            "docs/overview.md": "# Overview\n",
            "docs/INSTALL.md": "# Install\n",
        },
    )
    data = _check(repo)
    roots = _roots(data)
    assert list(roots) == ["docs"]
    assert roots["docs"]["files"] == ["docs/MEMORY.md", "docs/overview.md"]  # not INSTALL.md
    assert _codes(data) == [("docs/MEMORY.md", "IX009"), ("docs/MEMORY.md", "IX009")]


def test_a_design_note_named_memory_md_is_not_memory(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    prose = "The cache keeps entries for an hour and evicts the oldest first.\n" * 12
    _write(
        repo,
        {
            "docs/MEMORY.md": "# Memory system design\n\n" + prose + "| layer | where |\n|--|--|\n"
            "| short | `goal.md` |\n\nSee [the runtime](RUNTIME.md).\n",
            "docs/RUNTIME.md": "# Runtime\n",
        },
    )
    data = _check(repo)
    assert data["roots"] == []
    assert "No memory found" in data["message"]


def test_handoffs_by_other_names(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            "HANDOFF.md": "# Handoff\n\n## Current State\nParser done.\n\n## Next Steps\n\n",
            "docs/HANDOFF.md": "# The persistent guide\n\nUpdated 2026-11-20. Read this first.\n",
            "docs/ARCHITECTURE.md": "# Architecture\n",
            "docs/handoff-template.md": "# Handoff template\n\n## Current State\n\n",
            "packages/api/.handoff.md": "# Handoff\n\n## Current State\nAPI half done.\n",
            ".claude/commands/handoff.md": "---\ndescription: write a handoff\n---\nWrite one.\n",
        },
    )
    data = _check(repo)
    roots = _roots(data)
    assert set(roots) == {".", "docs", "packages/api"}
    assert all(r["kind"] == "handoff" for r in roots.values())
    assert roots["docs"]["files"] == ["docs/HANDOFF.md"]
    why = {s["path"]: s["why"] for s in roots["docs"]["skipped"]}
    assert "not a handoff" in why["docs/ARCHITECTURE.md"]
    assert "docs/handoff-template.md" in why  # a template is not a handoff
    assert roots["."]["files"] == ["HANDOFF.md"]  # README.md is the project's
    codes = _codes(data)
    assert ("HANDOFF.md", "HO002") in codes  # an empty Next Steps: the handoff rules apply
    assert not [c for _, c in codes if c.startswith(("IX", "MF", "SZ002"))]


def test_memory_subfolders_and_upper_case_md_are_reported(tmp_path: Path) -> None:
    repo = tmp_path / "notes"
    _write(
        repo,
        {
            "MEMORY.md": "# Project Memory\n\n- [Deploy](DEPLOY.MD) — how we ship\n",
            "DEPLOY.MD": "# Deploy\n\nRun the script.\n",
            "memory/archive/2025-old.md": "# Old notes\n",
            "memory/session-transcripts/s1.md": "# Session 1\n",
        },
    )
    data = _check(repo)
    roots = _roots(data)
    root = roots["."]
    assert "DEPLOY.MD" in root["files"]  # read as Markdown, and the index's link reaches it
    # the memory folder's subfolders are memory filed by topic: roots of notes of their own
    assert set(roots) == {".", "memory/archive", "memory/session-transcripts"}
    assert roots["memory/archive"]["kind"] == "notes"
    assert roots["memory/archive"]["files"] == ["memory/archive/2025-old.md"]
    assert roots["memory/session-transcripts"]["files"] == ["memory/session-transcripts/s1.md"]
    assert not [s for s in root.get("skipped", []) if s["path"].startswith("memory/")]
    assert _codes(data) == []


def test_serena_codex_memory_tool_and_hermes_folders(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            ".serena/memories/project_overview.md": "# Overview\n\nA CLI.\n",
            ".serena/memories/suggested_commands.md": "# Commands\n\n`make test`\n",
            ".codex/memories/memory_summary.md": "Summary of what Codex learned.\n",
            ".codex/memories/MEMORY.md": "- see rollout_summaries/2026-11-20-parser.md\n",
            ".codex/memories/rollout_summaries/2026-11-20-parser.md": "Parser rollout.\n",
            "agent/memories/preferences.md": "User prefers tabs.\n",
            "hermes/memories/MEMORY.md": "Fact one about the project.\n§\nFact two.\n",
            "hermes/memories/USER.md": "Likes short answers.\n",
            "site/memories/README.md": "# Photos from our trips\n",
            "site/memories/2025-june.jpg": "JPEG",
            "site/memories/2025-july.jpg": "JPEG",
        },
    )
    roots = _roots(_check(repo))  # a site's album of photos with a README is no memory
    assert {p: r["kind"] for p, r in roots.items()} == {
        ".serena/memories": "serena",
        ".codex/memories": "codex",
        "agent/memories": "memory-tool",
        "hermes/memories": "hermes",
    }
    assert (
        ".codex/memories/rollout_summaries/2026-11-20-parser.md"
        in roots[".codex/memories"]["files"]
    )
    data = _check(repo)
    assert not [c for _, c in _codes(data) if c.startswith(("IX001", "IX010", "MF001"))]


def test_a_hermes_memory_file_under_another_folder_name(tmp_path: Path) -> None:
    """A repository that keeps Hermes's MEMORY.md at its top (entries split by `§` lines, no
    heading) is Hermes memory, not a memls index missing its `# ` title."""
    repo = _repo(tmp_path)
    entries = "\n§\n".join(f"Fact {i} about the project, kept by the agent." for i in range(5))
    _write(repo, {"MEMORY.md": entries + "\n", "USER.md": "Likes short answers.\n"})
    roots = _roots(_check(repo))
    assert {r["kind"] for r in roots.values()} == {"hermes"}
    assert not [c for _, c in _codes(_check(repo)) if c.startswith(("IX", "MF"))]


def test_a_hermes_home_store_without_separators_is_hermes_memory(tmp_path: Path) -> None:
    """A Hermes home (SOUL.md beside memories/) whose store holds one entry, so no `§` line:
    still Hermes memory, not a memls index missing its title; a memories/ folder with the
    same two files and no Hermes home around it is judged as before."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            "SOUL.md": "You are a careful assistant.\n",
            "memories/MEMORY.md": "The deploy key lives in the vault, not here.\n",
            "memories/USER.md": "Prefers short answers.\n",
        },
    )
    data = _check(repo)
    assert _roots(data)["memories"]["kind"] == "hermes"
    assert not [c for _, c in _codes(data) if c.startswith(("IX", "MF"))]
    other = _repo(tmp_path / "other")
    _write(other, {"memories/MEMORY.md": "A note.\n", "memories/USER.md": "A user.\n"})
    assert {r["kind"] for r in _roots(_check(other)).values()} != {"hermes"}


def test_codex_home_folder_when_pointed_at_it(tmp_path: Path) -> None:
    home = tmp_path / "home" / ".codex" / "memories"
    _write(home, {"memory_summary.md": "What I know.\n", "MEMORY.md": "- a note\n"})
    proc = run_memls("check", str(home), "--format", "json", cwd=tmp_path)
    data = json.loads(proc.stdout)
    (root,) = data["roots"]
    assert root["kind"] == "codex"
    assert root["file_count"] == 2


def test_the_walk_skips_dependencies_and_build_output(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    bank = {"projectbrief.md": "# b\n", "activeContext.md": "# a\n", "progress.md": "# p\n"}
    for folder in ("node_modules/pkg/memory-bank", ".venv/lib/memory-bank", "dist/memory-bank"):
        _write(repo, {f"{folder}/{n}": t for n, t in bank.items()})
    (repo / "env").mkdir()
    (repo / "env" / "pyvenv.cfg").write_text("home = /usr\n")
    _write(repo, {f"env/memory-bank/{n}": t for n, t in bank.items()})
    assert _check(repo)["roots"] == []
    found = discover(repo)
    assert found.roots == []
    assert found.truncated is None


def test_nothing_found_is_not_all_checks_passed(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    proc = run_memls("check", ".", "--verbose", cwd=repo)
    assert proc.returncode == 0
    assert "All checks passed" not in proc.stdout
    assert "No memory found in ." in proc.stdout
    assert "memory-bank/" in proc.stdout
    assert ".serena/memories/" in proc.stdout
    assert "Nothing was checked" in proc.stdout
    assert "folders)" in proc.stdout  # how far the walk went
    data = _check(repo)
    assert data["roots"] == []
    assert data["diagnostics"] == []
    assert "No memory found" in data["message"]
    assert data["searched"] == ["."]


def test_a_root_no_rule_applies_to_says_so(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _write(repo, {"agent/memories/notes.md": "A note.\n"})
    proc = run_memls("check", ".", "--ignore", "SC,SZ,IX,MF", cwd=repo)
    assert proc.returncode == 0
    assert "nothing was judged" in proc.stdout
    assert "All checks passed" not in proc.stdout


def test_json_and_verbose_list_files_read_and_skipped(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            ".claude/memory/MEMORY.md": "- [Reader](reader.md) — the reader\n",
            ".claude/memory/reader.md": "---\nname: reader\ndescription: d\ntype: project\n---\n",
            ".claude/memory/archive/old.md": "# old\n",
            ".claude/memory/notes.txt": "step 3\n",
        },
    )
    data = _check(repo)
    roots = _roots(data)
    assert set(roots) == {".claude/memory", ".claude/memory/archive"}  # the archive: notes
    root = roots[".claude/memory"]
    assert root["file_count"] == 2
    assert root["files"] == [".claude/memory/MEMORY.md", ".claude/memory/reader.md"]
    assert [s["path"] for s in root["skipped"]] == [".claude/memory/notes.txt"]
    proc = run_memls("check", ".", "--verbose", cwd=repo)
    assert "read: .claude/memory/reader.md" in proc.stdout
    assert "read: .claude/memory/archive/old.md" in proc.stdout
    assert "skipped: .claude/memory/notes.txt (not a Markdown memory file" in proc.stdout
    assert "judged by:" in proc.stdout


def test_one_memory_file_is_singular(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("# Project Memory\n")
    proc = run_memls("check", "--verbose", cwd=tmp_path)
    assert "Checked .: 1 memory file\n" in proc.stdout
    assert "memory files" not in proc.stdout.splitlines()[1]


def test_typed_topic_count_says_how_many_were_read(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("- [a](t00.md) — a\n")
    for i in range(54):
        fm = "---\nname: t\ndescription: d\ntype: project\n---\n" if i else "# no frontmatter\n"
        (tmp_path / f"t{i:02}.md").write_text(fm)
    choice = layout_choice(tmp_path)
    assert choice.layout is Layout.CLAUDE
    assert "39 of the first 40 of 54 topic files carry" in "; ".join(choice.evidence)


def test_root_kind_by_content(tmp_path: Path) -> None:
    bank = tmp_path / "context"
    _write(bank, {"projectbrief.md": "b", "activeContext.md": "a", "progress.md": "p"})
    assert root_kind(bank) is RootKind.MEMORY_BANK  # three core files, whatever the name
    one = tmp_path / "other"
    _write(one, {"progress.md": "p"})
    assert root_kind(one) is not RootKind.MEMORY_BANK


def test_a_dated_log_md_and_a_tools_hidden_memory_md_are_memory(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            "docs/log.md": "# Journal\n\n## 2026-11-02 — chose SQLite\n\nWhy.\n\n"
            "## 2026-11-09 — moved to Postgres\n\nWhy again.\n",
            "docs/guide.md": "# Guide\n",
            ".wolf/memory.md": "# What the tool remembers\n\nThe user prefers tabs.\n",
            ".wolf/identity.md": "# Identity\n",
            "website/features/memory.md": "# The memory feature\n\nHow it works.\n",
            "tools/log.md": "# Logging\n\nUse the logger; levels are DEBUG and INFO.\n",
        },
    )
    roots = _roots(_check(repo))
    assert set(roots) == {"docs", ".wolf"}
    assert roots["docs"]["files"] == ["docs/log.md"]  # a LOG; guide.md is the project's
    assert roots[".wolf"]["file_count"] == 2


def test_claude_memory_without_an_index_is_a_root(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            ".claude/memory/decisions.md": "# Decisions\n\n- SQLite for the cache.\n",
            ".claude/memory/lessons-learned.md": "# Lessons\n\n- See [gone](gone.md).\n",
            ".claude/agent-memory/reviewer/patterns.md": "# Patterns\n\n- Small diffs.\n",
        },
    )
    data = _check(repo)
    roots = _roots(data)
    assert set(roots) == {".claude/memory", ".claude/agent-memory/reviewer"}
    root = roots[".claude/memory"]
    assert root["kind"] == "memory"
    assert root["files"] == [".claude/memory/decisions.md", ".claude/memory/lessons-learned.md"]
    assert any("no MEMORY.md index" in n for n in root["notes"])
    # with no index, links are still judged (a dead link); no index-format rule applies,
    # and MF004 (info) says once that nothing tells a session these files exist
    assert _codes(data) == [
        (".claude/memory/decisions.md", "MF004"),
        (".claude/memory/lessons-learned.md", "IX012"),
    ]


def test_a_hidden_tool_folder_of_memory_notes_is_a_root(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            ".mytool/decisions.md": "# Decisions\n\n- Keep the API flat.\n",
            ".mytool/session-summaries.md": "# Sessions\n\n- Wrote the parser.\n",
            ".mytool/plans/next.md": "# Next\n",
            ".other/notes.md": "# One note is not enough\n",
            "docs/decisions.md": "# Decisions\n",
            "docs/notes.md": "# Notes\n",
        },
    )
    roots = _roots(_check(repo))
    assert set(roots) == {".mytool"}
    assert roots[".mytool"]["files"] == [".mytool/decisions.md", ".mytool/session-summaries.md"]


def test_a_persona_memory_at_any_depth_is_a_root(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    prose = "# Memory\n\nThe user prefers short drafts.\nWe finished the outline last time.\n"
    _write(
        repo,
        {
            "agents/scribe/SOUL.md": "# Soul\n\nI write.\n",
            "agents/scribe/AGENTS.md": "# Rules\n",
            "agents/scribe/MEMORY.md": prose,
            "team/bots/critic/IDENTITY.md": "# Critic\n",
            "team/bots/critic/MEMORY.md": prose,
            "docs/AGENTS.md": "# Agents\n",
            "docs/MEMORY.md": "# Memory\n\nHow the memory feature of the app works.\n",
        },
    )
    roots = _roots(_check(repo))
    assert set(roots) == {"agents/scribe", "team/bots/critic"}


def test_a_folder_below_a_hermes_root_is_a_root_of_its_own(tmp_path: Path) -> None:
    repo = tmp_path / "hermes-home"
    _write(
        repo,
        {
            "MEMORY.md": "Likes tea.\n§\nWorks nights.\n§\nUses vim.\n§\nLives in Oslo.\n",
            "memories/MEMORY.md": "Project uses Go.\n§\nTests in pkg/.\n",
            "memories/USER.md": "Prefers terse answers.\n",
        },
    )
    roots = _roots(_check(repo))
    assert set(roots) == {".", "memories"}
    assert roots["memories"]["kind"] == "hermes"
    assert roots["."]["files"] == ["MEMORY.md"]


def test_a_learnings_folder_is_a_root_and_a_protocol_is_no_handoff(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            ".specs/HANDOFF-PROTOCOL.md": "# Handoff protocol\n\n## Steps\n1. Write it.\n",
            ".specs/vision.md": "# Vision\n",
            ".specs/learnings/index.md": "# Learnings\n\n- [Testing](testing.md)\n",
            ".specs/learnings/testing.md": "# Testing\n\n- Mock the clock.\n",
            "tools/handoff.md": "# Handing off\n\nWrite what you did, in your own words.\n",
        },
    )
    roots = _roots(_check(repo))
    assert set(roots) == {".specs/learnings"}  # neither the protocol nor the how-to


def test_handoff_names_with_a_session_id_are_handoffs_and_checkpoints_never_are() -> None:
    from memls.core.workspace import is_handoff_name

    for name in (
        "session-handoff-S54.md",
        "agent_handoff_2026-11-02.md",
        "HANDOFF.md",
        "HANDOVER.md",  # the other words people use
        "PASSOFF.md",
        "SEO-PASSOFF.md",
        "hand-off.md",
        "2026-03-02-handover-maria.md",  # a dated handover to (or from) a person
        "20260302_team-handoff-kim.md",
        "claude-handoff-context-load-curve.md",  # to or from an agent by name
        "GRAPH_HANDOFF_DEVIN.md",
        "handoff-to-codex-auth.md",
        "BOM Tool Handoff 20251209.md",  # words with spaces, then a date
        "CONTEXT_FOR_NEXT_AGENT.md",  # addressed to the next agent or session
        "notes-for-the-next-session.md",
    ):
        assert is_handoff_name(name), name
    for name in (
        "checkpoint-auth-handoff.md",
        "Checkpoint-release-handoff.md",
        "session-handoff-template.md",
        "team-handoff-guide.md",
        "handoffs.md",
        "ADR-016-context-handoff-open-format.md",  # a decision about handoffs
        "HANDOFF_TYPES.md",  # a page on the kinds of handoff
        "handoff-format.md",
        "HANDOFF-SPEC.md",
        "passoff-protocol.md",
        "handovers.md",
        "2026-03-02-handover-guide.md",
        "2026-03-02-notes.md",
        "agent-handoff-protocol.md",
        "claude_handoff_format.md",
        "wait-for-next-release.md",
    ):
        assert not is_handoff_name(name), name


def test_a_docs_folder_with_a_handoff_and_a_memory_folder(tmp_path: Path) -> None:
    """docs/session-handoff.md beside docs/memory/MEMORY.md: two roots (a handoff, a memory
    folder), and every finding once — docs/ is not a second reader of docs/memory/."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            "docs/session-handoff.md": "# Handoff\n\n## Current State\nWorking on `src/main.py`.\n",
            "docs/memory/MEMORY.md": "# Memory\n\n- [Auth](auth.md) — tokens\n",
            "docs/memory/auth.md": "# Auth\n\nRotate tokens.\n",
            "docs/memory/orphan.md": "# Orphan\n\nNothing links here.\n",
            "docs/api.md": "# API\n",
        },
    )
    data = _check(repo)
    roots = _roots(data)
    assert roots["docs"]["kind"] == "handoff"
    assert roots["docs/memory"]["kind"] == "memory"
    keys = [(d["path"], d["line"], d["code"]) for d in data["diagnostics"]]
    assert len(keys) == len(set(keys)), keys
    assert ("docs/memory/orphan.md", 1, "IX010") in keys


def test_a_file_two_roots_read_is_judged_once(tmp_path: Path) -> None:
    """memory/KNOWLEDGE/ is a folder of notes of its own and a subfolder the memory root
    scans for secrets: its secret is reported once."""
    repo = _repo(tmp_path)
    value = "Zq" + "".join(chr(ord("a") + (i * 7) % 26) for i in range(10)) + "93!x"
    _write(
        repo,
        {
            "memory/MEMORY.md": "# Memory\n\n- [Log](LOG.md)\n",
            "memory/LOG.md": "# Log\n\n## 2026-11-01\nStarted.\n",
            "memory/KNOWLEDGE/decisions.md": "# Decisions\n\nUse Postgres.\n",
            "memory/KNOWLEDGE/lessons.md": f"# Lessons\n\nadmin password: {value}\n",
        },
    )
    data = _check(repo, "--select", "SC")
    keys = [(d["path"], d["line"], d["code"]) for d in data["diagnostics"]]
    assert keys == [("memory/KNOWLEDGE/lessons.md", 3, "SC003")], keys


def test_claude_memories_plural_is_a_root(tmp_path: Path) -> None:
    """`.claude/memories/` (a mirror of Codex's `memories/` kept for Claude) is memory by
    where it is, like `.claude/memory/`."""
    repo = _repo(tmp_path)
    _write(repo, {".claude/memories/project.md": "# Project\n\n- Postgres for the queue.\n"})
    roots = _roots(_check(repo))
    assert ".claude/memories" in roots
    assert roots[".claude/memories"]["files"] == [".claude/memories/project.md"]


def test_links_to_files_git_ignores_are_no_dead_pointers(tmp_path: Path) -> None:
    """A memory index that points at local-only files (`shared/kb/*.md` in .gitignore): a
    clone — CI's — lacks them by design, so neither IX009 nor IX012 reports them; a dead
    pointer to a path git does not ignore still is one, and so is a Kilo Code memory bank
    without its context.md."""
    repo = tmp_path / "app"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    _write(
        repo,
        {
            ".gitignore": "shared/kb/*.md\n.claude/agent-memory/*/notes-*.md\n",
            ".claude/agent-memory/architect/MEMORY.md": (
                "# Architect memory\n\n- [Evolution](../../../shared/kb/evolution_log.md)\n"
                "- [Review](notes-2026-03-16.md) — the review notes\n"
                "- [Plan](plan.md) — the plan\n"
            ),
            ".claude/agent-memory/architect/topic.md": "# Topic\n\nSee [[notes-2026-04-01]].\n",
            ".kilocode/rules/memory-bank/brief.md": "# Brief\n\nA scheduler.\n",
            ".kilocode/rules/memory-bank/tech.md": "# Tech\n\nPython.\n",
        },
    )
    data = _check(repo)
    found = _codes(data)
    assert (".claude/agent-memory/architect/MEMORY.md", "IX009") in found
    pointed = [d["message"] for d in data["diagnostics"] if d["code"] in ("IX009", "IX012")]
    assert len(pointed) == 1, pointed
    assert "plan.md" in pointed[0]
    assert _roots(data)[".kilocode/rules/memory-bank"]["kind"] == "memory-bank"
    assert (".kilocode/rules/memory-bank/brief.md", "MB001") in found


def test_an_upper_case_memory_md_is_the_index(tmp_path: Path) -> None:
    """`MEMORY.MD` at a repository's top is its index, as it would be on a macOS or Windows
    disk: the root is found, the file is read as the index and its pointers are judged."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            "MEMORY.MD": (
                "# App — Project Memory\n\n## Architecture\n\n- [Blueprint](blueprint.md) — the plan\n"
                "- [Gone](gone-topic.md) — never written\n"
            ),
            "blueprint.md": "# Blueprint\n\nThree services.\n",
        },
    )
    data = _check(repo)
    root = _roots(data)["."]
    assert root["kind"] == "memory"
    assert "MEMORY.MD" in root["files"]
    assert ("MEMORY.MD", "IX009") in _codes(data)
    assert [d["message"] for d in data["diagnostics"] if d["code"] == "IX009"] == [
        "pointer to `gone-topic.md`, which exists nowhere (not beside MEMORY.MD, in the memory "
        "root or the repository): fix the path, create the file, or remove the pointer"
    ]


def test_a_tools_memory_file_beside_its_instructions(tmp_path: Path) -> None:
    """`.github/copilot-memory.md` beside `copilot-instructions.md` is Copilot's memory: the
    folder is a root that reads that file alone (not the workflows, templates or
    instructions); a dead link in it is reported, and `.github` without one is no root."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            ".github/copilot-instructions.md": "# Instructions\n\nRead copilot-memory.md.\n",
            ".github/copilot-memory.md": (
                "# Copilot Memory\n\n- Build with `make`; see [the runbook](../docs/gone.md).\n"
            ),
            ".github/PULL_REQUEST_TEMPLATE.md": "## What\n\n## Why\n",
            "other/.github/PULL_REQUEST_TEMPLATE.md": "## What\n",
        },
    )
    data = _check(repo)
    roots = _roots(data)
    assert set(roots) == {".github"}
    assert roots[".github"]["kind"] == "notes"
    assert roots[".github"]["files"] == [".github/copilot-memory.md"]
    assert _codes(data) == [(".github/copilot-memory.md", "IX012")]


def test_a_worklog_in_the_agents_own_folder(tmp_path: Path) -> None:
    """`.claude/WORKLOG.md` is the agents' log by its name and place, dated headings or
    not; a `WORKLOG.md` of undated notes in `docs/` is not memory by its name alone."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            ".claude/WORKLOG.md": "# Worklog\n\n## Scout → Builder\nThe feed is wired.\n",
            ".claude/agents/builder.md": "---\nname: builder\n---\nBuild things.\n",
            "docs/WORKLOG.md": "# Worklog\n\nIdeas for later.\n",
        },
    )
    roots = _roots(_check(repo))
    assert set(roots) == {".claude"}
    assert roots[".claude"]["files"] == [".claude/WORKLOG.md"]


def test_a_folder_of_session_notes_inside_a_memory_folder_is_shown_as_its_part(
    tmp_path: Path,
) -> None:
    """`.claude/memory/sessions/` of dated notes is read as a notes root of its own and
    shown as a part of `.claude/memory` (JSON `within`, and in the text); a memory folder
    beside the repository's top memory is not "part of" the top."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            "MEMORY.md": "# App memory\n\n- [Plan](plan.md) — the plan\n",
            "plan.md": "# Plan\n\nShip the parser.\n",
            ".claude/memory/MEMORY.md": "# Memory\n\n- [Stack](stack.md) — the stack\n",
            ".claude/memory/stack.md": "# Stack\n\nPython.\n",
            ".claude/memory/sessions/2026-03-01-setup.md": "# 2026-03-01\n\nSet up CI.\n",
            ".claude/memory/sessions/2026-03-02-parser.md": "# 2026-03-02\n\nParser.\n",
        },
    )
    roots = _roots(_check(repo))
    assert roots[".claude/memory/sessions"]["within"] == ".claude/memory"
    assert roots[".claude/memory"]["within"] is None
    assert roots["."]["within"] is None
    text = run_memls("check", ".", "--exit-zero", cwd=repo).stdout
    assert ".claude/memory/sessions (notes, 2 files, part of .claude/memory)" in text


def test_an_agents_knowledge_folder_is_its_notes(tmp_path: Path) -> None:
    """`antigravity/knowledge/` (Antigravity's knowledge items, one lesson a file) is an
    agent's notes; a project's `docs/knowledge/` is its documentation."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            "antigravity/knowledge/soft-delete.md": "# Soft delete\n\nAlways filter it.\n",
            "antigravity/knowledge/auth.md": "# Auth\n\nOne session per app.\n",
            "docs/knowledge/api.md": "# API\n",
            "docs/knowledge/setup.md": "# Setup\n",
        },
    )
    roots = _roots(_check(repo))
    assert set(roots) == {"antigravity/knowledge"}
    assert roots["antigravity/knowledge"]["kind"] == "notes"


def test_a_repository_named_for_an_agent_is_not_its_notes(tmp_path: Path) -> None:
    """A repository whose name has an agent's name in it (`claude-electron`) with an
    `UPGRADE-NOTES.md` among its docs is a project, not a folder of agent notes; its
    `.claude/memory` is its memory, where a symlink (`same.md -> deploy.md`) is one file
    under two names, read once and no duplicate (a real copy is one)."""
    repo = _repo(tmp_path, name="claude-electron")
    _write(
        repo,
        {
            "AGENTS.md": "# Agents\n\nBuild with npm.\n",
            "ELECTRON-UPGRADE-NOTES.md": "# Upgrade notes\n\nElectron 43.\n",
            "SETUP.md": "# Setup\n",
            ".claude/memory/MEMORY.md": "# Memory\n\n- [Deploy](deploy.md)\n- [Copy](copy.md)\n",
            ".claude/memory/deploy.md": "# Deploy\n\nRun the release script, then notarize.\n",
            ".claude/memory/copy.md": "# Deploy\n\nRun the release script, then notarize.\n",
        },
    )
    (repo / ".claude/memory/same.md").symlink_to("deploy.md")
    (repo / "CLAUDE.md").symlink_to("AGENTS.md")
    data = _check(repo)
    assert set(_roots(data)) == {".claude/memory"}
    assert ".claude/memory/same.md" not in _roots(data)[".claude/memory"]["files"]
    dupes = sorted(
        (d["path"], d["message"].split(" (")[0])
        for d in data["diagnostics"]
        if d["code"] == "MF003"
    )
    assert dupes == [  # the copy, once: the file to keep gets no finding
        (".claude/memory/copy.md", "same content as deploy.md"),
    ], data["diagnostics"]


def test_design_and_process_handoffs_and_an_empty_handoff_slot(tmp_path: Path) -> None:
    """A design bundle's HANDOFF.md (a designer's hand-off to developers) and a process
    page on handing off are not session handoffs; a handoff slot cleared after the last
    resume (`## Status: none`, the rest comments) holds no state, a filled one does."""
    from memls.core.workspace import handoff_has_state

    repo = _repo(tmp_path)
    state = "# Handoff\n\n## Next Steps\n- build the `src/app.tsx` screens\n"
    _write(
        repo,
        {
            "docs/design/App bundle/HANDOFF.md": state,
            "docs/process/session-handoff.md": state,
            "notes/HANDOFF.md": state,
        },
    )
    assert set(_roots(_check(repo))) == {"notes"}
    slot = (
        "# Session Handoff\n\n<!-- Filled in by the context monitor. -->\n\n## Status: none\n\n"
        "<!-- When populated:\n## Status: pending_handoff\n## Remaining Work\n- <what> -->\n"
    )
    assert not handoff_has_state(slot)
    assert handoff_has_state(slot.replace("## Status: none", "## Status: pending_handoff"))
    assert handoff_has_state(slot + "\nWorking on `src/a.py`.\n")


def test_session_notes_now_md_chat_logs_and_an_agents_dated_captures(tmp_path: Path) -> None:
    """`SESSION-NOTES.md` with one dated session is a journal (its blank template is not);
    `NOW.md` (the pointer to the current task) is a state note; a `chat/` of session logs
    dated by name is notes, and so is an agent folder's `.claude/inbox/` of dated captures;
    one dated report in `.claude/review/`, a subagent's `agents/knowledge/` reference, and a
    journaling app's `seed/Journal.md` are not memory."""
    repo = _repo(tmp_path)
    template = "# Session notes\n\n## Session: <date>\n\n- What was done:\n"
    _write(
        repo,
        {
            "docs/phase-7/SESSION-NOTES.md": "# Notes\n\n## Session 2026-03-02\nWired auth.\n",
            "docs/phase-8/SESSION-NOTES.md": template,
            "NOW.md": "# Now\n\nCurrent task: `docs/active/2026-03-01-auth/`\n",
            "chat/2026-03-01-setup.md": "# 2026-03-01\n\nuser: set up CI\n",
            "chat/2026-03-02-auth.md": "# 2026-03-02\n\nuser: add auth\n",
            ".claude/inbox/2026-03-01T0930-idea.md": "# Idea\n\nAn MCP server.\n",
            ".claude/inbox/2026-03-04T1100-bug.md": "# Bug\n\nThe login loops.\n",
            ".claude/review/2026-03-30-evaluation.md": "# Review\n\n**Date:** 2026-03-30\n",
            ".claude/agents/knowledge/prisma.md": "# Prisma\n\nReference.\n",
            ".claude/agents/knowledge/supabase.md": "# Supabase\n\nReference.\n",
            "seed/Journal.md": "# Journal\n\n## 2026-01-01\nDay one.\n\n## 2026-01-02\nDay two.\n",
        },
    )
    roots = _roots(_check(repo))
    assert set(roots) == {".", "docs/phase-7", "chat", ".claude/inbox"}, sorted(roots)
    assert roots["."]["files"] == ["NOW.md"]
    assert roots["docs/phase-7"]["files"] == ["docs/phase-7/SESSION-NOTES.md"]


def test_placeholders_are_not_memory(tmp_path: Path) -> None:
    """A `checkpoints/` holding only a README on what it is for, a `copilot-memory.md` of
    headings and comments the agent has not written in yet, and a handoff one agent role
    leaves another under `agents/<role>/` are no memory roots; the same memory file with an
    entry in it is one."""
    repo = _repo(tmp_path)
    blank = "# Copilot Memory\n\n<!-- Add one entry a line: date, what, why. -->\n\n## Entries\n"
    _write(
        repo,
        {
            ".claude/checkpoints/README.md": "# Checkpoints\n\nNothing needs to be here.\n",
            ".github/copilot-memory.md": blank,
            "agents/brand/HANDOFF.md": "# Handoff\n\n## Next Steps\n- use the `tokens.json` palette\n",
            "web/.cursor/project-memory.md": blank + "- 2026-07-01: the build needs Node 22\n",
        },
    )
    assert set(_roots(_check(repo))) == {"web/.cursor"}


def test_hidden_memories_and_what_only_looks_like_a_handoff(tmp_path: Path) -> None:
    """A hidden `.memories/` (QUICK.md, KNOWLEDGE.md) is a memory folder by its name; a
    handoff-named file in a ticket `_template/` (a `_TEMPLATE_feature/`'s log), an `ideas/`, a `runs/`, a `runbooks/` or an `architecture/`
    folder, one titled as a retro or a template, spec-kit's `.specify/memory/` and a feature folder
    whose name has `ai` as a topic word (`16_ai_tier/`) and a folder of agent definitions
    (`CODE_REVIEW_AGENTS/`), a template folder in another language (`plantillas/`,
    `Vorlagen/`) and a workflow's steps (`.agent/workflows/`) are not memory."""
    repo = _repo(tmp_path)
    state = "# Handoff\n\n## Current status\n\n## Next Steps\n- wire `src/a.py`\n"
    _write(
        repo,
        {
            "evaluator/.memories/QUICK.md": "# Quick\n\n- run `make eval` first\n",
            "evaluator/.memories/KNOWLEDGE.md": "# Knowledge\n\n- the judge is strict\n",
            "tickets/_template/handoff.md": state,
            "docs/next/_TEMPLATE_feature/session_log.md": "# Session log\n\n## 2026-01-02\n- x\n",
            "docs/ideas/handoff-mcp-migration.md": state,
            "ltg/runs/determinism-handoff.md": state,
            "runbooks/oncall/handoff_missed.md": state,
            "docs/architecture/breath-architecture-handover.md": state,
            "docs/retros/handoff-payload.md": "# Handoff payload — a retro\n\n" + state,
            "docs/handoffs/HANDOFF.md": "# Agent Handoff Template\n\n**WO**: {WO-ID}\n\n" + state,
            "deploy/handover.md": "# Hosting Deployment Handover Guide\n\n" + state,
            ".specify/memory/constitution.md": "# Constitution\n\n## Principles\n",
            "docs/features/16_ai_tier/00_CONCEPT_NOTES.md": "# Concept notes\n",
            "docs/features/16_ai_tier/AIT_001.md": "# AIT 001\n",
            "docs/CODE_REVIEW_AGENTS/13_LINQ_GOTCHAS.md": "# LINQ gotchas reviewer\n",
            "docs/CODE_REVIEW_AGENTS/14_SAVE_LOAD.md": "# Save/load reviewer\n",
            "metodo/meta/plantillas/HANDOFF_FEATURE.md": state,
            "kb/Vorlagen/handoff.md": state,
            ".agent/workflows/handoff.md": state,
        },
    )
    roots = _roots(_check(repo))
    assert set(roots) == {"evaluator/.memories"}, sorted(roots)


def test_a_link_to_a_symlink_into_the_owners_machine_is_not_judged(tmp_path: Path) -> None:
    """`.claude/TEMPLATE.md -> /home/owner/…` committed as a symlink: the file lives on its
    owner's machine, so a link to it is not dead here; a link to a missing file is."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            ".claude/memory.md": (
                "# Memory\n\nTemplate: [the template](.claude/TEMPLATE.md); "
                "see [gone](.claude/GONE.md).\n"
            ),
        },
    )
    (repo / ".claude" / "TEMPLATE.md").symlink_to(tmp_path / "elsewhere" / "TEMPLATE.md")
    data = _check(repo)
    assert ".claude" in _roots(data)
    found = [d["message"] for d in data["diagnostics"] if d["code"] == "IX012"]
    assert len(found) == 1, found
    assert "GONE.md" in found[0]


def test_one_handoff_topic_among_a_backlog_is_no_handoff_folder(tmp_path: Path) -> None:
    """A backlog of many items, one of them about a "…-producer-handoff", is not a folder
    of handoffs; a `HANDOFF.md` in a crowded `docs/` still is a handoff."""
    repo = _repo(tmp_path)
    state = "# Item\n\n## Next Steps\n- wire `src/drain.py`\n"
    files = {f"backlog/{n}-item-{n}.md": f"# Item {n}\n" for n in range(30)}
    files["backlog/2284-self-merge-races-default-to-producer-handoff.md"] = state
    files.update({f"docs/page-{n}.md": f"# Page {n}\n" for n in range(30)})
    files["docs/HANDOFF.md"] = "# Handoff\n\nUpdated 2026-11-20.\n\n## Next Steps\n- ship\n"
    _write(repo, files)
    roots = _roots(_check(repo))
    assert set(roots) == {"docs"}
    assert roots["docs"]["files"] == ["docs/HANDOFF.md"]


def _workspace_backup(tmp_path: Path, name: str) -> Path:
    """A repository a script fills with chosen files of a live agent workspace."""
    repo = tmp_path / name
    (repo / ".git").mkdir(parents=True)
    _write(
        repo,
        {
            "README.md": "# Agent Daily Backup\n\nA nightly copy of the workspace.\n",
            "backup.sh": "#!/bin/sh\ncp ~/agent/workspace/MEMORY.md workspace/\n",
            "workspace/AGENTS.md": "# Agents\n\nRead SOUL.md, USER.md and MEMORY.md first.\n",
            "workspace/SOUL.md": "# Soul\n\nCareful.\n",
            "workspace/USER.md": "# User\n\nLikes short answers.\n",
            "workspace/TOOLS.md": "# Tools\n\n- the garden sensor\n",
            "workspace/IDENTITY.md": "# Identity\n\nA gardener's helper.\n",
            "workspace/HEARTBEAT.md": "# Heartbeat\n\n- water the plants\n",
            "workspace/MEMORY.md": (
                "# Memory\n\n## Projects\n- `projects/garden/plan.md` — the garden plan\n"
                "- `memory/2026-11-20.md` — the day we started\n"
                "- `memory/lessons/retries.md` — what retries taught us\n"
            ),
            "workspace/memory/2026-11-20.md": "# 2026-11-20\n\n- started the garden plan\n",
            "workspace/DREAMS.md": "# Dreams\n\n"
            + "- a dream of gardens, long and winding\n" * 2500,
        },
    )
    return repo


def test_a_workspace_backup_leaves_pointers_to_files_it_does_not_copy(tmp_path: Path) -> None:
    """A backup repository (named or titled so, no project manifest) holds what its script
    copies: a pointer into a folder it does not hold (`projects/`, the live workspace's) is
    no dead pointer, one into its memory/ still is; the dream diary is not loaded at
    start, so its size is no finding either."""
    repo = _workspace_backup(tmp_path, "helper-files")
    data = _check(repo)
    assert _roots(data).keys() == {"workspace"}
    # a pointer into memory/, a folder the backup holds, is still judged
    assert _codes(data) == [("workspace/MEMORY.md", "IX009")]
    assert "memory/lessons/retries.md" in data["diagnostics"][0]["message"]


def test_a_software_project_named_backup_is_judged_as_any_other(tmp_path: Path) -> None:
    repo = _workspace_backup(tmp_path, "restic-backup")
    _write(repo, {"package.json": '{"name": "restic-backup"}\n'})
    codes = _codes(_check(repo))
    assert ("workspace/MEMORY.md", "IX009") in codes
    assert ("workspace/DREAMS.md", "SZ002") not in codes  # a diary, wherever it is


def test_a_memory_bank_in_snake_case_is_a_memory_bank(tmp_path: Path) -> None:
    """`.cursor/memory/active_context.md`, `project_brief.md` … are a Cursor memory bank's
    core files by another spelling: found as a bank, and its missing files named."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            ".cursor/memory/active_context.md": "# Active context\n\nWiring the parser.\n",
            ".cursor/memory/progress.md": "# Progress\n\n- parser half done\n",
            ".cursor/memory/project_brief.md": "# Brief\n\nA parser. See tech_context.md.\n",
        },
    )
    data = _check(repo)
    assert _roots(data)[".cursor/memory"]["kind"] == "memory-bank"
    missing = [d for d in data["diagnostics"] if d["code"] == "MB001"]
    assert len(missing) == 1
    assert "techContext.md" in missing[0]["message"]
    assert "activeContext.md" not in missing[0]["message"]  # present as active_context.md


def test_a_devlogs_folder_of_dated_notes_is_a_notes_root(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    days = {f"devlogs/2026-11-{d:02d}.md": f"# 2026-11-{d:02d}\n\n- worked\n" for d in (3, 4, 5)}
    _write(repo, days)
    assert _roots(_check(repo))["devlogs"]["kind"] == "notes"
    _write(repo, {"worklogs/plan.md": "# Plan\n\nNo dates here.\n", "worklogs/ideas.md": "# I\n"})
    assert "worklogs" not in _roots(_check(repo))  # a folder of that name holding no series


def test_memory_kept_by_gemini_and_in_agent_folders_is_found(tmp_path: Path) -> None:
    """Gemini CLI's saved memories (`## Gemini Added Memories` in GEMINI.md) make a root
    reading that file alone; a `memory/` inside an agent's folder, an agent folder's
    `state/` with a note of the current focus and a `session-notes/` folder are roots by
    where and what they are; a GEMINI.md of instructions only is none."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            "GEMINI.md": "## Gemini Added Memories\n- The user prefers pnpm over npm.\n",
            ".agents/context/memory/learnings.md": "# Learnings\n\n- retry the download once\n",
            ".agents/state/current-focus.md": "# Current focus\n\nThe settings page.\n",
            ".agents/state/known-issues.md": "# Known issues\n\n- slow start\n",
            "session-notes/deploy-analysis.md": "# Deploy analysis\n\nWhat broke.\n",
            "session-notes/fixes-applied.md": "# Fixes applied\n\n- the port\n",
            "web/GEMINI.md": "# Web\n\nUse the design tokens.\n",
        },
    )
    roots = _roots(_check(repo))
    assert roots["."]["files"] == ["GEMINI.md"]
    assert roots[".agents/context/memory"]["kind"] == "memory"
    assert roots[".agents/state"]["kind"] == "notes"
    assert roots["session-notes"]["kind"] == "notes"
    assert "web" not in roots


def test_a_diary_that_carries_its_own_instructions_is_memory(tmp_path: Path) -> None:
    """A running record whose opening tells the agent, in any of a few languages, to read or
    update the file itself between sessions ("Al final de cada sesión, actualiza este
    diario") is memory under its own name — that file alone, not the specs beside it. A
    journal-named file that only describes itself, and a self-instruction in a file that is
    no record by name, are not."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            "plan/Diario_Proyecto.md": (
                "DIARIO DE PROYECTO\n\nINSTRUCCIONES PARA IA\n"
                "- Al final de cada sesión, actualiza este diario con el mismo formato\n\n"
                "Sesión 3: conectores listos.\n"
            ),
            "plan/Especificacion.md": "# Especificación\n\nQué construimos.\n",
            "notes/project-journal.md": (
                "Read this journal at the start of every session and append to it before "
                "you stop.\n\n- tests green\n"
            ),
            "notes/ideas.md": "# Ideas\n",
            "docs/journal-format.md": "# Journal format\n\nThis document describes a journal.\n",
            "docs/setup.md": "Read this file at the start of each session.\n",
        },
    )
    roots = _roots(_check(repo))
    assert roots["plan"]["files"] == ["plan/Diario_Proyecto.md"], roots.get("plan")
    assert roots["notes"]["files"] == ["notes/project-journal.md"], roots.get("notes")
    assert "docs" not in roots


def test_memory_kept_as_json_is_searched_for_secrets(tmp_path: Path) -> None:
    """A memory server's JSON store (`.agentMemory/data.json`) and an agent's records kept as
    JSON (`memory/*.json`) are roots of kind `json`: no Markdown rule judges them, their
    files are searched for secrets (the value never printed whole) and `--fix` leaves the
    store's bytes alone (its server owns the format). A test's JSON data under `scripts/`
    is no memory."""
    from tests.test_secrets import rand

    token = "ghp_" + rand(36)
    repo = _repo(tmp_path)
    store = json.dumps({"cache": [["app:notes", {"value": f"deploy with {token}"}]]}, indent=2)
    _write(
        repo,
        {
            ".agentMemory/data.json": store,
            "memory/research_history.json": json.dumps({"tasks": ["parser"]}),
            "scripts/golden-corpus/memory/case.json": json.dumps({"k": "v"}),
        },
    )
    data = _check(repo)
    roots = _roots(data)
    assert set(roots) == {".agentMemory", "memory"}, sorted(roots)
    assert roots[".agentMemory"]["kind"] == "json"
    assert roots[".agentMemory"]["files"] == []
    assert roots[".agentMemory"]["secret_scan_files"] == [".agentMemory/data.json"]
    assert roots[".agentMemory"]["judged_by"] == ["secret"]
    assert _codes(data) == [(".agentMemory/data.json", "SC001")]
    assert token not in json.dumps(data)
    before = (repo / ".agentMemory" / "data.json").read_bytes()
    run_memls("check", ".", "--fix", "--exit-zero", cwd=repo)
    assert (repo / ".agentMemory" / "data.json").read_bytes() == before


def test_more_agent_memory_by_its_names(tmp_path: Path) -> None:
    """The long-running harness's `claude-progress.txt` at the top, Jules's dated persona
    journals in `.jules/` (not its README), Windsurf's `.windsurf/memories.md`, a `PICKUP.md` where the last
    session left off, a `.session-journal.md`, and a context folder's numbered status note
    (`context/04_current_status.md`) are memory; a `.windsurf/workflows/` of commands is not."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            "claude-progress.txt": "Session 12: login works; next the feed.\n",
            ".session-journal.md": "# Session journal\n\nA guidebook kept across sessions.\n",
            ".jules/bolt.md": "## 2026-01-14 - Faster stats\n**Learning:** one query.\n",
            ".jules/README.md": "# Personas\n\n## 2026-01-02 - Added bolt\nWhat each one does.\n",
            ".claude/CLAUDE.zh-TW.md": "# 說明\n\n## 2026-01-02 更新\n規則。\n",
            ".claude/MCP_SETUP.md": "# MCP setup\n\n## 2026-01-03\nInstall it.\n",
            ".windsurf/memories.md": "# Memories\n\n- the stack is Go and htmx\n",
            ".windsurf/workflows/deploy.md": "# Deploy\n\n1. run make\n",
            "tools/PICKUP.md": "# Pick up here\n\nBranch: main\n\n## Next\n- the feed\n",
            "context/01_overview.md": "# Overview\n",
            "context/04_current_status.md": "# Current status\n\n- engine v2 in review\n",
            "CLAUDE.md": (
                "Read `.claude/DEVELOPMENT_WORKFLOW.md` first in every session.\n\n"
                "At the start of each session read:\n\n- `docs/product/PRD.md`\n"
                "- `docs/engineering/architecture.md`\n"
            ),
            "docs/product/PRD.md": "# PRD\n\nA reader app.\n",
            "docs/engineering/architecture.md": "# Architecture\n\nOne service.\n",
            ".claude/DEVELOPMENT_WORKFLOW.md": "# Workflow\n\n1. plan\n2. build\n",
        },
    )
    roots = _roots(_check(repo))
    assert ".claude" not in roots  # a workflow to follow each session is instructions
    assert "docs/product" not in roots  # nor the project's reference, read each session
    assert "docs/engineering" not in roots
    assert "claude-progress.txt" in roots["."]["files"], roots.get(".")
    assert ".session-journal.md" in roots["."]["files"]
    assert roots[".jules"]["files"] == [".jules/bolt.md"]
    assert roots[".windsurf"]["files"] == [".windsurf/memories.md"]
    assert roots["tools"]["kind"] == "handoff"
    assert "context" in roots, sorted(roots)


def test_checkpoints_of_other_names_dev_logs_and_memory_folders_without_an_index(
    tmp_path: Path,
) -> None:
    """Checkpoints named in capitals (`CHECKPOINT-phase-2.md`, in GSD's `.planning/` beside
    its STATE.md), an agent's checkpoints kept as YAML, a `dev-log/` whose current note
    sits above its `history/` of dated ones, and a `memory/` folder with a note of where
    the work stands and no index are memory; a guide about checkpoints is not."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            ".planning/STATE.md": "# State\n\nPhase 2 of 4; plan 2 running.\n",
            ".planning/ROADMAP.md": "# Roadmap\n\n1. parser\n2. feed\n",
            ".planning/CHECKPOINT-phase-2.md": "# Checkpoint\n\nThe feed query works.\n",
            ".planning/phases/02-feed/02-01-PLAN.md": "# Plan\n\n- [ ] write the feed\n",
            ".claude/checkpoints/03.7.yaml": "phase: 3.7\nnext: wire the feed\n",
            "docs/dev-log/current.md": "# Now\n\nThe feed is half done.\n",
            "docs/dev-log/history/2026-11-02.md": "# 2026-11-02\n\n- the parser\n",
            "docs/dev-log/history/2026-11-03.md": "# 2026-11-03\n\n- the store\n",
            "memory/CURRENT_STATE.md": "# Current state\n\nThe feed is next.\n",
            "memory/BUGS.md": "# Bugs\n\n- the date parser drops time zones\n",
            "guides/CHECKPOINT-GUIDE.md": "# How to checkpoint\n\nRun the script.\n",
            "guides/overview.md": "# Overview\n",
            "app/work-log/README.md": "# Work log\n\nStart at current.md.\n",
            "app/work-log/current.md": "# Now\n\nThe export is half done.\n",
            "app/work-log/history/CHANGELOG.md": "# Changelog\n",
            "game/devlog/README.md": "# Devlog\n",
            "game/devlog/art-style.md": "# Art style\n",
        },
    )
    roots = _roots(_check(repo))
    assert roots["app/work-log"]["kind"] == "notes", sorted(roots)  # its note of where work stands
    assert "game/devlog" not in roots  # a devlog of pages, none dated, none of the state
    assert roots[".planning"]["kind"] == "notes", sorted(roots)
    assert roots[".planning"]["files"] == [
        ".planning/CHECKPOINT-phase-2.md",
        ".planning/ROADMAP.md",
        ".planning/STATE.md",
    ]  # GSD's state files and the checkpoint; not its phases/ plans
    assert roots[".claude/checkpoints"]["kind"] == "json"
    assert roots["docs/dev-log"]["kind"] == "notes"
    assert "docs/dev-log/history/2026-11-03.md" in roots["docs/dev-log"]["files"]
    assert roots["memory"]["kind"] == "memory"
    assert "guides" not in roots


def test_a_yaml_checkpoint_is_searched_for_secrets(tmp_path: Path) -> None:
    from tests.test_secrets import rand

    repo = _repo(tmp_path)
    token = "ghp_" + rand(36)
    _write(repo, {".claude/checkpoints/04.yaml": f"phase: 4\ngithub_token: {token}\n"})
    data = _check(repo)
    assert [c for p, c in _codes(data) if p == ".claude/checkpoints/04.yaml"] == ["SC001"], data
    assert token not in json.dumps(data)
    before = (repo / ".claude/checkpoints/04.yaml").read_bytes()
    run_memls("check", ".", "--fix", "--exit-zero", cwd=repo)
    assert (repo / ".claude/checkpoints/04.yaml").read_bytes() == before  # found, never fixed
    _write(repo, {".beads/issues.jsonl": f'{{"id": "bd-1", "note": "token {token}"}}\n'})
    beads = [d for d in _check(repo)["diagnostics"] if d["path"] == ".beads/issues.jsonl"]
    assert [d["code"] for d in beads] == ["SC001"]
    assert "transcript" not in beads[0]["message"]  # a store's records, not an archive


def test_numbered_session_logs_and_a_session_state_note(tmp_path: Path) -> None:
    """`docs/logs/session_07_auth.md` … is an agent's log, one file a session, so are numbered
    session reports in capitals at the top (`SESSION12_COMPLETE.md`), and a
    lower-case `session_state.md` a session's state; a workshop's numbered sessions are
    lessons, and a `logs/` of other files is no log of sessions."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            "docs/logs/session_07_auth.md": "# Session 7\n\n- login works\n",
            "docs/logs/session_08_feed.md": "# Session 8\n\n- the feed\n",
            "change_tracking/session_state.md": "# Session state\n\nOn the feed.\n",
            "change_tracking/change_index.md": "# Changes\n\n- 12 files\n",
            "SESSION12_COMPLETE.md": "# Session 12\n\nThe parser is done.\n",
            "SESSION13_SUMMARY.md": "# Session 13\n\nNext: the feed.\n",
            "workshop/session-1.md": "# Session 1: variables\n",
            "workshop/session-2.md": "# Session 2: loops\n",
            "ops/logs/nginx.md": "# nginx\n",
            "ops/logs/session-1.md": "# Session 1\n",
            "ops/logs/postgres.md": "# postgres\n",
        },
    )
    roots = _roots(_check(repo))
    assert roots["docs/logs"]["kind"] == "notes", sorted(roots)
    assert roots["change_tracking"]["files"] == ["change_tracking/session_state.md"]
    assert roots["."]["files"] == ["SESSION12_COMPLETE.md", "SESSION13_SUMMARY.md"]
    assert "workshop" not in roots
    assert "ops/logs" not in roots


def test_a_roles_log_a_current_state_note_and_an_agents_gotchas(tmp_path: Path) -> None:
    """A role's log of numbered notes (`docs/manager-log/001-…md`), a `CURRENT_STATE.md`
    among a project's docs (that file alone is read) and an `ai/` folder with its
    `gotchas.md` are memory; a `build-log/` of unnumbered pages is not."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            "docs/manager-log/README.md": "# Manager log\n\nOne decision a file.\n",
            "docs/manager-log/001-unblock-the-build.md": "# 001\n\nUnblocked.\n",
            "docs/manager-log/002-advance-to-m2.md": "# 002\n\nM1 done.\n",
            "docs/CURRENT_STATE.md": "# Current state\n\nThe feed is next.\n",
            "docs/GUIDELINES.md": "# Guidelines\n\nBe kind.\n",
            "ai/README.md": "# For agents\n",
            "ai/gotchas.md": "# Gotchas\n\n- the test database is shared\n",
            "ai/architecture.md": "# Architecture\n",
            "build-log/overview.md": "# Overview\n",
            "build-log/setup.md": "# Setup\n",
        },
    )
    roots = _roots(_check(repo))
    assert roots["docs/manager-log"]["kind"] == "notes", sorted(roots)
    assert roots["docs"]["files"] == ["docs/CURRENT_STATE.md"]
    assert roots["ai"]["kind"] == "notes"
    assert "build-log" not in roots


def test_claude_codes_settings_folder_is_not_an_orchestrator_of_its_memory(tmp_path: Path) -> None:
    """`.claude/memory/MEMORY.md` is the memory root; the roadmap and plans kept beside it
    in `.claude/` (where Claude Code keeps its settings) are not unlinked topic files."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            "CLAUDE.md": "# Rules\n\nKeep `.claude/plans.md` current as you work.\n",
            ".claude/memory/MEMORY.md": "# Memory\n\n- [Style](feedback_style.md) — replies\n",
            ".claude/memory/feedback_style.md": (
                "---\nname: style\ndescription: reply style\ntype: feedback\n---\nShort.\n"
            ),
            ".claude/plans.md": "# Plans\n\n- the feed\n",
            ".claude/roadmap.md": "# Roadmap\n\n1. feed\n",
        },
    )
    data = _check(repo)
    assert ".claude/memory" in _roots(data)
    assert [c for c in _codes(data) if c[1] == "IX010"] == [], _codes(data)


def test_gsd_planning_without_a_state_file(tmp_path: Path) -> None:
    """GSD's `.planning/` with its PROJECT.md and ROADMAP.md (no STATE.md yet) is read as
    notes, those two files alone; a `.planning/` of one roadmap is a plan, not memory."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            ".planning/PROJECT.md": "# Project\n\nA habit tracker; phase 3 is next.\n",
            ".planning/ROADMAP.md": "# Roadmap\n\n- [x] Phase 1\n- [ ] Phase 3\n",
            ".planning/phases/03-sync/03-01-PLAN.md": "# Plan\n\n- [ ] sync\n",
            "web/.planning/ROADMAP.md": "# Roadmap\n\n1. launch\n",
        },
    )
    roots = _roots(_check(repo))
    assert roots[".planning"]["files"] == [".planning/PROJECT.md", ".planning/ROADMAP.md"]
    assert "web/.planning" not in roots


def test_memory_by_whose_it_is_hidden_json_handoff_folders_and_yaml_checkpoints(
    tmp_path: Path,
) -> None:
    """A `project_memory.md` in any folder (that file alone), a hidden `.memory/` of JSON, a
    `handoffs/` folder whose notes have other names, and a `checkpoints/` of YAML files are
    memory; a `checkpoints/` of a model's weights and configs is not, nor a bare `memory.md`
    page in the docs."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            "docs/project_memory.md": "# Project memory\n\n- menus are generated nightly\n",
            "docs/architecture.md": "# Architecture\n",
            ".memory/memory.json": '{"entities": [{"name": "menu"}]}\n',
            "docs/work/handoffs/frontmatter-lifecycle.md": "# Frontmatter\n\nNext: the parser.\n",
            "plan/other/checkpoints/05.0.yaml": "phase: 5.0\n",
            "plan/other/checkpoints/05.1.yaml": "phase: 5.1\n",
            "ml/checkpoints/config.json": '{"layers": 6}\n',
            "ml/checkpoints/trainer_state.json": '{"step": 100}\n',
            "ml/checkpoints/model.safetensors": "weights\n",
            "guide/memory.md": "# The memory feature\n\nHow the app remembers.\n",
        },
    )
    roots = _roots(_check(repo))
    assert roots["docs"]["files"] == ["docs/project_memory.md"], sorted(roots)
    assert roots[".memory"]["kind"] == "json"
    assert roots["docs/work/handoffs"]["kind"] == "notes"
    assert roots["plan/other/checkpoints"]["kind"] == "json"
    assert "ml/checkpoints" not in roots
    assert "guide" not in roots


def test_handoffs_among_plans_and_specs(tmp_path: Path) -> None:
    """`plans/` and `specs/` are searched for handoffs alone: a feature's `HANDOFF.md` and a
    handoff addressed to an agent are found; a plan about handing off, a handoff template
    and the plans themselves are not memory."""
    repo = _repo(tmp_path)
    state = "# Handoff\n\n## Current State\nThe reply resolver half done in `src/reply.py`.\n"
    _write(
        repo,
        {
            "specs/in-progress/032-reply/HANDOFF.md": state,
            "specs/in-progress/032-reply/spec.md": "# Spec\n\nReplies quote the message.\n",
            "docs/plans/handoffs/GRAPH_HANDOFF_CLAUDE.md": state,
            "docs/plans/2026-06-23-foreign-handoff.md": "# Plan\n\n## Next Steps\n- build\n",
            "docs/plans/2026-06-24-ux.md": "# Plan\n\n- polish\n",
            "plans/templates/HANDOFF-TEMPLATE.md": "# Handoff\n\n## Current State\n<fill>\n",
        },
    )
    data = _check(repo)
    roots = _roots(data)
    assert roots["specs/in-progress/032-reply"]["kind"] == "handoff", sorted(roots)
    assert roots["specs/in-progress/032-reply"]["files"] == [
        "specs/in-progress/032-reply/HANDOFF.md"
    ]
    assert roots["docs/plans/handoffs"]["kind"] == "handoff"
    assert not any(r == "docs/plans" or r.startswith("plans") for r in roots), sorted(roots)


def test_an_agents_context_folder_a_hidden_state_folder_and_beads(tmp_path: Path) -> None:
    """`.claude/context/` (the agent's own context notes), a hidden `.opus/` holding a
    STATE.md (`.claude-review/` a PROGRESS.md) and Beads' `.beads/` issues (JSON Lines,
    searched for secrets) are memory;
    `.claude/rules/` is instructions: a handoff-named rule there is no handoff."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            ".claude/context/session_context.md": "# Session\n\nOn the tuner.\n",
            ".claude/context/decision_log.md": "# Decisions\n\n- keep the cache\n",
            ".claude/rules/context-handoff.md": "# Handoff\n\n## Current State\nWrite it.\n",
            ".kilocode/contracts/thinking/thinking_handoff.md": "# Handoff\n\n## Context\nFields.\n",
            ".opus/STATE.md": "# State\n\nThe importer is next.\n",
            ".opus/BACKLOG.md": "# Backlog\n\n- export\n",
            ".beads/README.md": "# Beads\n",
            ".beads/issues.jsonl": '{"id": "bd-1", "title": "the importer"}\n',
            ".claude-review/PROGRESS.md": "# Progress\n\n- [x] pass 1\n- [ ] pass 2\n",
            ".claude-review/GUIDE.md": "# Guide\n",
        },
    )
    roots = _roots(_check(repo))
    assert roots[".claude/context"]["kind"] == "notes", sorted(roots)
    assert roots[".opus"]["kind"] == "notes"
    assert roots[".claude-review"]["kind"] == "notes"  # a hidden folder's PROGRESS.md
    assert roots[".beads"]["kind"] == "json"
    assert ".claude/rules" not in roots
    assert ".kilocode/contracts/thinking" not in roots  # a workflow's contract, no handoff


def test_memory_stores_and_folders_named_for_memory(tmp_path: Path) -> None:
    """A hidden folder holding a memory store by its name (`.aim/memory.jsonl`, the MCP
    knowledge graph's; `.lovable/memory.json` beside a plan), a hidden folder with memory as
    a word of its name (`.cunzhi-memory/`), and a `memory/` folder with a lessons note are
    memory; a hidden folder of other JSON is not."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            ".aim/memory.jsonl": '{"type": "entity", "name": "parser"}\n',
            ".lovable/memory.json": '{"facts": ["the app is a bookshop"]}\n',
            ".lovable/plan.md": "# Plan\n\n- checkout\n",
            ".cunzhi-memory/preferences.md": "# Preferences\n\n- short replies\n",
            ".cunzhi-memory/patterns.md": "# Patterns\n\n- one service a folder\n",
            "memory/LESSONS_LEARNED.md": "# Lessons\n\n- mock the clock\n",
            "memory/TROUBLESHOOTING.md": "# Troubleshooting\n\n- restart the worker\n",
            ".vercel/project.json": '{"projectId": "prj_1"}\n',
        },
    )
    roots = _roots(_check(repo))
    assert roots[".aim"]["kind"] == "json", sorted(roots)
    assert roots[".lovable"]["kind"] == "json"
    assert roots[".cunzhi-memory"]["kind"] == "memory"
    assert roots["memory"]["kind"] == "memory"
    assert ".vercel" not in roots


def test_an_index_the_instructions_tell_the_agent_to_read_is_not_cut_at_200_lines(
    tmp_path: Path,
) -> None:
    """Claude Code cuts its own auto-memory index at 200 lines; a `.claude/MEMORY.md` the
    repository's CLAUDE.md tells the agent to read is read whole (IX011 does not apply),
    while an index nobody names, or one in the auto-memory folder's shape
    (`.claude/memory/MEMORY.md`, which may be the live one), still is cut."""
    repo = _repo(tmp_path)
    long = "# Memory\n\n" + "".join(f"- fact {n}: the parser keeps state\n" for n in range(240))
    _write(
        repo,
        {
            "CLAUDE.md": "# Rules\n\nAt the start of each session read the memory in "
            "`.claude/MEMORY.md`.\n",
            ".claude/MEMORY.md": long,
            "web/.claude/memory/MEMORY.md": long,
            "api/CLAUDE.md": "# Rules\n\nAt the start of each session read the memory in "
            "`.claude/memory/MEMORY.md`.\n",
            "api/.claude/memory/MEMORY.md": long,
        },
    )
    codes = _codes(_check(repo))
    assert (".claude/MEMORY.md", "IX011") not in codes, codes
    assert ("web/.claude/memory/MEMORY.md", "IX011") in codes, codes
    assert ("api/.claude/memory/MEMORY.md", "IX011") in codes, codes


def test_an_agent_folders_records_are_its_memory(tmp_path: Path) -> None:
    """`.claude/decisions/`, `.claude/attempts/`, `.claude/inbox/` hold what the agent
    decided, tried or was handed: memory by where they are; its `plans/` count when dated
    session by session. Its commands, agents and undated plans are not memory."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            ".claude/decisions/0001-stack.md": "# 0001 Stack\n\nGo and React.\n",
            ".claude/decisions/0002-store.md": "# 0002 Store\n\nSQLite.\n",
            ".claude/attempts/pause-polling.md": "# Pause but keep polling\n\nFailed: races.\n",
            ".claude/attempts/struct-padding.md": "# Struct padding\n\nWorked.\n",
            ".claude/plans/2026-02-27-resume.md": "# Plan\n\n- [ ] resume\n",
            ".claude/plans/2026-03-01-discovery.md": "# Plan\n\n- [ ] discover\n",
            ".claude/commands/save.md": "---\ndescription: save\n---\nSave it.\n",
            ".claude/commands/load.md": "---\ndescription: load\n---\nLoad it.\n",
            ".cursor/plans/auth.md": "# Auth plan\n",
            ".cursor/plans/feed.md": "# Feed plan\n",
        },
    )
    roots = _roots(_check(repo))
    assert {".claude/decisions", ".claude/attempts", ".claude/plans"} <= set(roots), sorted(roots)
    assert ".claude/commands" not in roots
    assert ".cursor/plans" not in roots  # undated plans: the project's, not session notes


def test_a_home_folder_kept_as_a_repository_resolves_its_auto_memorys_pointers(
    tmp_path: Path,
) -> None:
    """`.claude/projects/<slug>/memory/` committed inside a repository whose slug names no
    folder here (a home folder kept in git): its pointers lead into that repository, so a
    name kept elsewhere in it (`.claude/agents/`) is found and only a missing one reported."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            ".claude/projects/-home-nobody-here/memory/MEMORY.md": (
                "# Memory\n\n- **Agents:** `.claude/agents/tdd-writer.md`, `tdd-fixer.md`\n"
                "- **Scrolls:** `video-code.md`, `gone-scroll.md`\n"
            ),
            ".claude/agents/tdd-writer.md": "# Writer\n",
            ".claude/agents/tdd-fixer.md": "# Fixer\n",
            ".scrolls/video-code.md": "# Video code\n",
        },
    )
    data = _check(repo)
    dead = [d["message"] for d in data["diagnostics"] if d["code"] == "IX009"]
    assert len(dead) == 1, dead
    assert "`gone-scroll.md`" in dead[0]


def test_a_memory_bank_keeping_its_progress_as_yaml(tmp_path: Path) -> None:
    """`memory-bank/progress.yaml` beside a `decisions.md`: a bank whose core file is data;
    found as a bank (its YAML searched for secrets)."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            "memory-bank/progress.yaml": "done:\n  - parser\nnext:\n  - feed\n",
            "memory-bank/decisions.md": "# Decisions\n\n- keep SQLite\n",
        },
    )
    assert _roots(_check(repo))["memory-bank"]["kind"] == "memory-bank"
    data = _check(repo)
    assert not [d for d in data["diagnostics"] if d["code"] == "MB001"]  # a layout of its own


def test_more_session_notes_by_their_folders_names(tmp_path: Path) -> None:
    """Numbered session notes in a folder named for sessions (`development-sessions/`), a
    diary by its folder's last word (`research-diary/`), a `daily/` of dated notes and a
    hidden folder's memory kept as YAML (`.claude/memory.yaml`) are memory; a folder of
    numbered lessons under another name, or a job's `daily-health/` reports, is not."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            "docs/development-sessions/session-001-foundation.md": "# Session 1\n\n- setup\n",
            "docs/development-sessions/session-002-api.md": "# Session 2\n\n- the API\n",
            "research-diary/README.md": "# Diary\n",
            "research-diary/diario_2026-08-03.md": "# 2026-08-03\n\n- ran the probe\n",
            "daily/DAILY-2026-05-19.md": "# 2026-05-19\n\n- the feed\n",
            "daily/DAILY-2026-05-20.md": "# 2026-05-20\n\n- the store\n",
            ".claude/memory.yaml": "facts:\n  - the stack is Go\n",
            ".claude/README.md": "# Claude folder\n",
            "signals/daily-health/daily-health-20260418.md": "# Health 2026-04-18\n",
            "signals/daily-health/daily-health-20260419.md": "# Health 2026-04-19\n",
            "course/lessons-part/lesson-01.md": "# Lesson 1\n",
            "course/lessons-part/lesson-02.md": "# Lesson 2\n",
        },
    )
    kinds = {path: root["kind"] for path, root in _roots(_check(repo)).items()}
    expected = {
        "docs/development-sessions": "notes",
        "research-diary": "notes",
        "daily": "notes",
        ".claude": "json",
        "course/lessons-part": None,
        "signals/daily-health": None,  # a job's daily output, not daily notes
    }
    assert {path: kinds.get(path) for path in expected} == expected, kinds


def test_kiro_steering_and_claude_codes_plans(tmp_path: Path) -> None:
    """Kiro's `.kiro/steering/` is memory: what the agent knows of the project, loaded into
    its sessions; its `#[[file:…]]` references name files of the workspace (one that exists
    is fine, one that does not is a dead link). Claude Code's `.claude/plans/` holds plan
    mode's plans under random names (`logical-kindling-fog.md`): memory, dated or not."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            ".kiro/steering/product.md": "# Product\n\nA feed reader.\n",
            ".kiro/steering/tech.md": "# Tech\n\nGo.\n\n#[[file:README.md]]\n#[[file:docs/api.yaml]]\n",
            ".kiro/specs/feed/requirements.md": "# Requirements\n\n- read feeds\n",
            "api/.claude/plans/logical-kindling-fog.md": "# Plan\n\n- [ ] the feed\n",
        },
    )
    data = _check(repo)
    kinds = {path: root["kind"] for path, root in _roots(data).items()}
    expected = {".kiro/steering": "notes", "api/.claude/plans": "notes", ".kiro/specs/feed": None}
    assert {path: kinds.get(path) for path in expected} == expected, kinds
    dead = [d["message"] for d in data["diagnostics"] if d["code"] == "IX012"]
    [one] = dead
    assert "`docs/api.yaml`" in one


def test_trackers_kept_beside_the_agents_instructions(tmp_path: Path) -> None:
    """A repository with agent instructions keeps its state in top-level trackers no line
    names (`STATUS.md` dated day by day, `NEXT.md` with "Last updated", `ProjectState.md`
    with its current state): memory. An undated `TODO.md` of chores is not, nor a dated
    tracker in a repository no agent works in."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            "CLAUDE.md": "# Rules\n\nRun the tests before you commit.\n",
            "STATUS.md": "# Status\n\n## 2026-04-20\n- the feed parser is done\n",
            "NEXT.md": "# Next\n\nLast updated: yesterday\n\n- the store\n",
            "ProjectState.md": "# State\n\n## Current state\nThe store is half done.\n",
            "TODO.md": "# TODO\n\n- rename the flag\n- drop Python 3.9\n",
        },
    )
    other = _repo(tmp_path, "lib")
    _write(other, {"STATUS.md": "# Status\n\n## 2026-04-20\n- released 1.2\n"})
    files = _roots(_check(repo))["."]["files"]
    assert sorted(Path(f).name for f in files) == ["NEXT.md", "ProjectState.md", "STATUS.md"]
    assert "." not in _roots(_check(other))


def test_a_handoff_folder_filed_by_day(tmp_path: Path) -> None:
    """`reports/handoff/2026-07-17/2058-suni.md`: a handoff folder that files each day's
    handoffs under that day is memory, its notes read from the day folders."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            "reports/handoff/2026-07-17/2058-suni.md": "# Handoff 20:58\n\n- the deck\n",
            "reports/handoff/2026-07-17/2140-suni.md": "# Handoff 21:40\n\n- the cards\n",
        },
    )
    root = _roots(_check(repo))["reports/handoff"]
    assert root["kind"] == "notes"
    assert sorted(Path(f).name for f in root["files"]) == ["2058-suni.md", "2140-suni.md"]


def test_a_worklog_filed_by_day(tmp_path: Path) -> None:
    """`docs/worklog/2026-02-24/153900-first-cycle.md`: an orchestrator's worklog that files
    each day's entries under that day, nothing at its top, is one root of notes."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            "docs/worklog/2026-02-24/153900-first-cycle.md": "# Cycle 1\n\n- the schema\n",
            "docs/worklog/2026-02-24/160800-second-cycle.md": "# Cycle 2\n\n- the tests\n",
            "docs/worklog/2026-02-25/091500-third-cycle.md": "# Cycle 3\n\n- the release\n",
        },
    )
    root = _roots(_check(repo))["docs/worklog"]
    assert root["kind"] == "notes"
    assert len(root["files"]) == 3


def test_subfolders_of_a_memory_folder_are_roots_of_notes(tmp_path: Path) -> None:
    """`memory/evolution/goals/`, a workspace's `memory/projects/`, `.ai_memory/<project>/`:
    the agent's memory filed by topic below a memory folder is found and read as notes."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            "memory/evolution/QUEUE.md": "# Queue\n\n- the audit\n",
            "memory/evolution/phase1_status_2026-05-02.md": "# Phase 1\n\nDone: the parser.\n",
            "memory/evolution/goals/realignment_2026-05-10.md": "# Goals\n\n- ship\n",
            "memory/research/strategy.md": "# Strategy\n\nRead the logs first.\n",
            "memory/templates/note.md": "# Note template\n",
        },
    )
    roots = _roots(_check(repo))
    assert set(roots) == {"memory/evolution", "memory/research"}
    assert roots["memory/evolution"]["kind"] == "notes"
    assert "memory/evolution/goals/realignment_2026-05-10.md" in roots["memory/evolution"]["files"]

    home = _repo(tmp_path, "home")
    _write(
        home,
        {
            "AGENTS.md": "# Agents\n\nRead memory/ first.\n",
            "SOUL.md": "# Soul\n\nCalm.\n",
            "TOOLS.md": "# Tools\n\nThe shell.\n",
            "MEMORY.md": "# Memory\n\n- [Projects](memory/projects/site.md)\n",
            "memory/2026-01-27.md": "# 2026-01-27\n\n- set up the site\n",
            "memory/2026-01-28.md": "# 2026-01-28\n\n- wrote the posts\n",
            "memory/projects/site.md": "# Site\n\nThe static site.\n",
            "memory/checkpoints/2026-01-29_19-13_safety-done.md": "# Checkpoint\n\nDone.\n",
        },
    )
    roots = _roots(_check(home))
    assert {"memory/projects", "memory/checkpoints"} <= set(roots)
    skipped = [s["path"] for s in roots["."].get("skipped", [])]
    assert "memory/projects/site.md" not in skipped  # a root of its own, not "secrets only"

    ai = _repo(tmp_path, "ai")
    typed = "---\nname: {n}\ndescription: the {n}\ntype: project\n---\n\nAbout {n}.\n"
    _write(
        ai,
        {
            ".ai_memory/rule.md": typed.format(n="rule"),
            ".ai_memory/prefs.md": typed.format(n="prefs"),
            ".ai_memory/converter/pipeline.md": "# Pipeline\n\nStep 4 fails.\n",
            ".ai_memory/converter/experiment_log.md": "# Experiments\n\n- 4d: no\n",
        },
    )
    roots = _roots(_check(ai))
    assert roots[".ai_memory/converter"]["kind"] == "notes"
    assert roots[".ai_memory/converter"]["file_count"] == 2


def test_more_kinds_found_by_evidence(tmp_path: Path) -> None:
    """docs/MEMORY.md written for future sessions, GSD's `.planning/` with its state as
    JSON, a `dev_handoffs/` folder, an agent's `.copilot-tracking/memory/`, an inbox of
    dated captures whose archive is filed by day."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            "docs/MEMORY.md": (
                "# Shared memory\n\nLong-lived context for future Claude sessions working on "
                "this project.\n\n## Goal\nA trainer for openings.\n\n## Preferences\n"
                "- small test-driven phases\n- simple code\n"
            ),
            "docs/PLAN.md": "# Plan\n\n1. the board\n",
            ".planning/PROJECT.md": "# Project\n\nA network core.\n",
            ".planning/STATE.json": '{"phase": 2}\n',
            ".planning/PLAN-phase-1.md": "# Phase 1\n",
            "docs/dev_handoffs/DH_Inventory.md": "# Inventory\n\nWhat was built, what is next.\n",
            "docs/dev_handoffs/DH_Portraits.md": "# Portraits\n\nNext: the loader.\n",
            ".copilot-tracking/memory/memory-keeper.md": "# Keeper\n\nThe UI thread rules.\n",
            ".claude/inbox/2026-04-26T1530-mcp-server.md": "# MCP server idea\n",
            ".claude/inbox/archive/2026-04-26/2026-04-25T2331-reminders.md": "# Reminders\n",
            ".claude/inbox/archive/2026-04-26/2026-04-26T0101-areas.md": "# Areas\n",
        },
    )
    roots = _roots(_check(repo))
    assert {
        "docs",
        ".planning",
        "docs/dev_handoffs",
        ".copilot-tracking/memory",
        ".claude/inbox",
    } <= set(roots)
    assert roots[".planning"]["files"] == [".planning/PROJECT.md"]
    assert roots["docs"]["files"] == ["docs/MEMORY.md"]


def test_handoffs_in_an_agent_prompts_folder_are_tasks_not_memory(tmp_path: Path) -> None:
    """`docs/agent-prompts/KV_STORE_HANDOFF.md`: the task given to an agent, not a handoff
    between its sessions (and never judged stale)."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            "docs/agent-prompts/KV_STORE_AGENT_PROMPT.md": "# Task: the KV store\n\nDo X.\n",
            "docs/agent-prompts/PROMPT_LATENCY_HANDOFF.md": (
                "# Handoff: latency\n\n## Context\nThe replicas lag.\n\n## Next steps\n"
                "- measure the second replica\n"
            ),
            "docs/agent-prompts/YCSB_KV_HANDOFF.md": (
                "# Handoff: the benchmark\n\n## Where things stand\nThe loader runs.\n\n"
                "## Next steps\n- run workload A\n"
            ),
        },
    )
    assert _check(repo)["roots"] == []


def test_a_reference_document_filed_under_a_handoffs_name_is_no_handoff(tmp_path: Path) -> None:
    """`docs/HANDOFF_TECHNICAL.md` titled as the data model beside the real handoff: a
    reference document (never judged stale), not a second handoff."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            "docs/HANDOFF.md": (
                "# Handoff\n\nBranch: main\n\n## Current State\nThe tick loop runs.\n\n"
                "## Next Steps\n- the economy\n"
            ),
            "docs/HANDOFF_TECHNICAL.md": (
                "# HANDOFF_TECHNICAL: Colony data model & system interactions\n\n"
                "Last updated: 2026-06-21\n\n## Core classes\n### Region (main game state)\n"
                "Holds the factions; see `src/region.py`.\n"
            ),
            # evidence filed about the product's own handoff feature, not a handoff
            "docs/acceptance/handoff-removal-evidence.md": (
                "# Handoff Removal Acceptance Evidence\n\nDate: 2026-08-19\n\n"
                "## Requirement matrix\n- `src/handoff.ts` deleted\n"
            ),
            "docs/acceptance/stage-1-evidence.md": "# Stage 1 evidence\n\n- passed\n",
            # a handoff whose subject is an audit is a handoff
            "tasks/pages/HANDOFF_NOTES.md": (
                "# Handoff: Pages Audit Campaign\n\nBranch: main\n\n## Next Steps\n- merge\n"
            ),
        },
    )
    roots = _roots(_check(repo))
    assert roots["docs"]["files"] == ["docs/HANDOFF.md"]
    assert "docs/acceptance" not in roots
    assert roots["tasks/pages"]["files"] == ["tasks/pages/HANDOFF_NOTES.md"]


def test_resume_notes_dated_memory_and_an_agents_own_folders(tmp_path: Path) -> None:
    """`CONTINUE.md` (and `status/CONTINUATION_PROMPT.md`): where the next session resumes;
    a `memory/` folder mostly of dated notes beside a mission note; `.windsurf/memory/`;
    an agent's dated `reflections/`, `summaries/` and `observations/`."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            "CONTINUE.md": (
                "# Continue here\n\nLast updated: 2026-02-18\n\n## Current status\n- the feed\n\n"
                "## Next steps\n- the comments\n"
            ),
            "status/CONTINUATION_PROMPT.md": (
                "# Continuation prompt\n\n## Next steps\n- finish `src/feed.ts`\n"
            ),
            "core/memory/2026-02-27.md": "# 2026-02-27\n\n- the parser\n",
            "core/memory/2026-02-28.md": "# 2026-02-28\n\n- the store\n",
            "core/memory/mission.md": "# Mission\n\nShip the scorer.\n",
            ".windsurf/memory/activeContext.md": "# Active context\n\nThe login page.\n",
            "reflections/2026-05-03.md": "# Week 18\n\nWhat went well.\n",
            "reflections/2026-05-10.md": "# Week 19\n\nWhat did not.\n",
            "summaries/2026-03-14.md": "# 2026-03-14\n\n- 2 PRs\n",
            "observations/2026-01-03-first-wakeup.md": "# First wake-up\n\nQuiet.\n",
            "docs/10-session/current-phase.md": "# Current phase\n\nPhase 3: the sync.\n",
            "docs/10-session/quick-ref.md": "# Quick reference\n",
        },
    )
    roots = _roots(_check(repo))
    assert {
        ".",
        "status",
        "core/memory",
        ".windsurf/memory",
        "reflections",
        "summaries",
        "observations",
    } <= set(roots)
    assert roots["."]["kind"] == "handoff"
    assert roots["."]["files"] == ["CONTINUE.md"]
    # `current-phase.md` (`current-work.md`, `current-focus.md`): where the work stands now
    assert roots["docs/10-session"]["files"] == ["docs/10-session/current-phase.md"]


def test_pointers_into_a_folder_linked_away_or_to_a_dates_pattern(tmp_path: Path) -> None:
    """`memory -> /home/owner/vault/memory` (a symlink committed to a folder on its owner's
    machine): pointers into it cannot be judged here; `memory/2026-MM-DD.md` names the
    pattern of the daily notes, not a file. A pointer to nothing else is still a finding."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            "MEMORY.md": (
                "# Memory\n\n- [Projects](memory/projects.md) — what runs\n"
                "- Daily notes: `memory/2026-MM-DD.md`\n"
                "- [Old plan](notes/old-plan.md) — the plan before\n"
            ),
        },
    )
    (repo / "memory").symlink_to(tmp_path / "elsewhere" / "vault" / "memory")
    data = _check(repo)
    dead = [d["message"].split("`")[1] for d in data["diagnostics"] if d["code"] == "IX009"]
    assert dead == ["notes/old-plan.md"], data["diagnostics"]


def test_an_agents_reports_filed_by_year_month_and_day(tmp_path: Path) -> None:
    """`ctx/agent/report/2025/11/02/13-18-iteration-report.md`: the agent's reports filed
    by date, read three levels down as one root of notes; a project's `docs/reports/2025/`
    of the same shape, not below an agent's folder, is not memory."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            "ctx/agent/AGENTS.md": "# Agent\n\nWrite a report after each iteration.\n",
            "ctx/agent/report/2025/11/02/13-18-iteration-report.md": "# Iteration\n\nDone.\n",
            "ctx/agent/report/2025/11/03/09-05-report.md": "# Report\n\nThe signal server.\n",
            "docs/reports/2025/11/02/q4-sales.md": "# Sales\n\nUp.\n",
        },
    )
    roots = _roots(_check(repo))
    assert set(roots) == {"ctx/agent/report"}
    assert roots["ctx/agent/report"]["kind"] == "notes"
    assert roots["ctx/agent/report"]["file_count"] == 2


def test_reflections_in_a_memory_folder_a_day_folder_of_checkpoints_and_a_checkpoint_note(
    tmp_path: Path,
) -> None:
    """An undated note in a memory folder's `reflections/`; a `docs/checkpoints/` whose
    only checkpoint sits in a folder named by its day and what it was
    (`2026-02-12-session-recovery/`); a `memory/` of a `checkpoint.md` and a result note;
    a `devJournal/` (a journal by the last word of its camel-case name)."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            "workspace/MEMORY.md": "# Memory\n\n- [Recipes](memory/recipes/bread.md)\n",
            "workspace/memory/recipes/bread.md": "# Bread\n\nFlour, water.\n",
            "workspace/memory/reflections/nine-days-in.md": "# Nine days in\n\nSlower.\n",
            "docs/checkpoints/README.md": "# Checkpoints\n\nOne folder per recovery.\n",
            "docs/checkpoints/2026-02-12-session-recovery/PLAYBOOK.md": (
                "# Session recovery\n\n- reopen the branch\n"
            ),
            "core/memory/checkpoint.md": "# Checkpoint\n\nFFI-16 passes; next: FFI-17.\n",
            "core/memory/RESULT_FFI-16.md": "# FFI-16\n\nAll green.\n",
            "docs/devJournal/2025-09-01-import.md": "# Import\n\nThe CSV loader.\n",
            "docs/devJournal/20250616-01.md": "# Day one\n\nBrainstorm.\n",
        },
    )
    roots = _roots(_check(repo))
    assert roots["docs/devJournal"]["kind"] == "notes"
    assert roots["workspace/memory/reflections"]["kind"] == "notes"
    assert (
        "docs/checkpoints/2026-02-12-session-recovery/PLAYBOOK.md"
        in (roots["docs/checkpoints"]["files"])
    )
    assert roots["core/memory"]["kind"] == "memory"


def test_memory_kept_in_an_archive_folder_is_judged_for_secrets_only(tmp_path: Path) -> None:
    """`.archive/memory_legacy/memory/`: an old memory kept as it was. Its heading, its
    unlinked topic and its dead pointer are the record, not anyone's to fix; a key in it is
    still a leak. The same memory live is judged by every rule."""
    key = _fake_github_token()
    memory = {
        "MEMORY.md": "## Memory\n\n- [Deploy](deploy.md)\n- [Gone](gone.md)\n",
        "deploy.md": f"# Deploy\n\nThe CI token was {key} until March.\n",
        "orphan.md": "# Orphan\n\nNobody links me.\n",
    }
    repo = _repo(tmp_path)
    _write(repo / ".archive" / "memory_legacy" / "memory", memory)
    _write(repo / "memory", {k: v.replace(key, "in the vault") for k, v in memory.items()})
    data = _check(repo)
    archived = sorted(c for p, c in _codes(data) if p.startswith(".archive/"))
    live = sorted({c for p, c in _codes(data) if p.startswith("memory/")})
    assert archived == ["SC001"]
    assert {"IX009", "IX010"} <= set(live)  # (its heading: memls's format only)
    root = _roots(data)[".archive/memory_legacy/memory"]
    assert root["rules"].startswith("SC (secrets)")
    assert key not in json.dumps(data)


def test_sessions_and_an_agents_work_filed_by_day_and_a_bank_of_its_own_names(
    tmp_path: Path,
) -> None:
    """`sessions/20251112-01-obsidian/` (a session's folder named by its day first) and
    `.ai_work_context/20250216_1200/04_logs/` (an agent's hidden folder of day-and-time
    folders) are notes roots, their links the record of that day (no IX012); a
    `memorybank/` whose notes are named in another language is read as notes."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            "sessions/20251112-01-obsidian/init.md": "# Init\n\nSee [[kinen-0ed]].\n",
            "sessions/20251112-01-obsidian/rounds/01-foundation.md": "# Round 1\n\nDone.\n",
            "sessions/20251203-01-indexing/session-summary.md": "# Summary\n\nIndexed.\n",
            ".ai_work_context/20250216_1200/04_logs/timeline.md": "# Timeline\n\n- 12:00\n",
            ".ai_work_context/20250217_1500/00_working/notes.md": "# Notes\n\nThe grid.\n",
            "app/memorybank/contextoativo.md": "# Contexto ativo\n\nO login.\n",
            "app/memorybank/progresso.md": "# Progresso\n\n- feito\n",
            "journal/2026-03.md": "# March\n\n- the scraper\n",
            "journal/dreams.md": "# Dreams\n\n- a map\n",
            "docs/claude_conversations/2024-07-29_migration.md": "# Migration\n\nDone.\n",
            "docs/claude_conversations/2024-07-30_referrals.md": "# Referrals\n\nDone.\n",
        },
    )
    data = _check(repo)
    roots = _roots(data)
    assert roots["journal"]["kind"] == "notes"  # a journal kept month by month
    assert roots["docs/claude_conversations"]["kind"] == "notes"
    assert roots["sessions"]["kind"] == "notes"
    assert "sessions/20251112-01-obsidian/rounds/01-foundation.md" in roots["sessions"]["files"]
    assert len(roots[".ai_work_context"]["files"]) == 2
    assert roots["app/memorybank"]["kind"] == "notes"
    assert [c for c in _codes(data) if c[1] == "IX012"] == []


def test_specstory_saved_chats_are_found_and_searched_for_secrets(tmp_path: Path) -> None:
    """`.specstory/history/2025-03-03_19-16-setup.md`: the chats SpecStory saves, one dated
    file each — a root of notes kept as it was said (a NUL byte a tool printed is no SZ001,
    its links are that day's record); a key pasted into a chat is still found (never
    printed)."""
    key = _fake_github_token()
    repo = _repo(tmp_path)
    chat = (
        "## SpecStory\n\n## Setup (3/3/2025, 7:16 p.m.)\n\n_**User**_\n\n"
        f"Use this token: {key} and read [the brief](projectbrief.md)\n\n---\n\n"
        "_**Assistant**_\n\nDone.\n"
    )
    _write(repo, {".specstory/history/2025-03-03_19-16-setup.md": chat + "tool output: \x00\n"})
    data = _check(repo)
    assert _roots(data)[".specstory/history"]["kind"] == "notes"
    assert _roots(data)[".specstory/history"]["rules"].startswith("SC (secrets)")
    assert _codes(data) == [(".specstory/history/2025-03-03_19-16-setup.md", "SC001")]
    assert key not in json.dumps(data)


def test_an_agents_lessons_folder_is_memory_but_a_courses_lessons_are_not(
    tmp_path: Path,
) -> None:
    """`docs/lessons/` (or `lessons/` at the top, `.claude/lessons/`) is where an agent files
    what it learned, one topic per file: a root by its name. A course's `Lessons/` deep in a
    vault of class notes (`study/course/mentoring/Lessons/`) is not."""
    repo = _repo(tmp_path)
    _write(
        repo,
        {
            "docs/lessons/0001-quote-once.md": "# Quote once\n\nQuote where it is built.\n",
            "docs/lessons/0002-stdin.md": "# Stdin\n\nPrompts go on stdin.\n",
            "study/course/mentoring/Lessons/Lesson_1.md": "# Lesson 1\n\nSee [[Focus]].\n",
            "study/course/mentoring/Lessons/Lesson_2.md": "# Lesson 2\n\nSee [[Attention]].\n",
        },
    )
    roots = _roots(_check(repo))
    assert "docs/lessons" in roots, sorted(roots)
    assert not any(r.startswith("study") for r in roots), sorted(roots)
