"""The checkpoint file format: ``checkpoint-{name}.md``, its header, sections and readers.

A checkpoint is written by ``checkpoint save`` (:mod:`memls.core.ops.checkpoint`) and
checked by the CP rules (:mod:`memls.core.rules.checkpoint`); both take the names, the
name policy, the plan lookup and the readers from here, so they cannot disagree::

    # Checkpoint: {name}

    - **Branch:** `{branch}`
    - **Saved:** YYYY-MM-DD HH:MM
    - **Plan:** `{path}` (step N of M)

    ## Next Action: {title}
    ## Done This Session
    ## Failed Approaches
    ## Modified Files
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from dataclasses import dataclass
from pathlib import Path

from memls.core.fsutil import UnsafePathError
from memls.core.model import Document, Section

# -- file names --------------------------------------------------------------
CHECKPOINT_RE = re.compile(r"^checkpoint-(?P<name>.+)\.md$")


def checkpoint_name(path: Path) -> str | None:
    """The checkpoint name of a ``checkpoint-{name}.md`` path, else ``None``."""
    m = CHECKPOINT_RE.match(path.name)
    return m.group("name") if m else None


def checkpoint_file_name(name: str) -> str:
    return f"checkpoint-{name}.md"


# -- the name policy ---------------------------------------------------------
MAX_NAME_BYTES = 100
"""Longest checkpoint name, in UTF-8 bytes: file systems limit names in bytes, not characters
(255 for ``checkpoint-{name}.md`` on most), and the bullet repeats the name."""
BULLET_BREAKING = frozenset("*`")
"""Characters a name cannot hold: they would end the bullet's ``**name**``."""


def sanitized_name(name: str) -> str:
    """The spec's name rule, total: lowercase; ``/``, ``\\``, the characters the bullet
    cannot hold (:data:`BULLET_BREAKING`) and runs of whitespace → ``-``; no leading ``-``;
    surrounding whitespace dropped.

    The one transformation: CP040 suggests ``sanitized_name`` of a file's name, and
    :func:`sanitize_name` (what ``save``, ``continue`` and ``mv`` accept) returns it for
    every name it does not refuse — so the name a rule suggests is the name an operation
    takes, and an operation's name passes CP040.
    """
    out = re.sub(r"[/\\*`]", "-", name.strip().lower())
    return re.sub(r"\s+", "-", out).lstrip("-")


def sanitize_name(name: str) -> str:
    """:func:`sanitized_name` of a typed name, refusing (``UnsafePathError``) a name that is
    not one.

    Names that look like paths out of the root — absolute, with a ``..`` segment, a
    backslash, control characters or NUL — are refused rather than silently rewritten, as
    are names with characters the index bullet cannot hold, names empty after sanitising and
    names over :data:`MAX_NAME_BYTES`. (A backslash, ``*`` or backtick in a *file's* name,
    which only a hand-made file has, is turned into ``-`` by :func:`sanitized_name`: CP040
    suggests that name, and this function accepts it.)
    """
    if any(ord(ch) < 32 or ch == "\x7f" for ch in name):
        raise UnsafePathError(f"checkpoint name {name!r} contains a control character or NUL")
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in name):
        raise UnsafePathError(f"checkpoint name {name!r} is not valid UTF-8 text")
    raw = name.strip()
    if not raw:
        raise UnsafePathError("checkpoint name is empty")
    if raw.startswith(("/", "~")) or re.match(r"^[A-Za-z]:", raw):
        raise UnsafePathError(
            f"checkpoint name {name!r} is an absolute path; give a plain name like 'feature-x'"
        )
    if "\\" in raw:
        raise UnsafePathError(f"checkpoint name {name!r} contains a backslash separator")
    if ".." in raw.split("/"):
        raise UnsafePathError(f"checkpoint name {name!r} contains '..' and would leave the root")
    bad = sorted(set(raw) & BULLET_BREAKING)
    if bad:
        raise UnsafePathError(
            f"checkpoint name {name!r} contains {' '.join(bad)}, which breaks the index bullet"
        )
    out = sanitized_name(raw)
    if not out or set(out) <= {".", "-"}:
        raise UnsafePathError(f"checkpoint name {name!r} is empty after sanitising")
    size = len(out.encode("utf-8"))
    if size > MAX_NAME_BYTES:
        raise UnsafePathError(
            f"checkpoint name is {size} bytes in UTF-8 ({len(out)} characters); the limit is "
            f"{MAX_NAME_BYTES} bytes — give a shorter name"
        )
    return out


