"""The recall database: an ``llm`` embeddings store plus the tables memls keeps beside it.

One SQLite file per memory root (``<root>/.memls/recall.db`` unless ``recall_db`` says
otherwise). ``llm``'s own ``collections``/``embeddings`` tables hold one collection named
``memls``, so ``llm similar memls -d <db> -c "…"`` works on it. memls adds, under its own
sqlite-utils migration set ``memls.recall``:

* ``memls_chunks`` — one row per chunk (id, kind, path, lines, heading, timestamp, session,
  branch, content hash, header and text); its ``id`` is the embedding row's id;
* ``memls_fts`` — an FTS5 index over chunk text, heading, path and context (the neighbouring
  turns of a transcript turn), kept in step by triggers;
* ``memls_files`` — per source file: size, mtime, content hash, transcript byte offset and the
  precomputed file-level vector used by MF003;
* ``memls_meta`` — last backfill, last verification, and ``generation``, a counter bumped by
  every write so search caches know when to reload.

``llm`` has no per-item delete, so stale rows go in plain SQL, in the same transaction as the
chunk rows they belong to.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memls.core.config import Config
from memls.core.fsutil import open_private, refuse_link, state_parent
from memls.core.recall.chunking import Chunk, chunk_embed_text

COLLECTION = "memls"
"""The ``llm`` collection name (one per root; each root has its own database)."""
DEFAULT_DB = Path(".memls") / "recall.db"
FEW_FILES = 500
"""Up to this many files needing a new file vector are read by path, more by a full scan."""
INSERT_ROWS = 500
"""Chunk rows per insert statement (fewer where SQLite allows fewer bound variables)."""
_INSERT_CHUNKS = (
    "insert into memls_chunks (id, collection, kind, path, ordinal, start_line, end_line, "
    "heading, timestamp, session_id, branch, content_hash, header, text, context, line_map) "
    "values "
)
_CHUNK_COLUMNS = 16
_ROW_MARKS = "(" + ",".join("?" * _CHUNK_COLUMNS) + ")"

SQLITE_SUFFIXES = ("", "-wal", "-shm", "-journal")
"""The database file and the files SQLite keeps beside it (same name plus the suffix)."""

SCHEMA = "memls.recall m003"
"""Recorded in ``memls_meta`` once the migrations ran; an equal marker (and the same ``llm``
version) lets a reader skip importing sqlite-utils and ``llm`` to check for pending ones."""


class Db:
    """The few ``sqlite_utils.Database`` members memls uses, over a plain sqlite3 connection.

    Opening the store must stay cheap for a whole-process search: sqlite-utils and ``llm``
    are imported only when migrations have to run.
    """

    def __init__(self, path: Path) -> None:
        check_db_files(path)  # SQLite would follow a link to the file or its -wal / -shm
        self.conn = sqlite3.connect(str(path))
        self.conn.execute("pragma recursive_triggers = on")

    def execute(self, sql: str, parameters: Sequence[Any] | None = None) -> sqlite3.Cursor:
        if parameters is None:
            return self.conn.execute(sql)
        return self.conn.execute(sql, parameters)

    def executescript(self, sql: str) -> sqlite3.Cursor:
        return self.conn.executescript(sql)

    def close(self) -> None:
        self.conn.close()


@dataclass(frozen=True)
class FileState:
    """What the last backfill saw of one source file."""

    path: str
    kind: str
    size: int
    mtime_ns: int
    file_hash: str
    byte_offset: int = 0
    turns: int = 0
    last_turn_start: int = 0
    guard_hash: str | None = None
    session_id: str | None = None
    branch: str | None = None


@dataclass(frozen=True)
class SyncCounts:
    """What one :meth:`RecallStore.sync_chunks` call changed."""

    added: int = 0
    removed: int = 0
    kept: int = 0


def db_path_for(root: Path, config: Config | None = None) -> Path:
    """The recall database of a root: ``recall_db`` from the config, else ``.memls/recall.db``."""
    if config is not None and config.recall_db:
        configured = Path(config.recall_db).expanduser()
        if not configured.is_absolute():
            base = config.source.parent if config.source is not None else root
            configured = base / configured
        return configured
    return root / DEFAULT_DB


def check_db_files(db: Path, *, tighten: bool = False) -> None:
    """Refuse (:class:`~memls.core.fsutil.UnsafeStateError`) a database whose file or
    ``-wal`` / ``-shm`` / ``-journal`` is a symlink (dangling or not) or not a regular file;
    ``tighten``: make those that exist mode 0600 (they hold transcript text)."""
    for suffix in SQLITE_SUFFIXES:
        path = db.with_name(db.name + suffix)
        if refuse_link(path) is not None and tighten:
            with suppress(FileNotFoundError):  # SQLite removed a -journal meanwhile
                os.close(open_private(path, os.O_RDONLY))  # tightens a wider mode


def prepare_db(db: Path) -> None:
    """Make the database's folder ready (``.memls`` is checked, 0700 and git-ignored; see
    :func:`~memls.core.fsutil.state_parent`) and the database file 0600, created empty
    (which SQLite takes for a new database) when missing, so its ``-wal`` and ``-shm``,
    which SQLite creates with the database's mode, are 0600 too."""
    state_parent(db)
    check_db_files(db, tighten=True)
    with suppress(FileExistsError):
        os.close(open_private(db, os.O_WRONLY | os.O_CREAT | os.O_EXCL))


