"""The recall API every front calls: search, status, backfill, verify.

Honesty rules this module enforces: a search that could not use vectors says so
(``degraded=True`` and a plain message); status reports ``semantic`` only when a working
model and stored vectors exist, and says whether that was *verified*; a store made with a
model no installed plugin provides gets a message naming the model and the plugin, and
full-text search keeps working.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from memls.core.config import Config, load_config
from memls.core.model import FileKind
from memls.core.parse import kind_for
from memls.core.recall import search as engine
from memls.core.recall.chunking import (
    KINDS,
    Chunk,
    chunk_markdown,
    chunk_turn,
    kind_name,
    mtime_timestamp,
    transcript_header,
)
from memls.core.recall.lock import backfill_lock
from memls.core.recall.store import FileState, RecallStore, db_path_for, open_existing
from memls.core.text import decode
from memls.core.workspace import memory_files, transcript_files

if TYPE_CHECKING:
    from llm.models import EmbeddingModel

__all__ = [
    "MODES",
    "SearchResponse",
    "SearchResult",
    "backfill",
    "plugin_hint",
    "search",
    "status",
    "verify",
]

MODES = ("hybrid", "semantic", "text")
EMBED_BATCH = 64
MINILM = "memls-minilm"
HASH = "memls-hash"
_GUARD_BYTES = 4096

Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class SearchResult:
    """One hit. ``path`` is POSIX and relative to the root; lines are 1-based, inclusive."""

    id: str
    score: float
    kind: str
    path: str
    start_line: int
    end_line: int
    heading: str | None
    snippet: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SearchResponse:
    """Results plus what actually ran: ``degraded`` means semantic was asked for but not used."""

    results: list[SearchResult]
    mode: str
    degraded: bool
    model: str | None
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "results": [r.to_dict() for r in self.results],
            "mode": self.mode,
            "degraded": self.degraded,
            "model": self.model,
            "message": self.message,
        }


# --- models ----------------------------------------------------------------------------------


_PLUGIN_HINTS: tuple[tuple[str, str], ...] = (
    ("memls-", "memls (it registers memls-minilm and memls-hash: `pip install memls`)"),
    (
        "sentence-transformers",
        "llm-sentence-transformers (`llm install llm-sentence-transformers`)",
    ),
    ("clip", "llm-clip (`llm install llm-clip`)"),
    ("gemini", "llm-gemini (`llm install llm-gemini`)"),
    ("text-embedding-004", "llm-gemini (`llm install llm-gemini`)"),
    ("mistral", "llm-mistral (`llm install llm-mistral`)"),
    ("jina", "llm-embed-jina (`llm install llm-embed-jina`)"),
    ("onnx", "llm-embed-onnx (`llm install llm-embed-onnx`)"),
    ("ollama", "llm-ollama (`llm install llm-ollama`)"),
    ("cohere", "llm-cohere (`llm install llm-cohere`)"),
)


def plugin_hint(model_id: str) -> str:
    """The ``llm`` plugin that usually provides an embedding model id."""
    lowered = model_id.lower()
    for prefix, hint in _PLUGIN_HINTS:
        if lowered.startswith(prefix) or prefix in lowered:
            return hint
    return "the llm plugin that provides it (`llm install <plugin>`; `llm embed-models` lists the installed ones)"


@dataclass
class _Model:
    """The embedding model recall would use, and whether it can run."""

    id: str
    source: str  # "option" | "config" | "store" | "default"
    reason: str = ""
    model: EmbeddingModel | None = None
    error: str | None = None
    model_dir: Path | None = None  # configured MiniLM folder (config ``minilm_dir``)

    @property
    def usable(self) -> bool:
        return self.model is not None and self.error is None


def _default_model(model_dir: Path | None) -> tuple[str, str]:
    """memls-minilm when its weights are present, else memls-hash; with the reason."""
    try:
        from memls.core.recall.minilm import resolve_model_dir

        resolve_model_dir(model_dir)
    except (ImportError, OSError) as exc:
        return HASH, f"default; {MINILM} unavailable ({exc})"
    return MINILM, "default; MiniLM weights found"


def _pick_model(config: Config, explicit: str | None, store_model: str | None) -> _Model:
    folder = config.minilm_dir
    if explicit:
        return _Model(explicit, "option", model_dir=folder)
    if config.recall_model:
        return _Model(config.recall_model, "config", model_dir=folder)
    if store_model:
        return _Model(store_model, "store", model_dir=folder)
    model_id, reason = _default_model(folder)
    return _Model(model_id, "default", reason, model_dir=folder)


def _load(choice: _Model, db: Path | None = None) -> _Model:
    """Resolve the model through ``llm``; on failure keep the reason for the user.

    A configured MiniLM folder is passed to memls's own model directly: ``llm`` gives
    plugins no per-call options, and a process-wide setting would leak between roots.
    """
    import llm

    if choice.id == MINILM and choice.model_dir is not None:
        from memls.core.recall.minilm import resolve_model_dir
        from memls.core.recall.plugin import MiniLMEmbeddingModel

        try:
            resolve_model_dir(choice.model_dir)
        except OSError as exc:
            choice.error = f"{exc} Full-text search keeps working."
        choice.model = MiniLMEmbeddingModel(choice.model_dir)
        return choice
    try:
        choice.model = llm.get_embedding_model(choice.id)  # type: ignore[no-untyped-call]
    except llm.UnknownModelError:
        where = (
            f"The recall store at {db} was built with"
            if db and choice.source == "store"
            else "Recall is set to use"
        )
        choice.error = (
            f"{where} embedding model '{choice.id}', but no installed llm plugin provides it. "
            f"Install {plugin_hint(choice.id)}, or rebuild the vectors with another model "
            f"(`memls recall backfill --model {HASH}`). Full-text search keeps working."
        )
        return choice
    if choice.id == MINILM:
        try:
            from memls.core.recall.minilm import resolve_model_dir

            resolve_model_dir()
        except OSError as exc:
            choice.error = f"{exc} Full-text search keeps working."
    return choice


def _embed(choice: _Model, texts: Sequence[str]) -> list[list[float]]:
    assert choice.model is not None
    return [list(v) for v in choice.model.embed_multi(list(texts), batch_size=EMBED_BATCH)]


# --- sources ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Source:
    rel: str
    kind: str
    path: Path


def _sources(root: Path, config: Config) -> list[_Source]:
    """Topic files, checkpoints, the handoff, LOG.md and transcripts of a root.

    Transcripts outside the root (beside a Claude Code memory folder, or configured) get a
    root-relative path with ``..`` segments; they are only ever read.
    """
    found: dict[str, _Source] = {}
    for path in memory_files(root):
        kind = kind_name(kind_for(path))
        if kind is None:
            continue
        rel = path.relative_to(root).as_posix()
        found[rel] = _Source(rel, kind, path)
    for path in transcript_files(root, config.transcripts):
        if kind_for(path) is FileKind.TRANSCRIPT:
            rel = Path(os.path.relpath(path, root)).as_posix()
            found[rel] = _Source(rel, "transcript", path)
    return [found[k] for k in sorted(found)]


def _guard(path: Path, offset: int) -> str:
    """Hash of a transcript's first and last few KB before ``offset``: detects rewrites."""
    digest = hashlib.sha256(str(offset).encode())
    with path.open("rb") as handle:
        digest.update(handle.read(min(offset, _GUARD_BYTES)))
        tail = max(0, offset - _GUARD_BYTES)
        handle.seek(tail)
        digest.update(handle.read(offset - tail))
    return digest.hexdigest()[:32]


