"""Write or refresh ``.handoff.md``: all seven sections pre-filled from the memory's state.

What memls derives (branch, git status, the newest checkpoint's next action and failed
approaches, open bundle items, other checkpoints, the latest LOG entry) sits between
``<!-- memls:auto -->`` markers; ``refresh`` replaces only those blocks and adds missing
sections, so everything the author wrote stays byte for byte. What memls cannot know —
non-claims and risk flags — is left to the author with a prompt line.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from memls.core.bundle import find_bundles
from memls.core.formats.checkpoint import FAILED, read_next_action, saved_stamp
from memls.core.formats.log import newest_entry
from memls.core.fsutil import atomic_write, root_lock
from memls.core.gitfacade import Git
from memls.core.handoff import HANDOFF_SECTIONS, find_handoff_section, find_recent_tail
from memls.core.model import Document
from memls.core.ops import OpError, OpResult
from memls.core.ops._text import (
    MAX_EDIT_CHARS,
    checked_file,
    now_minute,
    oversize,
    read_text,
    refuse_oversize,
    require_config,
    size_text,
)
from memls.core.ops.checkpoint import list_checkpoints, session_status
from memls.core.parse import parse_text
from memls.core.text import Lines, encode_lossless, strip_blank_edges
from memls.core.workspace import memory_files

HANDOFF = ".handoff.md"
_AUTHOR_ONLY = ("Verified Commands", "Non-Claims", "Drift / Risk Flags")
AUTO_START = "<!-- memls:auto — refreshed by `memls handoff refresh`; write outside this block -->"
AUTO_END = "<!-- /memls:auto -->"
_AUTO_START_RE = re.compile(r"^\s*<!--\s*memls:auto\b")
_AUTO_END_RE = re.compile(r"^\s*<!--\s*/memls:auto\s*-->")
_UPDATED = re.compile(r"^\s*-\s+\*\*Updated:\*\*")

PROMPTS: dict[str, str] = {
    "Decisions": "- (author: record the decisions made and why, so they are not reopened)",
    "Open Work": "- (author: add unfinished threads and open questions)",
    "Verified Commands": "- (author: add each command you ran and saw pass, as a code span)",
    "Non-Claims": "- (author: list what was NOT verified or tested)",
    "Drift / Risk Flags": "- (author: list drift from the plan, risks, anything that looks wrong)",
}


def handoff_path(root: Path) -> Path:
    """The existing handoff (root, then ``transcripts/``), else where a new one goes."""
    for candidate in (root / HANDOFF, root / "transcripts" / HANDOFF):
        if candidate.exists() or candidate.is_symlink():
            return checked_file(root, candidate, "handoff")
    if (root / "transcripts").is_dir():
        return root / "transcripts" / HANDOFF
    return root / HANDOFF


def _state(root: Path, now: dt.datetime, git: Git) -> dict[str, list[str]]:
    """The auto lines of each section, from checkpoints, bundles, git and the log."""
    auto: dict[str, list[str]] = {name: [] for name, _ in HANDOFF_SECTIONS}
    branch = git.current_branch()
    current = auto["Current State"]
    current.append(f"- Branch: `{branch}`" if branch else "- Branch: (not in a git repository)")
    infos = list_checkpoints(root, now=now, git=git)
    newest = infos[0] if infos else None
    if newest is not None:
        saved = saved_stamp(newest.saved) if newest.saved else "unknown time"
        current.append(
            f"- Newest checkpoint: `{newest.name}` (branch `{newest.branch}`, saved {saved})"
        )
    else:
        current.append("- No checkpoints saved.")
    status = session_status(git, root.resolve()) if git.is_repo else []
    if status:
        current.append("- Uncommitted changes (`git status --short`):")
        current += [f"  - `{line}`" for line in status]
    elif git.is_repo:
        current.append("- Working tree clean.")

    log = root / "LOG.md"
    log_text = read_text(log) if log.is_file() and not log.is_symlink() else None
    if oversize(log_text):  # its newest entry lies past what the parser reads
        auto["Decisions"].append(f"- LOG.md not read: {_too_big(log_text)}")
    elif log_text is not None:
        entry = newest_entry(parse_text(log_text, log))
        if entry is not None:
            auto["Decisions"].append(f"- Latest LOG.md entry: {entry.title}")

    for path in memory_files(root):
        text = read_text(path)
        if text is None or "heckpoint Bundle" not in text:
            continue
        rel = path.relative_to(root).as_posix()
        if oversize(text):
            auto["Open Work"].append(f"- Bundles in {rel} not read: {_too_big(text)}")
            continue
        doc = parse_text(text, path)
        for bundle in find_bundles(doc):
            auto["Open Work"] += [f"- Bundle ({rel}): {i.text}" for i in bundle.open_items()]
    for info in infos[1:]:
        auto["Open Work"].append(
            f"- Checkpoint `{info.name}`: {info.next_action or 'no next action recorded'}"
        )

    try:
        newest_bytes = newest.path.read_bytes() if newest is not None else None
    except FileNotFoundError:  # cleared by another process since it was listed
        newest_bytes = None
    newest_text = newest_bytes.decode("utf-8", "surrogateescape") if newest_bytes else None
    if newest is not None and oversize(newest_text):
        auto["Next Steps"] += [
            f"- Newest checkpoint `{newest.name}` not read: {_too_big(newest_text)}",
            f"- Resume with: `memls checkpoint resume {newest.name}` once it is shortened",
        ]
    elif newest is not None and newest_text is not None:
        doc = parse_text(newest_text, newest.path)
        next_action = read_next_action(doc)
        nxt = auto["Next Steps"]
        if next_action is not None:
            sec = next_action.section
            nxt.append(f"- {next_action.title or sec.title}")
            nxt += ["  " + ln for ln in strip_blank_edges(doc.body_lines(sec))]
        nxt.append(f"- Resume with: `memls checkpoint resume {newest.name}`")
        nxt += [f"- Do not repeat (failed before): {f}" for f in _failed(doc)]
    return auto


def _too_big(text: str) -> str:
    return f"{size_text(text)}, over the {MAX_EDIT_CHARS:,}-character limit memls parses"


def _redacted(auto: dict[str, list[str]], root: Path) -> dict[str, list[str]]:
    """The auto lines with every secret replaced: the handoff is read by every next agent
    and is often committed, so a key in a checkpoint or a bundle item never travels on."""
    from memls.core.config import load_config
    from memls.core.secrets import redact

    allowed = frozenset(load_config(root).allow_secrets)
    return {name: [redact(line, allowed) for line in lines] for name, lines in auto.items()}


def _failed(doc: Document) -> list[str]:
    sec = doc.section(FAILED)
    if sec is None:
        return []
    return [
        i.text.strip()
        for i in doc.items_in(sec)
        if i.indent == 0 and i.text.strip() and not re.match(r"(?i)none\b", i.text.strip())
    ]


def _block(lines: list[str]) -> list[str]:
    return [AUTO_START, *(lines or ["- (nothing to report)"]), AUTO_END]


def _section(name: str, auto: list[str], carried: list[str]) -> list[str]:
    body = [] if name in _AUTHOR_ONLY else _block(auto)
    if carried:
        body += carried
    elif name in PROMPTS:
        body.append(PROMPTS[name])
    return [f"## {name}", *body, ""]


def write_handoff(
    root: Path,
    *,
    refresh: bool = False,
    now: dt.datetime | None = None,
    git: Git | None = None,
    force: bool = False,
) -> OpResult:
    """``new`` (refuses to replace a handoff unless ``force``) or ``refresh`` (keeps the author's text)."""
    root = root.resolve()
    require_config(root)
    git = git if git is not None else Git(root)
    when = now_minute(now)
    path = handoff_path(root)
    auto = _redacted(_state(root, when, git), root)
    with root_lock(root):
        old = read_text(path)
        refuse_oversize(path, old, "refresh the handoff" if refresh else "replace the handoff")
        if old is not None and not refresh and not force:
            raise OpError(
                f"{path.relative_to(root).as_posix()} exists: `memls handoff refresh` updates it "
                "keeping your text, or use {force} to start over.",
                param="force",
            )
        if old is None or not refresh:
            content = _new(auto, when, _verified(path, old))
            verb = "Wrote"
        else:
            content = _refresh(path, old, auto, when)
            verb = "Refreshed"
        refuse_oversize(path, content, "write the handoff", would=True)
        changed = atomic_write(path, encode_lossless(content), root=root)
    rel = path.relative_to(root).as_posix()
    tail = "" if changed else " (no change)"
    prompts = sum(content.count(p) for p in PROMPTS.values())
    ask = f"; {prompts} section(s) wait for the author" if prompts else ""
    return OpResult(
        f"{verb} {rel}{tail}{ask}.",
        changed=changed,
        paths=(path,) if changed else (),
        data={"file": str(path), "refreshed": refresh and old is not None, "prompts": prompts},
    )


def _verified(path: Path, old: str | None) -> list[str]:
    """The Verified Commands recorded in an existing handoff (carried into a new one)."""
    if old is None:
        return []
    doc = parse_text(old, path)
    sec = find_handoff_section(doc, "Verified Commands")
    if sec is None:
        return []
    body = [ln for ln in strip_blank_edges(doc.body_lines(sec)) if ln not in PROMPTS.values()]
    return _outside_auto(body)


def _outside_auto(lines: list[str]) -> list[str]:
    out: list[str] = []
    inside = False
    for ln in lines:
        if _AUTO_START_RE.match(ln):
            inside = True
        elif _AUTO_END_RE.match(ln):
            inside = False
        elif not inside:
            out.append(ln)
    return strip_blank_edges(out)


def _new(auto: dict[str, list[str]], when: dt.datetime, verified: list[str]) -> str:
    out = ["# Handoff", "", f"- **Updated:** {saved_stamp(when)}", ""]
    for name, _ in HANDOFF_SECTIONS:
        out += _section(name, auto[name], verified if name == "Verified Commands" else [])
    return "\n".join(out)


def _refresh(path: Path, old: str, auto: dict[str, list[str]], when: dt.datetime) -> str:
    lines = Lines(old)
    doc = lines.doc(path)
    edits: list[tuple[int, int, list[str]]] = []  # (start, end, new lines), applied bottom-up
    found = {name: find_handoff_section(doc, name) for name, _ in HANDOFF_SECTIONS}
    order = [name for name, _ in HANDOFF_SECTIONS]
    tail = find_recent_tail(doc)
    pending: dict[int, list[str]] = {}
    for i, name in enumerate(order):
        sec = found[name]
        if sec is None:
            later = [s.start_line for n in order[i + 1 :] if (s := found[n]) is not None]
            at = later[0] if later else (tail.start_line if tail else -1)
            pending.setdefault(at, []).extend(_section(name, auto[name], []))
            continue
        start = next(
            (
                ln
                for ln in range(sec.body_start, sec.end_line)
                if _AUTO_START_RE.match(doc.lines[ln])
            ),
            None,
        )
        if start is None:
            continue  # no markers: the whole section is the author's
        end = next(
            (ln for ln in range(start + 1, sec.end_line) if _AUTO_END_RE.match(doc.lines[ln])),
            None,
        )
        if end is not None:
            edits.append((start, end + 1, _block(auto[name])))
    for where, block in pending.items():
        if where >= 0:
            edits.append((where, where, block))
            continue
        at_end = len(lines.raw) - 1 if lines.raw[-1] == "" else len(lines.raw)
        lead = [""] if at_end > 0 and lines.plain(at_end - 1).strip() else []
        edits.append((at_end, at_end, [*lead, *block[:-1]]))
    stamp = f"- **Updated:** {saved_stamp(when)}"
    first_section = next((s.start_line for s in doc.sections if s.level >= 2), len(doc.lines))
    updated = next((ln for ln in range(first_section) if _UPDATED.match(doc.lines[ln])), None)
    if updated is not None:
        edits.append((updated, updated + 1, [stamp]))
    else:
        title = next((h.line for h in doc.headings if h.level == 1), None)
        if title is None:
            edits.append((0, 0, ["# Handoff", "", stamp, ""]))
        else:
            edits.append((title + 1, title + 1, ["", stamp]))
    for start, end, new in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        lines.replace(start, end, new)
    text = lines.text()
    return text if text.endswith("\n") else text + "\n"