def llm_content_hash(text: str) -> bytes:
    """``llm``'s own content hash (md5 of UTF-8), so its dedupe logic agrees with ours."""
    import hashlib  # here, not at import: a search loads no OpenSSL for it

    return hashlib.md5(text.encode("utf-8")).digest()


class RecallStore:
    """An open recall database. Cheap to open; use one per operation and close it."""

    def __init__(self, path: Path, *, create: bool = True) -> None:
        self.path = path
        if create:
            prepare_db(path)
        elif not path.exists():
            raise FileNotFoundError(f"no recall database at {path}")
        self.db = Db(path)
        self._batching = False
        self._batch_changed = False
        self._batch_vectors: tuple[int | None] | None = None
        self._batch_rows: list[tuple[Any, ...]] = []
        self.db.execute("pragma busy_timeout = 30000")
        # WAL lets searches read while a backfill writes; NORMAL sync is safe under WAL
        # (a power cut may lose the last commit, never corrupt the file).
        if create:
            self.db.execute("pragma journal_mode = wal")
        self.db.execute("pragma synchronous = normal")
        if create:
            self.migrate()

    @contextmanager
    def batch(self) -> Iterator[None]:
        """One transaction for many :meth:`sync_chunks` calls (committed at the end, rolled
        back on error): per-file commits dominate a first backfill of thousands of files."""
        self._batching = True
        self._batch_changed = False
        self._batch_vectors = None
        self._batch_rows = []
        try:
            with self.db.conn:
                yield
                self.flush()
                if self._batch_changed:
                    self.bump()  # once for the batch, inside its transaction
        finally:
            self._batching = False
            self._batch_vectors = None
            self._batch_rows = []

    def flush(self) -> None:
        """Insert the chunk rows a :meth:`batch` has queued so far (still uncommitted)."""
        rows, self._batch_rows = self._batch_rows, []
        if rows:
            self._insert_chunks(rows)

    def _insert_chunks(self, rows: Sequence[tuple[Any, ...]]) -> None:
        """Insert chunk rows, up to ``INSERT_ROWS`` per statement.

        FTS5 writes its pending index out at the start of every statement that changes it
        (a savepoint), so one statement per chunk row leaves one tiny index segment per row
        to merge again: multi-row statements made the FTS part of a first backfill 3x
        cheaper."""
        limit = self.db.conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
        per = max(1, min(INSERT_ROWS, limit // _CHUNK_COLUMNS))
        for start in range(0, len(rows), per):
            part = rows[start : start + per]
            marks = ",".join([_ROW_MARKS] * len(part))
            self.db.execute(_INSERT_CHUNKS + marks, [value for row in part for value in row])

    def _vectors_at(self) -> int | None:
        """The collection id when it holds any vector (else None: no stray embedding rows
        to clear); asked once per :meth:`batch`, whose sync calls add no vectors."""
        if self._batching and self._batch_vectors is not None:
            return self._batch_vectors[0]
        cur = self.collection()
        found = None
        if cur is not None:
            row = self.db.execute(
                "select 1 from embeddings where collection_id = ? limit 1", [cur[0]]
            ).fetchone()
            found = cur[0] if row is not None else None
        if self._batching:
            self._batch_vectors = (found,)
        return found

    def transaction(self) -> AbstractContextManager[object]:
        """The connection's transaction, or nothing inside :meth:`batch` (it commits)."""
        return nullcontext() if self._batching else self.db.conn

    def migrate(self) -> None:
        """Apply ``llm``'s embeddings migrations and memls's own (another process may race us)."""
        if self._schema_current():
            return
        from sqlite_utils import Database

        embeddings_migrations = _llm_embeddings_migrations()

        from memls.core.recall.schema import migrations

        db = Database(self.db.conn)
        if embeddings_migrations.pending(db) or migrations.pending(db):
            try:
                embeddings_migrations.apply(db)
                migrations.apply(db)
            except sqlite3.OperationalError:
                # a concurrent process applied the same migration first; finish what is left
                embeddings_migrations.apply(db)
                migrations.apply(db)
        self.set_meta("schema", _schema_marker())

    def _schema_current(self) -> bool:
        try:
            row = self.db.execute("select value from memls_meta where key = 'schema'").fetchone()
        except sqlite3.OperationalError:  # no memls_meta table yet
            return False
        return row is not None and json.loads(row[0]) == _schema_marker()

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> RecallStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- meta ------------------------------------------------------------------------------

    def meta(self, key: str) -> Any:
        row = self.db.execute("select value from memls_meta where key = ?", [key]).fetchone()
        return json.loads(row[0]) if row else None

    def set_meta(self, key: str, value: Any) -> None:
        """Write one meta value and commit."""
        with self.db.conn:
            self._put_meta(key, value)

    def _put_meta(self, key: str, value: Any) -> None:
        self.db.execute(
            "insert into memls_meta (key, value) values (?, ?) "
            "on conflict (key) do update set value = excluded.value",
            [key, json.dumps(value)],
        )

    def generation(self) -> int:
        """The change counter (bumped by every write that changes chunks or vectors)."""
        value = self.meta("generation")
        return int(value) if value is not None else 0

    def bump(self) -> None:
        """Bump the change counter inside the caller's transaction."""
        self._put_meta("generation", self.generation() + 1)

    # --- the llm collection ----------------------------------------------------------------

    def collection(self) -> tuple[int, str] | None:
        """``(id, model id)`` of the ``memls`` collection, if it exists."""
        row = self.db.execute(
            "select id, model from collections where name = ?", [COLLECTION]
        ).fetchone()
        return (int(row[0]), str(row[1])) if row else None

    def ensure_collection(self, model_id: str) -> int:
        """The collection id for ``model_id``; switching model drops the old vectors."""
        current = self.collection()
        with self.db.conn:
            if current is None:
                cursor = self.db.execute(
                    "insert into collections (name, model) values (?, ?)", [COLLECTION, model_id]
                )
                self.bump()
                return int(cursor.lastrowid or 0)
            cid, model = current
            if model != model_id:
                self.db.execute("delete from embeddings where collection_id = ?", [cid])
                self.db.execute("update collections set model = ? where id = ?", [model_id, cid])
                self.db.execute("update memls_files set vector = null, vector_model = null")
                self.bump()
        return cid

    def drop_vectors(self, collection_id: int) -> None:
        """Forget every stored vector of the collection (chunks stay; backfill re-embeds)."""
        with self.db.conn:
            self.db.execute("delete from embeddings where collection_id = ?", [collection_id])
            self.db.execute("update memls_files set vector = null, vector_model = null")
            self.bump()

    def forget_files(self) -> None:
        """Forget what was read of every file (chunks stay), so backfill reads them all again."""
        with self.db.conn:
            self.db.execute("delete from memls_files")

    def clear(self) -> None:
        """Forget everything indexed (``backfill --full``); the collection row stays."""
        with self.db.conn:
            self.db.execute("delete from memls_chunks")
            self.db.execute("delete from memls_files")
            self.db.execute(
                "delete from embeddings where collection_id in "
                "(select id from collections where name = ?)",
                [COLLECTION],
            )
            self.bump()

    # --- files -----------------------------------------------------------------------------

    def files(self) -> dict[str, FileState]:
        rows = self.db.execute(
            "select path, kind, size, mtime_ns, file_hash, byte_offset, turns, "
            "last_turn_start, guard_hash, session_id, branch from memls_files"
        ).fetchall()
        return {row[0]: FileState(*row) for row in rows}

    def touch_file(self, path: str, size: int, mtime_ns: int) -> None:
        """Record a new size/mtime for a file whose content did not change."""
        self.db.execute(
            "update memls_files set size = ?, mtime_ns = ? where path = ?", [size, mtime_ns, path]
        )

    def put_file(self, state: FileState) -> None:
        self.db.execute(
            "insert into memls_files (path, kind, size, mtime_ns, file_hash, byte_offset, turns, "
            "last_turn_start, guard_hash, session_id, branch) values (?,?,?,?,?,?,?,?,?,?,?) "
            "on conflict (path) do update set kind = excluded.kind, size = excluded.size, "
            "mtime_ns = excluded.mtime_ns, file_hash = excluded.file_hash, "
            "byte_offset = excluded.byte_offset, turns = excluded.turns, "
            "last_turn_start = excluded.last_turn_start, guard_hash = excluded.guard_hash, "
            "session_id = excluded.session_id, branch = excluded.branch, "
            "vector = null, vector_model = null",
            [
                state.path,
                state.kind,
                state.size,
                state.mtime_ns,
                state.file_hash,
                state.byte_offset,
                state.turns,
                state.last_turn_start,
                state.guard_hash,
                state.session_id,
                state.branch,
            ],
        )

    def remove_files(self, paths: Iterable[str]) -> int:
        """Delete files with their chunks, FTS rows and embeddings; returns chunks removed."""
        removed = 0
        with self.db.conn:
            for path in paths:
                removed += self._delete_chunks("path = ?", [path])
                self.db.execute("delete from memls_files where path = ?", [path])
            if removed:
                self.bump()
        return removed

    # --- chunks ----------------------------------------------------------------------------

    def _delete_chunks(self, where: str, args: Sequence[Any]) -> int:
        """Delete chunk rows (FTS follows by trigger) and their embedding rows."""
        cur = self.collection()
        if cur is not None:
            self.db.execute(
                f"delete from embeddings where collection_id = ? and id in "
                f"(select id from memls_chunks where {where})",
                [cur[0], *args],
            )
        cursor = self.db.execute(f"delete from memls_chunks where {where}", list(args))
        return int(cursor.rowcount or 0)

    def sync_chunks(
        self,
        path: str,
        ordered: Sequence[tuple[int, Chunk]],
        *,
        from_ordinal: int = 0,
        file_state: FileState | None = None,
    ) -> SyncCounts:
        """Make the chunks of ``path`` with ordinal ≥ ``from_ordinal`` equal ``ordered``.

        ``ordered`` holds ``(ordinal, chunk)`` pairs. A chunk whose id and content hash are
        already stored keeps its row and its embedding (line numbers and metadata are
        refreshed); a changed or vanished chunk loses its row, FTS entry and embedding.
        Everything, including ``file_state``, is written in one transaction.
        """
        existing = {
            row[0]: (row[1], row[2], row[3])
            for row in self.db.execute(
                "select id, rid, content_hash, context from memls_chunks "
                "where path = ? and ordinal >= ?",
                [path, from_ordinal],
            ).fetchall()
        }
        wanted = {chunk.id for _, chunk in ordered}
        added = removed = kept = 0
        inserts: list[tuple[Any, ...]] = []
        with self.transaction():
            for chunk_id, (rid, _hash, _context) in existing.items():
                if chunk_id not in wanted:
                    removed += self._delete_chunks("rid = ?", [rid])
            for ordinal, chunk in ordered:
                old = existing.get(chunk.id)
                if old is not None and old[1] == chunk.content_hash:
                    self.db.execute(
                        "update memls_chunks set ordinal = ?, start_line = ?, end_line = ?, "
                        "timestamp = ?, session_id = ?, branch = ?, line_map = ? where rid = ?",
                        [
                            ordinal,
                            chunk.start_line,
                            chunk.end_line,
                            chunk.timestamp,
                            chunk.session_id,
                            chunk.branch,
                            chunk.line_map,
                            old[0],
                        ],
                    )
                    if old[2] != chunk.context:  # a neighbour arrived: BM25 context only
                        self.db.execute(
                            "update memls_chunks set context = ? where rid = ?",
                            [chunk.context, old[0]],
                        )
                    kept += 1
                    continue
                if old is not None:
                    removed += self._delete_chunks("rid = ?", [old[0]])
                inserts.append(
                    (
                        chunk.id,
                        COLLECTION,
                        chunk.kind,
                        chunk.path,
                        ordinal,
                        chunk.start_line,
                        chunk.end_line,
                        chunk.heading,
                        chunk.timestamp,
                        chunk.session_id,
                        chunk.branch,
                        chunk.content_hash,
                        chunk.header,
                        chunk.text,
                        chunk.context,
                        chunk.line_map,
                    )
                )
            if inserts:
                vectors_at = self._vectors_at()
                if vectors_at is not None:
                    # embedding rows left by an interrupted run, or by hand
                    self.db.conn.executemany(
                        "delete from embeddings where collection_id = ? and id = ?",
                        [(vectors_at, row[0]) for row in inserts],
                    )
                if self._batching:  # inserted with other files' rows (see _insert_chunks)
                    self._batch_rows.extend(inserts)
                    if len(self._batch_rows) >= INSERT_ROWS:
                        self.flush()
                else:
                    self._insert_chunks(inserts)
                added = len(inserts)
            if file_state is not None:
                self.put_file(file_state)
            if added or removed:
                if self._batching:
                    self._batch_changed = True
                else:
                    self.bump()
        return SyncCounts(added=added, removed=removed, kept=kept)

    def chunk_counts(self) -> dict[str, int]:
        rows = self.db.execute("select kind, count(*) from memls_chunks group by kind").fetchall()
        return {str(k): int(n) for k, n in rows}

    def embedded_count(self) -> int:
        cur = self.collection()
        if cur is None:
            return 0
        row = self.db.execute(
            "select count(*) from memls_chunks c join embeddings e "
            "on e.collection_id = ? and e.id = c.id",
            [cur[0]],
        ).fetchone()
        return int(row[0])

    def has_embeddings(self) -> bool:
        """Whether any current chunk has a vector (what a search asks; no full count)."""
        cur = self.collection()
        if cur is None:
            return False
        row = self.db.execute(
            "select 1 from memls_chunks c join embeddings e "
            "on e.collection_id = ? and e.id = c.id limit 1",
            [cur[0]],
        ).fetchone()
        return row is not None

    def pending_count(self, collection_id: int) -> int:
        row = self.db.execute(
            "select count(*) from memls_chunks c where not exists "
            "(select 1 from embeddings e where e.collection_id = ? and e.id = c.id)",
            [collection_id],
        ).fetchone()
        return int(row[0])

    def pending(
        self, collection_id: int, limit: int, after: int = 0
    ) -> list[tuple[int, str, str, dict[str, Any]]]:
        """Up to ``limit`` chunks lacking a vector, in row order from rowid ``after`` on:
        ``(rowid, id, embed text, metadata)``. Passing the last rowid seen continues where
        the previous batch ended instead of re-scanning every embedded row before it."""
        rows = self.db.execute(
            "select rid, id, header, text, kind, path, start_line, end_line, heading "
            "from memls_chunks c where rid > ? and not exists "
            "(select 1 from embeddings e where e.collection_id = ? and e.id = c.id) "
            "order by rid limit ?",
            [after, collection_id, limit],
        ).fetchall()
        out: list[tuple[int, str, str, dict[str, Any]]] = []
        for rid, cid, header, text, kind, path, start, end, heading in rows:
            embed = chunk_embed_text(kind, header, text)
            meta = {"kind": kind, "path": path, "start_line": start, "end_line": end}
            if heading:
                meta["heading"] = heading
            out.append((int(rid), cid, embed, meta))
        return out

    def put_embeddings(
        self,
        collection_id: int,
        rows: Sequence[tuple[str, str, dict[str, Any], bytes]],
        updated: int,
    ) -> None:
        """Store vectors as ``llm`` would: ``(id, embedded text, metadata, encoded vector)``."""
        with self.db.conn:
            self.db.conn.executemany(
                "insert or replace into embeddings (collection_id, id, embedding, content, "
                "content_hash, metadata, updated) values (?,?,?,?,?,?,?)",
                [
                    (
                        collection_id,
                        cid,
                        vector,
                        text,
                        llm_content_hash(text),
                        json.dumps(meta),
                        updated,
                    )
                    for cid, text, meta, vector in rows
                ],
            )
            self.bump()

    # --- file-level vectors (MF003) --------------------------------------------------------

    def refresh_file_vectors(self, collection_id: int, model_id: str, kinds: Sequence[str]) -> int:
        """Store a mean, normalised vector for each file of ``kinds`` lacking a current one."""
        import numpy as np

        marks = ",".join("?" for _ in kinds)
        stale = {
            str(row[0])
            for row in self.db.execute(
                f"select path from memls_files where kind in ({marks}) "
                "and (vector is null or vector_model is not ?)",
                [*kinds, model_id],
            ).fetchall()
        }
        if not stale:
            return 0
        # one pass over the chunks of those kinds, not one query per file; grouped here
        # rather than by an ORDER BY (a temporary B-tree over every row)
        blobs_of: dict[str, list[bytes]] = {}
        where, args = f"c.kind in ({marks})", list(kinds)
        if len(stale) <= FEW_FILES:  # a few changed files: their rows by the path index
            where, args = f"c.path in ({','.join('?' for _ in stale)})", sorted(stale)
        for path, blob in self.db.execute(
            "select c.path, e.embedding from memls_chunks c join embeddings e "
            f"on e.collection_id = ? and e.id = c.id where {where}",
            [collection_id, *args],
        ):
            if path in stale:
                blobs_of.setdefault(path, []).append(blob)
        updates: list[tuple[bytes, str, str]] = []
        by_width: dict[int, list[tuple[str, list[bytes]]]] = {}
        for path, blobs in blobs_of.items():  # a file's blobs must share one length
            widths = {len(b) for b in blobs}
            if len(widths) == 1:
                by_width.setdefault(widths.pop(), []).append((path, blobs))
        for width, groups in by_width.items():
            if width == 0 or width % 4:
                continue
            joined = b"".join(b for _, blobs in groups for b in blobs)
            unit = np.frombuffer(joined, dtype="<f4").reshape(-1, width // 4).astype(np.float32)
            norms = np.sqrt(np.einsum("ij,ij->i", unit, unit))
            unit /= np.where(norms == 0, 1, norms)[:, None]
            counts = np.array([len(blobs) for _, blobs in groups], dtype=np.int64)
            starts = np.cumsum(counts) - counts
            means = np.zeros((len(groups), unit.shape[1]), dtype=np.float32)
            for size in np.unique(counts):  # files with equally many chunks at once
                which = np.flatnonzero(counts == size)
                means[which] = unit[starts[which][:, None] + np.arange(size)].mean(axis=1)
            lengths = np.sqrt(np.einsum("ij,ij->i", means, means))
            keep = np.flatnonzero(lengths > 0)
            encoded = (means[keep] / lengths[keep][:, None]).astype("<f4").tobytes()
            updates.extend(
                (encoded[n * width : (n + 1) * width], model_id, groups[g][0])
                for n, g in enumerate(keep.tolist())
            )
        with self.db.conn:
            self.db.conn.executemany(
                "update memls_files set vector = ?, vector_model = ? where path = ?", updates
            )
        return len(updates)


def _llm_embeddings_migrations() -> Any:
    """``llm.embeddings_migrations.embeddings_migrations``, loaded from its file when ``llm``
    is not imported yet: the module needs only sqlite-utils, while importing the ``llm``
    package costs about a second."""
    import sys

    if "llm" not in sys.modules:
        from importlib.util import find_spec, module_from_spec, spec_from_file_location

        found = find_spec("llm")
        for location in (found.submodule_search_locations or []) if found else []:
            path = Path(location) / "embeddings_migrations.py"
            spec = spec_from_file_location("memls_llm_embeddings_migrations", path)
            if path.is_file() and spec is not None and spec.loader is not None:
                module = module_from_spec(spec)
                spec.loader.exec_module(module)
                return module.embeddings_migrations
    from llm.embeddings_migrations import embeddings_migrations

    return embeddings_migrations


def _schema_marker() -> str:
    """The schema marker: memls's migration level plus which ``llm`` migrations file is
    installed (its size and mtime; found without importing ``llm``, which is slow)."""
    from importlib.util import find_spec

    spec = find_spec("llm")
    stamp = "?"
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            try:
                st = (Path(location) / "embeddings_migrations.py").stat()
            except OSError:
                continue
            stamp = f"{st.st_size}-{st.st_mtime_ns}"
            break
    return f"{SCHEMA}; llm migrations {stamp}"


def open_existing(path: Path) -> RecallStore | None:
    """Open a store for reading if it exists and has memls's tables; None otherwise."""
    if not path.is_file():
        return None
    try:
        store = RecallStore(path, create=False)
    except (OSError, sqlite3.Error):
        return None
    try:
        store.migrate()
    except sqlite3.Error:
        store.close()
        return None
    return store