@dataclass
class _Tally:
    files: int = 0
    unchanged: int = 0
    changed: int = 0
    removed: int = 0
    chunks_added: int = 0
    chunks_removed: int = 0
    chunks_kept: int = 0
    errors: list[str] = field(default_factory=list)


def _sync_markdown(
    store: RecallStore, src: _Source, st: os.stat_result, row: FileState | None, tally: _Tally
) -> None:
    data = src.path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()[:32]
    if row is not None and row.file_hash == digest and row.kind == src.kind:
        store.touch_file(src.rel, st.st_size, st.st_mtime_ns)
        tally.unchanged += 1
        return
    chunks = chunk_markdown(
        src.rel, decode(data).text, src.kind, fallback_timestamp=mtime_timestamp(st.st_mtime_ns)
    )
    state = FileState(src.rel, src.kind, st.st_size, st.st_mtime_ns, digest)
    counts = store.sync_chunks(src.rel, list(enumerate(chunks)), file_state=state)
    tally.changed += 1
    tally.chunks_added += counts.added
    tally.chunks_removed += counts.removed
    tally.chunks_kept += counts.kept


def _sync_transcript(
    store: RecallStore, src: _Source, st: os.stat_result, row: FileState | None, tally: _Tally
) -> None:
    from memls.core.recall.transcripts import parse_transcript

    start_byte = base = 0
    if (
        row is not None
        and row.kind == "transcript"
        and st.st_size >= row.byte_offset
        and row.guard_hash == _guard(src.path, row.byte_offset)
    ):
        if st.st_size == row.byte_offset:
            store.touch_file(src.rel, st.st_size, st.st_mtime_ns)
            tally.unchanged += 1
            return
        if row.turns > 0:
            start_byte, base = row.last_turn_start, row.turns - 1
    parsed = parse_transcript(src.path, start_byte)
    session = parsed.session_id or (row.session_id if row else None)
    branch = parsed.branch or (row.branch if row else None)
    header = transcript_header(src.rel, session, branch)
    pairs: list[tuple[int, Chunk]] = []
    for turn in parsed.turns:
        number = base + turn.index
        for chunk in chunk_turn(
            src.rel,
            number,
            turn.text,
            turn.start_line,
            turn.end_line,
            header=header,
            timestamp=turn.timestamp,
            session_id=session,
            branch=branch,
        ):
            pairs.append((number, chunk))
    if parsed.turns:
        turns = base + len(parsed.turns)
        last_start = parsed.turns[-1].start_byte
    else:
        turns = row.turns if (row is not None and start_byte) else 0
        last_start = start_byte
    state = FileState(
        src.rel,
        "transcript",
        st.st_size,
        st.st_mtime_ns,
        _guard(src.path, parsed.end_byte),
        byte_offset=parsed.end_byte,
        turns=turns,
        last_turn_start=last_start,
        guard_hash=_guard(src.path, parsed.end_byte),
        session_id=session,
        branch=branch,
    )
    if start_byte and not parsed.turns:
        with store.db.conn:
            store.put_file(state)
        tally.unchanged += 1
        return
    counts = store.sync_chunks(src.rel, pairs, from_ordinal=base, file_state=state)
    tally.changed += 1
    tally.chunks_added += counts.added
    tally.chunks_removed += counts.removed
    tally.chunks_kept += counts.kept


