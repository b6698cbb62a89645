"""A small facade over the ``git`` command: one call per question, answers cached.

Outside a repository every question has a clean "no answer" (``None`` or empty), so
branch rules simply do not apply. The language server calls :meth:`Git.invalidate`
when ``.git/HEAD`` or refs change.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

QUERY_TIMEOUT = 5.0
"""A question git cannot answer within this many seconds has no answer (never a hang)."""
HISTORY_TIMEOUT = 2.0
"""The history walk for the staleness rules gives up sooner: it is evidence, not a need."""
HISTORY_COMMITS = 400
"""How many commits of the current branch's history that walk reads (newest first)."""


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
    timeout: float | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run git with a clean, non-interactive environment (``timeout``: give up after that
    many seconds with :class:`GitError`)."""
    full_env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", **(env or {})}
    try:
        proc = subprocess.run(
            ["git", *args],
            cwd=cwd,
            input=input_bytes,
            capture_output=True,
            env=full_env,
            check=False,
            timeout=timeout,
        )
    except FileNotFoundError as exc:
        raise GitError("git is not installed") from exc
    except subprocess.TimeoutExpired as exc:
        raise GitError(f"git {args[0] if args else ''} took over {timeout} s") from exc
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

    def _out(self, *args: str, timeout: float = QUERY_TIMEOUT) -> str | None:
        if not self.cwd.is_dir():
            return None
        try:
            proc = run_git(
                self.cwd, *args, check=False, timeout=timeout, env={"GIT_OPTIONAL_LOCKS": "0"}
            )
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
                proc = run_git(top, "show", f"HEAD:{rel}", check=False, timeout=QUERY_TIMEOUT)
            except GitError:
                return None
            if proc.returncode != 0:
                return None
            return proc.stdout.decode("utf-8", "replace")

        value = self._cached(f"show:{rel}", compute)
        return value if isinstance(value, str) else None


@dataclass(frozen=True)
class Commit:
    """One commit of the current branch's history, with the paths it changed."""

    sha: str
    time: int  # committer time, seconds since the epoch
    subject: str
    changes: tuple[tuple[str, str], ...]  # (status letter, repository-relative path)

    @property
    def short(self) -> str:
        return self.sha[:9]

    @property
    def dependency_bump(self) -> bool:
        """A bot's (or a person's) update of a dependency only — Renovate's "chore(deps):
        update helm release x to v1.2", Dependabot's "Bump x from 1.2 to 1.3": the project's
        work did not move."""
        return _DEPENDENCY_BUMP.match(self.subject) is not None


_DEPENDENCY_BUMP = re.compile(
    r"(?i)^(?:\w+\(deps(?:-dev)?\)!?:|(?:chore|build|ci|fix)(?:\([\w./-]+\))?!?:\s*bump\s"
    r"|bump\s+\S+\s+from\s+\S+\s+to\s|update\s+(?:dependency|dependencies|module|helm release"
    r"|docker tag|image|actions?|\S+ digest)\b)"
)


@dataclass(frozen=True)
class History:
    """The newest commits of HEAD (newest first) and what each path went through in them."""

    commits: tuple[Commit, ...]
    complete: bool
    """True when the walk reached the first commit (the window is the whole history)."""
    last_change: dict[str, int]
    """Path → position (0 = HEAD) of the newest commit that changed it."""
    deleted: dict[str, int]
    """Path → position of the commit that deleted it, when that is its newest change."""
    added_by: dict[int, tuple[str, ...]]
    """Position → paths that commit added (a deletion beside an addition of the same
    name in one commit is a move)."""

    def since(self, when: float) -> int:
        """How many commits of the window are newer than ``when`` (epoch seconds)."""
        return sum(1 for c in self.commits if c.time > when)

    @functools.cached_property
    def folder_names(self) -> frozenset[str]:
        """Every folder name of a path the window's commits changed (lower-cased): the
        folders the repository had then, deleted since or not."""
        return frozenset(
            part.casefold() for path in self.last_change for part in path.split("/")[:-1]
        )


def parse_history(out: str, limit: int) -> History:
    """``git log --format=%x1e%H%x1f%ct%x1f%s --name-status`` output as a :class:`History`."""
    commits: list[Commit] = []
    for record in out.split("\x1e")[1:]:
        head, _, rest = record.partition("\n")
        parts = head.split("\x1f")
        if len(parts) < 3:
            continue
        changes: list[tuple[str, str]] = []
        for line in rest.splitlines():
            status, tab, path = line.partition("\t")
            if tab and status:
                changes.append((status[0], path))
        try:
            when = int(parts[1])
        except ValueError:
            continue
        commits.append(Commit(parts[0], when, parts[2], tuple(changes)))
    last: dict[str, int] = {}
    deleted: dict[str, int] = {}
    added: dict[int, tuple[str, ...]] = {}
    for pos, commit in enumerate(commits):
        adds = []
        for status, path in commit.changes:
            if status == "A":
                adds.append(path)
            if path in last:
                continue
            last[path] = pos
            if status == "D":
                deleted[path] = pos
        if adds:
            added[pos] = tuple(adds)
    return History(tuple(commits), len(commits) < limit, last, deleted, added)


