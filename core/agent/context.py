"""The context a session starts with: the branch's checkpoint, the handoff, memory health.

``session_context`` assembles what Claude Code's SessionStart hook injects (and what the
MCP ``resume`` prompt shows): the *carry* — the checkpoint of the current branch
(branch-mismatch warning, the Next Action, previously failed approaches, the plan step),
its open bundle items and, after a compaction or ``/clear``, what the handoff's Next Steps
add to it — then a one-line health summary, the other checkpoints to pick from, and where
the root is. It is read-only and cheap: one checkpoint is parsed; the others are known from
the first lines of their files. Parts are added most important first and the whole is
capped at a budget of characters. No line is said twice (a handoff line that repeats the
checkpoint is left out) and no template prompt (``- (author: …)``) is passed on.

Compaction runs PreCompact → SessionStart(``compact``) → PostCompact. PreCompact prints
:func:`compaction_instructions` (Claude Code appends a PreCompact hook's output to the
summariser's instructions) and keeps the carry (:func:`save_carry`);
SessionStart(``compact``) injects that kept carry (:func:`take_carry`).

This text goes to the model provider, and memory files can hold what an agent copied into
them: every part is redacted (:func:`memls.core.secrets.redact`, each secret value becomes
``[redacted KIND]``; fingerprints in ``allow_secrets`` mark known fakes, which stay) before
the budget is applied, so a cut never leaves half a secret.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from memls.core.gitfacade import Git
from memls.core.workspace import CHECKPOINT_RE

DEFAULT_BUDGET_TOKENS = 2000
CHARS_PER_TOKEN = 4
_HEAD_BYTES = 2048
_FIELD = re.compile(r"^\s*[-*]\s+\*\*(Branch|Saved):\*\*\s*(.*?)\s*$", re.MULTILINE)
_OTHERS = 5
_CUT = "… (cut to fit the context budget"
CARRY_FILE = ".memls/compact-carry.json"
"""What PreCompact prepared for the SessionStart(compact) of the same session."""
CARRY_MAX_AGE = 3600.0
_PLACEHOLDER = re.compile(
    r"^\s*(?:[-*+]\s+)?\((?:(?:author|todo|fill in)\b[^()]*|nothing to report)\)\s*$", re.I
)
_LEAD = re.compile(
    r"^(?:[-*+]\s+|\d+[.)]\s+)*(?:⚠\s*)?"
    r"(?:next action|previously failed|do not repeat \(failed before\)|failed|plan)?\s*:?\s*",
    re.I,
)


@dataclass(frozen=True)
class CheckpointHead:
    """What the first lines of a checkpoint file say, without parsing the whole file."""

    name: str
    path: Path
    branch: str | None
    saved: str | None


def allowed_secrets(root: Path) -> frozenset[str]:
    """The root's ``allow_secrets`` fingerprints; none when its configuration is unusable."""
    from memls.core.config import ConfigError, load_config

    try:
        return frozenset(load_config(root).allow_secrets)
    except (ConfigError, OSError):
        return frozenset()


def _redact(text: str, allowed: frozenset[str]) -> str:
    from memls.core.secrets import redact  # not at import: the MCP server imports this module

    return redact(text, allowed)


def checkpoint_heads(root: Path) -> list[CheckpointHead]:
    """Every checkpoint of the root, newest ``Saved`` first."""
    heads = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return []
    for entry in entries:
        m = CHECKPOINT_RE.match(entry.name)
        if not m or not entry.is_file(follow_symlinks=False):
            continue
        try:
            with open(entry.path, "rb") as handle:
                head = handle.read(_HEAD_BYTES).decode("utf-8", "replace")
        except OSError:
            continue
        fields = {k.casefold(): v.strip("`") for k, v in _FIELD.findall(head)}
        heads.append(
            CheckpointHead(
                m.group("name"), Path(entry.path), fields.get("branch"), fields.get("saved")
            )
        )
    heads.sort(key=lambda h: (h.saved or "", h.name), reverse=True)
    return heads