def _sync_sources(
    store: RecallStore,
    root: Path,
    config: Config,
    progress: Progress | None,
    cancel: threading.Event | None,
    tally: _Tally,
) -> bool:
    """Bring chunk rows in line with the files; False when cancelled."""
    known = store.files()
    sources = _sources(root, config)
    tally.files = len(sources)
    seen: set[str] = set()
    todo: list[tuple[_Source, os.stat_result, FileState | None]] = []
    with store.db.conn:
        for src in sources:
            seen.add(src.rel)
            try:
                st = src.path.stat()
            except OSError as exc:
                tally.errors.append(f"{src.rel}: {exc}")
                continue
            row = known.get(src.rel)
            if row is not None and row.size == st.st_size and row.mtime_ns == st.st_mtime_ns:
                tally.unchanged += 1
                continue
            todo.append((src, st, row))
    for number, (src, st, row) in enumerate(todo, start=1):
        if cancel is not None and cancel.is_set():
            return False
        if progress is not None:
            progress(number - 1, len(todo), f"index {src.rel}")
        try:
            if src.kind == "transcript":
                _sync_transcript(store, src, st, row, tally)
            else:
                _sync_markdown(store, src, st, row, tally)
        except OSError as exc:
            tally.errors.append(f"{src.rel}: {exc}")
    if todo:
        store.db.conn.commit()
        if progress is not None:
            progress(len(todo), len(todo), "index")
    gone = [path for path in known if path not in seen]
    if gone:
        tally.chunks_removed += store.remove_files(gone)
        tally.removed = len(gone)
    return True


