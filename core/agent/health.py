"""Memory health for the agent: the rules' findings over a root, and a one-line summary.

``check_root`` is what ``memls check --format json`` reports (the same engine and
configuration). Checking a large root costs more than a session start may spend (the
index rules read every checkpoint), so the summary is cached in ``.memls/health.json``
with a fingerprint of the memory files (names, sizes, modification times): the hooks that
run at compaction and session end refresh it, and a session start reads it when nothing
changed since — or computes it when the root is small enough to check at once.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from memls.core.config import Config, load_config
from memls.core.fsutil import UnsafeStateError, state_dir, write_private
from memls.core.model import Diagnostic, Severity
from memls.core.workspace import memory_files

CACHE = ".memls/health.json"
SMALL_ROOT = 60
"""Roots with at most this many memory files are checked at session start when the cache is old."""


@dataclass(frozen=True)
class Health:
    errors: int
    warnings: int
    stale: int  # stale checkpoints (older than stale_days, or their branch is gone)
    checkpoints: int
    fingerprint: str

    def line(self) -> str:
        """``Memory health: 2 errors, 5 warnings; 1 of 4 checkpoints stale (`memls check`).``"""
        found = f"{_count(self.errors, 'error')}, {_count(self.warnings, 'warning')}"
        stale = f"{self.stale} of {_count(self.checkpoints, 'checkpoint')} stale"
        hint = " (`memls check` lists them)" if self.errors or self.warnings else ""
        return f"Memory health: {found}; {stale}{hint}."


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def check_root(
    root: Path, paths: list[Path] | None = None, config: Config | None = None
) -> list[Diagnostic]:
    """The rules' findings for ``paths`` (default: every memory file of the root)."""
    from memls.core.rules import check_paths
    from memls.core.workspace import Workspace

    root = root.resolve()
    ws = Workspace(root, config if config is not None else load_config(root))
    targets = paths if paths is not None else memory_files(ws.root)
    targets = [p for p in targets if p.suffix.lower() == ".md"]
    return [d for _, diags in check_paths(ws, targets) for d in diags]


def fingerprint(root: Path) -> str:
    """Names, sizes and modification times of the root's memory files, as one string."""
    parts = []
    for path in memory_files(root):
        try:
            st = path.stat()
        except OSError:
            continue
        parts.append(f"{path.relative_to(root).as_posix()}:{st.st_size}:{st.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]


def compute_health(root: Path, config: Config | None = None) -> Health:
    """Check the whole root and count stale checkpoints; store the result in the cache."""
    from memls.core.ops.checkpoint import list_checkpoints

    root = root.resolve()
    config = config if config is not None else load_config(root)
    stamp = fingerprint(root)
    diags = check_root(root, config=config)
    infos = list_checkpoints(root, config=config)
    health = Health(
        errors=sum(1 for d in diags if d.severity is Severity.ERROR),
        warnings=sum(1 for d in diags if d.severity is Severity.WARNING),
        stale=sum(1 for i in infos if i.stale),
        checkpoints=len(infos),
        fingerprint=stamp,
    )
    _store(root, health)
    return health


def cached_health(root: Path) -> Health | None:
    """The cached summary if the memory files did not change since it was computed."""
    root = root.resolve()
    try:
        data = json.loads((root / CACHE).read_text(encoding="utf-8"))
        health = Health(**{k: data[k] for k in Health.__dataclass_fields__})
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return health if health.fingerprint == fingerprint(root) else None


def quick_health(root: Path, config: Config | None = None) -> Health | None:
    """The cached summary, else a fresh one when the root is small; None when neither."""
    cached = cached_health(root)
    if cached is not None:
        return cached
    if len(memory_files(root.resolve())) > SMALL_ROOT:
        return None
    return compute_health(root, config)


def _store(root: Path, health: Health) -> None:
    """Cache the summary (``.memls`` checked, the file 0600 and never written through a
    link: :class:`~memls.core.fsutil.UnsafeStateError` is raised for the caller to report)."""
    try:
        state_dir(root)
        write_private(root / CACHE, (json.dumps(asdict(health)) + "\n").encode("utf-8"))
    except UnsafeStateError:
        raise
    except (OSError, ValueError):
        pass  # a read-only root still gets its summary, just not cached
