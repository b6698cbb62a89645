"""The writers on invalid UTF-8 at *every* position (issue 21): the operations that edit
memory in place — the move behind ``memls mv``, the conversion behind ``memls checkpoint
import``, the fixes behind ``memls check --fix`` — called in-process (the CLI calls these
same functions; ``test_invalid_utf8_writers.py`` runs the CLI itself on a sample of places)
with a truncated sequence or a lone ``\\xff`` inserted at each byte offset of each line
that the operation does not edit. The bytes survive with their neighbours, and the file
without them is byte for byte what the operation makes of the clean file."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

from memls.core.fixes import fix_file
from memls.core.ops.checkpoint import save_checkpoint
from memls.core.ops.importer import import_checkpoints
from memls.core.ops.move import move
from memls.core.workspace import Workspace
from tests.chaos.test_invalid_utf8_writers import (
    _FOREIGN_EDITED,
    FOREIGN,
    INDEX,
    NOTES,
    _mv_root,
    check_survives,
)

NOW = dt.datetime(2026, 11, 30, 12, 0)


def every_position(
    text: bytes, *, skip_lines: tuple[int, ...] = (), avoid: tuple[bytes, ...] = ()
) -> list[int]:
    """Each byte offset of each non-blank line but ``skip_lines``, up to its line ending,
    except: inside or touching an ``avoid`` span (the bytes the operation edits); before the
    space after a heading's ``#`` marker or a list item's marker (the line would no longer
    be a heading or an item, and a different structure asks for a different edit)."""
    banned: set[int] = set()
    for span in avoid:
        at = text.find(span)
        while at >= 0:
            banned.update(range(at - 2, at + len(span) + 3))
            at = text.find(span, at + 1)
    out: list[int] = []
    start = 0
    for number, line in enumerate(text.split(b"\n")[:-1]):
        body = line.rstrip(b"\r")
        if number not in skip_lines and body.strip():
            marked = body.startswith((b"#", b"- ", b"* ", b"1. ", b"2. "))
            first = body.find(b" ") + 2 if marked else 0
            out += [start + i for i in range(first, len(body) + 1)]
        start += len(line) + 1
    return sorted(p for p in set(out) if p not in banned)


def test_move_every_position(tmp_path: Path) -> None:
    count = iter(range(100_000))

    def run(data: bytes) -> bytes:
        root = _mv_root(tmp_path / f"r{next(count)}")
        (root / "notes.md").write_bytes(data)
        move(root, "testing.md", "memory/testing.md")
        assert (root / "memory" / "testing.md").is_file()
        return (root / "notes.md").read_bytes()

    expected = run(NOTES)
    assert expected == NOTES.replace(b"(testing.md)", b"(memory/testing.md)")
    places = every_position(NOTES, avoid=(b"testing.md",))
    assert len(places) > 100
    check_survives(NOTES, expected, run, places)


def test_import_every_position(tmp_path: Path) -> None:
    count = iter(range(100_000))
    name = "checkpoint-2026-03-05-phase-two.md"

    def run(data: bytes) -> bytes:
        root = tmp_path / f"r{next(count)}"
        root.mkdir()
        (root / "MEMORY.md").write_bytes(b"# Memory\n")
        (root / name).write_bytes(data)
        import_checkpoints(root, index=False)
        return (root / name).read_bytes()

    expected = run(FOREIGN)
    assert expected != FOREIGN
    places = every_position(FOREIGN, skip_lines=_FOREIGN_EDITED)
    assert len(places) > 120
    check_survives(FOREIGN, expected, run, places)


def test_check_fix_every_position(tmp_path: Path) -> None:
    template = tmp_path / "template"
    template.mkdir()
    (template / "notes.md").write_bytes(b"# Notes\n\nSome notes.\n")
    save_checkpoint(template, "t", next_action="Go on", now=NOW)  # no bullet: IX003 adds it
    count = iter(range(100_000))

    def run(data: bytes) -> bytes:
        root = tmp_path / f"r{next(count)}"
        shutil.copytree(template, root)
        (root / "MEMORY.md").write_bytes(data)
        fixed, _ = fix_file(Workspace(root), root / "MEMORY.md", NOW)
        assert fixed is not None
        return fixed

    expected = run(INDEX)
    assert b"**t**" in expected
    assert expected != INDEX
    places = every_position(INDEX)
    assert len(places) > 80
    check_survives(INDEX, expected, run, places)