# --- backfill --------------------------------------------------------------------------------


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def backfill(
    root: Path,
    *,
    model: str | None = None,
    full: bool = False,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    lock_timeout: float | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Index the root's memory files and transcripts, embedding only what changed.

    Without a working model the text index is still brought up to date and the result says
    recall is in text mode. ``cancel`` stops between files and between embedding batches;
    what was done stays done, and the next backfill picks up the rest. One backfill runs at
    a time per store: another one waits up to ``lock_timeout`` seconds (default 600,
    ``MEMLS_RECALL_LOCK_TIMEOUT``), telling ``on_wait`` once, then raises
    :class:`~memls.core.recall.lock.RecallBusyError`.
    """
    started = time.perf_counter()
    root = root.resolve()
    config = load_config(root)
    db = db_path_for(root, config)
    with backfill_lock(db, timeout=lock_timeout, on_wait=on_wait):
        return _backfill_locked(root, config, db, model, full, progress, cancel, started)


def _backfill_locked(
    root: Path,
    config: Config,
    db: Path,
    model: str | None,
    full: bool,
    progress: Progress | None,
    cancel: threading.Event | None,
    started: float,
) -> dict[str, Any]:
    store = RecallStore(db)
    try:
        current = store.collection()
        choice = _load(_pick_model(config, model, current[1] if current else None), db)
        if full:
            store.clear()
        tally = _Tally()
        finished = _sync_sources(store, root, config, progress, cancel, tally)
        embedded = 0
        if finished and choice.usable and current is not None and current[1] != choice.id:
            # switching drops the old vectors: first make sure the new model really runs
            try:
                _embed(choice, ["memls recall model check"])
            except Exception as exc:  # any model failure degrades to text mode
                choice.error = (
                    f"embedding with '{choice.id}' failed: {exc}; the stored "
                    f"{current[1]} vectors were kept."
                )
        if finished and choice.usable:
            collection_id = store.ensure_collection(choice.id)
            total = store.pending_count(collection_id)
            while True:
                if cancel is not None and cancel.is_set():
                    finished = False
                    break
                batch = store.pending(collection_id, EMBED_BATCH)
                if not batch:
                    break
                if progress is not None:
                    progress(embedded, total, "embed")
                try:
                    vectors = _embed(choice, [text for _, text, _ in batch])
                except Exception as exc:  # any model failure degrades to text mode
                    choice.error = f"embedding with '{choice.id}' failed: {exc}"
                    break
                encoded = [_encode(v) for v in vectors]
                store.put_embeddings(
                    collection_id,
                    [
                        (cid, text, meta, enc)
                        for (cid, text, meta), enc in zip(batch, encoded, strict=True)
                    ],
                    int(time.time()),
                )
                embedded += len(batch)
            if progress is not None and total:
                progress(embedded, total, "embed")
            if choice.usable:
                store.refresh_file_vectors(collection_id, choice.id, ("topic",))
        seconds = round(time.perf_counter() - started, 3)
        mode = "semantic" if choice.usable else "text"
        record = {
            "time": _now(),
            "model": choice.id,
            "mode": mode,
            "files": tally.files,
            "unchanged": tally.unchanged,
            "changed": tally.changed,
            "removed": tally.removed,
            "chunks_added": tally.chunks_added,
            "chunks_removed": tally.chunks_removed,
            "embedded": embedded,
            "complete": finished,
            "seconds": seconds,
        }
        store.set_meta("last_backfill", record)
        if not finished:
            message = "Backfill cancelled; what was indexed stays, run backfill again to finish."
        elif choice.usable:
            message = (
                f"Indexed {tally.files} files ({tally.changed} changed, {tally.removed} removed, "
                f"{tally.unchanged} unchanged); embedded {embedded} chunks with {choice.id}."
            )
        else:
            message = (
                f"Indexed {tally.files} files for full-text search only (degraded text mode): "
                f"{choice.error}"
            )
        if tally.errors:
            message += f" {len(tally.errors)} file(s) could not be read: " + "; ".join(
                tally.errors[:3]
            )
        return {
            **record,
            "message": message,
            "degraded": not choice.usable,
            "cancelled": not finished,
            "errors": tally.errors,
            "db": str(db),
        }
    finally:
        store.close()


def _encode(vector: Sequence[float]) -> bytes:
    import struct

    return struct.pack("<" + "f" * len(vector), *vector)


# --- search ----------------------------------------------------------------------------------


def _filters(
    kinds: Sequence[str], path_glob: str | None, since: str | None, until: str | None
) -> engine.Filters:
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        raise ValueError(f"unknown kind {bad[0]!r}: use one of {', '.join(KINDS)}")
    return engine.Filters(
        kinds=tuple(kinds),
        path_glob=path_glob or None,
        since=engine.parse_time(since),
        until=engine.parse_time(until, end=True),
    )


def _verified_note(store: RecallStore, model_id: str) -> str:
    record = store.meta("last_verification")
    if isinstance(record, dict) and record.get("model") == model_id and record.get("ok"):
        return f"verified {record.get('time')}"
    return "not verified yet — run `memls recall verify`"


def search(
    root: Path,
    query: str,
    *,
    mode: str = "hybrid",
    kinds: Sequence[str] = (),
    path_glob: str | None = None,
    since: str | None = None,
    until: str | None = None,
    limit: int = 10,
    model: str | None = None,
    mmr: bool = False,
) -> SearchResponse:
    """Search one root. Raises ValueError for a bad mode, kind or time."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}: use one of {', '.join(MODES)}")
    filters = _filters(kinds, path_glob, since, until)
    root = root.resolve()
    config = load_config(root)
    db = db_path_for(root, config)
    store = open_existing(db)
    if store is None:
        return SearchResponse(
            [], "text", True, None, f"No recall index at {db} yet: run `memls recall backfill`."
        )
    try:
        limit = max(0, limit)
        pool = max(limit * 4, 40) if (mode == "hybrid" or mmr) else limit
        vector: list[float] | None = None
        reason = ""
        current = store.collection()
        model_id = current[1] if current else None
        if mode != "text":
            vector, reason = _query_vector(store, query, config, model, db)
        sem_hits: list[engine.Hit] = []
        text_hits: list[engine.Hit] = []
        if vector is not None:
            sem_hits = engine.semantic(store, vector, query=query, filters=filters, limit=pool)
        if mode in {"text", "hybrid"} or vector is None:
            text_hits = engine.text(store, query, filters=filters, limit=pool)
        if vector is None:
            ran, hits = "text", text_hits
        elif mode == "semantic":
            ran, hits = "semantic", sem_hits
        else:
            ran, hits = "hybrid", engine.rrf([text_hits, sem_hits])
        if mmr:
            vectors = engine.vectors_for(
                engine.vector_index(store) if vector is not None else None, [h.rid for h in hits]
            )
            hits = engine.mmr(hits, vectors, limit)
        hits = hits[:limit]
        degraded = mode != "text" and vector is None
        if degraded:
            message = f"Text mode only (degraded): {reason} Results come from full-text search."
        elif ran == "text":
            message = "Full-text search (BM25)."
        else:
            assert model_id is not None
            what = "semantic" if ran == "semantic" else "hybrid: full text + semantic"
            message = (
                f"{what.capitalize()} search with {model_id} ({_verified_note(store, model_id)})."
            )
        if mmr and vector is None:
            message += " MMR used no vectors (text mode), so it only re-ranked by score."
        results = [
            SearchResult(
                h.id, h.score, h.kind, h.path, h.start_line, h.end_line, h.heading, h.snippet
            )
            for h in hits
        ]
        return SearchResponse(
            results, ran, degraded, model_id if vector is not None else None, message
        )
    finally:
        store.close()