# -- the header --------------------------------------------------------------
NO_BRANCH = "no-branch"
"""The Branch a save writes outside a git repository."""
SAVED_FORMAT = "%Y-%m-%d %H:%M"
"""``Saved:`` (and LOG.md's entry headings, the handoff's and the bundle's dates)."""
_STRICT_SAVED = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$")
_LENIENT_FORMATS = (
    "%Y-%m-%dT%H:%M:%S.%f",
    "%Y-%m-%d %H:%M:%S.%f",
    "%Y-%m-%dT%H:%M:%S",
    "%Y-%m-%d %H:%M:%S",
    "%Y-%m-%dT%H:%M",
    "%Y-%m-%d %H:%M",
    "%Y/%m/%d %H:%M:%S",
    "%Y/%m/%d %H:%M",
    "%Y-%m-%d, %H:%M",
)


def saved_stamp(now: _dt.datetime) -> str:
    """``YYYY-MM-DD HH:MM`` — the checkpoint's Saved, the log's and the bundle's dates."""
    return now.strftime(SAVED_FORMAT)


def parse_saved(value: str) -> _dt.datetime | None:
    """A ``Saved:`` value in the exact ``YYYY-MM-DD HH:MM`` form, else ``None``."""
    value = value.strip()
    if not _STRICT_SAVED.match(value):
        return None
    try:
        return _dt.datetime.strptime(value, SAVED_FORMAT)
    except ValueError:
        return None


def parse_saved_lenient(value: str) -> _dt.datetime | None:
    """A ``Saved:`` value in the exact form or another common, unambiguous local-time form."""
    value = value.strip()
    if len(value) > 40:
        return None
    for fmt in _LENIENT_FORMATS:
        try:
            return _dt.datetime.strptime(value, fmt).replace(microsecond=0)
        except ValueError:
            continue
    return None


# -- the plan ----------------------------------------------------------------
def plan_line(plan: str, step: tuple[int, int] | None) -> str:
    """The ``Plan:`` header line a save writes."""
    if step is None:
        return f"- **Plan:** `{plan}`"
    return f"- **Plan:** `{plan}` (step {step[0]} of {step[1]})"


@dataclass(frozen=True)
class PlanValue:
    """A ``Plan:`` value taken apart: the path, where it starts, where the rest starts."""

    path: str
    path_start: int  # offset of the path in the raw value
    rest_start: int  # offset of what follows the path (the step)


def split_plan(raw: str) -> PlanValue:
    """The path of a ``Plan:`` value (in backticks, else up to a ``step`` note)."""
    if raw.startswith("`") and raw.find("`", 1) > 0:
        close = raw.find("`", 1)
        return PlanValue(raw[1:close].strip(), 1, close + 1)
    cut = re.search(r"\s+\(?\s*step\b", raw, re.IGNORECASE)
    return PlanValue(
        (raw[: cut.start()] if cut else raw).strip(), 0, cut.start() if cut else len(raw)
    )


def plan_path(root: Path, plan: str) -> Path:
    """Where a plan path leads: ``~`` expanded, a relative path taken from the memory root
    (where the checkpoint is)."""
    path = Path(os.path.expanduser(plan))
    return path if path.is_absolute() else root / path


def plan_exists(root: Path, plan: str) -> bool:
    """Whether the plan file is there (:func:`plan_path`); CP030, save and resume all ask
    this. An unreadable path is not evidence that the plan is gone: ``True``."""
    try:
        return plan_path(root, plan).is_file()
    except (OSError, ValueError):
        return True


# -- the sections ------------------------------------------------------------
NEXT_TITLES = ("Next Action", "Left Off")
DONE = "Done This Session"
FAILED = "Failed Approaches"
MODIFIED = "Modified Files"
REQUIRED_SECTIONS: tuple[tuple[str, tuple[str, ...], bool], ...] = (
    # (title used in skeletons and messages, accepted titles, matched by prefix)
    ("Next Action", NEXT_TITLES, True),
    (DONE, (DONE,), False),
    (FAILED, (FAILED,), False),
    (MODIFIED, (MODIFIED,), False),
)
_NEXT_TITLE = re.compile(r"(?i)^(?:next actions?|left off)\b\s*(?:[:—–-]\s*)?(?P<rest>.*)$")


