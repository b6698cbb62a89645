"""The server's view of the memory: one core ``Workspace`` per root, and a diagnostics cache.

Every method that touches a ``Workspace`` runs on one worker thread (``run``), so parsing,
git and disk work stay off the event loop and the workspaces need no locks. Diagnostics are
cached per file and dropped only for the files a change affects, so an edit costs a re-check
of the edited document, never a rescan of the root.

Big buffers (over ``PARSE_ASIDE_CHARS``) are parsed on a second thread, with nothing but the
text, and handed to the worker parsed: a 10 MB document never holds the worker (and every
request queued behind it) for the seconds its parse takes, and a parse superseded by a newer
edit is skipped. Documents over the large-document threshold get the cheap rules only
(``SZ``) and one SZ006 note saying so.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import gc
import hashlib
import os
import queue
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from memls.core.config import Config, ConfigError, load_config
from memls.core.model import Diagnostic, Document, Range
from memls.core.parse import parse_text
from memls.core.rules import RuleContext, check_document, configured
from memls.core.rules import secrets as secret_rules
from memls.core.rules import size as size_rules
from memls.core.workspace import (
    ROOT_MARKERS,
    Workspace,
    discover_root,
    find_roots,
    is_memory_path,
    is_root,
)
from memls.lsp.settings import Settings

P = ParamSpec("P")
T = TypeVar("T")

_SKIP = {".git", ".memls", "node_modules", ".venv", "venv", "__pycache__", "dist", "build"}
_SCAN_DEPTH = 3
_CACHE_SECONDS = 60.0
_BATCH_REFRESH = 32
"""More changed files than this in one root at once: refresh the root instead."""
PARSE_ASIDE_CHARS = 256_000
"""Buffers longer than this are parsed on the parse thread, not on the worker."""


class Worker:
    """One daemon thread running calls in submission order.

    A daemon, so a call still running (a parse, a check) never keeps the process alive
    after ``exit``; :meth:`close` gives it a moment to finish first."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._queue: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]] | None] = (
            queue.SimpleQueue()
        )
        self._thread: threading.Thread | None = None
        self._closed = False

    def submit(self, fn: Callable[[], T]) -> Future[T]:
        future: Future[T] = Future()
        if self._closed:
            future.cancel()
            return future
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name=self._name, daemon=True)
            self._thread.start()
        self._queue.put((future, fn))
        return future

    def _loop(self) -> None:
        while (item := self._queue.get()) is not None:
            future, fn = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn())
            except BaseException as exc:
                future.set_exception(exc)

    def close(self, timeout: float) -> None:
        """Cancel what has not started; wait up to ``timeout`` for what has."""
        self._closed = True
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                item[0].cancel()
        self._queue.put(None)
        if self._thread is not None:
            self._thread.join(timeout)


@dataclass(frozen=True)
class Checked:
    """A document's diagnostics and the result id that names them (for pull diagnostics)."""

    doc: Document | None
    diagnostics: list[Diagnostic]
    result_id: str
    at: float