def _query_vector(
    store: RecallStore, query: str, config: Config, explicit: str | None, db: Path
) -> tuple[list[float] | None, str]:
    """Embed the query with the store's model, or say why semantic search cannot run."""
    current = store.collection()
    if current is None or store.embedded_count() == 0:
        wanted = explicit or config.recall_model
        if current is None and not wanted:
            return None, "the store holds no vectors yet (run `memls recall backfill`)."
        choice = _load(_pick_model(config, explicit, current[1] if current else None), db)
        if not choice.usable:
            return None, choice.error or ""
        return (
            None,
            f"the store holds no vectors yet (run `memls recall backfill --model {choice.id}`).",
        )
    stored = current[1]
    if explicit and explicit != stored:
        return None, (
            f"the stored vectors were made with '{stored}', not '{explicit}'; "
            f"run `memls recall backfill --model {explicit}` to switch."
        )
    choice = _load(_Model(stored, "store", model_dir=config.minilm_dir), db)
    if not choice.usable:
        return None, choice.error or ""
    try:
        vector = _embed(choice, [query])[0]
    except Exception as exc:  # a model that loads but cannot run
        return None, f"embedding the query with '{stored}' failed: {exc}"
    index = engine.vector_index(store)
    if index is None or len(vector) != index.dimensions:
        return (
            None,
            f"'{stored}' now makes {len(vector)}-d vectors but the store holds {index.dimensions if index else 0}-d ones; run `memls recall backfill --full`.",
        )
    return vector, ""


