"""Backfill: bring the store in line with the root's files, then embed what changed.

Sources are topic files, checkpoints, the handoff, LOG.md and transcripts. A Markdown file
is re-chunked when its bytes changed; a transcript is read from where the last backfill
stopped (a guard hash of the bytes before that point detects rewrites), re-reading its last
turn so a reply that was still being written is completed. Chunk rows, FTS entries and
file state change in one transaction per batch of ``BATCH_FILES`` files (new chunk rows go
in by multi-row statements, see ``RecallStore._insert_chunks``); embedding then fills in
every chunk that lacks a vector, batch after batch in row order, each batch committed, so a
cancelled run loses nothing.

Chunk text is redacted before it is stored or embedded (``chunking.redact_text``: a Markdown
file's text in ``chunk_markdown``, each transcript turn here). A store indexed by another
chunker revision (one from before redaction) or another ``allow_secrets`` is re-chunked, and
then purged (:func:`_purge_deleted_text`) so the file keeps no deleted row's text.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memls.core.config import Config, load_config
from memls.core.fsutil import crash_point
from memls.core.model import FileKind
from memls.core.parse import kind_for
from memls.core.recall import semantic
from memls.core.recall.chunking import (
    CHUNKER_REVISION,
    Chunk,
    chunk_markdown,
    chunk_turn,
    kind_name,
    mtime_timestamp,
    redact_text,
    transcript_header,
    turn_context,
)
from memls.core.recall.lock import backfill_lock
from memls.core.recall.models import (
    EMBED_BATCH,
    embed,
    encode,
    load_model,
    model_revision,
    pick_model,
)
from memls.core.recall.store import FileState, RecallStore, db_path_for
from memls.core.text import decode
from memls.core.workspace import memory_files, transcript_files

_GUARD_BYTES = 4096
BATCH_FILES = 256
"""Files indexed per transaction (a cancelled or killed run keeps every finished batch)."""

Progress = Callable[[int, int, str], None]


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
    store: RecallStore,
    src: _Source,
    st: os.stat_result,
    row: FileState | None,
    tally: _Tally,
    allowed: frozenset[str],
) -> None:
    data = src.path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()[:32]
    if row is not None and row.file_hash == digest and row.kind == src.kind:
        store.touch_file(src.rel, st.st_size, st.st_mtime_ns)
        tally.unchanged += 1
        return
    chunks = chunk_markdown(
        src.rel,
        decode(data).text,
        src.kind,
        fallback_timestamp=mtime_timestamp(st.st_mtime_ns),
        allowed=allowed,
    )
    state = FileState(src.rel, src.kind, st.st_size, st.st_mtime_ns, digest)
    counts = store.sync_chunks(src.rel, list(enumerate(chunks)), file_state=state)
    tally.changed += 1
    tally.chunks_added += counts.added
    tally.chunks_removed += counts.removed
    tally.chunks_kept += counts.kept


def _sync_transcript(
    store: RecallStore,
    src: _Source,
    st: os.stat_result,
    row: FileState | None,
    tally: _Tally,
    allowed: frozenset[str],
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
    header = redact_text(transcript_header(src.rel, session, branch), allowed)
    pairs: list[tuple[int, Chunk]] = []
    # each turn redacted once, before its heading, parts and its neighbours' context are cut
    # from it (a cut could leave part of a secret); the stored turn before is redacted too
    texts = [redact_text(turn.text, allowed) for turn in parsed.turns]
    before = _stored_turn_text(store, src.rel, base - 1) if base > 0 else None
    for position, turn in enumerate(parsed.turns):
        number = base + turn.index
        previous = texts[position - 1] if position > 0 else before
        following = texts[position + 1] if position + 1 < len(texts) else None
        for chunk in chunk_turn(
            src.rel,
            number,
            texts[position],
            turn.start_line,
            turn.end_line,
            header=header,
            timestamp=turn.timestamp,
            session_id=session,
            branch=branch,
            context=turn_context(previous, following),
            line_map=turn.line_map,
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
        with store.transaction():
            store.put_file(state)
        tally.unchanged += 1
        return
    counts = store.sync_chunks(src.rel, pairs, from_ordinal=base, file_state=state)
    tally.changed += 1
    tally.chunks_added += counts.added
    tally.chunks_removed += counts.removed
    tally.chunks_kept += counts.kept


def _stored_turn_text(store: RecallStore, rel: str, ordinal: int) -> str | None:
    """The indexed text of turn ``ordinal`` of a transcript (its parts joined), if any."""
    rows = store.db.execute(
        "select text from memls_chunks where path = ? and ordinal = ? order by rid",
        [rel, ordinal],
    ).fetchall()
    return "\n".join(str(r[0]) for r in rows) if rows else None


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
    allowed = frozenset(config.allow_secrets)
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
    for first in range(0, len(todo), BATCH_FILES):
        with store.batch():  # one commit per batch of files, not per file
            for number, (src, st, row) in enumerate(
                todo[first : first + BATCH_FILES], start=first + 1
            ):
                if cancel is not None and cancel.is_set():
                    return False
                if progress is not None:
                    progress(number - 1, len(todo), f"index {src.rel}")
                try:
                    if src.kind == "transcript":
                        _sync_transcript(store, src, st, row, tally, allowed)
                    else:
                        _sync_markdown(store, src, st, row, tally, allowed)
                except OSError as exc:
                    tally.errors.append(f"{src.rel}: {exc}")
            store.flush()
            crash_point()  # crash tests kill here: a batch written, not yet committed
    if todo:
        store.db.conn.commit()
        if progress is not None:
            progress(len(todo), len(todo), "index")
    indexed = set(known) | {
        str(row[0]) for row in store.db.execute("select distinct path from memls_chunks")
    }
    gone = sorted(path for path in indexed if path not in seen)
    if gone:
        tally.chunks_removed += store.remove_files(gone)
        tally.removed = len(gone)
    return True


PURGE_META = "purge_pending"
"""Set while deleted chunk text may linger in the database file (a store indexed before
chunk text was redacted, by another ``allow_secrets``, or cleared by ``--full``)."""


def _purge_deleted_text(store: RecallStore) -> None:
    """Make the database file forget the text of deleted chunk rows.

    SQLite leaves a deleted row's bytes in free pages, and FTS5 keeps a deleted document's
    terms in its segments until they are merged, so a store indexed before redaction would
    still hold the secrets its rows no longer show. Merging the FTS index into one segment
    ('optimize'), rebuilding the file (VACUUM: live rows only; ``rid`` is the chunk table's
    INTEGER PRIMARY KEY and embeddings join by id, so nothing that refers to a row moves)
    and truncating the WAL leaves only what the rows hold now. Once per re-chunk; a busy
    database leaves it for the next backfill.
    """
    import sqlite3

    conn = store.db.conn
    try:
        with conn:
            conn.execute("insert into memls_fts (memls_fts) values ('optimize')")
        if conn.in_transaction:
            conn.commit()
        conn.execute("vacuum")
        conn.execute("pragma wal_checkpoint(truncate)")
    except sqlite3.OperationalError:  # another connection holds the database: next time
        return
    store.set_meta(PURGE_META, False)


def now() -> str:
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
        choice = load_model(pick_model(config, model, current[1] if current else None), db)
        allow = sorted(config.allow_secrets)
        previous = store.meta("chunker_revision")
        # a new chunker, or another allow_secrets (what is redacted changed): re-read all
        rechunk = previous != CHUNKER_REVISION or store.meta("allow_secrets") != allow
        written = (
            previous is not None
            or store.db.execute("select exists (select 1 from memls_chunks)").fetchone()[0]
        )
        if (full or rechunk) and written:
            store.set_meta(PURGE_META, True)  # until what the old rows held is overwritten
        if full:
            store.clear()
        elif rechunk:
            store.forget_files()  # re-chunk everything; unchanged chunks keep their vectors
        store.set_meta("chunker_revision", CHUNKER_REVISION)
        store.set_meta("allow_secrets", allow)
        tally = _Tally()
        finished = _sync_sources(store, root, config, progress, cancel, tally)
        if finished and store.meta(PURGE_META) and not (cancel is not None and cancel.is_set()):
            _purge_deleted_text(store)  # a hook's quick text-only run leaves it to the worker
        embedded = 0
        if finished and choice.usable and current is not None and current[1] != choice.id:
            # switching drops the old vectors: first make sure the new model really runs
            try:
                embed(choice, ["memls recall model check"])
            except Exception as exc:  # any model failure degrades to text mode
                choice.error = (
                    f"embedding with '{choice.id}' failed: {exc}; the stored "
                    f"{current[1]} vectors were kept."
                )
        if finished and choice.usable:
            collection_id = store.ensure_collection(choice.id)
            revision = model_revision(choice.id)
            if store.meta("model_revision") != revision:
                # same model id, different vectors (memls-hash's scheme changed): re-embed all
                store.drop_vectors(collection_id)
                store.set_meta("model_revision", revision)
            total = store.pending_count(collection_id)
            after = 0
            while True:
                if cancel is not None and cancel.is_set():
                    finished = False
                    break
                pending = store.pending(collection_id, EMBED_BATCH, after)
                if not pending:
                    break
                after = pending[-1][0]
                batch = [(cid, text, meta) for _, cid, text, meta in pending]
                if progress is not None:
                    progress(embedded, total, "embed")
                try:
                    vectors = embed(choice, [text for _, text, _ in batch])
                except Exception as exc:  # any model failure degrades to text mode
                    choice.error = f"embedding with '{choice.id}' failed: {exc}"
                    break
                encoded = [encode(v) for v in vectors]
                crash_point()  # crash tests kill here: vectors made, not yet stored
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
                if finished:
                    crash_point()  # crash tests kill here: vectors stored, matrix not saved
                    semantic.save_index(store)  # a fresh process then maps it, not SQL
        seconds = round(time.perf_counter() - started, 3)
        mode = "semantic" if choice.usable else "text"
        record = {
            "time": now(),
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
