"""Append an entry to the append-only LOG.md.

Choice: the new file is the old bytes plus the entry, written with ``atomic_write`` under
the root lock (temp file + fsync + rename), after checking that the old bytes are an exact
prefix of what is written and that the file did not change while the entry was built.
Opening in append mode would not be crash-safe (a kill mid-write leaves half an entry);
the rename leaves the old or the new log, and never rewrites a byte that was there.

A log that grows on top (it says "Newest entry on top", "newest first", "reverse
chronological" near the top, or most of its entries descend) gets the entry just above its
newest entry instead: the bytes before that point and the bytes from it on are both kept
exactly, which is what LG001 accepts for such a log.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from memls.core.formats.checkpoint import saved_stamp
from memls.core.formats.log import (
    LOG_NAME,
    LOG_TITLE,
    entry_heading,
    first_entry_line,
    log_order,
)
from memls.core.fsutil import atomic_write, root_lock
from memls.core.ops import OpError, OpResult
from memls.core.ops._text import checked_file, now_minute, require_config


def _check_title(title: str) -> str:
    title = title.strip()
    if not title:
        raise OpError("The log entry needs a title ({title}).", param="title")
    if any(ord(ch) < 32 or ch == "\x7f" for ch in title):
        raise OpError("The log entry title must be one line without control characters.")
    return title


def _check_body(body: str) -> list[str]:
    lines = body.replace("\r\n", "\n").strip("\n").split("\n") if body.strip() else []
    for n, line in enumerate(lines, 1):
        if line.startswith(("# ", "## ")) or line in ("#", "##"):
            raise OpError(
                f"Body line {n} starts a new `#`/`##` heading, which would split the entry: "
                "use `###` inside an entry."
            )
        if "\x00" in line:
            raise OpError(f"Body line {n} contains a NUL byte.")
    return [ln.rstrip() for ln in lines]


def _top_offset(path: Path, old: bytes) -> int | None:
    """The byte offset of the newest entry's heading in a newest-first log, else None."""
    if not old:
        return None
    from memls.core.parse import parse_bytes

    doc = parse_bytes(old, path)
    line = first_entry_line(doc)
    if line is None or not log_order(doc).newest_first:
        return None
    offset = 0
    for _ in range(line):
        nl = old.find(b"\n", offset)
        if nl == -1:
            return None
        offset = nl + 1
    return offset


def _insert_on_top(
    root: Path, path: Path, old: bytes, at: int, block: bytes, stamp: str, title: str
) -> OpResult:
    """Write ``block`` into a newest-first log just above its newest entry (the lock is held)."""
    new = old[:at] + block + old[at:]
    if new[:at] != old[:at] or new[at + len(block) :] != old[at:]:  # every old byte kept
        raise OpError("internal error: the new LOG.md would not keep the old bytes")
    if path.read_bytes() != old:
        raise OpError("LOG.md changed while appending; run the command again.")
    atomic_write(path, new, root=root)
    heading = entry_heading(stamp, title)
    return OpResult(
        f"Added on top of LOG.md (the log is newest first): {heading}",
        changed=True,
        paths=(path,),
        data={"file": str(path), "heading": heading, "offset": at, "top": True},
    )


def append_log(
    root: Path, title: str, body: str = "", *, now: dt.datetime | None = None
) -> OpResult:
    """Add ``## YYYY-MM-DD HH:MM — title`` and the body to LOG.md, never touching what is
    there: at the end, or just above the newest entry in a log that grows on top."""
    root = root.resolve()
    require_config(root)
    title = _check_title(title)
    body_lines = _check_body(body)
    stamp = saved_stamp(now_minute(now))
    path = checked_file(root, root / LOG_NAME, LOG_NAME)
    with root_lock(root):
        try:
            old = path.read_bytes()
        except FileNotFoundError:
            old = b""
        eol = b"\r\n" if b"\r\n" in old else b"\n"
        entry_lines = [entry_heading(stamp, title)] + (["", *body_lines] if body_lines else [])
        entry = eol.join(line.encode("utf-8") for line in entry_lines) + eol
        top = _top_offset(path, old)
        if top is not None:
            return _insert_on_top(root, path, old, top, entry + eol, stamp, title)
        if not old:
            lead = LOG_TITLE.encode() + eol + eol
        elif old.endswith((eol + eol, b"\n\n")):
            lead = b""
        elif old.endswith(b"\n"):
            lead = eol
        else:
            lead = eol + eol
        new = old + lead + entry
        if new[: len(old)] != old:  # the invariant this module exists for
            raise OpError("internal error: the new LOG.md would not keep the old bytes")
        current = path.read_bytes() if path.exists() else b""
        if current != old:
            raise OpError("LOG.md changed while appending; run the command again.")
        atomic_write(path, new, root=root)
    created = " (created LOG.md)" if not old else ""
    return OpResult(
        f"Appended to LOG.md: {entry_heading(stamp, title)}{created}",
        changed=True,
        paths=(path,),
        data={
            "file": str(path),
            "heading": entry_heading(stamp, title),
            "offset": len(old) + len(lead),
        },
    )