class MemoryState:
    def __init__(self) -> None:
        self._worker = Worker("memls-worker")
        self._parser = Worker("memls-parse")
        self._latest: dict[Path, object] = {}
        """Per path, the token of the newest buffer handed to the parse thread."""
        self._parsing: dict[Path, asyncio.Future[None]] = {}
        self.settings = Settings()
        self.folders: list[Path] = []
        self.workspaces: dict[Path, Workspace] = {}
        self.config_errors: dict[Path, str] = {}
        self._checked: dict[Path, Checked] = {}
        self._warmed: set[Path] = set()
        """Roots whose link graph was built after their first check."""
        self._scan_only: dict[Path, str] = {}
        """Open buffers the SC rules alone check (memory subfolders), by path."""
        self.now: Callable[[], _dt.datetime] = _dt.datetime.now

    async def run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run ``fn`` on the worker thread (the only thread that touches workspaces)."""
        return await asyncio.wrap_future(self._worker.submit(lambda: fn(*args, **kwargs)))

    def submit(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> None:
        """Queue ``fn`` on the worker without waiting (later ``run`` calls see its effect)."""
        self._worker.submit(lambda: fn(*args, **kwargs))

    def shutdown(self) -> None:
        self.close(0.0)

    def close(self, timeout: float) -> None:
        """Stop both threads: queued work is dropped, running work gets ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        self._parser.close(timeout)
        self._worker.close(max(0.0, deadline - time.monotonic()))

    # -- editor buffers (event loop) ----------------------------------------
    async def update(self, path: Path, text: str | None) -> set[Path]:
        """Hand an editor buffer (None: closed) to its workspace; returns the affected files.

        A big buffer waits for a short pause in the edits (longer the bigger it is) and is
        then parsed on the parse thread; if a newer buffer of the same path arrives
        meanwhile, this one is dropped (returns no affected files) and, when its parse has
        not started, never parsed. Until the newest buffer is in, :meth:`parsing` tells
        requests on that document to wait."""
        token = object()
        self._latest[path] = token
        settled = self._parsing.get(path)
        if settled is None or settled.done():
            settled = asyncio.get_running_loop().create_future()
            self._parsing[path] = settled
        try:
            if text is None or len(text) <= PARSE_ASIDE_CHARS:
                return await self.run(self.set_text, path, text)
            await asyncio.sleep(min(0.5, max(0.02, len(text) / 20_000_000)))
            if self._latest.get(path) is not token:
                return set()

            def parse() -> Document | None:
                if self._latest.get(path) is not token:
                    return None  # superseded before it started
                return parse_text(text, path)

            doc = await asyncio.wrap_future(self._parser.submit(parse))
            if doc is None or self._latest.get(path) is not token:
                return set()
            return await self.run(self.set_text, path, text, doc)
        finally:
            if self._latest.get(path) is token:
                del self._latest[path]
                if self._parsing.get(path) is settled:
                    del self._parsing[path]
                if not settled.done():
                    settled.set_result(None)

    def settle_heap(self) -> None:
        """After indexing: move what is alive into the collector's permanent generation, so
        full collections during editing no longer walk every parsed document of the roots
        (with 5,000 checkpoints they were the slowest keystrokes)."""
        gc.collect()
        gc.freeze()

    def parsing(self, path: Path) -> asyncio.Future[None] | None:
        """Resolves once the newest buffer of ``path`` is in its workspace, while a big one
        is still waiting or being parsed (requests on that document wait for it, so they
        never answer from older text); None when nothing is pending."""
        return self._parsing.get(path)

    # -- roots (worker thread) ---------------------------------------------
    def config_for(self, root: Path) -> Config:
        try:
            base = load_config(root)
            self.config_errors.pop(root, None)
        except ConfigError as exc:
            self.config_errors[root] = str(exc)
            base = Config()
        return self.settings.apply(base)

    def add_root(self, root: Path) -> Workspace:
        root = root.resolve()
        ws = self.workspaces.get(root)
        if ws is None:
            ws = Workspace(root, config=self.config_for(root))
            self.workspaces[root] = ws
        return ws

    def discover(self) -> list[Workspace]:
        """Memory roots under the workspace folders, configured roots and auto memory.

        A folder's own memory folders (``.claude/memory``, ``memory/`` …) and Claude Code's
        auto memory for it are found as ``memls check FOLDER`` finds them (``find_roots``);
        the scan below adds roots nested a few levels down."""
        found: list[Path] = list(self.settings.root_paths(self.folders))
        for folder in self.folders:
            if folder.is_dir():
                found.extend(find_roots(folder))
            found.extend(_scan_for_roots(folder))
        workspaces = (self.add_root(p) for p in dict.fromkeys(found))
        return list({id(ws): ws for ws in workspaces}.values())

    def workspace_for(self, path: Path, create: bool = True) -> Workspace | None:
        """The workspace a memory file belongs to (created on first sight of a new root)."""
        path = path.absolute()
        best: Workspace | None = None
        for root, ws in self.workspaces.items():
            if is_memory_path(root, path, ws.root_kind) and (
                best is None or len(str(root)) > len(str(best.root))
            ):
                best = ws
        if best is not None or not create or path.suffix != ".md":
            return best
        found = discover_root(path)
        if found is None or not _is_memory_location(found, path):
            return None
        return self.add_root(found)

    def reload_configs(self) -> None:
        for root, ws in self.workspaces.items():
            ws.config = self.config_for(root)
            ws.drop_memos()
        self._checked.clear()

    def git_changed(self) -> None:
        for ws in self.workspaces.values():
            ws.git.invalidate()
            ws.drop_memos()
        self._checked.clear()

    # -- updates (worker thread) --------------------------------------------
    def set_text(self, path: Path, text: str | None, doc: Document | None = None) -> set[Path]:
        ws = self.workspace_for(path)
        if ws is None:
            self._checked.pop(path, None)
            if self._secret_scope(path) is not None:  # memory/archive/…: SC only
                if text is None:
                    self._scan_only.pop(path, None)
                else:
                    self._scan_only[path] = text
                return {path}
            return set()
        affected = ws.set_text(path, text, doc)
        affected.add(path)
        self._forget(affected)
        return affected

    def invalidate(self, path: Path) -> set[Path]:
        """A file changed on disk: forget it and return what may need re-checking."""
        affected: set[Path] = {path}
        for root, ws in self.workspaces.items():
            if is_memory_path(root, path.absolute(), ws.root_kind):
                affected |= ws.invalidate(path)
            if path.name in ("memls.toml", "pyproject.toml") and (
                path.parent == root or path.parent in root.parents
            ):
                ws.config = self.config_for(root)
                self._checked.clear()
        self._forget(affected)
        return affected

    def invalidate_many(self, paths: Iterable[Path]) -> set[Path]:
        """Files changed on disk at once (a checkout, a sync, a generator): a root with more
        than a few of them is refreshed once, instead of once per file — each per-file
        invalidation of a created file rescans the root, which is quadratic in the count."""
        paths = list(paths)
        affected: set[Path] = set()
        crowded: set[Path] = set()
        for root, ws in self.workspaces.items():
            inside = [p for p in paths if is_memory_path(root, p.absolute(), ws.root_kind)]
            if len(inside) > _BATCH_REFRESH:
                ws.refresh()
                crowded.add(root)
                affected.update(inside)
                affected.update(ws.paths())
        for path in paths:
            config = path.name in ("memls.toml", "pyproject.toml")
            if config or not any(_is_memory_location(r, path.absolute()) for r in crowded):
                affected |= self.invalidate(path)
        self._forget(affected)
        return affected

    def _forget(self, paths: Iterable[Path]) -> None:
        for p in paths:
            self._checked.pop(p, None)

    # -- diagnostics (worker thread) ----------------------------------------
    def check(self, path: Path) -> Checked:
        now = self.now()
        cached = self._checked.get(path)
        if cached is not None and now.timestamp() - cached.at < _CACHE_SECONDS:
            return cached
        ws = self.workspace_for(path)
        doc = ws.document(path) if ws is not None else None
        diags: list[Diagnostic] = []
        scope = self._secret_scope(path) if ws is None else None
        if scope is not None and path in self._scan_only:
            doc = parse_text(self._scan_only[path], path)
            diags = secret_findings(scope, doc)
        elif ws is not None and doc is not None:
            limit = ws.config.large_document_bytes
            if limit and doc.byte_size > limit:
                diags = check_large(ws, doc, now, limit)
            else:
                diags = check_document(ws, doc, now)
        digest = hashlib.blake2b(digest_size=12)
        for d in diags:
            digest.update(repr((d.code, d.severity, d.message, d.range)).encode())
        checked = Checked(doc, diags, digest.hexdigest(), now.timestamp())
        self._checked[path] = checked
        if ws is not None and doc is not None and ws.root not in self._warmed:
            # build the link graph once, right after a root's first check, so the first
            # hover, code lens or rename on a big index does not (issue 21, item 10); later
            # edits update it when a request asks, as before (never on every keystroke)
            self._warmed.add(ws.root)
            self._worker.submit(ws.graph)
        return checked

    def _secret_scope(self, path: Path) -> Workspace | None:
        """The workspace whose secret scan covers ``path`` though it is not one of its memory
        files: a subfolder of a memory folder (``memory/archive/``, daily logs), as
        ``memls check`` scans it; the SC rules alone run on such a buffer."""
        path = path.absolute()
        if path.suffix.lower() not in (".md", ".markdown", ".txt"):
            return None
        if not any(root in path.parents for root in self.workspaces):
            found = discover_root(path)
            if found is None or found not in path.parents:
                return None
            self.add_root(found)
        for root, ws in self.workspaces.items():
            if root not in path.parents:
                continue
            base = root / "memory" if ws.layout_choice.project_folder else root
            if base in path.parents and not any(
                part.startswith(".") for part in path.relative_to(root).parts[:-1]
            ):
                return ws
        return None

    def all_paths(self) -> list[Path]:
        seen: dict[Path, None] = {}
        for ws in self.workspaces.values():
            for p in ws.paths():
                seen[p] = None
        return list(seen)


