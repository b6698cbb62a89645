"""Writers on files holding bytes that are not UTF-8, and on files that are not files (issue 21).

``memls mv``, ``memls checkpoint import`` and ``memls check --fix`` each run on a small
file with an invalid sequence — a truncated one (``\\xe2\\x80``) or a lone ``\\xff`` —
inserted at every line start and at some mid-line positions, outside the spans the
operation edits. Afterwards the invalid bytes and their neighbours are still there, and the
file without them is byte for byte what the same operation makes of the clean file.

Then the reads under the writers: a FIFO planted where a memory file should be reads as
absent and is never written over (nor blocks a hook), and an oversized foreign checkpoint
is refused by ``memls checkpoint import`` and left as it was.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from memls.core.fsutil import UnsafePathError, atomic_write
from memls.core.ops._text import MAX_EDIT_CHARS, read_text
from memls.core.ops.checkpoint import save_checkpoint
from tests.agent_fixtures import make_project, payload, run_hook
from tests.cli_helpers import memls_bytes_on as memls

NOW = dt.datetime(2026, 11, 30, 12, 0)
INVALID = [b"\xe2\x80", b"\xff"]
"""A truncated three-byte sequence and a byte that never starts one."""
NEIGHBOURS = 2
"""Bytes on each side of an insertion (on its line) that must survive with it."""


def positions(
    text: bytes, *, skip_lines: tuple[int, ...] = (), avoid: tuple[bytes, ...] = ()
) -> list[int]:
    """Every line start and two mid-line positions of each line (but ``skip_lines``), none
    within (or touching) an ``avoid`` span — the bytes the operation edits.

    Never where the bytes would change what a line *is*: not in a blank line (it would no
    longer be blank), not before or inside a heading's ``#`` marker (it would no longer be
    a heading) — a different structure asks for a different edit, rightly.
    """
    banned: set[int] = set()
    for span in avoid:
        at = text.find(span)
        while at >= 0:
            banned.update(range(at - NEIGHBOURS, at + len(span) + NEIGHBOURS + 1))
            at = text.find(span, at + 1)
    out: list[int] = []
    start = 0
    for number, line in enumerate(text.split(b"\n")[:-1]):
        body = line.rstrip(b"\r")
        if number not in skip_lines and body.strip():
            if not body.startswith(b"#"):
                out.append(start)
            after_marker = body.find(b" ") + 2
            out += [start + after_marker, start + (after_marker + len(body)) // 2]
        start += len(line) + 1
    return sorted(p for p in set(out) if p not in banned)


def check_survives(
    clean: bytes,
    expected: bytes,
    run: Callable[[bytes], bytes],
    places: list[int],
) -> None:
    """For each invalid sequence at each place: the bytes come out with their neighbours,
    and removing them gives ``expected`` (the operation's output on ``clean``)."""
    assert places
    for bad in INVALID:
        for at in places:
            dirty = clean[:at] + bad + clean[at:]
            out = run(dirty)
            where = f"{bad!r} at {at} ({clean[max(0, at - 12) : at + 12]!r})"
            escaped = out.decode("utf-8", "surrogateescape")  # valid text stays as it is
            odd = bad.decode("utf-8", "surrogateescape")
            assert escaped.count(odd) == 1, where
            i = len(escaped[: escaped.index(odd)].encode("utf-8", "surrogateescape"))
            # Neighbours on the same line (the lines around may be ones the operation edits).
            line_start = clean.rfind(b"\n", 0, at) + 1
            line_end = clean.index(b"\n", at) + 1
            left = clean[max(line_start, at - NEIGHBOURS) : at]
            right = clean[at : min(line_end, at + NEIGHBOURS)]
            assert out[i - len(left) : i] == left, where
            assert out[i + len(bad) : i + len(bad) + len(right)] == right, where
            assert out[:i] + out[i + len(bad) :] == expected, where


# -- memls mv ------------------------------------------------------------------------------
NOTES = (
    b"# Notes\n"
    b"Intro line about the test setup.\n"
    b"\n"
    b"- see [Testing](testing.md) now\n"
    b"- a plain bullet here\r\n"
    b"Closing paragraph of the notes.\n"
)


def _mv_root(base: Path) -> Path:
    root = base / "mem"
    root.mkdir(parents=True)
    (root / "MEMORY.md").write_bytes(b"# Memory\n\n- [Notes](notes.md) - notes\n")
    (root / "testing.md").write_bytes(b"# Testing\n\nRun `pytest -q`.\n")
    return root


def test_mv_keeps_invalid_utf8_and_its_neighbours(tmp_path: Path) -> None:
    count = iter(range(10_000))

    def run(data: bytes) -> bytes:
        root = _mv_root(tmp_path / f"r{next(count)}")
        (root / "notes.md").write_bytes(data)
        done = memls(root, "mv", "testing.md", "memory/testing.md")
        assert done.returncode == 0, done.stderr
        assert (root / "memory" / "testing.md").is_file()
        return (root / "notes.md").read_bytes()

    expected = run(NOTES)
    assert expected == NOTES.replace(b"(testing.md)", b"(memory/testing.md)")
    places = positions(NOTES, avoid=(b"testing.md",))
    assert len(places) > 10
    check_survives(NOTES, expected, run, places)


# -- memls checkpoint import ------------------------------------------------------------------
FOREIGN = (
    b"# Checkpoint: Phase Two Wrap-up\n"
    b"**Date:** 2026-03-05\n"
    b"**Branch:** `feature/phase-two`\n"
    b"Reviewer: Sam\n"
    b"\n"
    b"## Session Summary\n"
    b"Streaming reader landed.\n"
    b"\n"
    b"## What Shipped\n"
    b"- Streaming CSV reader\r\n"
    b"- Schema guess\n"
    b"\n"
    b"## Known Issues\n"
    b"- Quoted newlines are slow.\n"
    b"\n"
    b"## Next Steps\n"
    b"1. Wire the schema guess into the CLI.\n"
    b"2. Write error messages.\n"
)
_FOREIGN_EDITED = (0, 1, 2, 5, 15, 16)
"""Lines the import rewrites: the title, Date and Branch lines, the mapped headings and the
next action's line (its title goes into the new heading). Kept headings are kept."""


def test_import_keeps_invalid_utf8_and_its_neighbours(tmp_path: Path) -> None:
    count = iter(range(10_000))
    name = "checkpoint-2026-03-05-phase-two.md"

    def run(data: bytes) -> bytes:
        root = tmp_path / f"r{next(count)}"
        root.mkdir()
        (root / "MEMORY.md").write_bytes(b"# Memory\n")
        (root / name).write_bytes(data)
        done = memls(root, "checkpoint", "import", "--no-index")
        assert done.returncode == 0, done.stderr
        return (root / name).read_bytes()

    expected = run(FOREIGN)
    assert expected != FOREIGN
    places = positions(FOREIGN, skip_lines=_FOREIGN_EDITED)
    assert len(places) > 20
    check_survives(FOREIGN, expected, run, places)


# -- memls check --fix -------------------------------------------------------------------------
INDEX = (
    b"# Memory\n"
    b"\n"
    b"Intro text about this memory.\n"
    b"\n"
    b"## Notes\n"
    b"- [Notes](notes.md) - where the notes are\r\n"
    b"Closing line of the index.\n"
)


def test_check_fix_keeps_invalid_utf8_and_its_neighbours(tmp_path: Path) -> None:
    count = iter(range(10_000))
    template = tmp_path / "template"
    template.mkdir()
    (template / "notes.md").write_bytes(b"# Notes\n\nSome notes.\n")
    save_checkpoint(
        template, "t", next_action="Go on", now=NOW
    )  # its bullet is missing: IX003 fixes it
    checkpoint = (template / "checkpoint-t.md").read_bytes()

    def run(data: bytes) -> bytes:
        root = tmp_path / f"r{next(count)}"
        shutil.copytree(template, root)
        (root / "MEMORY.md").write_bytes(data)
        memls(root, "check", "--fix", "--exit-zero")
        assert (root / "checkpoint-t.md").read_bytes() == checkpoint
        return (root / "MEMORY.md").read_bytes()

    expected = run(INDEX)
    assert b"**t**" in expected
    assert expected != INDEX
    places = positions(INDEX)
    assert len(places) > 10
    check_survives(INDEX, expected, run, places)


# -- a FIFO where a memory file should be ----------------------------------------------------
def test_read_text_takes_a_fifo_for_absent_and_atomic_write_refuses_it(tmp_path: Path) -> None:
    fifo = tmp_path / "topic.md"
    os.mkfifo(fifo)
    started = time.monotonic()
    assert read_text(fifo) is None
    with pytest.raises(UnsafePathError, match="not a regular file"):
        atomic_write(fifo, "# Topic\n", root=tmp_path)
    assert time.monotonic() - started < 2
    assert fifo.is_fifo()  # not replaced by a file
    link = tmp_path / "link.md"
    link.symlink_to(fifo)
    assert read_text(link) is None
    with pytest.raises(UnsafePathError, match="symlink"):
        atomic_write(link, "# Topic\n", root=tmp_path)
    (tmp_path / "real.md").write_bytes(b"caf\xe2\x80\n")
    assert read_text(tmp_path / "real.md") == "caf\udce2\udc80\n"
    assert atomic_write(tmp_path / "real.md", "caf\udce2\udc80\n", root=tmp_path) is False


def test_a_fifo_at_a_topic_file_does_not_block_session_start(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    (project / "MEMORY.md").write_text(
        "# Memory\n\n- [Auth](topics/auth.md) - how auth works\n", encoding="utf-8"
    )
    (project / "topics").mkdir()
    os.mkfifo(project / "topics" / "auth.md")
    for source in ("startup", "compact"):
        started = time.monotonic()
        proc = run_hook(
            "session-start", payload("SessionStart", project, source=source), cwd=project
        )
        assert time.monotonic() - started < 8
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stderr
    assert (project / "topics" / "auth.md").is_fifo()


def test_checkpoint_save_refuses_a_fifo_as_memory_md(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "MEMORY.md")
    started = time.monotonic()
    done = memls(tmp_path, "checkpoint", "save", "t", "--next", "Go on")
    assert time.monotonic() - started < 8
    assert done.returncode != 0
    assert b"not a regular file" in done.stderr + done.stdout
    assert (tmp_path / "MEMORY.md").is_fifo()


# -- an oversized foreign checkpoint ---------------------------------------------------------
def test_import_refuses_an_oversized_foreign_checkpoint(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_bytes(b"# Memory\n")
    path = tmp_path / "checkpoint-big.md"
    filler = b"- a line of what happened, long enough to fill the file quickly.\n"
    body = filler * (MAX_EDIT_CHARS // len(filler) + 10)
    original = (
        b"# Checkpoint: Big\n**Date:** 2026-03-05\n\n## Next Steps\n1. Go.\n\n## Log\n" + body
    )
    path.write_bytes(original)
    before = (tmp_path / "MEMORY.md").read_bytes()
    done = memls(tmp_path, "checkpoint", "import")
    assert done.returncode == 2, done.stderr
    assert b"limit" in done.stderr
    assert b"Nothing was changed" in done.stderr
    assert path.read_bytes() == original
    assert (tmp_path / "MEMORY.md").read_bytes() == before
