"""Finding a memory root: pure path checks plus the configuration, nothing parsed.

These live apart from :mod:`workspace` (which re-exports them) so a command that only needs
to know which root it is in — ``memls recall search`` without ``--root``, the agent hooks —
does not import the Markdown parser, link resolver and git facade the workspace needs.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from memls.core.config import load_config

ROOT_MARKERS = ("MEMORY.md", "LOG.md")


def marker_file(directory: Path, name: str) -> Path | None:
    """``directory / name`` (``MEMORY.md``, ``LOG.md``), or the file there that differs from
    it only in its extension's case (``MEMORY.MD``: a macOS or Windows disk finds it under
    either name, a Linux one only under its own)."""
    exact = directory / name
    if exact.is_file():
        return exact
    try:
        stamp = os.stat(directory).st_mtime_ns  # a folder's names change with its mtime
    except OSError:
        return None
    found = _case_variant(str(directory), name, stamp)
    return Path(found) if found is not None else None


@functools.lru_cache(maxsize=4096)
def _case_variant(directory: str, name: str, _stamp: int) -> str | None:
    """The one listing of a folder :func:`marker_file` needs, cached per modification time
    (every document's check asks for its root's index)."""
    stem, ext = name.rsplit(".", 1)
    try:
        with os.scandir(directory) as entries:
            for e in entries:
                head, dot, tail = e.name.rpartition(".")
                if dot and head == stem and tail.casefold() == ext.casefold() and e.is_file():
                    return e.path
    except OSError:
        return None
    return None


def is_root(directory: Path) -> bool:
    """A directory holding MEMORY.md (``MEMORY.MD`` too), LOG.md or checkpoint files."""
    try:
        if any(marker_file(directory, m) is not None for m in ROOT_MARKERS):
            return True
        return any(directory.glob("checkpoint-*.md"))
    except OSError:
        return False


def claude_memory_dir(project: Path, home: Path | None = None) -> Path:
    """Claude Code's auto-memory directory for a project: ``~/.claude/projects/<slug>/memory``,
    the slug made by Claude Code's own rule (every character but a letter or digit → ``-``,
    long paths cut and hashed: :func:`memls.core.agent.claude_memory.project_slug`)."""
    from memls.core.agent.claude_memory import project_slug

    slug = project_slug(str(project.resolve()))
    return (home or Path.home()) / ".claude" / "projects" / slug / "memory"


def discover_root(start: Path, explicit: Path | None = None) -> Path | None:
    """Find the memory root for ``start`` (a file or directory), in the spec's order.

    ``explicit`` (``--root``) wins. Then configured ``roots`` containing ``start``, then the
    nearest directory at or above ``start`` that looks like a root (an orchestrator's
    ``memory/`` folder resolves to its parent), then the Claude Code auto-memory directory.
    """
    if explicit is not None:
        return explicit.resolve()
    found = enclosing_root(start)
    if found is not None:
        return found
    start = start.resolve()
    auto = claude_memory_dir(start if start.is_dir() else start.parent)
    if auto.is_dir():
        return auto
    return None


def _configured_roots(base: Path) -> tuple[Path, ...]:
    for candidate in (base, *base.parents):
        if (candidate / "memls.toml").is_file() or (candidate / "pyproject.toml").is_file():
            try:
                cfg = load_config(candidate)
            except ValueError:
                return ()
            if cfg.roots:
                return cfg.roots
        if (candidate / ".git").exists():
            break
    return ()


def enclosing_root(start: Path) -> Path | None:
    """The memory root ``start`` lies inside (configured, or a root-looking folder above
    it up to the repository), without falling back to Claude Code's auto memory."""
    start = start.resolve()
    base = start if start.is_dir() else start.parent
    for root in _configured_roots(base):
        if base == root or root in base.parents:
            return root
    for candidate in (base, *base.parents):
        if is_root(candidate):
            if candidate.name == "memory" and (candidate.parent / "LOG.md").is_file():
                return candidate.parent
            return candidate
        if (candidate / "memory" / "MEMORY.md").is_file() and (candidate / "LOG.md").is_file():
            return candidate
        if (candidate / ".git").exists():
            break
    return None
