"""Hover: on a checkpoint bullet (or ``continue name``) the checkpoint's Saved, Branch,
Next Action and staleness; on a ``Branch:`` line whether that branch exists and is current."""

from __future__ import annotations

import datetime as _dt

from lsprotocol import types

from memls.core.model import Document
from memls.core.workspace import Workspace
from memls.lsp.features import LanguageFeature
from memls.lsp.references import checkpoint_ref_at

SAVED_FORMAT = "%Y-%m-%d %H:%M"


class Hover(LanguageFeature):
    async def hover(self, params: types.HoverParams) -> types.Hover | None:
        def compute() -> types.Hover | None:
            found = self.locate(params.text_document.uri)
            if found is None:
                return None
            ws, doc = found
            codec = self.server.codec
            pos = codec.from_lsp(params.position, doc.lines)
            ref = checkpoint_ref_at(ws, doc, pos)
            if ref is not None:
                text = checkpoint_summary(ws, ref.name, self.server.memory.now())
                return _markdown(text, codec.range_to_lsp(ref.range, doc.lines))
            for field in doc.fields:
                if field.line == pos.line and field.name.casefold() == "branch":
                    text = branch_summary(ws, field.value)
                    return _markdown(text, codec.range_to_lsp(field.value_range, doc.lines))
            return None

        return await self.server.memory.run(compute)


def _markdown(text: str, rng: types.Range) -> types.Hover:
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text), range=rng
    )


def checkpoint_summary(ws: Workspace, name: str, now: _dt.datetime) -> str:
    path = ws.checkpoints().get(name)
    if path is None:
        return f"**{name}**: no `checkpoint-{name}.md` in this memory root (orphaned bullet)."
    doc = ws.document(path)
    if doc is None:
        return f"**{name}**: `{path.name}` cannot be read."
    lines = [f"**Checkpoint {name}** — `{path.name}`", ""]
    branch = doc.field("Branch")
    saved = doc.field("Saved")
    lines.append(f"- **Branch:** `{branch.value}`" if branch else "- **Branch:** (missing)")
    lines.append(
        f"- **Saved:** {saved.value}{_age(saved.value, now, ws)}"
        if saved
        else "- **Saved:** (missing)"
    )
    lines.append(f"- **Next Action:** {next_action(doc) or '(missing)'}")
    if branch:
        lines.append(f"- {branch_summary(ws, branch.value)}")
    return "\n".join(lines)


def next_action(doc: Document) -> str | None:
    section = doc.section("Next Action", "Left Off", prefix=True)
    if section is None:
        return None
    title = section.title
    if ":" in title:
        return title.split(":", 1)[1].strip() or None
    body = [ln.strip() for ln in doc.body_lines(section) if ln.strip()]
    return body[0] if body else None


def _age(saved: str, now: _dt.datetime, ws: Workspace) -> str:
    try:
        when = _dt.datetime.strptime(saved.strip(), SAVED_FORMAT)
    except ValueError:
        return " (not `YYYY-MM-DD HH:MM`)"
    days = (now - when).total_seconds() / 86400
    if days < 0:
        return " (in the future)"
    stale = ws.config.stale_days
    state = f"**stale** (older than {stale} days)" if days > stale else "fresh"
    return f" — {days:.1f} days ago, {state}"


def branch_summary(ws: Workspace, branch: str) -> str:
    branches = ws.git.branches()
    if branches is None:
        return f"Branch `{branch}`: not in a git repository."
    current = ws.git.current_branch()
    exists = branches.exists(branch)
    parts = [
        f"Branch `{branch}` "
        + ("exists" if exists else "**does not exist** locally or on a remote")
    ]
    if current == branch:
        parts.append("and is the current branch.")
    elif current is None:
        parts.append("(HEAD is detached).")
    else:
        parts.append(f"— you are on `{current}` (`git checkout {branch}` to resume there).")
    return " ".join(parts)