def check_large(ws: Workspace, doc: Document, now: _dt.datetime, limit: int) -> list[Diagnostic]:
    """A document over the large-document threshold: the cheap per-document rules (the SZ
    family: encoding, sizes, pointer form) and an SZ006 note that the others did not run."""
    ctx = RuleContext(doc, ws, now)
    found = list(size_rules.check(ctx))
    found.append(
        ctx.diag(
            "SZ006",
            f"{doc.name} is {doc.byte_size:,} bytes, over the language server's "
            f"large-document threshold ({limit:,} bytes): only the SZ rules run on it while "
            "it is open (`memls check` runs them all; raise `largeDocumentBytes` or "
            "`large_document_bytes` in memls.toml to analyse it fully)",
            Range.line(0, len(doc.line_text(0))),
        )
    )
    found.extend(secret_rules.check(ctx))  # a secret is reported at any size
    return configured(found, ws.config, doc.suppressions)


def secret_findings(ws: Workspace, doc: Document) -> list[Diagnostic]:
    """The SC rules alone on a document outside the workspace's memory files, with the
    workspace's configuration and next-line suppressions."""
    allowed = frozenset(ws.config.allow_secrets)
    found = secret_rules.secret_diagnostics(doc.path, doc.text, fences=doc.fences, allowed=allowed)
    return configured(found, ws.config, doc.suppressions)


