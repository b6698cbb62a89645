"""What the editors' "Save checkpoint" flow needs from the server, beside the save itself.

``memls.checkpoint.suggest`` answers with what memls can infer before the editor asks the
user (the name, the branch, the files edited lately, commits since the last save, the
checkpoint's current next action); ``memls.checkpoint.save`` then writes what the user
confirmed. The server never writes a placeholder: a save of a checkpoint that has no next
action yet needs one (``next``), and a one-line next action gets the edited files as its
body — or, when nothing is known about them, the line itself as the step.
"""

from __future__ import annotations

import datetime as _dt
import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from memls.core.formats.checkpoint import checkpoint_facts, next_action_section
from memls.core.gitfacade import Git, GitError, run_git
from memls.core.parse import parse_file

MAX_FILES = 5
"""Files named in a suggestion or in a composed Next Action body."""
MAX_COMMITS = 5
DIFF_MAX_CHARS = 200_000
"""Above this MEMORY.md's before/after text is not sent back (the diff still is, cut)."""
PLACEHOLDER_MARK = "(author:"
"""What the old templates wrote as a Next Action body; never offered back as a suggestion."""


@dataclass(frozen=True)
class Existing:
    """A checkpoint already on disk, as far as the flow cares."""

    next_action: str | None
    """Its Next Action title (else first body line); None when absent, blank or a placeholder."""
    saved: _dt.datetime | None


def existing(path: Path) -> Existing | None:
    if not path.is_file():
        return None
    try:
        doc = parse_file(path)
    except (OSError, ValueError):
        return None
    facts = checkpoint_facts(doc)
    sec = next_action_section(doc)
    real = (
        sec is not None
        and not doc.is_blank_section(sec)
        and not any(PLACEHOLDER_MARK in ln for ln in doc.body_lines(sec))
    )
    return Existing(facts.next_action if real else None, facts.saved)


def relative_files(root: Path, git: Git, files: Sequence[str], status: Sequence[str]) -> list[str]:
    """The editor's recently edited files, then ``git status``'s, relative to the repository
    (else the memory root), without duplicates or memls's own files; at most ``MAX_FILES``."""
    base = git.toplevel or root
    out: list[str] = []
    for raw in files:
        path = Path(raw)
        if not path.is_absolute():
            path = base / path
        try:
            rel = path.resolve().relative_to(base.resolve()).as_posix()
        except (ValueError, OSError):
            continue
        if path.name == "MEMORY.md" or path.name.startswith("checkpoint-"):
            continue
        if rel not in out:
            out.append(rel)
    for line in status:  # `git status --short` lines, relative to git's cwd: "XY path"
        shown = line[3:].strip().split(" -> ")[-1].strip('"')
        try:
            rel = (Path(git.cwd) / shown).resolve().relative_to(base.resolve()).as_posix()
        except (ValueError, OSError):
            continue
        if shown and rel not in out:
            out.append(rel)
    return out[:MAX_FILES]


def commits_since(git: Git, since: _dt.datetime | None) -> list[str]:
    """Subjects of this branch's own commits (on no other local branch) since ``since``
    (the last save), else of today's; newest first."""
    top = git.toplevel
    if top is None:
        return []
    when = since or _dt.datetime.now().replace(hour=0, minute=0, second=0, microsecond=0)
    branch = git.current_branch()
    others = [f"--exclude={branch}", "--branches"] if branch else ["--branches"]
    try:
        proc = run_git(
            top,
            "log",
            f"--since={when:%Y-%m-%d %H:%M}",
            f"-n{MAX_COMMITS}",
            "--format=%s",
            "HEAD",
            "--not",
            *others,
            check=False,
        )
    except GitError:
        return []
    if proc.returncode != 0:
        return []
    return [s for s in proc.stdout.decode("utf-8", "replace").splitlines() if s.strip()]


def backticked(files: Sequence[str]) -> str:
    return ", ".join(f"`{f}`" for f in files)


def suggested_next(name: str | None, branch: str | None, files: Sequence[str]) -> str:
    where = f" on `{branch}`" if branch else (f" {name}" if name else "")
    if files:
        return f"Continue{where}: {backticked(files)}"
    return f"Continue{where}".strip()


def suggested_done(commits: Sequence[str], files: Sequence[str]) -> list[str]:
    if commits:
        return list(commits)
    return [f"Edited {backticked(files)}"] if files else []


def compose_next(text: str, files: Sequence[str]) -> str:
    """The Next Action as the save writes it: the user's title line and body; a one-line
    next action gets ``Files: …`` (what memls knows was edited) or itself as its body."""
    title, _, body = text.strip().partition("\n")
    if body.strip():
        return text.strip()
    title = " ".join(title.split())
    return f"{title}\nFiles: {backticked(files)}" if files else f"{title}\n- {title}"


def index_change(before: str | None, after: str | None, name: str) -> dict[str, object]:
    """MEMORY.md before and after the save, and a unified diff between them."""
    old, new = before or "", after or ""
    diff = "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            f"{name} (before)",
            f"{name} (after)",
        )
    )
    out: dict[str, object] = {"index_diff": diff[:DIFF_MAX_CHARS]}
    if len(old) + len(new) <= DIFF_MAX_CHARS:
        out["index_before"] = old
    return out
