"""The ids of the server's ``workspace/executeCommand`` commands (editors list them too)."""

from __future__ import annotations

SERVER_COMMANDS: tuple[str, ...] = (
    "memls.checkpoint.save",
    "memls.checkpoint.suggest",
    "memls.checkpoint.resume",
    "memls.checkpoint.clear",
    "memls.checkpoint.list",
    "memls.index.migrate",
    "memls.bundle.approve",
    "memls.log.append",
    "memls.handoff.new",
    "memls.recall.search",
    "memls.recall.backfill",
    "memls.recall.status",
    "memls.recall.verify",
    "memls.snapshot.save",
)