def present_checkpoint(
    path: Path, current_branch: str | None, *, allowed: frozenset[str] = frozenset()
) -> str:
    """A checkpoint, most important first: branch warning, Next Action, failed approaches, plan.

    Redacted: no secret value of the file is in it (``allowed``: fingerprints of known fakes).
    """
    from memls.core.formats.checkpoint import FAILED, NO_BRANCH, read_next_action
    from memls.core.parse import parse_text
    from memls.core.text import strip_blank_edges

    doc = parse_text(path.read_bytes().decode("utf-8", "replace"), path)
    name = CHECKPOINT_RE.match(path.name)
    title = name.group("name") if name else path.stem
    branch_field = doc.field("branch")
    saved_field = doc.field("saved")
    branch = branch_field.value if branch_field else None
    lines = [
        f'## Checkpoint "{title}" (branch `{branch or "?"}`, saved '
        f"{saved_field.value if saved_field else '?'})"
    ]
    if current_branch and branch and branch not in (current_branch, NO_BRANCH):
        lines.append(
            f"Warning: You're on `{current_branch}` but this checkpoint was saved on "
            f"`{branch}`. Switch with: git checkout {branch}"
        )
    next_action = read_next_action(doc)
    if next_action is not None:
        lines.append(f"Next Action: {next_action.title or ''}".rstrip())
        body = [ln for ln in doc.body_lines(next_action.section) if not is_placeholder(ln)]
        lines += strip_blank_edges(body)
    failed = doc.section(FAILED)
    if failed is not None:
        for item in doc.items_in(failed):
            text = item.text.strip()
            if item.indent == 0 and text and not re.match(r"(?i)none\b", text):
                lines.append(f"⚠ Previously failed: {text}")
    plan = doc.field("plan")
    if plan is not None:
        lines.append(f"Plan: {plan.raw_value}")
    return _redact("\n".join(lines), allowed)


def is_placeholder(line: str) -> bool:
    """A template's prompt line (``- (author: 1-3 lines on what to do next …)``) or an
    empty automatic block's ``- (nothing to report)``."""
    return bool(_PLACEHOLDER.match(line))


def said(line: str) -> str:
    """The words of a line without its bullet and memls's labels, for spotting repeats."""
    return " ".join(_LEAD.sub("", line.strip(), count=1).split()).strip("`").casefold()


def open_bundle_items(path: Path, *, allowed: frozenset[str] = frozenset()) -> str | None:
    """The checkpoint's open Checkpoint Bundle steps, one bullet each (redacted), if any."""
    from memls.core.bundle import find_bundles
    from memls.core.parse import parse_text

    try:
        text = path.read_bytes().decode("utf-8", "replace")
    except OSError:
        return None
    if "heckpoint Bundle" not in text:
        return None
    items = [i.text for b in find_bundles(parse_text(text, path)) for i in b.open_items()]
    if not items:
        return None
    return _redact("\n".join(["Open bundle items:", *(f"- {i}" for i in items)]), allowed)


def handoff_next_steps(
    root: Path,
    *,
    allowed: frozenset[str] = frozenset(),
    already: str = "",
    resumed: str | None = None,
) -> str | None:
    """The handoff's Next Steps section (without memls's HTML comment lines), if any.

    Lines that say again what ``already`` says (the checkpoint just presented), template
    prompts, and — when ``resumed`` names the checkpoint presented — its "Resume with" line
    are left out; None when nothing is left. Redacted like :func:`present_checkpoint`.
    """
    from memls.core.handoff import find_handoff_section
    from memls.core.ops.handoff import handoff_path
    from memls.core.parse import parse_text
    from memls.core.text import strip_blank_edges

    try:
        path = handoff_path(root)
        data = path.read_bytes()
    except (OSError, ValueError):
        return None
    doc = parse_text(data.decode("utf-8", "replace"), path)
    section = find_handoff_section(doc, "Next Steps")
    if section is None:
        return None
    seen = {said(ln) for ln in already.split("\n")} - {""}
    resume_line = said(f"- Resume with: `memls checkpoint resume {resumed}`")
    body = []
    for ln in doc.body_lines(section):
        words = said(ln)
        if ln.strip().startswith("<!--") or is_placeholder(ln) or (words and words in seen):
            continue
        if resumed is not None and words == resume_line:
            continue
        body.append(ln)
    body = strip_blank_edges(body)
    if not any(ln.strip() for ln in body):
        return None
    rel = path.relative_to(root).as_posix()
    return _redact("\n".join([f"## Next Steps (from {rel})", *body]), allowed)