# --- status ----------------------------------------------------------------------------------


def status(root: Path, *, model: str | None = None) -> dict[str, Any]:
    """Where recall stands: mode (semantic|text|unavailable), model, counts, db, last runs."""
    root = root.resolve()
    config = load_config(root)
    db = db_path_for(root, config)
    store = open_existing(db)
    base: dict[str, Any] = {
        "db": str(db),
        "db_bytes": db.stat().st_size if db.is_file() else 0,
        "chunks": {},
        "chunks_total": 0,
        "embedded": 0,
        "pending": 0,
        "last_backfill": None,
        "last_verification": None,
        "verified": False,
    }
    if store is None:
        choice = _load(_pick_model(config, model, None), db)
        return {
            **base,
            "mode": "unavailable",
            "model": choice.id,
            "model_source": choice.source,
            "model_available": choice.usable,
            "message": (
                f"No recall index at {db} yet: run `memls recall backfill`"
                + (
                    f" (it would use {choice.id}, {choice.reason or choice.source})."
                    if choice.usable
                    else f". {choice.error}"
                )
            ),
        }
    try:
        counts = store.chunk_counts()
        current = store.collection()
        choice = _load(_pick_model(config, model, current[1] if current else None), db)
        embedded = store.embedded_count()
        total = sum(counts.values())
        last_backfill = store.meta("last_backfill")
        verification = store.meta("last_verification")
        stored_model = current[1] if current else None
        verified = bool(
            isinstance(verification, dict)
            and verification.get("ok")
            and verification.get("model") == stored_model
        )
        out = {
            **base,
            "chunks": counts,
            "chunks_total": total,
            "embedded": embedded,
            "pending": total - embedded,
            "last_backfill": last_backfill,
            "last_verification": verification,
            "verified": verified,
            "model": choice.id,
            "model_source": choice.source,
            "model_available": choice.usable,
            "stored_model": stored_model,
        }
        notes: list[str] = []
        if stored_model and choice.id != stored_model:
            notes.append(
                f"The stored vectors were made with {stored_model}; {choice.id} is selected "
                f"({choice.source}): run `memls recall backfill` to re-embed."
            )
        if total == 0:
            mode = "unavailable"
            message = "The recall index is empty: run `memls recall backfill`."
        elif not choice.usable:
            mode = "text"
            message = f"Degraded: text search only. {choice.error}"
        elif embedded == 0 or stored_model != choice.id:
            mode = "text"
            message = (
                f"Degraded: text search only — no {choice.id} vectors are stored yet; "
                "run `memls recall backfill`."
            )
        else:
            mode = "semantic"
            state = "verified" if verified else "NOT verified yet — run `memls recall verify`"
            when = (
                f" at {verification.get('time')}"
                if verified and isinstance(verification, dict)
                else ""
            )
            source = f"{choice.source}: {choice.reason}" if choice.reason else choice.source
            message = (
                f"Semantic recall with {choice.id} ({source}), {embedded}/{total} chunks embedded; "
                f"{state}{when}."
            )
            if (
                isinstance(verification, dict)
                and verified
                and verification.get("generation") != store.generation()
            ):
                message += " The index changed since that verification."
            if embedded < total:
                notes.append(
                    f"{total - embedded} chunks await embedding: run `memls recall backfill`."
                )
        if (
            isinstance(verification, dict)
            and not verification.get("ok")
            and verification.get("model") == stored_model
        ):
            notes.append(
                f"The last verification FAILED ({verification.get('time')}): {verification.get('message')}"
            )
        out["mode"] = mode
        out["message"] = " ".join([message, *notes])
        return out
    finally:
        store.close()


