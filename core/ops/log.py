"""Append an entry to the append-only LOG.md.

Choice: the new file is the old bytes plus the entry, written with ``atomic_write`` under
the root lock (temp file + fsync + rename), after checking that the old bytes are an exact
prefix of what is written and that the file did not change while the entry was built.
Opening in append mode would not be crash-safe (a kill mid-write leaves half an entry);
the rename leaves the old or the new log, and never rewrites a byte that was there.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from memls.core.fsutil import atomic_write, root_lock
from memls.core.ops import OpError, OpResult
from memls.core.ops._text import checked_file, now_minute, require_config, saved_stamp

LOG_NAME = "LOG.md"
LOG_TITLE = "# Log"


def _check_title(title: str) -> str:
    title = title.strip()
    if not title:
        raise OpError("The log entry needs a title (--title).")
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


def append_log(
    root: Path, title: str, body: str = "", *, now: dt.datetime | None = None
) -> OpResult:
    """Append ``## YYYY-MM-DD HH:MM — title`` and the body to LOG.md, never touching what is there."""
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
        entry_lines = [f"## {stamp} — {title}"] + (["", *body_lines] if body_lines else [])
        entry = eol.join(line.encode("utf-8") for line in entry_lines) + eol
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
        f"Appended to LOG.md: ## {stamp} — {title}{created}",
        changed=True,
        paths=(path,),
        data={
            "file": str(path),
            "heading": f"## {stamp} — {title}",
            "offset": len(old) + len(lead),
        },
    )