def fit(parts: list[str], budget_chars: int, more: str) -> str:
    """Join ``parts`` (most important first) with blank lines, within ``budget_chars``.

    A part is taken whole while there is still room after it for the marker that says the
    rest was cut; the first part that does not fit is cut at a line boundary, marked, and
    the parts after it are left out. ``more`` says where the full text is.
    """
    marker = f"{_CUT}; {more})"
    out: list[str] = []
    used = 0
    for number, part in enumerate(parts):
        sep = 2 if out else 0
        last = number == len(parts) - 1
        reserve = 0 if last else 2 + len(marker)
        if used + sep + len(part) + reserve <= budget_chars:
            out.append(part)
            used += sep + len(part)
            continue
        room = budget_chars - used - sep - len(marker) - 1
        kept: list[str] = []
        size = 0
        for line in part.split("\n"):
            if size + len(line) + 1 > room:
                break
            kept.append(line)
            size += len(line) + 1
        if kept:
            out.append("\n".join([*kept, marker]))
        elif budget_chars - used - sep >= len(marker):
            out.append(marker)
        break
    return "\n\n".join(out)


RESUMING = ("compact", "clear")
"""Session starts that continue work: the handoff's Next Steps join the carry."""


def pick_checkpoint(heads: list[CheckpointHead], branch: str | None) -> CheckpointHead | None:
    """The current branch's checkpoint, else the only one there is."""
    by_name = {h.name: h for h in heads}
    picked: CheckpointHead | None = None
    if branch:
        from memls.core.formats.checkpoint import sanitize_name

        try:
            picked = by_name.get(sanitize_name(branch))
        except ValueError:
            picked = None
    if picked is None and len(heads) == 1:
        picked = heads[0]
    return picked


def carry_parts(
    root: Path,
    branch: str | None,
    picked: CheckpointHead | None,
    heads: list[CheckpointHead],
    allowed: frozenset[str],
    *,
    steps: bool,
) -> list[str]:
    """What must survive a compaction: the checkpoint, its open bundle items and (``steps``)
    what the handoff's Next Steps add — each part redacted, no line twice."""
    parts: list[str] = []
    if picked is not None:
        parts.append(present_checkpoint(picked.path, branch, allowed=allowed))
        bundle = open_bundle_items(picked.path, allowed=allowed)
        if bundle:
            parts.append(bundle)
    elif heads:
        where = f"branch `{branch}`" if branch else "this directory (no git branch)"
        parts.append(_redact(f"No checkpoint for {where}.", allowed))
    if steps:
        told = "\n".join(parts)
        more = handoff_next_steps(
            root, allowed=allowed, already=told, resumed=picked.name if picked else None
        )
        if more:
            parts.append(more)
    return parts


def current_carry(root: Path, git: Git | None = None) -> list[str]:
    """The carry of ``root`` now (as after a compaction), redacted."""
    root = root.resolve()
    git = git if git is not None else Git(root)
    branch = git.current_branch()
    heads = checkpoint_heads(root)
    picked = pick_checkpoint(heads, branch)
    return carry_parts(root, branch, picked, heads, allowed_secrets(root), steps=True)


