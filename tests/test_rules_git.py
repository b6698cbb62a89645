"""CP020/CP021 (and the branch-aware CP002 fix) against real temporary git repositories.

The rule cases run without git; here branches are created, pushed to a bare remote and
deleted, and the rules are checked through a Workspace and its cached git facade.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from memls.core.config import Config
from memls.core.fixes import fix_text
from memls.core.gitfacade import run_git
from memls.core.model import Diagnostic, Severity
from memls.core.rules import check_document
from memls.core.workspace import Workspace

from .conftest import NOW

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

_ENV = {
    "GIT_AUTHOR_NAME": "memls test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "memls test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str) -> str:
    return run_git(cwd, *args, env=_ENV).stdout.decode()


def checkpoint(name: str, branch: str | None) -> str:
    branch_line = f"- **Branch:** `{branch}`\n" if branch is not None else ""
    return (
        f"# Checkpoint: {name}\n\n{branch_line}- **Saved:** 2026-11-29 10:00\n\n"
        "## Next Action: Continue\nEdit `core/parse.py`.\n\n"
        "## Done This Session\n- things\n\n## Failed Approaches\n- None\n\n"
        "## Modified Files\n- core/parse.py\n"
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository on ``main`` with local branch ``feat/a``, a deleted ``feat/gone``, and
    ``feat/remote`` that exists only on the ``origin`` remote (a bare repository)."""
    remote = tmp_path / "remote.git"
    work = tmp_path / "work"
    work.mkdir()
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(work, "init", "-q", "-b", "main")
    (work / "README.md").write_text("project\n")
    git(work, "add", "README.md")
    git(work, "commit", "-q", "-m", "initial")
    git(work, "remote", "add", "origin", str(remote))
    for branch in ("feat/a", "feat/gone", "feat/remote"):
        git(work, "branch", branch)
    git(work, "push", "-q", "origin", "feat/remote")
    git(work, "branch", "-D", "feat/gone", "feat/remote")
    return work


def _memory_root(repo: Path, checkpoints: dict[str, str | None]) -> Path:
    root = repo / "memory-root"
    root.mkdir()
    for name, branch in checkpoints.items():
        (root / f"checkpoint-{name}.md").write_text(checkpoint(name, branch))
    return root


def _findings(ws: Workspace, name: str, codes: tuple[str, ...]) -> list[Diagnostic]:
    doc = ws.document(ws.root / f"checkpoint-{name}.md")
    assert doc is not None
    return [d for d in check_document(ws, doc, NOW) if d.code in codes]


def _codes(ws: Workspace, name: str) -> list[str]:
    return [d.code for d in _findings(ws, name, ("CP020", "CP021"))]


def test_branch_states(repo: Path) -> None:
    root = _memory_root(
        repo,
        {"on-main": "main", "other": "feat/a", "gone": "feat/gone", "remote": "feat/remote"},
    )
    ws = Workspace(root, Config(select=("CP",)))
    assert ws.git.current_branch() == "main"
    assert _codes(ws, "on-main") == []
    assert _codes(ws, "gone") == ["CP020"]  # a stale branch is not also a checkout hint
    assert _codes(ws, "other") == ["CP021"]
    assert _codes(ws, "remote") == ["CP021"]  # exists on the remote only: not stale

    [stale] = _findings(ws, "gone", ("CP020",))
    assert stale.severity is Severity.WARNING
    assert "feat/gone" in stale.message
    assert (stale.range.start.line, stale.range.start.character) == (2, 14)
    assert stale.range.end.character == 14 + len("`feat/gone`")

    [hint] = _findings(ws, "other", ("CP021",))
    assert hint.severity is Severity.INFO
    assert "git checkout feat/a" in hint.message
    assert "`main`" in hint.message


def test_branch_changes_seen_after_invalidate(repo: Path) -> None:
    root = _memory_root(repo, {"on-main": "main", "other": "feat/a"})
    ws = Workspace(root, Config(select=("CP",)))
    assert _codes(ws, "other") == ["CP021"]

    git(repo, "checkout", "-q", "feat/a")
    assert _codes(ws, "other") == ["CP021"], "answers are cached until invalidated"
    ws.refresh()
    assert _codes(ws, "other") == []
    assert _codes(ws, "on-main") == ["CP021"]

    git(repo, "checkout", "-q", "main")
    git(repo, "branch", "-D", "feat/a")
    ws.refresh()
    assert _codes(ws, "other") == ["CP020"]


def test_detached_head_gives_no_checkout_hint(repo: Path) -> None:
    root = _memory_root(repo, {"other": "feat/a"})
    git(repo, "checkout", "-q", "--detach", "HEAD")
    ws = Workspace(root, Config(select=("CP",)))
    assert ws.git.current_branch() is None
    assert _codes(ws, "other") == []


def test_outside_a_repository_branch_rules_do_not_apply(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    (root / "checkpoint-x.md").write_text(checkpoint("x", "feat/nowhere"))
    ws = Workspace(root, Config(select=("CP",)))
    assert not ws.git.is_repo
    assert _codes(ws, "x") == []


def test_missing_branch_fix_uses_current_branch(repo: Path) -> None:
    root = _memory_root(repo, {"nobranch": None})
    git(repo, "checkout", "-q", "feat/a")
    ws = Workspace(root, Config(select=("CP",)))
    path = root / "checkpoint-nobranch.md"
    [missing] = _findings(ws, "nobranch", ("CP002",))
    assert missing.fix is not None
    text, applied = fix_text(ws, path, NOW)
    assert applied == 1
    assert text == checkpoint("nobranch", "feat/a")
    path.write_text(text)
    ws.invalidate(path)
    assert _findings(ws, "nobranch", ("CP002", "CP020", "CP021")) == []
