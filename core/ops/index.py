"""Migrating MEMORY.md's legacy volatile sections into a checkpoint.

The index format — its bullets, the legacy sections and the writers that rewrite only the
Active Checkpoints section — is :mod:`memls.core.formats.index`; a save
(:mod:`memls.core.ops.checkpoint`) does the writing, under the root lock.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from memls.core.formats.index import legacy_sections
from memls.core.gitfacade import Git
from memls.core.ops import OpResult
from memls.core.ops._text import memory_index, read_text, refuse_oversize, require_config
from memls.core.parse import parse_text


def migrate_index(
    root: Path,
    name: str | None = None,
    *,
    now: dt.datetime | None = None,
    git: Git | None = None,
) -> OpResult:
    """Move MEMORY.md's legacy volatile sections into a checkpoint (the save procedure's first run).

    A section is legacy by :func:`memls.core.formats.index.is_legacy`, the test IX007 uses,
    so what the rule asks to migrate is what this moves.
    """
    from memls.core.ops.checkpoint import default_name, save_checkpoint

    root = root.resolve()
    require_config(root)
    path = memory_index(root)
    text = read_text(path)
    refuse_oversize(path, text, "migrate its sections")
    legacy = legacy_sections(parse_text(text, path)) if text is not None else []
    if not legacy:
        return OpResult(
            f"Nothing to migrate: {path.name} has no legacy volatile sections.",
            changed=False,
            data={"migrated": []},
        )
    if name is None:
        name = default_name(git or Git(root)) or "migrated"
    return save_checkpoint(root, name, now=now, git=git)
