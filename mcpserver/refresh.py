"""recall_search's bounded refresh: the recall index is brought up to date by one background
thread, and a search waits for it only within a budget (:data:`RECALL_REFRESH_BUDGET`),
then answers from the index as it is and says how fresh that is (``freshness``).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

RECALL_REFRESH_BUDGET = 1.5
"""Seconds of refresh work recall_search waits for before answering from the index as it is
(``MEMLS_MCP_RECALL_BUDGET``); the refresh goes on in the background."""
RECALL_BUDGET_ENV = "MEMLS_MCP_RECALL_BUDGET"


class RecallRefresh:
    """The one background refresh of a server's recall index, and what it last found."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: str | None = None
        self.running: _Refresh | None = None  # the one background refresh, while it runs
        self._again = False  # a call saw newer files while it ran: run once more
        self.error: str | None = None  # how the last refresh failed, if it did
        self._cancel = threading.Event()  # set at shutdown

    def refresh(self, base: Path) -> tuple[str, dict[str, Any]]:
        """Bring the recall index up to date when memory files or transcripts changed, within
        a budget: the index message (``"up to date"`` when nothing changed) and how fresh the
        index the search reads is.

        Cheap when nothing did: one directory listing and a stat per source file. Otherwise
        one background thread backfills (never two: a call that finds it running waits for
        it, within what is left of the budget since it started); when it is not done within
        :data:`RECALL_REFRESH_BUDGET` seconds the search answers from the index as it is
        (what the refresh committed so far is in it: SQLite's WAL lets searches read while
        it writes) and the thread finishes on its own.
        """
        seen = _sources_fingerprint(base)
        with self._lock:
            if seen == self._seen and self.running is None:
                return "up to date", _freshness(True, None, self.error)
            refresh = self.running
            if refresh is None:
                refresh = self.running = _Refresh(seen)
                thread = threading.Thread(
                    target=self._loop,
                    args=(base, refresh),
                    name="memls-recall-refresh",
                    daemon=True,
                )
                thread.start()
            elif refresh.fingerprint != seen:
                self._again = True  # newer than what it reads: once more after it
        deadline = refresh.started + _refresh_budget()
        refresh.done.wait(max(0.0, deadline - _monotonic()))
        with self._lock:
            fresh = self._seen == seen
            current = self.running
            error = self.error
        if fresh:
            return str(refresh.message or "up to date"), _freshness(True, None, error)
        if current is None:  # it ended without reaching these files (an error, or busy)
            state = _freshness(False, None, error)
            reason = error or "the refresh was cancelled"
            return f"not refreshed: {reason}; results come from the index as it is", state
        state = _freshness(False, current, error)
        return (
            "refreshing in the background: results come from the index as it is "
            f"({_pending_words(state)})",
            state,
        )

    def _loop(self, base: Path, refresh: _Refresh) -> None:
        """The background refresh: backfill until the files it saw are indexed; errors are
        logged and kept for the next answer, never raised."""
        import logging

        from memls.core.recall import api
        from memls.core.recall.lock import default_timeout

        log = logging.getLogger("memls.mcp")
        while True:
            try:
                result = api.backfill(
                    base,
                    progress=refresh.progress,
                    cancel=self._cancel,
                    lock_timeout=default_timeout(),
                    on_wait=refresh.waiting,
                )
            except Exception as exc:  # a refresh must never take the server down
                log.warning("recall refresh failed: %s", exc)
                with self._lock:
                    self.error = str(exc) or type(exc).__name__
                    self.running = None
                    self._again = False
                refresh.done.set()
                return
            with self._lock:
                if result.get("complete"):
                    self._seen = refresh.fingerprint
                    self.error = None
                refresh.message = str(result["message"])
                again = self._again and not self._cancel.is_set()
                self._again = False
                if not again:
                    self.running = None
            if not again:
                refresh.done.set()
                return
            refresh.restart(_sources_fingerprint(base))

    def stop(self, wait: float = 5.0) -> None:
        """Cancel a running background refresh (at shutdown) and wait a moment for it: what
        it indexed stays, the next server picks up the rest."""
        self._cancel.set()
        with self._lock:
            refresh = self.running
        if refresh is not None:
            refresh.done.wait(wait)


def _monotonic() -> float:
    import time

    return time.monotonic()


def _refresh_budget() -> float:
    import os

    raw = os.environ.get(RECALL_BUDGET_ENV)
    try:
        return max(0.0, float(raw)) if raw else RECALL_REFRESH_BUDGET
    except ValueError:
        return RECALL_REFRESH_BUDGET


class _Refresh:
    """What the background refresh is doing, as its progress callback last said."""

    def __init__(self, fingerprint: str) -> None:
        self.done = threading.Event()
        self.message: str | None = None
        self.restart(fingerprint)

    def restart(self, fingerprint: str) -> None:
        self.fingerprint = fingerprint
        self.started = _monotonic()
        self.phase = "scan"
        self.done_count = 0
        self.total = 0
        self.files_pending: int | None = None
        self.wait_note: str | None = None

    def progress(self, done: int, total: int, label: str) -> None:
        if label.startswith("embed"):
            if self.phase != "embed":
                self.files_pending = 0
            self.phase = "embed"
        else:
            self.phase = "index"
            self.files_pending = max(0, total - done)
        self.done_count, self.total = done, total

    def waiting(self, sentence: str) -> None:
        self.phase = "waiting"
        self.wait_note = sentence


def _freshness(fresh: bool, refresh: _Refresh | None, error: str | None) -> dict[str, Any]:
    """How fresh the index a search read is: the ``freshness`` of a recall_search result."""
    state: dict[str, Any] = {"fresh": fresh, "refreshing": refresh is not None}
    if refresh is not None:
        state["phase"] = refresh.phase
        state["pending_files"] = refresh.files_pending
        if refresh.phase == "embed":
            state["pending_chunks"] = max(0, refresh.total - refresh.done_count)
        if refresh.wait_note:
            state["waiting_for"] = refresh.wait_note
        state["seconds"] = round(_monotonic() - refresh.started, 1)
    elif not fresh:
        state["pending_files"] = None
    if error:
        state["error"] = error
    return state


def _pending_words(state: dict[str, Any]) -> str:
    files = state.get("pending_files")
    chunks = state.get("pending_chunks")
    if state.get("phase") == "waiting":
        return "waiting for another backfill to finish"
    if chunks:
        return f"{chunks} chunks still to embed"
    if files is None:
        return "finding changed files"
    return f"{files} files still to index"


def freshness_line(state: dict[str, Any] | None) -> str | None:
    """The line recall_search's text adds about the index's freshness (None when fresh)."""
    if not state or state.get("fresh"):
        return None
    if state.get("refreshing"):
        return (
            f"Index not fresh: {_pending_words(state)}, refreshing in the background; "
            "these results come from the index as it is. Search again in a moment."
        )
    return "Index not fresh: " + str(state.get("error") or "the refresh did not finish") + "."


def _sources_fingerprint(root: Path) -> str:
    """Sizes and modification times of everything recall indexes, as one string."""
    import hashlib

    from memls.core.config import load_config
    from memls.core.workspace import memory_files, transcript_files

    parts = []
    config = load_config(root)
    for path in [*memory_files(root), *transcript_files(root, config.transcripts)]:
        try:
            st = path.stat()
        except OSError:
            continue
        parts.append(f"{path}:{st.st_size}:{st.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()
