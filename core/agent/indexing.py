"""Bring recall's text index up to date now and leave the embedding for later.

A hook must return in a moment, but what it archived should be findable by the next
search at once: the full-text index is updated in the hook, and the embedding — seconds
to minutes with a real model — runs afterwards in a detached ``memls recall backfill``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

BACKFILL_ENV = "MEMLS_HOOK_BACKFILL"
"""``detached`` (default): start ``memls recall backfill`` in its own session and return;
``inline``: run it before returning (tests, scripts); ``off``: leave embedding to the next
``memls recall backfill``."""
PID_FILE = ".memls/backfill.pid"
LOG_FILE = ".memls/backfill.log"


def index_text(root: Path) -> dict[str, Any]:
    """Index changed files for full-text search, stopping before any embedding.

    This is recall's own backfill, cancelled the moment its indexing phase reports done:
    the embedding loop checks the cancel flag before its first batch, so nothing is
    embedded here and nothing indexed is lost.
    """
    from memls.core.recall import api

    cancel = threading.Event()

    def progress(done: int, total: int, label: str) -> None:
        if label == "index" or label.startswith("embed"):
            cancel.set()

    return api.backfill(root, progress=progress, cancel=cancel)


def _running(pid_file: Path) -> bool:
    try:
        pid = int(pid_file.read_text().strip())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return False
    return True


def start_backfill(root: Path, mode: str | None = None) -> str:
    """Embed what the text index holds, as ``mode`` (see :data:`BACKFILL_ENV`) says.

    Returns what happened in a few words. A detached backfill already running for this
    root is left to finish instead of starting a second one.
    """
    mode = (mode or os.environ.get(BACKFILL_ENV) or "detached").strip().lower()
    root = root.resolve()
    if mode in ("off", "0", "no", "false"):
        return "embedding left to the next `memls recall backfill`"
    if mode == "inline":
        from memls.core.recall import api

        result = api.backfill(root)
        return str(result["message"])
    state = root / ".memls"
    state.mkdir(exist_ok=True)
    pid_file = root / PID_FILE
    if _running(pid_file):
        return "a backfill is already running"
    with open(root / LOG_FILE, "ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "memls", "recall", "backfill", "--root", str(root)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            close_fds=True,
        )
    pid_file.write_text(f"{proc.pid}\n")
    return f"embedding in the background (pid {proc.pid}, log {LOG_FILE})"
