"""Keep a compaction summary: archived once, a short LOG entry pointing at it.

Claude Code's PostCompact hook carries the summary the compaction wrote (its
``<analysis>`` scratch work first, the summary in ``<summary>`` tags). memls keeps the
summary — the analysis dropped, the tags taken off, every secret value replaced by
``[redacted KIND]`` (:func:`memls.core.secrets.redact`; fingerprints in ``allow_secrets``
mark known fakes, which stay) — in ``transcripts/<session>.compact-<digest>.md`` beside the
archived session (private like the archive: 0600, git-ignored) and appends a short LOG.md
entry that says where it is. The digest is of the kept text: the same summary delivered
again is kept once and logged once. The summary text is not copied into memory files
(LOG.md, the handoff), so recall finds it once — in the session transcript, where Claude
Code writes it too. A handoff older than the session gets a pointer to it in its Current
State, between markers of its own so the next compaction's pointer replaces it.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from memls.core.formats.checkpoint import saved_stamp
from memls.core.fsutil import atomic_write, create_private, private_dir, root_lock
from memls.core.gitfacade import Git
from memls.core.ops._text import now_minute, read_text
from memls.core.text import Lines, encode_lossless

SUMMARY_TITLE = "Compaction summary"
BLOCK_START = "<!-- memls:compact-summary — replaced by the next compaction's summary -->"
BLOCK_END = "<!-- /memls:compact-summary -->"
_START_RE = re.compile(r"^\s*<!--\s*memls:compact-summary\b")
_END_RE = re.compile(r"^\s*<!--\s*/memls:compact-summary\s*-->")
_ANALYSIS = re.compile(r"<analysis>.*?(?:</analysis>|\Z)", re.S | re.I)
_SUMMARY = re.compile(r"<summary>(.*?)(?:</summary>|\Z)", re.S | re.I)
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def redacted_summary(root: Path, summary: str) -> str:
    """``summary`` with its secrets redacted, keeping the root's ``allow_secrets`` fakes."""
    from memls.core.config import ConfigError, load_config
    from memls.core.secrets import redact

    try:
        allowed = frozenset(load_config(root).allow_secrets)
    except (ConfigError, OSError):  # the writers refuse such a root; redact everything
        allowed = frozenset()
    return redact(summary, allowed)


def clean_summary(summary: str) -> str:
    """The summary without its ``<analysis>`` block and ``<summary>`` tags, control
    characters (other than tab and newline) dropped, line ends ``\\n``."""
    text = summary.replace("\r\n", "\n")
    text = "".join(ch for ch in text if ch in "\t\n" or (ord(ch) >= 32 and ch != "\x7f"))
    inner = _SUMMARY.findall(text)
    text = "\n\n".join(p.strip("\n") for p in inner) if inner else _ANALYSIS.sub("", text)
    text = re.sub(r"</?(?:analysis|summary)>", "", text, flags=re.I)
    return text.strip()


def archive_name(session_id: str | None, text: str) -> str:
    """``<session>.compact-<12 hex digits of the text's SHA-256>.md``."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    session = _SAFE.sub("-", session_id or "").strip(".-")[:80] or "session"
    return f"{session}.compact-{digest}.md"


@dataclass(frozen=True)
class KeptSummary:
    archive: Path
    log_heading: str | None  # None: this summary was kept before, nothing new logged
    handoff: Path | None  # the handoff given the pointer, None when current or absent
    message: str


def handoff_is_stale(handoff: Path, transcript: Path | None) -> bool:
    """Older than the session transcript (or no transcript to compare with)."""
    try:
        written = handoff.stat().st_mtime
    except OSError:
        return False
    if transcript is None:
        return True
    try:
        return written < transcript.stat().st_mtime
    except OSError:
        return True


def _archive_text(text: str, session_id: str | None, trigger: str | None, stamp: str) -> str:
    head = ["# Compaction summary", ""]
    if session_id:
        head.append(f"- **Session:** `{session_id}`")
    if trigger:
        head.append(f"- **Trigger:** {trigger}")
    head += [f"- **Kept:** {stamp}", ""]
    return "\n".join([*head, text, ""])


def log_body(rel: str, chars: int, session_id: str | None, trigger: str | None) -> str:
    """The LOG entry: where the summary came from and where it is kept (no summary text)."""
    origin = []
    if session_id:
        origin.append(f"session `{session_id}`")
    if trigger:
        origin.append(f"{trigger} compaction")
    where = f" ({', '.join(origin)})" if origin else ""
    return f"Claude Code compacted the session{where}; the summary ({chars:,} characters) is in `{rel}`."


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
        return atomic_write(handoff, encode_lossless(lines.text()), root=root)


def _already_logged(root: Path, rel: str) -> bool:
    log = read_text(root / "LOG.md") if (root / "LOG.md").is_file() else None
    return log is not None and f"`{rel}`" in log


def keep_summary(
    root: Path,
    summary: str,
    *,
    session_id: str | None = None,
    trigger: str | None = None,
    transcript: Path | None = None,
    git: Git | None = None,
) -> KeptSummary:
    """Archive the summary (cleaned, redacted) once; log it once; point a stale handoff at it."""
    from memls.core.agent.archive import ARCHIVE_DIR, keep_out_of_git
    from memls.core.ops.handoff import handoff_path
    from memls.core.ops.log import append_log

    root = root.resolve()
    text = redacted_summary(root, clean_summary(summary))
    if not text:
        raise ValueError("the compaction summary is empty once its <analysis> part is removed")
    name = archive_name(session_id, text)
    rel = f"{ARCHIVE_DIR}/{name}"
    stamp = saved_stamp(now_minute(None))
    folder = root / ARCHIVE_DIR
    with root_lock(root):
        private_dir(folder)
        keep_out_of_git(folder, name)
        created = create_private(
            folder / name, _archive_text(text, session_id, trigger, stamp).encode("utf-8")
        )
    if not created or _already_logged(root, rel):
        return KeptSummary(
            folder / name, None, None, f"This compaction summary is already kept in {rel}."
        )
    result = append_log(root, SUMMARY_TITLE, log_body(rel, len(text), session_id, trigger))
    heading = str(result.data["heading"])
    handoff = handoff_path(root)
    if not handoff.is_file() or not handoff_is_stale(handoff, transcript):
        return KeptSummary(folder / name, heading, None, f"{result.message}; summary in {rel}.")
    link = os.path.relpath(folder / name, handoff.parent)
    block = [BLOCK_START, f"- Compaction summary ({stamp}): `{link}`", BLOCK_END]
    put_in_current_state(root, handoff, block)
    where = handoff.relative_to(root).as_posix()
    return KeptSummary(
        folder / name, heading, handoff, f"{result.message}; summary in {rel}; pointer in {where}."
    )
