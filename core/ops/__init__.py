"""Operations that change memory files: checkpoints, the index, bundles, the log, the handoff.

One implementation shared by the CLI, the language server's commands and the notebook
widgets. Every write goes through :mod:`memls.core.fsutil` (atomic, inside the root), and
every read-modify-write of a shared file happens under the root's inter-process lock.
Operations return an :class:`OpResult` whose ``message`` is user-facing text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class OpResult:
    """What an operation did: a message for people, whether anything changed, and details."""

    message: str
    changed: bool
    paths: tuple[Path, ...] = ()
    data: dict[str, Any] = field(default_factory=dict)


class OpError(Exception):
    """An operation refused to run; the message says why and what to do instead."""


class ConflictError(OpError):
    """A compare-and-swap save found other content than the caller expected."""

    def __init__(self, message: str, current_sha: str | None) -> None:
        super().__init__(message)
        self.current_sha = current_sha


__all__ = ["ConflictError", "OpError", "OpResult"]
