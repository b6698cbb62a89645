"""Helpers every writing operation shares: the clock, reading a memory file, the size
limit, the configuration check and the refusal of links and paths outside the root.

The text codec (lossless decoding and encoding, line editing) is :mod:`memls.core.text`;
the formats' names and writers are :mod:`memls.core.formats`.
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
from memls.core.fsutil import O_BINARY, O_CLOEXEC, O_NONBLOCK, UnsafePathError, inside
from memls.core.ops import OpError
from memls.core.parse import MAX_PARSE_CHARS
from memls.core.text import BOM, decode_lossless, encode_lossless
from memls.core.workspace import index_path


def now_minute(now: dt.datetime | None) -> dt.datetime:
    """The clock at minute resolution (what every stamp records), naive local time."""
    current = now if now is not None else dt.datetime.now()
    return current.replace(second=0, microsecond=0)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_text(path: Path) -> str | None:
    """The file's text (lossless: :func:`memls.core.text.encode_lossless` gives its bytes
    back), or None when it does not exist or is not a regular file.

    Opened non-blocking, so a FIFO (or a device) planted where a memory file should be
    never blocks the caller: anything but a regular file reads as absent, and a writer
    then refuses it (:func:`memls.core.fsutil.atomic_write`). A symlink is followed, as
    before: the writers refuse links themselves (:func:`checked_file`) before reading.
    """
    try:
        fd = os.open(path, os.O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_BINARY)
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
    text, bom = decode_lossless(data)  # a BOM is kept, as U+FEFF, and written back
    return BOM + text if bom else text


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
    return f"{len(text):,} characters ({len(encode_lossless(text)):,} bytes)"


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