def compaction_instructions(carry: list[str]) -> str:
    """What PreCompact prints: the summariser is asked to keep the carry word for word.

    Empty when there is nothing to carry (no checkpoint, no handoff steps): then PreCompact
    prints nothing and the summary is Claude Code's own."""
    if not carry or all(part.startswith("No checkpoint for") for part in carry):
        return ""
    head = (
        "Keep the following in the summary word for word (from the memls memory root): the "
        "next action, the approaches that already failed (they must not be retried) and the "
        "open checkpoint items."
    )
    return "\n\n".join([head, *carry])


def save_carry(root: Path, session_id: str | None, carry: list[str]) -> None:
    """Keep the carry for the SessionStart(compact) that follows (``.memls/``, 0600)."""
    from memls.core.fsutil import state_dir, write_private

    state_dir(root)
    record = {"session_id": session_id or "", "saved": time.time(), "parts": carry}
    write_private(root / CARRY_FILE, json.dumps(record, ensure_ascii=False).encode("utf-8"))


def take_carry(root: Path, session_id: str | None) -> list[str] | None:
    """The carry PreCompact kept for this session (then removed), or None: none kept, another
    session's (left for it), older than :data:`CARRY_MAX_AGE` or unreadable (removed)."""
    from memls.core.fsutil import open_private

    path = root / CARRY_FILE
    try:
        fd = open_private(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        with os.fdopen(fd, "rb") as handle:
            record = json.loads(handle.read(1 << 20).decode("utf-8", "replace"))
    except ValueError:
        record = None
    saved = record.get("saved") if isinstance(record, dict) else None
    fresh = isinstance(saved, (int, float)) and time.time() - saved <= CARRY_MAX_AGE
    mine = isinstance(record, dict) and record.get("session_id") == (session_id or "")
    if mine or not fresh:  # another session's fresh carry stays for it
        with contextlib.suppress(OSError):
            os.unlink(path)
    if not (mine and fresh) or not isinstance(record, dict):
        return None
    parts = record.get("parts")
    if not isinstance(parts, list) or not all(isinstance(p, str) for p in parts):
        return None
    return parts


def session_context(
    root: Path,
    source: str = "startup",
    *,
    git: Git | None = None,
    budget_tokens: int = DEFAULT_BUDGET_TOKENS,
    health_line: str | None = None,
    carry: list[str] | None = None,
) -> str:
    """What a session starting with ``source`` should know, most important first (redacted).

    ``carry``: the parts PreCompact prepared (:func:`take_carry`), used instead of reading
    the checkpoint and handoff again."""
    root = root.resolve()
    allowed = allowed_secrets(root)
    git = git if git is not None else Git(root)
    branch = git.current_branch()
    heads = checkpoint_heads(root)
    picked = pick_checkpoint(heads, branch)
    parts: list[str] = []  # each one redacted before it is added
    if carry is not None:
        parts += carry
    else:
        parts += carry_parts(root, branch, picked, heads, allowed, steps=source in RESUMING)
    if health_line:
        parts.append(_redact(health_line, allowed))
    others = [h for h in heads if h is not picked][:_OTHERS]
    if others:
        rows = [f"- {h.name} (branch `{h.branch or '?'}`, saved {h.saved or '?'})" for h in others]
        more = len(heads) - len(others) - (1 if picked is not None else 0)
        if more > 0:
            rows.append(f"- … and {more} more (`memls checkpoint list`)")
        rows = [_redact(row, allowed) for row in rows]  # names and branches are text too
        parts.append("\n".join(["Other checkpoints (resume with `continue NAME`):", *rows]))
    parts.append(_redact(f"(memls memory root: {root})", allowed))
    name = _redact(picked.name, allowed) if picked is not None else "NAME"
    return fit(parts, budget_tokens * CHARS_PER_TOKEN, f"`memls checkpoint resume {name}`")