def _history(git: Git, limit: int) -> History | None:
    out = git._out(
        "-c",
        "core.quotePath=false",
        "log",
        f"--max-count={limit}",
        "--no-renames",
        "--name-status",
        "--format=%x1e%H%x1f%ct%x1f%s",
        "HEAD",
        "--",
        timeout=HISTORY_TIMEOUT,
    )
    return parse_history(out, limit) if out is not None else None


def history(git: Git, limit: int = HISTORY_COMMITS) -> History | None:
    """HEAD's newest ``limit`` commits with their changed paths: one ``git log`` per
    repository, cached until :meth:`Git.invalidate`; None outside a repository, on an
    unborn branch, or when git does not answer within :data:`HISTORY_TIMEOUT`."""
    value = git._cached(f"history:{limit}", lambda: _history(git, limit))
    return value if isinstance(value, History) else None


def status_of(git: Git, paths: list[Path]) -> dict[str, str] | None:
    """``git status`` letters of the given files (repository-relative path → ``XY``; a
    clean tracked file is absent, an ignored one is ``!!``): one call for all of them,
    cached per file size and time so an edit asks again. None when git cannot tell."""
    top = git.toplevel
    if top is None or not paths:
        return None
    stamps: list[str] = []
    for path in paths:
        try:
            st = path.stat()
            stamps.append(f"{path}:{st.st_mtime_ns}:{st.st_size}")
        except OSError:
            stamps.append(f"{path}:-")

    def compute() -> dict[str, str] | None:
        out = git._out(
            "status", "--porcelain=v1", "-z", "--ignored=matching", "--", *map(str, paths)
        )
        if out is None:
            return None
        found: dict[str, str] = {}
        entries = out.split("\0")
        i = 0
        while i < len(entries):
            entry = entries[i]
            i += 1
            if len(entry) < 4:
                continue
            found[entry[3:]] = entry[:2]
            if entry[0] in "RC":
                i += 1  # the rename's source path follows
        return found

    value = git._cached("status-of:" + "|".join(stamps), compute)
    return value if isinstance(value, dict) else None


def ignored(git: Git, paths: list[Path]) -> frozenset[Path]:
    """Those of ``paths`` (existing or not) that the repository's ignore rules keep out of
    it — a local-only file a memory note points at: one ``git check-ignore`` for all of
    them, cached per set of paths. Empty when git cannot tell."""
    top = git.toplevel
    if top is None or not paths:
        return frozenset()
    rel: dict[str, Path] = {}
    for path in paths:
        relative = os.path.relpath(path, top)
        if not relative.startswith(".."):
            rel[relative.replace(os.sep, "/")] = path
    if not rel:
        return frozenset()

    def compute() -> frozenset[Path]:
        data = "\0".join(rel).encode("utf-8", "surrogateescape") + b"\0"
        try:
            proc = run_git(
                top, "check-ignore", "-z", "--stdin", input_bytes=data, check=False,
                timeout=QUERY_TIMEOUT, env={"GIT_OPTIONAL_LOCKS": "0"},
            )  # fmt: skip
        except GitError:
            return frozenset()
        if proc.returncode not in (0, 1):
            return frozenset()
        out = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
        return frozenset(rel[p] for p in out if p in rel)

    value = git._cached("ignored:" + "\0".join(sorted(rel)), compute)
    return value if isinstance(value, frozenset) else frozenset()


def default_branch(git: Git) -> str | None:
    """The branch work is merged into: ``origin/HEAD``'s target, else a local ``main``
    or ``master`` (None when neither can be told)."""

    def compute() -> str | None:
        out = git._out("symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD")
        if out and out.strip():
            return out.strip()
        branches = git.branches()
        if branches is None:
            return None
        for name in ("main", "master", "trunk", "develop"):
            if name in branches.local:
                return name
        return None

    value = git._cached("default-branch", compute)
    return value if isinstance(value, str) else None


