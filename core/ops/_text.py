"""Line-level editing that leaves every untouched byte of a file as it was.

Operations replace whole line ranges (a section) and keep the rest of the text verbatim,
including its line endings: text is split on ``\\n`` only, so a ``\\r`` stays with its line,
and inserted lines take the file's dominant line ending.
"""

from __future__ import annotations

import datetime as dt
import errno
import hashlib
import os
import stat
from pathlib import Path
from typing import TypeGuard

from memls.core.config import load_config
from memls.core.fsutil import UnsafePathError, inside
from memls.core.model import Document
from memls.core.ops import OpError
from memls.core.parse import MAX_PARSE_CHARS, parse_text
from memls.core.rules.index import format_bullet_date
from memls.core.text import dominant_eol
from memls.core.workspace import index_path


def saved_stamp(now: dt.datetime) -> str:
    """``YYYY-MM-DD HH:MM`` — the checkpoint's Saved, the log's and the bundle's dates."""
    return now.strftime("%Y-%m-%d %H:%M")


def bullet_stamp(now: dt.datetime) -> str:
    """``Mon DD HH:MM`` in English whatever the locale, as the index bullet wants."""
    return format_bullet_date(now.month, now.day, now.hour, now.minute)


def now_minute(now: dt.datetime | None) -> dt.datetime:
    """The clock at minute resolution (what every stamp records), naive local time."""
    current = now if now is not None else dt.datetime.now()
    return current.replace(second=0, microsecond=0)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Lines:
    """A text as raw lines (split on ``\\n``) that can be edited by line ranges."""

    def __init__(self, text: str) -> None:
        self.raw = text.split("\n")
        self.eol_cr = dominant_eol(text) == "\r\n"

    def doc(self, path: Path) -> Document:
        return parse_text(self.text(), path)

    def text(self) -> str:
        return "\n".join(self.raw)

    def replace(self, start: int, end: int, new: list[str]) -> None:
        """Replace raw lines ``[start, end)`` with ``new`` (given without line endings)."""
        cr = "\r" if self.eol_cr else ""
        self.raw[start:end] = [line + cr for line in new]

    def plain(self, line: int) -> str:
        raw = self.raw[line]
        return raw[:-1] if raw.endswith("\r") else raw


def read_text(path: Path) -> str | None:
    """The file's text (lenient UTF-8), or None when it does not exist or is not a regular file.

    Opened non-blocking, so a FIFO (or a device) planted where a memory file should be
    never blocks the caller: anything but a regular file reads as absent, and a writer
    then refuses it (:func:`memls.core.fsutil.atomic_write`). A symlink is followed, as
    before: the writers refuse links themselves (:func:`checked_file`) before reading.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket (or a device without its driver)
            return None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise UnsafePathError(f"{path} is a directory, not a file")
        if not stat.S_ISREG(mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read()
    finally:
        os.close(fd)
    return data.decode("utf-8", errors="surrogateescape")


MAX_EDIT_CHARS = MAX_PARSE_CHARS
"""The largest file (in characters) an operation edits or presents.

The parser reads structure from the first ``MAX_PARSE_CHARS`` characters only; an edit
planned on that view would put sections in the wrong place or drop the rest of the file.
Operations refuse (:func:`refuse_oversize`) instead of acting on part of a file."""


def oversize(text: str | None) -> TypeGuard[str]:
    """Whether ``text`` is over :data:`MAX_EDIT_CHARS` (the parser would see part of it)."""
    return text is not None and len(text) > MAX_EDIT_CHARS


def size_text(text: str) -> str:
    """``2,090,000 characters (2,090,123 bytes)``."""
    return f"{len(text):,} characters ({len(encode(text)):,} bytes)"


def refuse_oversize(path: Path, text: str | None, action: str, *, would: bool = False) -> None:
    """Raise OpError when ``text`` (``path``'s content, or ``would``-be content) is too big.

    The message names the file, its size and the limit, and says nothing was changed.
    """
    if text is None or not oversize(text):
        return
    if would:
        why = f"refusing to {action}, as memls could not edit or read it whole afterwards"
        what = f"{path} would be {size_text(text)}"
        fix = "give shorter text"
    else:
        why = f"refusing to {action} from a view of part of it"
        what = f"{path} is {size_text(text)}"
        fix = "split or shorten the file, then run the command again"
    raise OpError(
        f"{what}, over the {MAX_EDIT_CHARS:,}-character limit memls parses: {why}. "
        f"Nothing was changed — {fix}."
    )


def encode(text: str) -> bytes:
    """Inverse of :func:`read_text`: undecodable bytes round-trip unchanged."""
    return text.encode("utf-8", errors="surrogateescape")


def require_config(root: Path) -> None:
    """Refuse (ConfigError naming file and line) when the root's configuration is broken.

    Every writing operation starts here: a broken memls.toml is never silently replaced
    by defaults, whichever front (CLI, language server, MCP, notebook) asked.
    """
    load_config(root)


def checked_file(root: Path, path: Path, what: str) -> Path:
    """Refuse a memory file that is a symlink (memls writes files, never through links)."""
    if path.is_symlink():
        where = "outside" if not inside(root, path) else "inside"
        raise UnsafePathError(
            f"{what} {path} is a symlink to {path.resolve()} ({where} the memory root); "
            "memls does not write through links — replace it with a regular file"
        )
    if not inside(root, path.parent):
        raise UnsafePathError(f"{what} {path} is outside the memory root {root}")
    return path


def memory_index(root: Path) -> Path:
    """The root's MEMORY.md, refused when it is a symlink."""
    return checked_file(root, index_path(root), "MEMORY.md")


def strip_blank_edges(lines: list[str]) -> list[str]:
    start = 0
    end = len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end]