def next_action_section(doc: Document) -> Section | None:
    """``## Next Action: …`` (or the older ``## Left Off``)."""
    return doc.section(*NEXT_TITLES, prefix=True)


@dataclass(frozen=True)
class NextAction:
    """A checkpoint's next action, read the one way every reader reads it."""

    section: Section
    title: str | None  # the heading's text after ``Next Action:``; None when it has none
    text: str | None  # the title, else the first line of the section's body


def read_next_action(doc: Document) -> NextAction | None:
    sec = next_action_section(doc)
    if sec is None:
        return None
    m = _NEXT_TITLE.match(sec.title.strip())
    title = m.group("rest").strip() if m else ""
    text = title or next(
        (ln.strip().lstrip("-*+ ").strip() for ln in doc.body_lines(sec) if ln.strip()), ""
    )
    return NextAction(sec, title or None, text or None)


# -- what a checkpoint says about itself -------------------------------------
@dataclass(frozen=True)
class CheckpointFacts:
    """What a checkpoint file says about itself (``None`` where it does not say)."""

    name: str
    branch: str | None
    saved: _dt.datetime | None  # strict or normalisable Saved value
    next_action: str | None  # the next action's text (:class:`NextAction`), cut at 120


def checkpoint_facts(doc: Document, name: str | None = None) -> CheckpointFacts:
    """Branch, Saved and next action of a checkpoint document; never raises.

    Cached on the (immutable) document, so the index rules can consult thousands of
    checkpoints per keystroke without re-reading them.
    """
    name = name or checkpoint_name(doc.path) or doc.path.stem
    key = "memls.cp.facts:" + name
    cached = doc.extra.get(key)
    if isinstance(cached, CheckpointFacts):
        return cached
    branch_field = doc.field("Branch")
    branch = branch_field.value.strip() if branch_field and branch_field.value.strip() else None
    saved_field = doc.field("Saved")
    saved = parse_saved_lenient(saved_field.value) if saved_field else None
    nxt = read_next_action(doc)
    summary = nxt.text[:120] if nxt is not None and nxt.text else None
    facts = CheckpointFacts(name, branch, saved, summary)
    doc.extra[key] = facts
    return facts


_NATIVE_SECTIONS = ("next action", "left off", "done this session", "failed approaches")
_NATIVE_KEY = "memls.cp.native"
TITLE_RE = re.compile(r"(?i)checkpoint\s*:\s*(?P<name>.*)$")
"""The ``# Checkpoint: {name}`` title's text."""


def is_native_checkpoint(doc: Document) -> bool:
    """Whether a ``checkpoint-*.md`` is in memls's format, so the CP rules apply to it.

    Two signals of these suffice: a ``Branch:`` or ``Saved:`` header field each, a
    ``# Checkpoint: {name}`` title naming the file, and each of memls's sections (Next
    Action / Left Off, Done This Session, Failed Approaches, Modified Files). A blank file
    counts as memls's (a save that went wrong). Another tool's checkpoint (``**Date:**``,
    ``## Completed Work``) has at most one of them.
    """
    cached = doc.extra.get(_NATIVE_KEY)
    if isinstance(cached, bool):
        return cached
    native = _native_score(doc) >= 2 or not doc.text.strip()
    doc.extra[_NATIVE_KEY] = native
    return native


def _native_score(doc: Document) -> int:
    score = sum(1 for name in ("Branch", "Saved") if doc.field(name) is not None)
    name = checkpoint_name(doc.path)
    first = doc.headings[0] if doc.headings and doc.headings[0].level == 1 else None
    if first is not None and name is not None:
        m = TITLE_RE.match(first.title)
        if (
            m
            and m.group("name").strip()
            and (sanitized_name(m.group("name").strip()) == sanitized_name(name))
        ):
            score += 1
    seen: set[str] = set()
    for sec in doc.sections:
        if sec.level != 2:
            continue
        title_cf = sec.title.casefold()
        for wanted in (*_NATIVE_SECTIONS, "modified files"):
            if wanted not in seen and (title_cf == wanted or title_cf.startswith(wanted + ":")):
                seen.add(wanted)
    return score + len(seen)
