"""Golden tests for the named-checkpoints procedure: save, smart output, resume, cleanup, migration."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
from pathlib import Path

import pytest

from memls.core.gitfacade import Git
from memls.core.model import Severity
from memls.core.ops import ConflictError, OpError
from memls.core.ops._text import sha256_bytes
from memls.core.ops.checkpoint import (
    clear_checkpoint,
    list_checkpoints,
    resume_checkpoint,
    save_checkpoint,
)
from memls.core.ops.index import migrate_index
from memls.core.ops.table import spelling
from memls.core.parse import parse_file
from memls.core.rules import check_document
from memls.core.workspace import Workspace
from tests.cli_helpers import memls_on, run_memls

NOW = dt.datetime(2026, 11, 30, 12, 0)
LATER = dt.datetime(2026, 11, 30, 14, 7)
RESUME = "Resume any: `continue` or `continue {name}`"


def _git(root: Path) -> Git:
    return Git(root)


def _save(root: Path, name: str | None, now: dt.datetime = NOW, **kw: object) -> object:
    return save_checkpoint(root, name, now=now, git=_git(root), **kw)  # type: ignore[arg-type]


def _errors(root: Path, name: str) -> list[str]:
    ws = Workspace(root)
    doc = ws.document(root / name)
    assert doc is not None
    return [
        f"{d.code} {d.message}"
        for d in check_document(ws, doc, now=NOW)
        if d.severity is Severity.ERROR
    ]


def test_save_into_empty_directory_creates_index_and_checkpoint(tmp_path: Path) -> None:
    result = save_checkpoint(
        tmp_path,
        "Feature/Login",
        next_action="Wire the login form",
        done=["parser handles CRLF"],
        failed=["regex tokenizer — too slow on big files"],
        now=NOW,
        git=_git(tmp_path),
    )
    assert result.changed
    assert (tmp_path / "MEMORY.md").read_text() == (
        "# Project Memory\n\n## Active Checkpoints\n"
        "- **feature-login** (no-branch, Nov 30 12:00) — Wire the login form\n\n"
        f"{RESUME}\n"
    )
    assert (tmp_path / "checkpoint-feature-login.md").read_text() == (
        "# Checkpoint: feature-login\n\n"
        "- **Branch:** `no-branch`\n"
        "- **Saved:** 2026-11-30 12:00\n\n"
        "## Next Action: Wire the login form\n"
        "- (author: 1-3 lines on what to do next, with file paths)\n\n"
        "## Done This Session\n- parser handles CRLF\n\n"
        "## Failed Approaches\n- regex tokenizer — too slow on big files\n\n"
        "## Modified Files\n- None\n"
    )
    assert result.message == (
        'Checkpoint "feature-login" saved -> checkpoint-feature-login.md\n\n'
        "/compact focus on: Wire the login form; "
        "failed approaches: regex tokenizer — too slow on big files"
    )
    assert result.data["name"] == "feature-login"
    assert _errors(tmp_path, "MEMORY.md") == []


def test_plan_driven_save_recommends_clear_and_continue(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / ".claude" / "plans").mkdir(parents=True)
    (home / ".claude" / "plans" / "p.md").write_text("# Plan\n1. a\n2. b\n3. c\n4. d\n5. e\n")
    monkeypatch.setenv("HOME", str(home))
    root = tmp_path / "root"
    root.mkdir()
    result = _save(root, "x", next_action="Step three", plan="~/.claude/plans/p.md", step="3/5")
    text = (root / "checkpoint-x.md").read_text()
    assert "- **Plan:** `~/.claude/plans/p.md` (step 3 of 5)\n" in text
    assert result.message.endswith("/clear then: continue x\nNext: Step three")  # type: ignore[attr-defined]
    assert "Warning" not in result.message  # type: ignore[attr-defined]
    ws = Workspace(root)
    found = [d.code for d in check_document(ws, parse_file(root / "checkpoint-x.md"), now=NOW)]
    assert found == []


@pytest.mark.parametrize("step", ["5/3", "0/3", "3/0", "-1/3", "two/3", "3", "1/2/3", ""])
def test_impossible_or_malformed_step_is_refused_before_writing(tmp_path: Path, step: str) -> None:
    (tmp_path / "plan.md").write_text("# Plan\n")
    with pytest.raises(OpError, match="step") as refused:
        _save(tmp_path, "x", next_action="Go", plan="plan.md", step=step)
    # the refusal names the parameter; the command line spells it as its flag
    assert refused.value.param == "step"
    assert refused.value.render(spelling("checkpoint.save", "cli")).startswith("--step ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.md"]


def test_cli_step_beyond_the_plan_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "plan.md").write_text("# Plan\n")
    proc = memls_on(
        tmp_path, "checkpoint", "save", "x", "--next", "Go", "--plan", "plan.md", "--step", "5/3"
    )
    assert proc.returncode == 2
    assert "--step '5/3' is impossible: N must be between 1 and M" in proc.stderr
    assert proc.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.md"]
    ok = memls_on(
        tmp_path, "checkpoint", "save", "x", "--next", "Go", "--plan", "plan.md", "--step", "3/3"
    )
    assert ok.returncode == 0, ok.stderr
    assert "- **Plan:** `plan.md` (step 3 of 3)\n" in (tmp_path / "checkpoint-x.md").read_text()


def test_missing_plan_is_left_out_with_a_warning(tmp_path: Path) -> None:
    """The procedure: omit the Plan line if no plan file exists; still save (insurance)."""
    result = _save(tmp_path, "x", next_action="Go", plan="plans/gone.md", step="2/4")
    assert result.changed  # type: ignore[attr-defined]
    text = (tmp_path / "checkpoint-x.md").read_text()
    assert "Plan" not in text
    message = result.message  # type: ignore[attr-defined]
    assert message.splitlines()[1].startswith(
        "Warning: plan file `plans/gone.md` not found (relative paths are taken from the memory root"
    )
    assert "CP030" in message.splitlines()[1]
    assert message.endswith("/compact focus on: Go")  # no plan tracks progress: not /clear
    assert result.data["warnings"] == [message.splitlines()[1]]  # type: ignore[attr-defined]
    ws = Workspace(tmp_path)
    found = [d.code for d in check_document(ws, parse_file(tmp_path / "checkpoint-x.md"), now=NOW)]
    assert found == []
    # Once the plan exists (relative to the root), the same save records it.
    (tmp_path / "plans").mkdir()
    (tmp_path / "plans" / "gone.md").write_text("# Plan\n")
    again = _save(tmp_path, "x", next_action="Go", plan="plans/gone.md", step="2/4")
    assert (
        "- **Plan:** `plans/gone.md` (step 2 of 4)\n" in (tmp_path / "checkpoint-x.md").read_text()
    )
    assert "Warning" not in again.message  # type: ignore[attr-defined]


def test_cli_missing_plan_warns_and_saves(tmp_path: Path) -> None:
    proc = memls_on(
        tmp_path, "checkpoint", "save", "x", "--next", "Go", "--plan", "/nonexistent/p.md"
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[1].startswith(
        "Warning: plan file `/nonexistent/p.md` not found"
    )
    assert "Plan" not in (tmp_path / "checkpoint-x.md").read_text()


def test_second_save_replaces_bullet_and_keeps_user_sections(tmp_path: Path) -> None:
    _save(tmp_path, "a", next_action="First")
    _save(tmp_path, "b", next_action="Other")
    cp = tmp_path / "checkpoint-a.md"
    # The user edits the checkpoint: their text of sections not given anew must survive.
    cp.write_text(
        cp.read_text().replace("- None recorded", "- wrote the *real* notes\n  - nested detail")
        + "\n## Notes\nkeep me\n"
    )
    result = _save(tmp_path, "a", now=LATER, next_action="Second")
    assert result.changed  # type: ignore[attr-defined]
    index = (tmp_path / "MEMORY.md").read_text()
    assert index == (
        "# Project Memory\n\n## Active Checkpoints\n"
        "- **a** (no-branch, Nov 30 14:07) — Second\n"
        "- **b** (no-branch, Nov 30 12:00) — Other\n\n"
        f"{RESUME}\n"
    )
    text = cp.read_text()
    assert "## Next Action: Second\n" in text
    assert "- wrote the *real* notes\n  - nested detail\n" in text
    assert text.endswith("## Notes\nkeep me\n")
    assert "- **Saved:** 2026-11-30 14:07\n" in text


def test_equivalent_save_writes_nothing(tmp_path: Path) -> None:
    _save(tmp_path, "a", next_action="Same", summary="s")
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in tmp_path.iterdir()}
    again = _save(tmp_path, "a", next_action="Same", summary="s")
    assert not again.changed  # type: ignore[attr-defined]
    assert again.message.startswith('Checkpoint "a" unchanged')  # type: ignore[attr-defined]
    after = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in tmp_path.iterdir()}
    assert after == before


def test_expect_sha_is_compare_and_swap(tmp_path: Path) -> None:
    first = _save(tmp_path, "a", next_action="One")
    sha = first.data["sha"]  # type: ignore[attr-defined]
    assert sha == sha256_bytes((tmp_path / "checkpoint-a.md").read_bytes())
    second = _save(tmp_path, "a", now=LATER, next_action="Two", expect_sha=sha)
    with pytest.raises(ConflictError) as info:
        _save(tmp_path, "a", next_action="Three", expect_sha=sha)
    assert info.value.current_sha == second.data["sha"]  # type: ignore[attr-defined]
    assert "Next Action: Two" in (tmp_path / "checkpoint-a.md").read_text()


def test_section_inserted_after_first_heading_and_other_sections_untouched(tmp_path: Path) -> None:
    original = (
        "# Team Memory\r\n\r\nIntro that belongs to the title.\r\n\r\n"
        "## Conventions\r\n- tabs   are banned  \r\n\r\n## Links\r\n- [x](topic.md)\r\n"
    )
    (tmp_path / "MEMORY.md").write_bytes(original.encode())
    _save(tmp_path, "a", next_action="Go")
    data = (tmp_path / "MEMORY.md").read_bytes().decode()
    assert data == (
        "# Team Memory\r\n\r\nIntro that belongs to the title.\r\n\r\n"
        "## Active Checkpoints\r\n- **a** (no-branch, Nov 30 12:00) — Go\r\n\r\n"
        f"{RESUME}\r\n\r\n"
        "## Conventions\r\n- tabs   are banned  \r\n\r\n## Links\r\n- [x](topic.md)\r\n"
    )
    clear_checkpoint(tmp_path, "a")
    assert (tmp_path / "MEMORY.md").read_bytes().decode() == original


def test_index_without_title_gets_project_memory(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("## Notes\nhello\n")
    _save(tmp_path, "a", next_action="Go")
    assert (tmp_path / "MEMORY.md").read_text() == (
        "# Project Memory\n\n## Active Checkpoints\n- **a** (no-branch, Nov 30 12:00) — Go\n\n"
        f"{RESUME}\n\n## Notes\nhello\n"
    )


# -- resume ------------------------------------------------------------------
def test_resume_none_one_many(tmp_path: Path) -> None:
    git = _git(tmp_path)
    none = resume_checkpoint(tmp_path, git=git)
    assert none.message == "No checkpoints found."
    assert none.data["status"] == "none"
    _save(tmp_path, "a", next_action="Do A", failed=["approach one — broke X", "approach two"])
    one = resume_checkpoint(tmp_path, git=git)
    assert one.data["status"] == "one"
    assert one.message == (
        'Resuming checkpoint "a" (branch `no-branch`, saved 2026-11-30 12:00)\n'
        "⚠ Previously failed: approach one — broke X\n"
        "⚠ Previously failed: approach two\n"
        "Next Action: Do A\n"
        "- (author: 1-3 lines on what to do next, with file paths)"
    )
    _save(tmp_path, "b", now=LATER, next_action="Do B")
    many = resume_checkpoint(tmp_path, git=git)
    assert many.data["status"] == "many"
    assert many.message == (
        "Several checkpoints — pick one with `continue {name}`:\n"
        "- b (no-branch, saved 2026-11-30 14:07)\n"
        "- a (no-branch, saved 2026-11-30 12:00)"
    )
    assert resume_checkpoint(tmp_path, "B", git=git).data["name"] == "b"


def test_resume_missing_file_removes_orphaned_bullet(tmp_path: Path) -> None:
    _save(tmp_path, "a", next_action="Do A")
    _save(tmp_path, "gone", next_action="Vanished")
    (tmp_path / "checkpoint-gone.md").unlink()
    result = resume_checkpoint(tmp_path, "gone", git=_git(tmp_path))
    assert result.data["status"] == "missing"
    assert result.changed
    assert result.message == (
        'Removed the orphaned index bullet for "gone" (its file is missing).\n'
        'Checkpoint "gone" not found. Available checkpoints:\n'
        "- a (no-branch, saved 2026-11-30 12:00)"
    )
    assert "gone" not in (tmp_path / "MEMORY.md").read_text()


def test_resume_consume_deletes_checkpoint(tmp_path: Path) -> None:
    _save(tmp_path, "a", next_action="Do A")
    result = resume_checkpoint(tmp_path, "a", consume=True, git=_git(tmp_path))
    assert result.message.endswith('Cleared checkpoint "a"')
    assert not (tmp_path / "checkpoint-a.md").exists()
    assert (tmp_path / "MEMORY.md").read_text() == "# Project Memory\n"


def _run_git(repo: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@e",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@e",
    }
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, env=env)


def test_branch_from_git_and_mismatch_warning(tmp_path: Path) -> None:
    _run_git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "code.py").write_text("x = 1\n")
    _run_git(tmp_path, "add", "code.py")
    _run_git(tmp_path, "commit", "-q", "-m", "init")
    _run_git(tmp_path, "checkout", "-q", "-b", "Feature/Auth")
    (tmp_path / "code.py").write_text("x = 2\n")
    result = save_checkpoint(tmp_path, None, next_action="Finish auth", now=NOW, git=Git(tmp_path))
    assert result.data["name"] == "feature-auth"
    text = (tmp_path / "checkpoint-feature-auth.md").read_text()
    assert "- **Branch:** `Feature/Auth`\n" in text
    assert text.endswith("## Modified Files\n- code.py (M)\n")
    _run_git(tmp_path, "checkout", "-q", "main")
    resumed = resume_checkpoint(tmp_path, git=Git(tmp_path))
    warning = (
        "Warning: You're on `main` but checkpoint was saved on `Feature/Auth`. "
        "Switch with: git checkout Feature/Auth"
    )
    assert warning in resumed.message.splitlines()
    assert resumed.data["warnings"] == [warning]
    [info] = list_checkpoints(tmp_path, now=NOW, git=Git(tmp_path))
    assert info.branch_mismatch
    assert not info.stale
    assert info.summary == "Finish auth"


def _repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    _run_git(path, "init", "-q", "-b", "main")
    (path / "code.py").write_text("x = 1\n")
    _run_git(path, "add", "code.py")
    _run_git(path, "commit", "-q", "-m", "init")
    (path / "code.py").write_text("x = 2\n")
    return path


def _modified_files(checkpoint: Path) -> str:
    return checkpoint.read_text().split("## Modified Files\n", 1)[1]


@pytest.mark.parametrize("memory", ["memory", ".claude/memory", ""])
def test_memory_files_are_not_modified_files_and_a_repeat_save_is_unchanged(
    tmp_path: Path, memory: str
) -> None:
    """A save's own files must not show in the next save's Modified Files (a real git repo)."""
    repo = _repo(tmp_path / "repo")
    root = repo / memory if memory else repo
    root.mkdir(parents=True, exist_ok=True)
    (repo / "naïve file.txt").write_text("new\n")  # git quotes this name in its status
    first = save_checkpoint(root, "x", next_action="Go", now=NOW, git=Git(repo))
    assert first.changed
    cp = root / "checkpoint-x.md"
    assert _modified_files(cp) == '- code.py (M)\n- "na\\303\\257ve file.txt" (??)\n'
    # Tracked memory files that change show as modified too, and are still left out.
    _run_git(repo, "add", "-A")
    _run_git(repo, "commit", "-q", "-m", "memory")
    (repo / "code.py").write_text("x = 3\n")
    (root / "MEMORY.md").write_text((root / "MEMORY.md").read_text() + "\n## Notes\nhi\n")
    second = save_checkpoint(root, "x", next_action="Go", now=NOW, git=Git(repo))
    assert _modified_files(cp) == "- code.py (M)\n"
    third = save_checkpoint(root, "x", next_action="Go", now=NOW, git=Git(repo))
    assert second.changed
    assert not third.changed
    assert third.message.startswith('Checkpoint "x" unchanged')
    status = subprocess.run(
        ["git", "status", "--short"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout
    assert "checkpoint-x.md" in status  # git does see them
    assert "MEMORY.md" in status


def test_repeat_save_from_the_command_line_in_a_repo_is_unchanged(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    root = repo / "memory"
    root.mkdir()
    args = ("checkpoint", "save", "x", "--next", "Go", "--json", "--root", str(root))
    for _attempt in range(3):  # a minute boundary between the two saves: try again
        first = run_memls(*args, cwd=repo)
        second = run_memls(*args, cwd=repo)
        assert first.returncode == 0, first.stderr
        assert second.returncode == 0, second.stderr
        if json.loads(first.stdout)["sha"] == json.loads(second.stdout)["sha"]:
            break
    assert json.loads(second.stdout)["changed"] is False
    assert _modified_files(root / "checkpoint-x.md") == "- code.py (M)\n"


def test_list_marks_stale_by_age(tmp_path: Path) -> None:
    _save(tmp_path, "old", now=NOW - dt.timedelta(days=30), next_action="Ancient")
    _save(tmp_path, "new", next_action="Fresh")
    infos = {i.name: i for i in list_checkpoints(tmp_path, now=NOW, git=_git(tmp_path))}
    assert infos["old"].stale
    assert infos["old"].age_days == pytest.approx(30)
    assert not infos["new"].stale


# -- cleanup -----------------------------------------------------------------
def test_clearing_last_checkpoint_removes_section_and_resume_line(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("# Memory\n\n## Stable\nkeep\n")
    _save(tmp_path, "a", next_action="A")
    _save(tmp_path, "b", next_action="B")
    first = clear_checkpoint(tmp_path, "a")
    assert first.message == 'Cleared checkpoint "a"'
    assert (tmp_path / "MEMORY.md").read_text() == (
        "# Memory\n\n## Active Checkpoints\n- **b** (no-branch, Nov 30 12:00) — B\n\n"
        f"{RESUME}\n\n## Stable\nkeep\n"
    )
    clear_checkpoint(tmp_path, "b")
    assert (tmp_path / "MEMORY.md").read_text() == "# Memory\n\n## Stable\nkeep\n"
    assert not list(tmp_path.glob("checkpoint-*.md"))
    again = clear_checkpoint(tmp_path, "b")
    assert not again.changed
    assert again.message == 'No checkpoint "b" to clear (there are no checkpoints).'
    _save(tmp_path, "c", next_action="C")
    _save(tmp_path, "a", next_action="A")
    other = clear_checkpoint(tmp_path, "b")
    assert other.message == 'No checkpoint "b" to clear. Available checkpoints: a, c'
    assert other.data == {"cleared": [], "available": ["a", "c"]}


def test_clear_all(tmp_path: Path) -> None:
    for name in ("a", "b", "c"):
        _save(tmp_path, name, next_action=name)
    result = clear_checkpoint(tmp_path, None, all=True)
    assert result.message == "Cleared 3 checkpoints: a, b, c"
    assert (tmp_path / "MEMORY.md").read_text() == "# Project Memory\n"


# -- first-time migration ----------------------------------------------------
LEGACY = (
    "# Project Memory\n\n"
    "## Architecture\n- core/ is pure\n  - never imports pygls\n\n"
    "## Current State\nParser half done; see `core/parse.py`.\n\n"
    "## Conventions\n```md\n## Next Action\nnot a heading: inside a fence\n```\n\n"
    "## Next Action\n- finish the CRLF handling in core/text.py\n\n"
    "## Session 3 Summary\nWe fixed the lexer.\n### Detail\nsub-heading kept\n\n"
    "## Links\n- [testing](feedback-testing.md)   \n"
)


def test_first_save_migrates_volatile_sections_and_keeps_stable_ones(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text(LEGACY)
    result = migrate_index(tmp_path, "legacy", now=NOW, git=_git(tmp_path))
    assert result.data["migrated"] == ["Current State", "Next Action", "Session 3 Summary"]
    index = (tmp_path / "MEMORY.md").read_text()
    assert index == (
        "# Project Memory\n\n"
        "## Active Checkpoints\n"
        "- **legacy** (no-branch, Nov 30 12:00) — finish the CRLF handling in core/text.py\n\n"
        f"{RESUME}\n\n"
        "## Architecture\n- core/ is pure\n  - never imports pygls\n\n"
        "## Conventions\n```md\n## Next Action\nnot a heading: inside a fence\n```\n\n"
        "## Links\n- [testing](feedback-testing.md)   \n"
    )
    cp = (tmp_path / "checkpoint-legacy.md").read_text()
    assert "## Next Action: finish the CRLF handling in core/text.py\n" in cp
    assert "## Current State\nParser half done; see `core/parse.py`.\n" in cp
    assert "## Session 3 Summary\nWe fixed the lexer.\n### Detail\nsub-heading kept\n" in cp
    again = migrate_index(tmp_path, "legacy", now=NOW, git=_git(tmp_path))
    assert not again.changed
    assert again.message.startswith("Nothing to migrate")


def test_migration_is_idempotent_after_a_crash_between_writes(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text(LEGACY)
    _save(tmp_path, "legacy")
    migrated_cp = (tmp_path / "checkpoint-legacy.md").read_text()
    # Simulate a crash after the checkpoint write: the index still holds the legacy sections.
    (tmp_path / "MEMORY.md").write_text(LEGACY)
    _save(tmp_path, "legacy")
    assert (tmp_path / "checkpoint-legacy.md").read_text() == migrated_cp


def test_saved_files_pass_the_checkpoint_rules(tmp_path: Path) -> None:
    _save(tmp_path, "a", next_action="Go", done=["d"], failed=["f — why"])
    doc = parse_file(tmp_path / "checkpoint-a.md")
    ws = Workspace(tmp_path)
    found = [d.code for d in check_document(ws, doc, now=NOW) if d.code.startswith(("CP", "IX"))]
    assert found == []


# -- through the command line ------------------------------------------------
def test_cli_save_resume_list_clear(tmp_path: Path) -> None:
    saved = memls_on(
        tmp_path, "checkpoint", "save", "Demo", "--next", "Try it", "--failed", "x — y"
    )
    assert saved.returncode == 0, saved.stderr
    assert saved.stdout.startswith('Checkpoint "demo" saved -> checkpoint-demo.md\n\n/compact ')
    listed = memls_on(tmp_path, "checkpoint", "list", "--json")
    assert '"name": "demo"' in listed.stdout
    resumed = memls_on(tmp_path, "checkpoint", "resume")
    assert "⚠ Previously failed: x — y\nNext Action: Try it" in resumed.stdout
    stale_sha = memls_on(tmp_path, "checkpoint", "save", "demo", "--expect-sha", "0" * 64)
    assert stale_sha.returncode == 3
    assert "sha256 is now" in stale_sha.stderr
    cleared = memls_on(tmp_path, "checkpoint", "clear", "demo")
    assert cleared.stdout.strip() == 'Cleared checkpoint "demo"'


def test_cli_missing_checkpoint_exits_2_and_lists_the_available(tmp_path: Path) -> None:
    """README: exit 2 means refused or missing input; naming no checkpoint that exists is that."""
    empty_resume = memls_on(tmp_path, "checkpoint", "resume")
    assert (empty_resume.returncode, empty_resume.stdout) == (0, "No checkpoints found.\n")
    named_none = memls_on(tmp_path, "checkpoint", "resume", "ghost")
    assert named_none.returncode == 2
    assert named_none.stderr == 'Error: Checkpoint "ghost" not found.\nNo checkpoints found.\n'
    clear_none = memls_on(tmp_path, "checkpoint", "clear", "ghost")
    assert clear_none.returncode == 2
    assert "there are no checkpoints" in clear_none.stderr
    assert memls_on(tmp_path, "checkpoint", "clear", "--all").returncode == 0

    for name in ("alpha", "beta"):
        assert memls_on(tmp_path, "checkpoint", "save", name, "--next", name).returncode == 0
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    resumed = memls_on(tmp_path, "checkpoint", "resume", "ghost")
    assert resumed.returncode == 2
    assert resumed.stdout == ""
    lines = resumed.stderr.splitlines()
    assert lines[0] == 'Error: Checkpoint "ghost" not found. Available checkpoints:'
    assert sorted(ln.split(" ")[1] for ln in lines[1:]) == ["alpha", "beta"]
    cleared = memls_on(tmp_path, "checkpoint", "clear", "ghost")
    assert cleared.returncode == 2
    assert cleared.stderr == (
        'Error: No checkpoint "ghost" to clear. Available checkpoints: alpha, beta\n'
    )
    as_json = memls_on(tmp_path, "checkpoint", "clear", "ghost", "--json")
    assert as_json.returncode == 2
    payload = json.loads(as_json.stdout)
    assert (payload["exit_code"], payload["available"]) == (2, ["alpha", "beta"])
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # nothing touched
    # Several checkpoints and no name: the list to pick from is an answer, not an error.
    assert memls_on(tmp_path, "checkpoint", "resume").returncode == 0
    assert memls_on(tmp_path, "checkpoint", "resume", "alpha").returncode == 0
    assert memls_on(tmp_path, "checkpoint", "clear", "alpha").returncode == 0


def test_every_command_has_help() -> None:
    from click.testing import CliRunner

    from memls.cli import main

    runner = CliRunner()
    for args in (
        ("checkpoint", "save"),
        ("checkpoint", "resume"),
        ("checkpoint", "clear"),
        ("checkpoint", "list"),
        ("index", "migrate"),
        ("bundle", "approve"),
        ("bundle", "status"),
        ("log", "append"),
        ("handoff", "new"),
        ("handoff", "refresh"),
    ):
        out = runner.invoke(main, [*args, "--help"]).output
        assert "--root" in out
        _usage, _, rest = out.partition("\n\n")
        assert rest.strip().split("\n")[0].strip(), f"{args} has no help text"
