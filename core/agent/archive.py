"""Archive a session transcript into the memory root, copying only the new tail.

Claude Code deletes session transcripts after 30 days by default, and compaction
summarises them away from the agent. The archive is ``<root>/transcripts/<same name>``.
It only ever grows: the bytes already archived are never rewritten. Each run appends the
source's complete lines past the archive's length, after checking that the archive still
is a prefix of the source (a guard over the last few KB before that offset). A kill in the
middle of an append leaves a prefix of the source, which the next run simply continues.

The archive is private: the folder is 0700 (tightened when it is the user's already), each
file 0600, and neither is ever written through a symlink (refused with
:class:`~memls.core.fsutil.UnsafeStateError`). It stays in ``transcripts/`` — where recall
reads transcripts (``workspace.transcript_files``) and what the stored chunk paths name —
and out of git: unless git already ignores it, ``transcripts/.gitignore`` is written when
missing, ignoring ``*.jsonl``, the compaction summaries kept beside them
(``*.compact-*.md``, :mod:`.summary`) and itself, so a handoff kept there stays visible.
"""

from __future__ import annotations

import os
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from memls.core.fsutil import (
    O_BINARY,
    O_CLOEXEC,
    O_NONBLOCK,
    UnsafePathError,
    check_relative,
    create_private,
    open_private,
    pread,
    private_dir,
    refuse_link,
    root_lock,
    set_blocking,
)

ARCHIVE_DIR = "transcripts"
ARCHIVE_IGNORE = (
    "# Written by memls: archived session transcripts are private and stay out of git.\n"
    "# memls writes this file only when it is missing; edit it to change what is ignored.\n"
    "*.jsonl\n"
    "*.compact-*.md\n"
    ".gitignore\n"
)
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
    """Where ``transcript`` is archived: ``<root>/transcripts/<its file name>`` (the folder
    and the file are checked when written)."""
    name = check_relative(transcript.name, "transcript file name")
    if not name.endswith(".jsonl") or "/" in name:
        raise UnsafePathError(f"transcript {transcript.name!r} is not a .jsonl file name")
    return root / ARCHIVE_DIR / name


def archive_transcript(root: Path, transcript: Path) -> ArchiveResult:
    """Append the complete lines of ``transcript`` that the archive does not hold yet."""
    root = root.resolve()
    source = Path(transcript).expanduser()
    if not source.is_file():
        raise ArchiveError(f"transcript {source} does not exist or is not a file")
    dest = archive_path(root, source)
    if not dest.is_symlink() and source.resolve() == dest.resolve():
        return ArchiveResult(dest, 0, 0, False, source.stat().st_size)  # it is the archive
    with root_lock(root):
        private_dir(dest.parent)
        fd = _open_archive(dest)
        try:
            have = os.fstat(fd).st_size if fd is not None else 0
            with _open_source(source) as src:
                length = os.fstat(src.fileno()).st_size
                if length < have:
                    raise ArchiveError(
                        f"{source.name} is shorter than its archive ({length} < {have} bytes): "
                        "the session file was rewritten; the archive is kept as it is"
                    )
                if fd is not None and have and not _same_tail(src.fileno(), fd, have):
                    raise ArchiveError(
                        f"{source.name} no longer starts with what {dest.name} holds: the "
                        "session file was rewritten; the archive is kept as it is"
                    )
                end = _last_newline(src.fileno(), have, length)
                if fd is not None or end > have:
                    keep_out_of_git(dest.parent, dest.name)
                if end <= have:
                    return ArchiveResult(dest, 0, 0, False, have)
                created = fd is None
                fd = fd if fd is not None else _create_archive(dest)
                lines = _append(src.fileno(), fd, have, end)
        finally:
            if fd is not None:
                os.close(fd)
    return ArchiveResult(dest, end - have, lines, created, end)


def _open_source(source: Path) -> BinaryIO:
    """The session file for reading, opened non-blocking (a FIFO put there after the
    ``is_file`` check does not hang the hook) and refused unless it is a regular file."""
    try:
        fd = os.open(source, os.O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_BINARY)
    except OSError as exc:
        raise ArchiveError(f"transcript {source} cannot be read ({exc.strerror})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ArchiveError(f"transcript {source} is not a regular file; nothing archived")
        set_blocking(fd)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _open_archive(dest: Path) -> int | None:
    """The archive file for appending (never through a link; tightened to 0600), or None
    when it is not there yet."""
    try:
        return open_private(dest, os.O_RDWR | os.O_APPEND)
    except FileNotFoundError:
        return None


def _create_archive(dest: Path) -> int:
    """A new archive file (0600, ``O_EXCL``: nothing, not even a dangling link, is there)."""
    return open_private(dest, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_EXCL)


def keep_out_of_git(folder: Path, name: str) -> bool:
    """Write ``folder/.gitignore`` (``*.jsonl`` and itself) unless one is there or git
    already ignores ``folder/name``; True when it was written. A link there is refused
    (:class:`~memls.core.fsutil.UnsafeStateError`)."""
    ignore = folder / ".gitignore"
    if refuse_link(ignore) is not None or _git_ignores(folder, name):
        return False
    return create_private(ignore, ARCHIVE_IGNORE.encode("utf-8"))


def _git_ignores(folder: Path, name: str) -> bool:
    """Whether git ignores ``folder/name`` (False outside a repository or without git)."""
    try:
        proc = subprocess.run(
            ["git", "check-ignore", "-q", "--no-index", "--", name],
            cwd=folder,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
            timeout=2,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0


def _same_tail(src: int, dest: int, have: int) -> bool:
    start = max(0, have - _GUARD)
    return pread(src, have - start, start) == pread(dest, have - start, start)


def _last_newline(src: int, start: int, length: int) -> int:
    """The offset just past the last ``\\n`` in ``[start, length)``, or ``start`` if none."""
    pos = length
    while pos > start:
        begin = max(start, pos - _BLOCK)
        block = pread(src, pos - begin, begin)
        at = block.rfind(b"\n")
        if at >= 0:
            return begin + at + 1
        pos = begin
    return start


def _append(src: int, dest: int, start: int, end: int) -> int:
    lines = 0
    offset = start
    while offset < end:
        block = pread(src, min(_BLOCK, end - offset), offset)
        if not block:
            break
        lines += block.count(b"\n")
        view = memoryview(block)
        while view:
            view = view[os.write(dest, view) :]
        offset += len(block)
    os.fsync(dest)
    return lines
