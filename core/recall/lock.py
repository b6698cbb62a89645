"""One backfill at a time per recall store: an inter-process lock with a timeout.

Two backfills racing on one store used to collide inside SQLite (two processes inserting the
same chunk ids, or one finding the database locked). The writer now takes an exclusive
lock on ``<db>.lock`` first (:func:`~memls.core.fsutil.try_lock_fd`: ``flock``, or
``msvcrt.locking`` on Windows); a second backfill waits for it, says so once, and then
finds the work done (it embeds only what is still missing). Searches never take the lock:
SQLite's WAL mode lets them read while a backfill writes.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from memls.core.fsutil import open_private, pread, pwrite, state_parent, try_lock_fd, unlock_fd

DEFAULT_TIMEOUT = 600.0
"""Seconds a backfill waits for another one before giving up (``MEMLS_RECALL_LOCK_TIMEOUT``)."""
_POLL = 0.05


class RecallBusyError(TimeoutError):
    """Another process held the store's backfill lock for longer than the timeout."""


def lock_path(db: Path) -> Path:
    return db.with_name(db.name + ".lock")


def default_timeout() -> float:
    raw = os.environ.get("MEMLS_RECALL_LOCK_TIMEOUT")
    try:
        return float(raw) if raw else DEFAULT_TIMEOUT
    except ValueError:
        return DEFAULT_TIMEOUT


def _holder(handle: int) -> str:
    try:
        text = pread(handle, 64, 0).decode("ascii", "replace").strip()
    except OSError:
        return ""
    return f" (pid {text})" if text.isdigit() else ""


@contextmanager
def backfill_lock(
    db: Path,
    *,
    timeout: float | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> Iterator[None]:
    """Hold the store's exclusive backfill lock; wait up to ``timeout`` seconds for it.

    ``on_wait`` is told once, with a sentence naming the lock, when the lock is busy.
    Raises :class:`RecallBusyError` with that sentence and the time waited on timeout.
    """
    limit = default_timeout() if timeout is None else max(0.0, timeout)
    path = lock_path(db)
    state_parent(path)  # .memls checked (0700, not a link) or a configured folder created
    fd = open_private(path, os.O_RDWR | os.O_CREAT)  # never through a link; 0600
    try:
        started = time.monotonic()
        told = False
        while not try_lock_fd(fd):
            waited = time.monotonic() - started
            busy = f"Another recall backfill{_holder(fd)} is writing {db}"
            if waited >= limit:
                raise RecallBusyError(
                    f"{busy}; gave up after waiting {waited:.0f} s "
                    f"(lock file {path}; MEMLS_RECALL_LOCK_TIMEOUT sets the wait)."
                )
            if not told and on_wait is not None:
                on_wait(f"{busy}; waiting for it to finish (up to {limit:.0f} s).")
                told = True
            time.sleep(_POLL)
        os.ftruncate(fd, 0)
        pwrite(fd, str(os.getpid()).encode("ascii"), 0)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)
            unlock_fd(fd)
    finally:
        os.close(fd)
