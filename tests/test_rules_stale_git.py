"""Staleness from git (HO005–HO007, CP023–CP025) against real temporary repositories:
files deleted since a handoff or checkpoint was written, commits since, merged branches —
each finding naming the commit that is its evidence."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from memls.core.config import Config
from memls.core.gitfacade import Git, history, run_git
from memls.core.model import Diagnostic, Severity
from memls.core.rules import check_document
from memls.core.workspace import Workspace

from .conftest import NOW

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

ENV = {
    "GIT_AUTHOR_NAME": "memls test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "memls test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}
_tick = [1_780_000_000]


def git(cwd: Path, *args: str) -> str:
    _tick[0] += 60
    env = {
        **ENV,
        "GIT_AUTHOR_DATE": f"@{_tick[0]} +0000",
        "GIT_COMMITTER_DATE": f"@{_tick[0]} +0000",
    }
    return run_git(cwd, *args, env=env).stdout.decode()


def commit_file(repo: Path, rel: str, text: str, message: str) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    git(repo, "add", rel)
    git(repo, "commit", "-q", "-m", message)


HANDOFF = (
    "# Handoff\n\n- **Updated:** 2026-05-01 10:00\n\n## Current State\n"
    "Start with `scripts/build.sh`, then read `docs/plan.md`.\n\n"
    "| tool | what |\n|---|---|\n| `tools/lint.py` | lints |\n\n"
    "## Next Steps\n- Run `scripts/build.sh`.\n"
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "proj"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit_file(repo, "scripts/build.sh", "make\n", "build script")
    commit_file(repo, "docs/plan.md", "# Plan\n", "plan")
    commit_file(repo, "tools/lint.py", "print()\n", "lint")
    commit_file(repo, ".handoff.md", HANDOFF, "handoff")
    return repo


def _check(root: Path, name: str, select: tuple[str, ...], **cfg: int) -> list[Diagnostic]:
    ws = Workspace(root, Config(select=select, **cfg))  # type: ignore[arg-type]
    doc = ws.document(root / name)
    assert doc is not None
    return check_document(ws, doc, NOW)


def test_a_file_deleted_since_is_named_with_its_commit(repo: Path) -> None:
    git(repo, "rm", "-q", "scripts/build.sh")
    git(repo, "commit", "-q", "-m", "drop the old build script")
    sha = git(repo, "rev-parse", "--short=9", "HEAD").strip()
    (repo / "tools/check").mkdir()
    git(repo, "mv", "tools/lint.py", "tools/check/lint.py")
    git(repo, "commit", "-q", "-m", "move lint")
    found = _check(repo, ".handoff.md", ("HO005",))
    assert [(d.code, d.range.start.line) for d in found] == [("HO005", 5), ("HO005", 9)]
    first, moved = found
    assert "`scripts/build.sh` was deleted in " + sha in first.message
    assert "('drop the old build script')" in first.message
    assert "last committed in" in first.message
    assert "moved to `tools/check/lint.py`" in moved.message
    assert first.severity is Severity.WARNING


def test_files_deleted_before_the_handoff_was_written_are_not_news(repo: Path) -> None:
    git(repo, "rm", "-q", "scripts/build.sh")
    git(repo, "commit", "-q", "-m", "drop it")
    commit_file(repo, ".handoff.md", HANDOFF + "\nStill mentions it.\n", "handoff again")
    assert _check(repo, ".handoff.md", ("HO005",)) == []


def test_a_handoff_being_edited_is_current(repo: Path) -> None:
    git(repo, "rm", "-q", "scripts/build.sh")
    git(repo, "commit", "-q", "-m", "drop it")
    (repo / ".handoff.md").write_text(HANDOFF + "\nedited now\n")
    assert _check(repo, ".handoff.md", ("HO005", "HO006", "HO007"), stale_commits=1) == []


def test_commits_since_with_a_threshold(repo: Path) -> None:
    for n in range(4):
        commit_file(repo, f"src/m{n}.py", "x\n", f"work {n}")
    assert _check(repo, ".handoff.md", ("HO006",)) == []  # 4 < 20
    [diag] = _check(repo, ".handoff.md", ("HO006",), stale_commits=4)
    assert diag.message.startswith("4 commits on `main` since this handoff was written")
    assert "they changed 4 files; the newest is" in diag.message
    assert "('work 3')" in diag.message
    assert diag.range.start.line == 2  # the Updated date
    assert _check(repo, ".handoff.md", ("HO006",), stale_commits=0) == []


def test_an_untracked_handoff_counts_the_commits_after_its_date(repo: Path) -> None:
    git(repo, "rm", "-q", "--cached", ".handoff.md")
    git(repo, "commit", "-q", "-m", "stop tracking the handoff")
    (repo / ".gitignore").write_text(".handoff.md\n")
    # dated long before every commit of the fixture: all of them came after it
    (repo / ".handoff.md").write_text(HANDOFF.replace("2026-05-01", "2020-01-01"))
    [diag] = _check(repo, ".handoff.md", ("HO006",), stale_commits=3)
    assert "commits on `main` since this handoff was written (dated 2020-01-01)" in diag.message


def test_merged_branch_of_a_checkpoint(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "feat/x")
    commit_file(repo, "src/x.py", "x\n", "feature work")
    root = repo / "mem"
    cp = (
        "# Checkpoint: x\n\n- **Branch:** `feat/x`\n- **Saved:** 2020-01-01 10:00\n\n"
        "## Next Action: Finish x\nIN PROGRESS.\n\n## Done This Session\n- things\n\n"
        "## Failed Approaches\n- None\n\n## Modified Files\n- src/x.py\n"
    )
    commit_file(repo, "mem/checkpoint-x.md", cp, "checkpoint")
    assert _check(root, "checkpoint-x.md", ("CP025",)) == []  # not merged yet
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge branch 'feat/x'", "feat/x")
    [diag] = _check(root, "checkpoint-x.md", ("CP025",))
    assert "branch `feat/x` was merged into `main` by " in diag.message
    assert "('Merge branch 'feat/x'')" in diag.message
    # the branch deleted after the merge: the merge commit in history is the evidence, and
    # CP020 ("exists neither locally nor on a remote") leaves the finding to CP025
    git(repo, "branch", "-q", "-D", "feat/x")
    found = _check(root, "checkpoint-x.md", ("CP020", "CP025"))
    assert [d.code for d in found] == ["CP025"]


def test_a_fresh_branch_is_not_merged(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "feat/new")
    text = HANDOFF.replace("- **Updated:**", "- **Branch:** `feat/new`\n- **Updated:**")
    commit_file(repo, ".handoff.md", text, "handoff on the new branch")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--ff-only", "feat/new")
    assert _check(repo, ".handoff.md", ("HO007",)) == []  # a fast-forward: no merge commit


def test_checkpoint_on_another_branch_gets_no_head_evidence(repo: Path) -> None:
    root = repo / "mem"
    cp = (
        "# Checkpoint: y\n\n- **Branch:** `feat/y`\n- **Saved:** 2020-01-01 10:00\n\n"
        "## Next Action: Edit\nEdit `scripts/build.sh`.\n"
    )
    commit_file(repo, "mem/checkpoint-y.md", cp, "checkpoint")
    git(repo, "branch", "feat/y")
    git(repo, "rm", "-q", "scripts/build.sh")
    git(repo, "commit", "-q", "-m", "drop it on main")
    assert _check(root, "checkpoint-y.md", ("CP023", "CP024"), stale_commits=1) == []


def test_checkpoint_names_a_deleted_file_on_its_branch(repo: Path) -> None:
    root = repo / "mem"
    cp = (
        "# Checkpoint: m\n\n- **Branch:** `main`\n- **Saved:** 2020-01-01 10:00\n\n"
        "## Next Action: Edit\nEdit `docs/plan.md` next.\n"
    )
    commit_file(repo, "mem/checkpoint-m.md", cp, "checkpoint")
    git(repo, "rm", "-q", "docs/plan.md")
    git(repo, "commit", "-q", "-m", "plan done")
    [diag] = _check(root, "checkpoint-m.md", ("CP023",))
    assert "`docs/plan.md` was deleted in" in diag.message
    assert diag.range.start.line == 6


def test_one_history_walk_per_repository(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, ...]] = []
    real = Git._out

    def counting(self: Git, *args: str, **kw: float) -> str | None:
        calls.append(args)
        return real(self, *args, **kw)

    monkeypatch.setattr(Git, "_out", counting)
    root = repo / "mem"
    for n in range(5):
        cp = f"# Checkpoint: c{n}\n\n- **Branch:** `main`\n- **Saved:** 2020-01-01 10:00\n"
        commit_file(repo, f"mem/checkpoint-c{n}.md", cp, f"cp {n}")
    ws = Workspace(root, Config(select=("CP023", "CP024", "CP025")))
    for path in ws.paths():
        doc = ws.document(path)
        assert doc is not None
        check_document(ws, doc, NOW)
    logs = [c for c in calls if "log" in c]
    statuses = [c for c in calls if "status" in c]
    assert len(logs) == 1
    assert len(statuses) == 1


def test_no_git_no_finding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".handoff.md").write_text(HANDOFF)
    assert _check(tmp_path, ".handoff.md", ("HO005", "HO006", "HO007")) == []
    monkeypatch.setenv("PATH", "/nonexistent")
    assert history(Git(tmp_path)) is None


def test_commits_since_a_recent_checkpoint_and_not_twice_for_an_old_one(repo: Path) -> None:
    root = repo / "mem"
    cp = "# Checkpoint: r\n\n- **Branch:** `main`\n- **Saved:** {saved}\n\n## Next Action: Go\n"
    commit_file(repo, "mem/checkpoint-r.md", cp.format(saved="2026-11-29 10:00"), "checkpoint")
    for n in range(3):
        commit_file(repo, f"src/r{n}.py", "x\n", f"more work {n}")
    [diag] = _check(root, "checkpoint-r.md", ("CP022", "CP024"), stale_commits=3)
    assert diag.code == "CP024"
    assert diag.message.startswith("3 commits on `main` since this checkpoint was saved")
    assert "('more work 2')" in diag.message
    commit_file(repo, "mem/checkpoint-r.md", cp.format(saved="2026-01-01 10:00"), "old one")
    commit_file(repo, "src/r9.py", "x\n", "later")
    found = _check(root, "checkpoint-r.md", ("CP022", "CP024"), stale_commits=1)
    assert [d.code for d in found] == ["CP022"]  # the age already says it is stale


def test_a_file_the_handoff_expected_to_go_is_no_finding(repo: Path) -> None:
    text = (
        "# Handoff\n\n## Open Work\n- Remove `docs/plan.md` once it is done.\n"
        "- Then rebuild with `scripts/build.sh`.\n\n## Next Steps\n- Read `docs/plan.md`.\n"
    )
    commit_file(repo, ".handoff.md", text, "handoff")
    git(repo, "rm", "-q", "docs/plan.md")
    git(repo, "commit", "-q", "-m", "plan done")
    found = _check(repo, ".handoff.md", ("HO005",))
    assert [d.range.start.line for d in found] == [7]  # the "Read" line, not the "Remove" one
    git(repo, "rm", "-q", "scripts/build.sh")
    git(repo, "commit", "-q", "-m", "no build script")
    found = _check(repo, ".handoff.md", ("HO005",))
    assert [d.range.start.line for d in found] == [4, 7]


def test_archived_and_replaced_handoffs_are_history(repo: Path) -> None:
    """A handoff in an archive folder, or dated by its name with a newer handoff in the
    repository, is a record: no staleness finding, however many commits followed it."""
    old = HANDOFF.replace("2026-05-01", "2020-01-01")
    commit_file(repo, "archive/handoff-2020-01-01.md", old, "archive a handoff")
    commit_file(repo, "notes/old/HANDOFF.md", old, "an old handoff")
    commit_file(repo, "notes/handoff-2020-01-02.md", old, "a dated handoff")
    commit_file(repo, "notes/handoff-2026-12-01.md", old, "the newest dated handoff")
    for n in range(3):
        commit_file(repo, f"src/h{n}.py", "x\n", f"work {n}")
    codes = ("HO004", "HO005", "HO006", "HO007")
    assert _check(repo / "archive", "handoff-2020-01-01.md", codes, stale_commits=2) == []
    assert _check(repo / "notes" / "old", "HANDOFF.md", codes, stale_commits=2) == []
    assert _check(repo / "notes", "handoff-2020-01-02.md", codes, stale_commits=2) == []
    # the newest handoff by its name (dated after the live one was last committed), and the
    # live .handoff.md, are still judged
    [newest] = _check(repo / "notes", "handoff-2026-12-01.md", ("HO006",), stale_commits=2)
    assert newest.code == "HO006"
    [live] = _check(repo, ".handoff.md", ("HO006",), stale_commits=2)
    assert live.code == "HO006"


def test_a_dated_handoff_replaced_by_a_later_undated_one_is_history(repo: Path) -> None:
    commit_file(repo, "handoff-2020-01-01.md", HANDOFF, "a dated handoff")
    for n in range(3):
        commit_file(repo, f"src/u{n}.py", "x\n", f"work {n}")
    assert _check(repo, "handoff-2020-01-01.md", ("HO006",), stale_commits=2) == []


def test_an_archived_checkpoint_is_history(repo: Path) -> None:
    cp = (
        "# Checkpoint: a\n\n- **Branch:** `main`\n- **Saved:** 2026-11-29 10:00\n\n"
        "## Next Action: Edit\nEdit `docs/plan.md` next.\n"
    )
    commit_file(repo, "mem/archive/checkpoint-a.md", cp, "checkpoint")
    git(repo, "rm", "-q", "docs/plan.md")
    git(repo, "commit", "-q", "-m", "plan done")
    root = repo / "mem" / "archive"
    assert _check(root, "checkpoint-a.md", ("CP023", "CP024", "CP025"), stale_commits=1) == []


def test_a_series_of_handoffs_keeps_the_newest_as_the_state(repo: Path) -> None:
    """A folder of handoffs by topic (HANDOFF_auth.md, HANDOFF_billing.md …): the one
    committed last is the state to resume from; the others are its history."""
    for topic in ("auth", "billing", "search"):
        commit_file(repo, f"handoffs/HANDOFF_{topic}.md", HANDOFF, f"handoff {topic}")
    for n in range(3):
        commit_file(repo, f"src/s{n}.py", "x\n", f"work {n}")
    root = repo / "handoffs"
    assert _check(root, "HANDOFF_auth.md", ("HO006",), stale_commits=2) == []
    assert _check(root, "HANDOFF_billing.md", ("HO006",), stale_commits=2) == []
    [newest] = _check(root, "HANDOFF_search.md", ("HO006",), stale_commits=2)
    assert newest.message.startswith("3 commits on `main`")


def test_two_handoffs_in_a_folder_are_both_judged(repo: Path) -> None:
    commit_file(repo, "work/HANDOFF_api.md", HANDOFF, "handoff api")
    commit_file(repo, "work/HANDOFF_web.md", HANDOFF, "handoff web")
    for n in range(3):
        commit_file(repo, f"src/t{n}.py", "x\n", f"work {n}")
    assert len(_check(repo / "work", "HANDOFF_api.md", ("HO006",), stale_commits=2)) == 1


def test_a_handoff_copied_elsewhere_and_updated_there_is_history(repo: Path) -> None:
    commit_file(repo, "docs/old/session-handoff.md", HANDOFF, "first handoff")
    for n in range(3):
        commit_file(repo, f"src/c{n}.py", "x\n", f"work {n}")
    commit_file(repo, "docs/session-handoff.md", HANDOFF, "handoff, moved on")
    root = repo / "docs" / "old"
    assert _check(root, "session-handoff.md", ("HO006",), stale_commits=2) == []


def test_a_brief_with_its_answer_beside_it_is_history(repo: Path) -> None:
    """Task briefs for another agent (handoff-A.md) next to what it sent back
    (codex-A-final.md): the work came back, the brief is a record."""
    commit_file(repo, "delegate/handoff-A.md", HANDOFF, "brief A")
    commit_file(repo, "delegate/handoff-B.md", HANDOFF, "brief B")
    commit_file(repo, "delegate/codex-A-final.md", "# Result\nDone.\n", "answer A")
    for n in range(3):
        commit_file(repo, f"src/b{n}.py", "x\n", f"work {n}")
    root = repo / "delegate"
    assert _check(root, "handoff-A.md", ("HO006",), stale_commits=2) == []
    assert len(_check(root, "handoff-B.md", ("HO006",), stale_commits=2)) == 1


def test_a_dated_handoff_in_a_dated_series_is_history(repo: Path) -> None:
    """``2025-12-05-SESSION-31-HANDOFF.md`` among later-dated session notes in its folder."""
    commit_file(repo, "notes/2025-12-05-SESSION-31-HANDOFF.md", HANDOFF, "session 31")
    commit_file(repo, "notes/2025-12-09-SESSION-32.md", "# Session 32\n", "session 32")
    for n in range(3):
        commit_file(repo, f"src/d{n}.py", "x\n", f"work {n}")
    root = repo / "notes"
    assert _check(root, "2025-12-05-SESSION-31-HANDOFF.md", ("HO006",), stale_commits=2) == []


def test_a_squash_merged_branch_is_merged(repo: Path) -> None:
    """GitHub's "Squash and merge": the branch's work lands on main as one new commit, the
    branch is not an ancestor of main — the commit that took the work is the evidence."""
    git(repo, "checkout", "-q", "-b", "feat/sq")
    commit_file(repo, "src/sq.py", "x\n", "feature work")
    cp = (
        "# Checkpoint: sq\n\n- **Branch:** `feat/sq`\n- **Saved:** 2020-01-01 10:00\n\n"
        "## Next Action: Finish sq\nIN PROGRESS.\n\n## Done This Session\n- things\n\n"
        "## Failed Approaches\n- None\n\n## Modified Files\n- src/sq.py\n"
    )
    commit_file(repo, "mem/checkpoint-sq.md", cp, "checkpoint")
    commit_file(repo, "src/sq2.py", "y\n", "more feature work")
    git(repo, "checkout", "-q", "main")
    commit_file(repo, "src/other.py", "z\n", "unrelated work on main")
    root = repo / "mem"
    git(repo, "merge", "-q", "--squash", "feat/sq")
    git(repo, "commit", "-q", "-m", "Add sq (#12)")
    commit_file(repo, "src/after.py", "w\n", "later work on main")
    [diag] = _check(root, "checkpoint-sq.md", ("CP025",))
    assert "branch `feat/sq` was merged into `main` by " in diag.message
    assert "('Add sq (#12)')" in diag.message


def test_a_branch_whose_work_is_not_on_main_is_not_squash_merged(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "feat/open")
    commit_file(repo, "src/open.py", "x\n", "feature work")
    text = HANDOFF.replace("- **Updated:**", "- **Branch:** `feat/open`\n- **Updated:**")
    commit_file(repo, ".handoff.md", text, "handoff on the branch")
    git(repo, "checkout", "-q", "main")
    commit_file(repo, "src/open.py", "different\n", "main changed the same file")
    git(repo, "checkout", "-q", "feat/open")
    assert _check(repo, ".handoff.md", ("HO007",)) == []


def test_a_brief_answered_under_its_letter_alone_is_history(repo: Path) -> None:
    """`handoff-A-emission.md` answered by `codex-A-final.md`: one tag in common is the
    answer; a shared word such as "session" is not."""
    commit_file(repo, "orch/handoff-A-emission.md", HANDOFF, "brief A")
    commit_file(repo, "orch/codex-A-final.md", "# Result\n", "answer A")
    commit_file(repo, "orch2/handoff-session-12.md", HANDOFF, "a handoff")
    commit_file(repo, "orch2/session-summary.md", "# Summary\n", "a summary")
    for n in range(3):
        commit_file(repo, f"src/e{n}.py", "x\n", f"work {n}")
    assert _check(repo / "orch", "handoff-A-emission.md", ("HO006",), stale_commits=2) == []
    found = _check(repo / "orch2", "handoff-session-12.md", ("HO006",), stale_commits=2)
    assert len(found) == 1


def test_a_dated_handoff_with_later_sessions_logged_beside_it_is_history(repo: Path) -> None:
    """A handover dated by its name whose memory folder logs sessions of later days: those
    sessions took it up, so commits since are no news. Without a later entry in the log (or
    with no log) it is still judged."""
    log = "# Session Log\n\n## 2026-05-30 09:00 — desktop — setup\nDid setup.\n"
    commit_file(repo, "mem/MEMORY.md", "# Memory\n\n- [Log](session-log.md)\n", "index")
    commit_file(repo, "mem/handover-2026-06-01-copilot.md", HANDOFF, "a handover")
    commit_file(repo, "mem/session-log.md", log, "log")
    for n in range(3):
        commit_file(repo, f"src/l{n}.py", "x\n", f"work {n}")
    name = "handover-2026-06-01-copilot.md"
    [judged] = _check(repo / "mem", name, ("HO006",), stale_commits=2)
    assert judged.code == "HO006"
    later = log + "\n## Session 4 — 2026-06-03 — the next agent\nPicked up the handover.\n"
    commit_file(repo, "mem/session-log.md", later, "log a later session")
    assert _check(repo / "mem", name, ("HO006",), stale_commits=2) == []


def test_finished_legacy_and_kept_files_are_no_staleness(repo: Path) -> None:
    """A handoff whose checklist is all ticked (the work is done), one in a `legacy/`
    folder, and a file the handoff names that was taken out of git but is kept on disk
    (`git rm --cached` and .gitignore'd): none is stale news."""
    done = (
        "# Handoff\n\n- **Updated:** 2026-05-01 10:00\n\n## Next Steps\n- [x] picker\n"
        "- [x] review fixes\n\n## Deferred\n(none)\n"
    )
    commit_file(repo, "notes/HANDOFF.md", done, "finished handoff")
    commit_file(repo, "legacy/HANDOFF.md", HANDOFF, "old handoff")
    commit_file(repo, ".claude/settings.json", "{}\n", "settings")
    kept = HANDOFF.replace("`tools/lint.py`", "`.claude/settings.json`")
    commit_file(repo, "mem/.handoff.md", kept, "a handoff naming the settings")
    git(repo, "rm", "-q", "--cached", ".claude/settings.json")
    commit_file(repo, ".gitignore", ".claude/settings.json\n", "keep settings on disk")
    (repo / ".claude" / "settings.json").unlink()  # a clone lacks it; its owner has it
    for n in range(3):
        commit_file(repo, f"src/d{n}.py", "x\n", f"work {n}")
    assert _check(repo / "notes", "HANDOFF.md", ("HO006",), stale_commits=2) == []
    assert _check(repo / "legacy", "HANDOFF.md", ("HO006",), stale_commits=2) == []
    assert _check(repo / "mem", ".handoff.md", ("HO005",)) == []
    still = done.replace("- [x] review fixes", "- [ ] review fixes")
    commit_file(repo, "notes/HANDOFF.md", still, "one item open again")
    for n in range(3):
        commit_file(repo, f"src/e{n}.py", "x\n", f"more work {n}")
    [open_item] = _check(repo / "notes", "HANDOFF.md", ("HO006",), stale_commits=2)
    assert open_item.code == "HO006"


@pytest.mark.parametrize(
    ("status", "history"),
    [
        ("**Status:** RESOLVED (2026-05-03)", True),
        ("Status: ✅ Complete — see the PR", True),
        ("> **State**: closed", True),
        ("- **Estado:** resuelto", True),
        ("Status: done with phase 1, phase 2 next", False),
        ("Status: in progress", False),
    ],
)
def test_a_handoff_marked_resolved_is_history(repo: Path, status: str, history: bool) -> None:
    """A handoff whose status near its top says the work is resolved is a record: the
    commits since are no news to anyone. A status that goes on to what is open is not."""
    commit_file(repo, ".handoff.md", HANDOFF.replace("\n\n", f"\n\n{status}\n\n", 1), "handoff")
    for n in range(3):
        commit_file(repo, f"src/r{n}.py", "x\n", f"work {n}")
    found = _check(repo, ".handoff.md", ("HO006",), stale_commits=2)
    assert (found == []) is history, found


def test_a_handoff_titled_resolved_is_history_but_a_status_far_down_is_not(repo: Path) -> None:
    commit_file(repo, ".handoff.md", HANDOFF.replace("# Handoff", "# Handoff — RESOLVED"), "h")
    for n in range(3):
        commit_file(repo, f"src/t{n}.py", "x\n", f"work {n}")
    assert _check(repo, ".handoff.md", ("HO006",), stale_commits=2) == []
    far = HANDOFF + "\n" * 40 + "## Subtask\nStatus: done\n"
    commit_file(repo, ".handoff.md", far, "h2")
    for n in range(3):
        commit_file(repo, f"src/u{n}.py", "x\n", f"work {n}")
    assert len(_check(repo, ".handoff.md", ("HO006",), stale_commits=2)) == 1


def test_a_handoff_in_a_past_numbered_session_folder_is_history(repo: Path) -> None:
    """`sessions/064/HANDOFF.md` with `sessions/065/` beside it: a later session took it up;
    the newest session's handoff is still judged."""
    commit_file(repo, "docs/sessions/064/HANDOFF.md", HANDOFF, "session 64")
    commit_file(repo, "docs/sessions/065/HANDOFF.md", HANDOFF, "session 65")
    for n in range(3):
        commit_file(repo, f"src/s{n}.py", "x\n", f"work {n}")
    assert _check(repo / "docs/sessions/064", "HANDOFF.md", ("HO006",), stale_commits=2) == []
    assert len(_check(repo / "docs/sessions/065", "HANDOFF.md", ("HO006",), stale_commits=2)) == 1


def test_a_handoff_numbered_by_a_session_the_later_ones_took_up_is_history(repo: Path) -> None:
    """`handoff-session-84.md` beside `handoff-session-85.md` (committed together): the later
    session's took it up; the newest is judged until a session log beside it records a
    later session."""
    (repo / ".claude").mkdir()
    for n in (84, 85):  # committed together, as a later sweep does
        (repo / f".claude/handoff-session-{n}.md").write_text(HANDOFF.replace("Handoff", f"S{n}"))
    git(repo, "add", ".claude")
    git(repo, "commit", "-q", "-m", "sessions 84 and 85")
    for n in range(3):
        commit_file(repo, f"src/n{n}.py", "x\n", f"work {n}")
    claude = repo / ".claude"
    assert _check(claude, "handoff-session-84.md", ("HO006",), stale_commits=2) == []
    assert len(_check(claude, "handoff-session-85.md", ("HO006",), stale_commits=2)) == 1
    log = "# Session Log\n\n## 2026-07-29 - Session 86: the judge\n\n- shipped\n"
    commit_file(repo, ".claude/session-log.md", log, "session 86")
    assert _check(claude, "handoff-session-85.md", ("HO006",), stale_commits=2) == []


@pytest.mark.parametrize(
    ("folder", "judged"),
    [
        ("work/_work_old/_workspace_lpd", False),  # old, prev, history … as a word of a name
        ("work/_workspace_prev_20260716", False),
        ("docs/handoff-history", False),
        ("docs/historical/plans", False),  # `historical/`: kept as the record it was
        ("docs/bold-moves", True),
        ("docs/handoffs/2026-04-05", False),
        ("runs/20260605-quality-index", False),
        ("docs/brand-refresh-2026-05-09", True),
        ("docs/2026-13-40-notes", True),
    ],
)
def test_a_handoff_in_a_folder_named_by_a_date_first_is_that_days_record(
    repo: Path, folder: str, judged: bool
) -> None:
    """A folder whose name starts with a date keeps that day's (that run's) notes as they
    were; a project folder that only ends with a date (or a number that is no date) is
    still judged."""
    commit_file(repo, f"{folder}/handoff.md", HANDOFF, "handoff")
    for n in range(3):
        commit_file(repo, f"src/r{n}.py", "x\n", f"work {n}")
    found = _check(repo / folder, "handoff.md", ("HO006",), stale_commits=2)
    assert len(found) == (1 if judged else 0)


@pytest.mark.parametrize(
    ("name", "judged"),
    [
        ("handoff-decisions-closed.md", False),
        ("HANDOFF_auth_DONE.md", False),
        ("handoff-donate.md", True),
    ],
)
def test_a_handoff_named_closed_is_a_record(repo: Path, name: str, judged: bool) -> None:
    commit_file(repo, f"notes/{name}", HANDOFF, "handoff")
    for n in range(3):
        commit_file(repo, f"src/c{n}.py", "x\n", f"work {n}")
    found = _check(repo / "notes", name, ("HO006",), stale_commits=2)
    assert len(found) == (1 if judged else 0)


@pytest.mark.parametrize(
    "banner",
    [
        "> **DEPRECATED — retained as historical reference**",
        "Superseded by: docs/HANDOFF.md",
        "> Deprecated: 2026-06-15",
        "> ⏭️ **Superseded for current state by [`handoff.md`](handoff.md) (2026-06-28).**",
    ],
)
def test_a_handoff_with_a_deprecated_banner_is_history(repo: Path, banner: str) -> None:
    commit_file(repo, ".handoff.md", HANDOFF.replace("\n\n", f"\n\n{banner}\n\n", 1), "h")
    for n in range(3):
        commit_file(repo, f"src/d{n}.py", "x\n", f"work {n}")
    assert _check(repo, ".handoff.md", ("HO006",), stale_commits=2) == []


def test_a_dated_handoff_the_live_one_names_is_history(repo: Path) -> None:
    """`handoff.md` (the one the next agent reads) keeps the state and points at
    `handoff-2026-12-01-auth.md` for that day's detail, both committed together: the dated
    one is a record; the live one is still judged. A dated handoff it does not name is too."""
    live = HANDOFF + "\nThe auth detail is archived in `handoff-2026-12-01-auth.md`.\n"
    (repo / "notes").mkdir()
    (repo / "notes" / "handoff-2026-12-01-auth.md").write_text(HANDOFF)
    (repo / "notes" / "handoff-2026-12-01-feed.md").write_text(HANDOFF)
    (repo / "notes" / "handoff.md").write_text(live)
    git(repo, "add", "notes")
    git(repo, "commit", "-q", "-m", "handoffs")
    for n in range(3):
        commit_file(repo, f"src/v{n}.py", "x\n", f"work {n}")
    root = repo / "notes"
    assert _check(root, "handoff-2026-12-01-auth.md", ("HO006",), stale_commits=2) == []
    assert len(_check(root, "handoff-2026-12-01-feed.md", ("HO006",), stale_commits=2)) == 1
    assert len(_check(root, "handoff.md", ("HO006",), stale_commits=2)) == 1


def test_a_sub_projects_handoff_counts_the_commits_that_changed_that_project(repo: Path) -> None:
    """A handoff inside a top folder with code of its own (`proto/` beside the main code)
    is behind by the commits that changed that folder, not by the main project's work; in
    a folder of notes every commit counts."""
    commit_file(repo, "proto/scripts/run.sh", "echo\n", "proto script")
    commit_file(repo, "proto/.handoff.md", HANDOFF, "proto handoff")
    for n in range(5):
        commit_file(repo, f"src/m{n}.py", "x\n", f"main work {n}")
    assert _check(repo / "proto", ".handoff.md", ("HO006",), stale_commits=3) == []
    commit_file(repo, "proto/scripts/run.sh", "echo 1\n", "proto 1")
    commit_file(repo, "proto/scripts/step.sh", "echo 2\n", "proto 2")
    commit_file(repo, "proto/scripts/run.sh", "echo 3\n", "proto 3")
    [diag] = _check(repo / "proto", ".handoff.md", ("HO006",), stale_commits=3)
    assert diag.message.startswith("3 commits on `main` changed `proto/` since this handoff")
    assert "they changed 2 files; the newest is" in diag.message
    assert "('proto 3')" in diag.message
    # a folder of notes only is no project of its own: every commit counts
    commit_file(repo, "research/.handoff.md", HANDOFF, "research handoff")
    for n in range(3):
        commit_file(repo, f"src/n{n}.py", "x\n", f"more work {n}")
    [notes] = _check(repo / "research", ".handoff.md", ("HO006",), stale_commits=3)
    assert notes.message.startswith("3 commits on `main` since this handoff was written")
