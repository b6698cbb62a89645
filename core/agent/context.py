"""The context a session starts with: the branch's checkpoint, the handoff, memory health.

``session_context`` assembles what Claude Code's SessionStart hook injects (and what the
MCP ``resume`` prompt shows): the checkpoint of the current branch — branch-mismatch
warning, the Next Action, previously failed approaches, the plan step — then, after a
compaction or ``/clear``, the handoff's Next Steps, a one-line health summary, the other
checkpoints to pick from, and where the root is. It is read-only and cheap: one checkpoint is parsed; the
others are known from the first lines of their files. Parts are added most important
first and the whole is capped at a budget of characters.

This text goes to the model provider, and memory files can hold what an agent copied into
them: every part is redacted (:func:`memls.core.secrets.redact`, each secret value becomes
``[redacted KIND]``; fingerprints in ``allow_secrets`` mark known fakes, which stay) before
the budget is applied, so a cut never leaves half a secret.
"""

from __future__ import annotations

import os
import re
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
    from memls.core.ops._text import strip_blank_edges
    from memls.core.ops.checkpoint import FAILED, NEXT_TITLES, NO_BRANCH
    from memls.core.parse import parse_text

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
    nxt = doc.section(*NEXT_TITLES, prefix=True)
    if nxt is not None:
        _, _, next_title = nxt.title.partition(":")
        lines.append(f"Next Action: {next_title.strip()}".rstrip())
        lines += strip_blank_edges(doc.body_lines(nxt))
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


def handoff_next_steps(root: Path, *, allowed: frozenset[str] = frozenset()) -> str | None:
    """The handoff's Next Steps section (without memls's HTML comment lines), if any.

    Redacted like :func:`present_checkpoint`.
    """
    from memls.core.handoff import find_handoff_section
    from memls.core.ops._text import strip_blank_edges
    from memls.core.ops.handoff import handoff_path
    from memls.core.parse import parse_text

    try:
        path = handoff_path(root)
        data = path.read_bytes()
    except (OSError, ValueError):
        return None
    doc = parse_text(data.decode("utf-8", "replace"), path)
    section = find_handoff_section(doc, "Next Steps")
    if section is None:
        return None
    body = [ln for ln in doc.body_lines(section) if not ln.strip().startswith("<!--")]
    body = strip_blank_edges(body)
    if not body:
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


def session_context(
    root: Path,
    source: str = "startup",
    *,
    git: Git | None = None,
    budget_tokens: int = DEFAULT_BUDGET_TOKENS,
    health_line: str | None = None,
) -> str:
    """What a session starting with ``source`` should know, most important first (redacted)."""
    root = root.resolve()
    allowed = allowed_secrets(root)
    git = git if git is not None else Git(root)
    branch = git.current_branch()
    heads = checkpoint_heads(root)
    by_name = {h.name: h for h in heads}
    picked: CheckpointHead | None = None
    if branch:
        from memls.core.ops.checkpoint import sanitize_name

        try:
            picked = by_name.get(sanitize_name(branch))
        except ValueError:
            picked = None
    if picked is None and len(heads) == 1:
        picked = heads[0]
    parts: list[str] = []  # each one redacted before it is added
    if picked is not None:
        parts.append(present_checkpoint(picked.path, branch, allowed=allowed))
    elif heads:
        where = f"branch `{branch}`" if branch else "this directory (no git branch)"
        parts.append(_redact(f"No checkpoint for {where}.", allowed))
    if source in ("compact", "clear"):
        steps = handoff_next_steps(root, allowed=allowed)
        if steps:
            parts.append(steps)
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