# --- verify ----------------------------------------------------------------------------------


def verify(root: Path, *, model: str | None = None) -> dict[str, Any]:
    """Embed a probe drawn from the index and check its own chunk comes back first.

    Deterministic: the probe chunk is the most distinctive one the rules below pick (the
    same on every run while the index is unchanged), and the probe is that chunk's own
    embedded text (header and text), cut to its first ~300 characters. Success means the
    chunk — or one with identical embedded content — is rank 1 with no other content tied
    with it. The outcome is recorded with time, model and store generation in the meta table.
    """
    root = root.resolve()
    config = load_config(root)
    db = db_path_for(root, config)
    store = open_existing(db)
    if store is None:
        return {
            "ok": False,
            "probe": None,
            "found_rank": None,
            "model": None,
            "message": f"Nothing to verify: no recall index at {db}; run `memls recall backfill`.",
        }
    try:
        current = store.collection()
        stored = current[1] if current else None

        def record(
            ok: bool, probe: str | None, rank: int | None, chunk: str | None, message: str
        ) -> dict[str, Any]:
            outcome = {
                "ok": ok,
                "probe": probe,
                "found_rank": rank,
                "chunk": chunk,
                "model": stored,
                "time": _now(),
                "generation": store.generation(),
                "message": message,
            }
            store.set_meta("last_verification", outcome)
            return outcome

        if current is None or store.embedded_count() == 0:
            return record(
                False,
                None,
                None,
                None,
                "Semantic recall is NOT working: the store holds no vectors (text mode). Run `memls recall backfill` with a working model.",
            )
        if model and model != stored:
            return record(
                False,
                None,
                None,
                None,
                f"The stored vectors were made with '{stored}', not '{model}'; run `memls recall backfill --model {model}` first.",
            )
        choice = _load(_Model(stored or "", "store", model_dir=config.minilm_dir), db)
        if not choice.usable:
            return record(
                False, None, None, None, f"Semantic recall is NOT working: {choice.error}"
            )
        picked = _probe_chunk(store, current[0])
        if picked is None:
            return record(False, None, None, None, "No embedded chunk has text to probe with.")
        chunk_id, probe, content_hash = picked
        try:
            vector = _embed(choice, [probe])[0]
        except Exception as exc:
            return record(
                False,
                probe,
                None,
                chunk_id,
                f"Semantic recall is NOT working: embedding the probe failed: {exc}",
            )
        hits = engine.semantic(store, vector, query=probe, limit=10)
        same = _same_content(store, current[0], content_hash, [h.id for h in hits])
        rank = next(
            (i for i, h in enumerate(hits, start=1) if h.id == chunk_id or h.id in same), None
        )
        rival = next((h for h in hits if h.id != chunk_id and h.id not in same), None)
        tied = rank == 1 and rival is not None and rival.score >= hits[0].score - _TIE_TOLERANCE
        ok = rank == 1 and not tied
        shown = _shorten(probe)
        if ok:
            message = (
                f"Verified: the probe {shown!r} found its chunk {chunk_id} first with {stored}."
            )
        elif tied:
            assert rival is not None
            message = f"Verification FAILED: the probe {shown!r} scored its chunk {chunk_id} no higher than {rival.id} with {stored}: the vectors do not tell them apart."
        elif rank is None:
            message = f"Verification FAILED: the probe {shown!r} did not find its chunk {chunk_id} in the top 10 with {stored}."
        else:
            message = f"Verification FAILED: the probe {shown!r} found its chunk {chunk_id} at rank {rank}, not first, with {stored}."
        return record(ok, probe, rank, chunk_id, message)
    finally:
        store.close()


