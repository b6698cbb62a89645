"""Keep a compaction summary: a LOG entry, and the handoff's Current State when it is stale.

Claude Code's PostCompact hook carries the summary the compaction wrote. memls keeps those
words next to the transcript they came from: appended to LOG.md under a fixed title
(append-only, like every LOG entry), and — when the handoff is older than the session's
transcript (or missing) — copied into the handoff's Current State, between markers of its
own so the next summary replaces it and the author's text around it stays. A summary can
quote what the session saw, keys included: both copies are of the summary with every secret
value replaced by ``[redacted KIND]`` (:func:`memls.core.secrets.redact`; fingerprints in
``allow_secrets`` mark known fakes, which stay).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from memls.core.fsutil import atomic_write, root_lock
from memls.core.gitfacade import Git
from memls.core.ops._text import Lines, encode, now_minute, read_text, saved_stamp

SUMMARY_TITLE = "Compaction summary"
BLOCK_START = "<!-- memls:compact-summary — replaced by the next compaction's summary -->"
BLOCK_END = "<!-- /memls:compact-summary -->"
_START_RE = re.compile(r"^\s*<!--\s*memls:compact-summary\b")
_END_RE = re.compile(r"^\s*<!--\s*/memls:compact-summary\s*-->")
_HEADING = re.compile(r"^(#{1,2})(?=\s|$)")
HANDOFF_LINES = 40
HANDOFF_CHARS = 4000


def redacted_summary(root: Path, summary: str) -> str:
    """``summary`` with its secrets redacted, keeping the root's ``allow_secrets`` fakes."""
    from memls.core.config import ConfigError, load_config
    from memls.core.secrets import redact

    try:
        allowed = frozenset(load_config(root).allow_secrets)
    except (ConfigError, OSError):  # the writers refuse such a root; redact everything
        allowed = frozenset()
    return redact(summary, allowed)


@dataclass(frozen=True)
class KeptSummary:
    log_heading: str
    handoff: Path | None  # the handoff written, None when it was current and left alone
    message: str


def log_body(summary: str, session_id: str | None, trigger: str | None) -> str:
    """The LOG entry's body: where the summary came from, then its text.

    Top-level headings inside the summary would split the entry, so ``#``/``##`` lines
    become ``###``; control characters other than tab are dropped.
    """
    clean = "".join(ch for ch in summary if ch in "\t\n" or (ord(ch) >= 32 and ch != "\x7f"))
    lines = [_HEADING.sub("###", ln) for ln in clean.replace("\r\n", "\n").split("\n")]
    origin = []
    if session_id:
        origin.append(f"session `{session_id}`")
    if trigger:
        origin.append(f"{trigger} compaction")
    head = [f"_From Claude Code's PostCompact hook ({', '.join(origin)})._", ""] if origin else []
    return "\n".join([*head, *lines]).strip("\n")


def handoff_is_stale(handoff: Path, transcript: Path | None) -> bool:
    """Missing, or older than the session transcript (or no transcript to compare with)."""
    try:
        written = handoff.stat().st_mtime
    except OSError:
        return True
    if transcript is None:
        return True
    try:
        return written < transcript.stat().st_mtime
    except OSError:
        return True


def _quoted(summary: str, stamp: str, where: str) -> list[str]:
    lines = [ln.rstrip() for ln in summary.strip().replace("\r\n", "\n").split("\n")]
    cut = False
    if len(lines) > HANDOFF_LINES:
        lines, cut = lines[:HANDOFF_LINES], True
    text: list[str] = []
    size = 0
    for ln in lines:
        if size + len(ln) > HANDOFF_CHARS:
            cut = True
            break
        text.append(ln)
        size += len(ln) + 1
    out = [BLOCK_START, f"- Compaction summary ({stamp}):", ""]
    out += [f"> {ln}" if ln else ">" for ln in text]
    if cut:
        out += [">", f"> … (the whole summary is in {where})"]
    return [*out, BLOCK_END]


def put_in_current_state(root: Path, handoff: Path, block: list[str]) -> bool:
    """Replace (or insert) the summary block in the handoff's Current State section."""
    from memls.core.handoff import find_handoff_section

    with root_lock(root):
        old = read_text(handoff)
        if old is None:
            return False
        lines = Lines(old)
        doc = lines.doc(handoff)
        section = find_handoff_section(doc, "Current State")
        if section is None:
            at = len(lines.raw) - 1 if lines.raw[-1] == "" else len(lines.raw)
            lines.replace(at, at, ["", "## Current State", "", *block])
        else:
            rng = range(section.body_start, section.end_line)
            start = next((ln for ln in rng if _START_RE.match(doc.lines[ln])), None)
            end = (
                next(
                    (ln for ln in range(start, section.end_line) if _END_RE.match(doc.lines[ln])),
                    None,
                )
                if start is not None
                else None
            )
            if start is not None and end is not None:
                lines.replace(start, end + 1, block)
            else:
                at = section.end_line
                while at > section.body_start and not doc.lines[at - 1].strip():
                    at -= 1
                lines.replace(at, at, ["", *block])
        return atomic_write(handoff, encode(lines.text()), root=root)


def keep_summary(
    root: Path,
    summary: str,
    *,
    session_id: str | None = None,
    trigger: str | None = None,
    transcript: Path | None = None,
    git: Git | None = None,
) -> KeptSummary:
    """Append the summary, redacted, to LOG.md; copy it into a stale handoff's Current State."""
    from memls.core.ops.handoff import handoff_path, write_handoff
    from memls.core.ops.log import append_log

    root = root.resolve()
    summary = redacted_summary(root, summary)
    result = append_log(root, SUMMARY_TITLE, log_body(summary, session_id, trigger))
    heading = str(result.data["heading"])
    handoff = handoff_path(root)
    if not handoff_is_stale(handoff, transcript):
        return KeptSummary(heading, None, f"{result.message}; the handoff is current.")
    if not handoff.exists():
        write_handoff(root, refresh=True, git=git)
        handoff = handoff_path(root)
    stamp = saved_stamp(now_minute(None))
    where = f"LOG.md under `{heading}`"
    put_in_current_state(root, handoff, _quoted(summary, stamp, where))
    rel = handoff.relative_to(root).as_posix()
    return KeptSummary(heading, handoff, f"{result.message}; copied into {rel} (Current State).")
