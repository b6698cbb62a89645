"""Archive a session transcript into the memory root, copying only the new tail.

Claude Code deletes session transcripts after 30 days by default, and compaction
summarises them away from the agent. The archive is ``<root>/transcripts/<same name>``.
It only ever grows: the bytes already archived are never rewritten. Each run appends the
source's complete lines past the archive's length, after checking that the archive still
is a prefix of the source (a guard over the last few KB before that offset). A kill in the
middle of an append leaves a prefix of the source, which the next run simply continues.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from memls.core.fsutil import UnsafePathError, check_relative, root_lock, safe_join

ARCHIVE_DIR = "transcripts"
_GUARD = 4096
_BLOCK = 1 << 20


class ArchiveError(Exception):
    """The transcript could not be archived; the message says why (nothing was written)."""


@dataclass(frozen=True)
class ArchiveResult:
    path: Path  # the archive file
    appended_bytes: int
    appended_lines: int
    created: bool
    total_bytes: int

    @property
    def changed(self) -> bool:
        return self.appended_bytes > 0


def archive_path(root: Path, transcript: Path) -> Path:
    """Where ``transcript`` is archived: ``<root>/transcripts/<its file name>``."""
    name = check_relative(transcript.name, "transcript file name")
    if not name.endswith(".jsonl") or "/" in name:
        raise UnsafePathError(f"transcript {transcript.name!r} is not a .jsonl file name")
    return safe_join(root, f"{ARCHIVE_DIR}/{name}", "transcript archive")


def archive_transcript(root: Path, transcript: Path) -> ArchiveResult:
    """Append the complete lines of ``transcript`` that the archive does not hold yet."""
    root = root.resolve()
    source = Path(transcript).expanduser()
    if not source.is_file():
        raise ArchiveError(f"transcript {source} does not exist or is not a file")
    dest = archive_path(root, source)
    if source.resolve() == dest.resolve():
        return ArchiveResult(dest, 0, 0, False, source.stat().st_size)  # it is the archive
    with root_lock(root):
        dest.parent.mkdir(exist_ok=True)
        if dest.is_symlink() or dest.parent.is_symlink():
            raise UnsafePathError(
                f"{dest} is a symlink; memls does not write through links — replace it"
            )
        have = dest.stat().st_size if dest.exists() else 0
        with source.open("rb") as src:
            length = os.fstat(src.fileno()).st_size
            if length < have:
                raise ArchiveError(
                    f"{source.name} is shorter than its archive ({length} < {have} bytes): "
                    "the session file was rewritten; the archive is kept as it is"
                )
            if have and not _same_tail(src, dest, have):
                raise ArchiveError(
                    f"{source.name} no longer starts with what {dest.name} holds: the session "
                    "file was rewritten; the archive is kept as it is"
                )
            end = _last_newline(src, have, length)
            if end <= have:
                return ArchiveResult(dest, 0, 0, False, have)
            created = have == 0 and not dest.exists()
            lines = _append(src, dest, have, end)
    return ArchiveResult(dest, end - have, lines, created, end)


def _same_tail(src: BinaryIO, dest: Path, have: int) -> bool:
    start = max(0, have - _GUARD)
    with dest.open("rb") as archived:
        archived.seek(start)
        mine = archived.read(have - start)
    src.seek(start)
    return src.read(have - start) == mine


def _last_newline(src: BinaryIO, start: int, length: int) -> int:
    """The offset just past the last ``\\n`` in ``[start, length)``, or ``start`` if none."""
    pos = length
    while pos > start:
        begin = max(start, pos - _BLOCK)
        src.seek(begin)
        block = src.read(pos - begin)
        at = block.rfind(b"\n")
        if at >= 0:
            return begin + at + 1
        pos = begin
    return start


def _append(src: BinaryIO, dest: Path, start: int, end: int) -> int:
    lines = 0
    fd = os.open(dest, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        src.seek(start)
        left = end - start
        while left:
            block = src.read(min(_BLOCK, left))
            if not block:
                break
            lines += block.count(b"\n")
            view = memoryview(block)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            left -= len(block)
        os.fsync(fd)
    finally:
        os.close(fd)
    return lines
