"""Byte-level round trip, for every writer: any bytes in → the bytes it did not mean to change
are identical out.

Hypothesis puts arbitrary bytes (not UTF-8, NUL, lone CR, form feeds, U+2028, …) on lines
the operation does not own — a note in MEMORY.md, a kept section of a checkpoint, the
author's part of the handoff, an earlier LOG entry, a file outside a bundle — and checks
those bytes come out unchanged. The snapshot writers either keep the exact bytes or refuse
and change nothing. Examples are bounded so the module runs in seconds.
"""

from __future__ import annotations

import datetime as dt
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memls.core.fixes import fix_file
from memls.core.fsutil import TEMP_PREFIX, atomic_write
from memls.core.gitfacade import Git
from memls.core.ops.bundle import approve_bundle
from memls.core.ops.checkpoint import clear_checkpoint, save_checkpoint
from memls.core.ops.handoff import write_handoff
from memls.core.ops.index import migrate_index
from memls.core.ops.log import append_log
from memls.core.snapshot import read_item, ref_commit, restore_snapshot, save_snapshot
from memls.core.workspace import Workspace

NOW = dt.datetime(2026, 11, 30, 12, 0)
EXAMPLES = 25
CHAOS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# A line of arbitrary bytes that stays a plain paragraph line: it starts with a marker (so
# it never opens a heading, fence, list or HTML block) and holds no line break; inside it,
# anything goes — bytes that are not UTF-8, NUL, a lone CR, form feeds, U+2028, controls.
_ODD = st.sampled_from(
    [b"\xe9", b"\xff\xfe", b"\xc3", b"\x00", b"\r", b"\x0b\x0c", b"\xe2\x80\xa8", b"\x1c"]
)
_CHUNK = st.one_of(st.binary(max_size=12), _ODD)
JUNK = st.lists(_CHUNK, min_size=1, max_size=8).map(
    lambda parts: b"note: " + b"".join(parts).replace(b"\n", b"").rstrip(b"\r") + b"."
)
EOL = st.sampled_from([b"\n", b"\r\n"])


@contextmanager
def fresh_root() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="memls-chaos-") as tmp:
        yield Path(tmp).resolve()


def no_temp_files(root: Path) -> None:
    assert not list(root.rglob(f"{TEMP_PREFIX}*")), "a temp file was left behind"


def index_bytes(eol: bytes, head: bytes, tail: bytes, bullets: list[bytes]) -> bytes:
    """MEMORY.md: a title and an odd note, the Active Checkpoints section, an odd section."""
    lines = [b"# Memory", b"", head, b"", b"## Active Checkpoints", *bullets, b""]
    lines += [b"## Notes", tail, b""]
    return eol.join(lines)


def split_index(data: bytes, eol: bytes) -> tuple[bytes, bytes]:
    """The bytes before the Active Checkpoints heading and from the Notes heading on."""
    start = data.index(b"## Active Checkpoints")
    end = data.index(eol + b"## Notes" + eol)
    return data[:start], data[end:]


# -- checkpoint save / clear: MEMORY.md outside its section, the checkpoint's kept text ----
@CHAOS
@given(eol=EOL, head=JUNK, tail=JUNK, kept=st.lists(JUNK, min_size=1, max_size=4), pre=JUNK)
def test_checkpoint_save_and_clear_keep_bytes_they_do_not_own(
    eol: bytes, head: bytes, tail: bytes, kept: list[bytes], pre: bytes
) -> None:
    with fresh_root() as root:
        index = root / "MEMORY.md"
        index.write_bytes(index_bytes(eol, head, tail, [b"- **old** (x, Nov 01 10:00) - old"]))
        (root / "checkpoint-old.md").write_bytes(b"# Checkpoint: old\n")
        cp = root / "checkpoint-keep.md"
        body = eol.join([b"# Checkpoint: keep", b"", pre, b"", b"## Notes", *kept, b""])
        cp.write_bytes(b"\xef\xbb\xbf" + body)
        before_prefix, before_suffix = split_index(index.read_bytes(), eol)

        save_checkpoint(root, "keep", next_action="Next", now=NOW, git=Git(root))
        new_cp = cp.read_bytes()
        assert new_cp.startswith(b"\xef\xbb\xbf# Checkpoint: keep")  # the BOM stays
        for line in [pre, *kept]:
            assert line in new_cp, f"{line!r} was changed"
        assert eol.join([b"## Notes", *kept]) in new_cp.replace(b"\r\n", eol)
        after = index.read_bytes()
        assert after.startswith(before_prefix)
        assert after.endswith(before_suffix)

        clear_checkpoint(root, "old")
        after = index.read_bytes()
        assert after.startswith(before_prefix)
        assert after.endswith(before_suffix)
        assert cp.read_bytes() == new_cp
        no_temp_files(root)


# -- log append: the old file is an exact prefix, whatever it holds -----------------------
@CHAOS
@given(old=st.binary(max_size=300), title=st.from_regex(r"[A-Za-z][\w .é-]{0,30}", fullmatch=True))
def test_log_append_keeps_every_old_byte(old: bytes, title: str) -> None:
    with fresh_root() as root:
        log = root / "LOG.md"
        log.write_bytes(old)
        append_log(root, title, "did things", now=NOW)
        new = log.read_bytes()
        assert new.startswith(old)
        assert title.strip().encode() in new[len(old) :]  # the heading's title, trimmed
        no_temp_files(root)


