"""The recall store's own tables, as sqlite-utils migrations (set ``memls.recall``).

Imported only when a store needs migrating (see ``RecallStore.migrate``): sqlite-utils is
slow to import, and a search on an up-to-date store never needs it.
"""

from __future__ import annotations

from sqlite_utils import Database, Migrations

migrations = Migrations("memls.recall")


@migrations()
def m001_tables(db: Database) -> None:
    """Chunk metadata, the FTS5 index with its triggers, per-file state and meta."""
    db.executescript(
        """
        create table memls_chunks (
            rid integer primary key,
            id text not null unique,
            collection text not null,
            kind text not null,
            path text not null,
            ordinal integer not null,
            start_line integer not null,
            end_line integer not null,
            heading text,
            timestamp text,
            session_id text,
            branch text,
            content_hash text not null,
            header text not null,
            text text not null
        );
        create index memls_chunks_path on memls_chunks (path, ordinal);
        create index memls_chunks_kind on memls_chunks (kind);
        create virtual table memls_fts using fts5(
            text, heading, path,
            content='memls_chunks', content_rowid='rid',
            tokenize='porter unicode61'
        );
        create trigger memls_chunks_ai after insert on memls_chunks begin
            insert into memls_fts (rowid, text, heading, path)
            values (new.rid, new.text, new.heading, new.path);
        end;
        create trigger memls_chunks_ad after delete on memls_chunks begin
            insert into memls_fts (memls_fts, rowid, text, heading, path)
            values ('delete', old.rid, old.text, old.heading, old.path);
        end;
        create trigger memls_chunks_au after update of text, heading, path on memls_chunks begin
            insert into memls_fts (memls_fts, rowid, text, heading, path)
            values ('delete', old.rid, old.text, old.heading, old.path);
            insert into memls_fts (rowid, text, heading, path)
            values (new.rid, new.text, new.heading, new.path);
        end;
        create table memls_files (
            path text primary key,
            kind text not null,
            size integer not null,
            mtime_ns integer not null,
            file_hash text not null,
            byte_offset integer not null default 0,
            turns integer not null default 0,
            last_turn_start integer not null default 0,
            guard_hash text,
            session_id text,
            branch text,
            vector blob,
            vector_model text
        );
        create table memls_meta (key text primary key, value text not null);
        """
    )


@migrations()
def m002_context(db: Database) -> None:
    """A ``context`` column (neighbouring turns' text) that BM25 reads at a lower weight.

    FTS5 tables cannot gain a column, so the index and its triggers are rebuilt.
    """
    db.executescript(
        """
        alter table memls_chunks add column context text not null default '';
        drop trigger if exists memls_chunks_ai;
        drop trigger if exists memls_chunks_ad;
        drop trigger if exists memls_chunks_au;
        drop table if exists memls_fts;
        create virtual table memls_fts using fts5(
            text, heading, path, context,
            content='memls_chunks', content_rowid='rid',
            tokenize='porter unicode61'
        );
        create trigger memls_chunks_ai after insert on memls_chunks begin
            insert into memls_fts (rowid, text, heading, path, context)
            values (new.rid, new.text, new.heading, new.path, new.context);
        end;
        create trigger memls_chunks_ad after delete on memls_chunks begin
            insert into memls_fts (memls_fts, rowid, text, heading, path, context)
            values ('delete', old.rid, old.text, old.heading, old.path, old.context);
        end;
        create trigger memls_chunks_au after update of text, heading, path, context
        on memls_chunks begin
            insert into memls_fts (memls_fts, rowid, text, heading, path, context)
            values ('delete', old.rid, old.text, old.heading, old.path, old.context);
            insert into memls_fts (rowid, text, heading, path, context)
            values (new.rid, new.text, new.heading, new.path, new.context);
        end;
        insert into memls_fts (memls_fts) values ('rebuild');
        """
    )


@migrations()
def m003_line_map(db: Database) -> None:
    """A ``line_map`` column: a transcript chunk's file line per text line, so a search
    names the JSONL lines of the messages that matched (see ``chunking.encode_line_map``)."""
    db.executescript("alter table memls_chunks add column line_map text not null default '';")