def merged_branches(git: Git, into: str) -> frozenset[str]:
    """Local and remote branch names (without the remote) whose tip ``into`` contains."""

    def compute() -> frozenset[str]:
        out = git._out(
            "for-each-ref", f"--merged={into}", "--format=%(refname)", "refs/heads", "refs/remotes"
        )
        names: set[str] = set()
        for ref in (out or "").splitlines():
            if ref.startswith("refs/heads/"):
                names.add(ref[len("refs/heads/") :])
            elif ref.startswith("refs/remotes/"):
                rest = ref[len("refs/remotes/") :]
                if "/" in rest and not rest.endswith("/HEAD"):
                    names.add(rest.split("/", 1)[1])
        return frozenset(names)

    value = git._cached(f"merged:{into}", compute)
    return value if isinstance(value, frozenset) else frozenset()


def merge_commit(git: Git, branch: str, into: str) -> Commit | None:
    """The merge commit that brought ``branch`` into ``into`` (the oldest merge on the
    ancestry path between them); None for a fast-forward or a branch with no work of its
    own — a branch just made from ``into`` is not "merged"."""
    tip = _tip(git, branch)
    if tip is None:
        return None

    def compute() -> Commit | None:
        out = git._out(
            "log", "--ancestry-path", "--merges", "--format=%H%x1f%ct%x1f%s", f"{tip}..{into}", "--"
        )
        lines = [ln for ln in (out or "").splitlines() if ln.count("\x1f") >= 2]
        return _commit_of(lines[-1]) if lines else None

    value = git._cached(f"merge-commit:{tip}:{into}", compute)
    return value if isinstance(value, Commit) else None


def _commit_of(line: str) -> Commit | None:
    """A ``%H%x1f%ct%x1f%s`` log line as a :class:`Commit` (no changes listed)."""
    sha, when, subject = line.split("\x1f", 2)
    try:
        return Commit(sha, int(when), subject, ())
    except ValueError:
        return None


def _tip(git: Git, branch: str) -> str | None:
    """The ref of ``branch``: the local branch, else its first remote-tracking branch."""
    branches = git.branches()
    if branches is None:
        return None
    if branch in branches.local:
        return branch
    if branch in branches.remote:
        out = git._out("for-each-ref", "--format=%(refname:short)", f"refs/remotes/*/{branch}")
        return (out or "").split("\n", 1)[0].strip() or None
    return None


SQUASH_SCAN = 256
"""How many commits of the default branch after a branch's fork point are searched for the
squash merge that took its work."""


def _applied(git: Git, onto: str, tip: str) -> bool:
    """Merging ``tip`` into ``onto`` would change nothing: ``onto`` already holds its work."""
    merged = git._out("merge-tree", "--write-tree", onto, tip)
    tree = git._out("rev-parse", f"{onto}^{{tree}}")
    if not merged or not tree:
        return False
    return merged.split("\n", 1)[0].strip() == tree.strip()


def squash_commit(git: Git, branch: str, into: str) -> Commit | None:
    """The commit of ``into`` that took ``branch``'s work as one squashed commit (GitHub's
    "Squash and merge", ``git merge --squash``): the oldest commit after the fork point at
    which merging the branch would change nothing. None when ``into`` does not hold the
    branch's work, or the branch has no work of its own (needs git 2.38's
    ``merge-tree --write-tree``; older git: None)."""
    tip = _tip(git, branch)
    if tip is None:
        return None

    def compute() -> Commit | None:
        base = git._out("merge-base", tip, into)
        head = git._out("rev-parse", tip)
        if not base or not head or base.strip() == head.strip():
            return None
        if not _applied(git, into, tip):
            return None
        out = git._out(
            "log", "--reverse", "--first-parent", "--format=%H%x1f%ct%x1f%s",
            f"{base.strip()}..{into}", "--",
        )  # fmt: skip
        lines = [ln for ln in (out or "").splitlines() if ln.count("\x1f") >= 2][-SQUASH_SCAN:]
        lo, hi = 0, len(lines) - 1
        if hi < 0:
            return None
        while lo < hi:  # the first commit that holds the work (later ones hold it too)
            mid = (lo + hi) // 2
            if _applied(git, lines[mid].split("\x1f", 1)[0], tip):
                hi = mid
            else:
                lo = mid + 1
        return _commit_of(lines[lo])

    value = git._cached(f"squash-commit:{tip}:{into}", compute)
    return value if isinstance(value, Commit) else None


def has_refs(git: Git, prefix: str) -> bool:
    """Whether any ref lives under ``prefix`` (``refs/memls/``: the root uses snapshots)."""

    def compute() -> bool:
        out = git._out("for-each-ref", "--count=1", "--format=%(refname)", prefix)
        return bool(out and out.strip())

    value = git._cached(f"has-refs:{prefix}", compute)
    return value is True