# -- bundle approve: only the bundle's own lines change ------------------------------------
@CHAOS
@given(eol=EOL, before=JUNK, after=JUNK, item=JUNK)
def test_bundle_approve_changes_only_the_bundle(
    eol: bytes, before: bytes, after: bytes, item: bytes
) -> None:
    with fresh_root() as root:
        path = root / "checkpoint-b.md"
        head = eol.join([b"# Checkpoint: b", b"", before, b"", b"## Checkpoint Bundle", b""])
        bundle = eol.join(
            [
                b"### 1. Memory",
                b"- [ ] " + item,
                b"### 2. Index",
                b"- [ ] index",
                b"### 3. Log",
                b"- [ ] log",
                b"### 4. Transcript",
                b"- [ ] transcript",
                b"### 5. Recall",
                b"- [ ] recall",
                b"",
            ]
        )
        tail = eol.join([b"## After", after, b""])
        path.write_bytes(head + bundle + tail)
        approve_bundle(root, path, now=NOW)
        new = path.read_bytes()
        assert new.startswith(head)
        assert new.endswith(tail)
        assert b"- [x] " + item in new
        assert b"Approved: 2026-11-30 12:00" in new
        no_temp_files(root)


# -- handoff refresh: the author's text stays ----------------------------------------------
@CHAOS
@given(eol=EOL, mine=st.lists(JUNK, min_size=1, max_size=3))
def test_handoff_refresh_keeps_the_authors_bytes(eol: bytes, mine: list[bytes]) -> None:
    with fresh_root() as root:
        (root / "MEMORY.md").write_bytes(b"# Memory\n")
        write_handoff(root, now=NOW, git=Git(root))
        path = root / ".handoff.md"
        text = path.read_bytes().replace(b"\n", eol)
        marker = eol + b"## " + text.split(eol + b"## ")[1].split(eol)[0] + eol
        mixed = text.replace(marker, marker + eol.join(mine) + eol, 1)
        path.write_bytes(mixed)
        write_handoff(root, refresh=True, now=NOW, git=Git(root))
        new = path.read_bytes()
        for line in mine:
            assert line in new, f"{line!r} was changed"
        no_temp_files(root)


# -- index migrate: non-legacy sections stay, legacy text moves unchanged ------------------
@CHAOS
@given(eol=EOL, keep=JUNK, moved=JUNK)
def test_index_migrate_keeps_and_moves_bytes(eol: bytes, keep: bytes, moved: bytes) -> None:
    with fresh_root() as root:
        index = root / "MEMORY.md"
        start = eol.join([b"# Memory", b"", b"## Stable", keep, b""])
        index.write_bytes(start + eol.join([b"## Current State", moved, b""]))
        migrate_index(root, "moved", now=NOW, git=Git(root))
        out = index.read_bytes()
        assert out.startswith(b"# Memory" + eol)
        assert eol.join([b"## Stable", keep, b""]) in out  # the bullet section goes above it
        assert b"## Current State" not in out
        assert moved in (root / "checkpoint-moved.md").read_bytes()
        no_temp_files(root)


# -- check --fix: the fix is applied, every other byte stays -------------------------------
@CHAOS
@given(eol=EOL, head=JUNK, tail=JUNK, bom=st.booleans())
def test_check_fix_keeps_every_byte_it_does_not_fix(
    eol: bytes, head: bytes, tail: bytes, bom: bool
) -> None:
    with fresh_root() as root:
        save_checkpoint(root, "t", next_action="Go", now=NOW, git=Git(root))
        index = root / "MEMORY.md"
        original = (b"\xef\xbb\xbf" if bom else b"") + eol.join(
            [b"# Memory", b"", head, b"", b"## Notes", tail, b""]
        )
        index.write_bytes(original)  # the bullet for "t" is missing: IX003 has a fix
        ws = Workspace(root)
        new, applied = fix_file(ws, index, NOW)
        assert new is not None
        if applied:
            atomic_write(index, new, root=root)
        out = index.read_bytes()
        assert out.startswith(original[: original.index(b"# Memory") + len(b"# Memory")])
        rest = original[original.index(b"# Memory") + len(b"# Memory") :]
        assert out.endswith(rest), "bytes after the inserted section changed"
        assert out.count(b"\xef\xbf\xbd") == original.count(b"\xef\xbf\xbd")
        no_temp_files(root)


# -- snapshot save / restore: exact bytes, or a refusal that changes nothing ---------------
def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, capture_output=True, check=True, text=True
    ).stdout.strip()


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(max_size=400))
def test_snapshot_save_and_restore_keep_exact_bytes_or_refuse(data: bytes) -> None:
    with fresh_root() as root:
        _git(root, "init", "-q")
        item = root / "notes.md"
        item.write_bytes(data)
        result = save_snapshot(root, initial=True, paths=["notes.md"])
        if result.status != "saved":
            assert result.status == "invalid"
            assert ref_commit(root, result.ref or "refs/memls/x") is None
            assert item.read_bytes() == data
            return
        assert result.commit is not None
        assert read_item(root, result.commit, "notes.md") == data
        out = root / "restored"
        restore_snapshot(root, result.commit, to=out)
        assert (out / "notes.md").read_bytes() == data
        assert _git(root, "status", "--porcelain", "--untracked-files=no") == ""
        no_temp_files(root)
