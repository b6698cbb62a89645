"""After an archive: recall's text index now, the embedding (and health summary) later.

A hook must return in a moment, but what it archived should be findable by the next search
at once: the full-text index of a new tail is updated in the hook, and the embedding —
seconds to minutes with a real model — runs afterwards in a detached worker
(``python -m memls.core.agent.indexing ROOT``), which also refreshes the health summary
the next session start reads.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from memls.core.fsutil import (
    UnsafeStateError,
    open_private,
    process_alive,
    refuse_link,
    state_dir,
    write_private,
)

BACKFILL_ENV = "MEMLS_HOOK_BACKFILL"
"""``detached`` (default), ``inline`` or ``off``: see :func:`after_archive`."""
PID_FILE = ".memls/backfill.pid"
LOG_FILE = ".memls/backfill.log"


LOCK_WAIT_ENV = "MEMLS_RECALL_LOCK_TIMEOUT"
HOOK_LOCK_WAIT = 2.0
"""Seconds a hook waits for a backfill that is already running (the worker will index then)."""


def backfill_waiting(
    root: Path,
    *,
    wait: float,
    text_only: bool = False,
    cancel: threading.Event | None = None,
) -> dict[str, Any] | None:
    """recall's backfill, waiting at most ``wait`` seconds for one already running; None then.

    ``text_only``: recall's own backfill, cancelled the moment its indexing phase reports
    done — the embedding loop checks the cancel flag before its first batch, so nothing is
    embedded and nothing indexed is lost. ``cancel``: set it to stop early (between files
    and between embedding batches; what was done stays).
    """
    from memls.core.recall import api

    cancel = cancel if cancel is not None else threading.Event()

    def progress(done: int, total: int, label: str) -> None:
        if label == "index" or label.startswith("embed"):
            cancel.set()

    before = os.environ.get(LOCK_WAIT_ENV)
    os.environ[LOCK_WAIT_ENV] = str(wait)
    try:
        if text_only:
            return api.backfill(root, progress=progress, cancel=cancel)
        return api.backfill(root, cancel=cancel)
    except TimeoutError:  # another backfill holds the store: it will see these files too
        return None
    finally:
        if before is None:
            os.environ.pop(LOCK_WAIT_ENV, None)
        else:
            os.environ[LOCK_WAIT_ENV] = before


def index_text(root: Path) -> dict[str, Any] | None:
    """Index changed files for full-text search now, embedding nothing; None when busy."""
    return backfill_waiting(root, wait=HOOK_LOCK_WAIT, text_only=True)


INLINE_INDEX_BYTES = 2_000_000
"""A detached hook indexes an archived tail this large at once; a bigger one (a long session
archived for the first time) is indexed by the background worker a moment later."""


def _running(pid_file: Path) -> bool:
    try:
        fd = open_private(pid_file, os.O_RDONLY)  # a link there is refused, not read
    except FileNotFoundError:
        return False
    try:
        pid = int(os.read(fd, 64).decode("ascii", "replace").strip())
    except (OSError, ValueError):
        return False
    finally:
        os.close(fd)
    return process_alive(pid)  # not os.kill(pid, 0): on Windows that ends the process


def backfill_mode(mode: str | None = None) -> str:
    value = (mode or os.environ.get(BACKFILL_ENV) or "detached").strip().lower()
    if value in ("off", "0", "no", "false"):
        return "off"
    return "inline" if value == "inline" else "detached"


def after_archive(
    root: Path,
    appended_bytes: int,
    mode: str | None = None,
    *,
    index_now: bool = True,
    deadline: float | None = None,
) -> str:
    """What follows an archive: the text index, the health summary, then the embedding.

    ``off``: text index and health now, no embedding. ``inline``: all of it now.
    ``detached`` (default): the text index now when the new tail is small and ``index_now``
    (a session that ends searches nothing more), and a background worker (its own session;
    a second one is not started while one runs) refreshes the health summary and runs
    ``backfill`` — text index first, then embedding.

    ``deadline`` (a :func:`time.monotonic` value; SessionEnd's budget): ``off`` and
    ``inline`` stop there — between files or embedding batches, keeping what was done —
    and ``inline`` hands the rest to the background worker; the health summary is left to
    the worker or the next session start.
    """
    from memls.core.agent.health import compute_health

    root = root.resolve()
    chosen = backfill_mode(mode)
    if chosen != "detached" and deadline is not None:
        return _before(root, appended_bytes, chosen, deadline)
    if chosen != "detached":
        if appended_bytes:
            index_text(root)
        compute_health(root)
        if chosen == "off":
            return "embedding left to the next `memls recall backfill`"
        from memls.core.recall import api

        return str(api.backfill(root)["message"])
    if index_now and 0 < appended_bytes <= INLINE_INDEX_BYTES:
        index_text(root)
    return start_worker(root)


LEFT_RUNNING = threading.Event()
"""Set when :func:`after_archive` left work running past its deadline: the process should
end at once (``os._exit``) rather than wait for it at interpreter exit."""


def _before(root: Path, appended_bytes: int, mode: str, deadline: float) -> str:
    """``off`` / ``inline`` work that stops at ``deadline`` (see :func:`after_archive`).

    The work runs on a daemon thread the hook waits for until the deadline; past it, the
    thread is told to stop (between files or batches) and the hook goes on without it — a
    model load or an embedding batch in progress is not waited for, and the process exit
    ends it as Claude Code's cancel would (what was committed stays; the store is SQLite)."""
    left = deadline - time.monotonic()
    if mode == "off" and not appended_bytes:
        return "nothing new to index"
    if left <= 0:
        if mode == "inline":
            return "no time left before the deadline; " + start_worker(root)
        return "no time left before the deadline; the text index waits for the next hook"
    cancel = threading.Event()
    done: list[dict[str, Any] | None] = []

    def run() -> None:
        wait = min(HOOK_LOCK_WAIT, left)
        done.append(backfill_waiting(root, wait=wait, text_only=mode == "off", cancel=cancel))

    worker = threading.Thread(target=run, name="memls-hook-backfill", daemon=True)
    worker.start()
    worker.join(max(0.0, deadline - time.monotonic()))
    if worker.is_alive():
        LEFT_RUNNING.set()  # the caller ends the process without waiting for it
    if worker.is_alive() or not done or done[0] is None:
        cancel.set()
        if mode == "off":
            return "the text index was cut at the deadline; the next hook or backfill finishes it"
        return "cut at the deadline; " + start_worker(root)
    result = done[0]
    if mode == "off":
        return "text index updated; embedding left to the next `memls recall backfill`"
    if result.get("cancelled"):
        return "cut at the deadline; " + start_worker(root)
    return str(result["message"])


def start_worker(root: Path) -> str:
    """Start :func:`work` for ``root`` in a detached process, unless one is running.

    The pid file and the log (0600: the worker's messages quote the store) are checked
    before the worker starts: a link at either is refused
    (:class:`~memls.core.fsutil.UnsafeStateError`) and no worker runs."""
    state_dir(root)
    pid_file = root / PID_FILE
    refuse_link(pid_file)
    if _running(pid_file):
        return "a background backfill is already running"
    log = open_private(root / LOG_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "memls.core.agent.indexing", str(root)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            close_fds=True,
        )
    finally:
        os.close(log)
    write_private(pid_file, f"{proc.pid}\n".encode("ascii"))
    return f"health and embedding in the background (pid {proc.pid}, log {LOG_FILE})"


def work(root: Path) -> None:
    """The background worker: the health summary, then recall's backfill (index + embed)."""
    from memls.core.agent.health import compute_health
    from memls.core.recall import api

    try:
        compute_health(root)
    except UnsafeStateError as exc:  # the summary is not cached; the backfill still runs
        print(exc, flush=True)
    result = api.backfill(root)
    print(result["message"], flush=True)


if __name__ == "__main__":
    work(Path(sys.argv[1]))