PROBE_CHARS = 300
"""How much of a chunk's embedded text (header + text) the verification probe takes."""
_PROBE_CANDIDATES = 64
_TIE_TOLERANCE = 1e-6


def _shorten(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _probe_of(content: str) -> str:
    """The first ~PROBE_CHARS characters of the embedded text, cut at a word boundary."""
    if len(content) <= PROBE_CHARS:
        return content
    cut = content[:PROBE_CHARS]
    space = cut.rfind(" ")
    return cut[:space] if space > PROBE_CHARS // 2 else cut


def _same_content(
    store: RecallStore, collection_id: int, content_hash: bytes, ids: Sequence[str]
) -> set[str]:
    """Which of ``ids`` hold exactly the embedded content of the probe's chunk."""
    if not ids:
        return set()
    marks = ",".join("?" for _ in ids)
    rows = store.db.execute(
        f"select id from embeddings where collection_id = ? and content_hash = ? and id in ({marks})",
        [collection_id, content_hash, *ids],
    ).fetchall()
    return {str(r[0]) for r in rows}


def _probe_chunk(store: RecallStore, collection_id: int) -> tuple[str, str, bytes] | None:
    """``(chunk id, probe, content hash)`` for the most distinctive fair chunk, deterministically.

    Fair, in order of preference: a Markdown chunk whose whole embedded text fits in the
    probe (so the probe is exactly what was embedded), then any Markdown chunk, then any
    chunk (transcript turns only when nothing else is indexed). Among up to 64 candidates
    spread evenly over the tier (ordered by chunk id), the pick is the one whose stored
    vector is farthest from every chunk with other content: the widest margin, so the
    outcome does not hinge on which chunk happened to be drawn. Ties go to the smallest id.
    """
    joined = "from memls_chunks c join embeddings e on e.collection_id = ? and e.id = c.id "
    tiers = (
        f"where c.kind != 'transcript' and length(e.content) between 20 and {PROBE_CHARS}",
        "where c.kind != 'transcript' and length(e.content) >= 20",
        "where length(e.content) >= 20",
    )
    for where in tiers:
        rows = store.db.execute(
            f"select c.rid, c.id {joined}{where} order by c.id", [collection_id]
        ).fetchall()
        if not rows:
            continue
        if len(rows) > _PROBE_CANDIDATES:
            step = len(rows) / _PROBE_CANDIDATES
            rows = [rows[int(i * step)] for i in range(_PROBE_CANDIDATES)]
        chunk_id = str(_most_distinctive(store, collection_id, rows))
        content, content_hash = store.db.execute(
            "select content, content_hash from embeddings where collection_id = ? and id = ?",
            [collection_id, chunk_id],
        ).fetchone()
        return chunk_id, _probe_of(str(content)), bytes(content_hash)
    return None


def _most_distinctive(
    store: RecallStore, collection_id: int, candidates: Sequence[tuple[int, str]]
) -> str:
    """The id of the ``(rid, id)`` candidate least similar to any chunk with other content."""
    index = engine.vector_index(store)
    if index is None or index.size == 0:
        return candidates[0][1]
    hashes = dict(
        store.db.execute(
            "select c.rid, e.content_hash from embeddings e join memls_chunks c on c.id = e.id "
            "where e.collection_id = ?",
            [collection_id],
        ).fetchall()
    )
    codes: dict[bytes | None, int] = {}
    row_codes = np.array(
        [codes.setdefault(hashes.get(int(r)), len(codes)) for r in index.rids], dtype=np.int64
    )
    positions = {int(r): i for i, r in enumerate(index.rids)}
    usable = [(rid, cid) for rid, cid in candidates if int(rid) in positions]
    if not usable:  # vectors of another width: not part of the searchable matrix
        return candidates[0][1]
    at = np.array([positions[int(rid)] for rid, _ in usable], dtype=np.int64)
    sims = index.matrix[at] @ index.matrix.T
    sims[row_codes[None, :] == row_codes[at][:, None]] = -np.inf  # same content is no rival
    nearest = sims.max(axis=1) if sims.shape[1] else np.full(len(usable), -np.inf)
    best = min(range(len(usable)), key=lambda i: (float(nearest[i]), str(usable[i][1])))
    return str(usable[best][1])
