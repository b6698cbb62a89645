"""A small facade over the ``git`` command: one call per question, answers cached.

Outside a repository every question has a clean "no answer" (``None`` or empty), so
branch rules simply do not apply. The language server calls :meth:`Git.invalidate`
when ``.git/HEAD`` or refs change.
"""

from __future__ import annotations

import os
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path


class GitError(RuntimeError):
    """A git command failed; the message carries git's own words."""


@dataclass(frozen=True)
class Branches:
    local: frozenset[str]
    remote: frozenset[str]  # branch names on any remote, without the remote prefix

    def exists(self, name: str) -> bool:
        return name in self.local or name in self.remote


def run_git(
    cwd: Path,
    *args: str,
    input_bytes: bytes | None = None,
    env: dict[str, str] | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess[bytes]:
    """Run git with a clean, non-interactive environment."""
    full_env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", **(env or {})}
    try:
        proc = subprocess.run(
            ["git", *args],
            cwd=cwd,
            input=input_bytes,
            capture_output=True,
            env=full_env,
            check=False,
        )
    except FileNotFoundError as exc:
        raise GitError("git is not installed") from exc
    if check and proc.returncode != 0:
        msg = proc.stderr.decode("utf-8", "replace").strip() or f"git {args[0]} failed"
        raise GitError(msg)
    return proc


class Git:
    """Git questions about the repository that contains ``cwd`` (if any)."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self._lock = threading.Lock()
        self._cache: dict[str, object] = {}

    def invalidate(self) -> None:
        with self._lock:
            self._cache.clear()

    def _cached(self, key: str, compute: object) -> object:
        with self._lock:
            if key in self._cache:
                return self._cache[key]
        value = compute() if callable(compute) else compute
        with self._lock:
            self._cache[key] = value
        return value

    def _out(self, *args: str) -> str | None:
        if not self.cwd.is_dir():
            return None
        try:
            proc = run_git(self.cwd, *args, check=False)
        except GitError:
            return None
        if proc.returncode != 0:
            return None
        return proc.stdout.decode("utf-8", "replace")

    @property
    def toplevel(self) -> Path | None:
        def compute() -> Path | None:
            out = self._out("rev-parse", "--show-toplevel")
            return Path(out.strip()) if out else None

        value = self._cached("toplevel", compute)
        return value if isinstance(value, Path) else None

    @property
    def is_repo(self) -> bool:
        return self.toplevel is not None

    @property
    def git_dir(self) -> Path | None:
        def compute() -> Path | None:
            out = self._out("rev-parse", "--absolute-git-dir")
            return Path(out.strip()) if out else None

        value = self._cached("git_dir", compute)
        return value if isinstance(value, Path) else None

    def current_branch(self) -> str | None:
        """The checked-out branch; ``None`` outside a repository or on a detached HEAD."""

        def compute() -> str | None:
            out = self._out("branch", "--show-current")
            return out.strip() or None if out is not None else None

        value = self._cached("branch", compute)
        return value if isinstance(value, str) else None

    def branches(self) -> Branches | None:
        """Local and remote branch names, from one ``for-each-ref``."""

        def compute() -> Branches | None:
            out = self._out("for-each-ref", "--format=%(refname)", "refs/heads", "refs/remotes")
            if out is None:
                return None
            local: set[str] = set()
            remote: set[str] = set()
            for ref in out.splitlines():
                if ref.startswith("refs/heads/"):
                    local.add(ref[len("refs/heads/") :])
                elif ref.startswith("refs/remotes/"):
                    rest = ref[len("refs/remotes/") :]
                    if "/" in rest and not rest.endswith("/HEAD"):
                        remote.add(rest.split("/", 1)[1])
            return Branches(frozenset(local), frozenset(remote))

        value = self._cached("branches", compute)
        return value if isinstance(value, Branches) else None

    def status_short(self, limit: int = 10) -> list[str]:
        """``git status --short``, first ``limit`` lines (the checkpoint procedure's view)."""

        def compute() -> list[str]:
            out = self._out("status", "--short")
            return out.splitlines() if out else []

        value = self._cached("status", compute)
        return list(value)[:limit] if isinstance(value, list) else []

    def committed_text(self, path: Path) -> str | None:
        """The file as of HEAD, or ``None`` when it is not committed (or no repository)."""
        top = self.toplevel
        if top is None:
            return None
        try:
            rel = path.resolve().relative_to(top.resolve()).as_posix()
        except ValueError:
            return None

        def compute() -> str | None:
            if not self.cwd.is_dir():
                return None
            try:
                proc = run_git(top, "show", f"HEAD:{rel}", check=False)
            except GitError:
                return None
            if proc.returncode != 0:
                return None
            return proc.stdout.decode("utf-8", "replace")

        value = self._cached(f"show:{rel}", compute)
        return value if isinstance(value, str) else None