def _is_memory_location(root: Path, path: Path) -> bool:
    """Where the root's kind keeps its memory files (:func:`is_memory_path`): the root and
    ``memory/`` of a memls root, a memory bank's ``journal/``, the files an AGENTS.md
    names …"""
    return is_memory_path(root, path)


def _scan_for_roots(folder: Path) -> list[Path]:
    """Directories up to a few levels below ``folder`` that look like memory roots."""
    found: list[Path] = []
    if not folder.is_dir():
        return found
    stack: list[tuple[Path, int]] = [(folder, 0)]
    while stack:
        directory, depth = stack.pop()
        if directory.name == "memory" and (directory.parent / "LOG.md").is_file():
            continue  # the orchestrator's memory/ belongs to its parent root
        if _looks_like_root(directory):
            found.append(directory)
        if depth >= _SCAN_DEPTH:
            continue
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            if (
                entry.is_dir(follow_symlinks=False)
                and not entry.name.startswith(".")
                and entry.name not in _SKIP
            ):
                stack.append((Path(entry.path), depth + 1))
    return sorted(found)


def _looks_like_root(directory: Path) -> bool:
    if any((directory / m).is_file() for m in ROOT_MARKERS):
        return True
    return (directory / "memory" / "MEMORY.md").is_file() or is_root(directory)
