"""Hover: on a checkpoint bullet (or ``continue name``) the checkpoint's Saved, Branch,
Next Action and staleness; on a ``Branch:`` line whether that branch exists and is current;
on any link to a memory file its title, description, first lines and reference count."""

from __future__ import annotations

import datetime as _dt

from lsprotocol import types

from memls.core.formats.checkpoint import SAVED_FORMAT, read_next_action
from memls.core.graph import NAME_KINDS, Ref, file_title, relative_path
from memls.core.model import Document, Range
from memls.core.workspace import Workspace
from memls.lsp.features import LanguageFeature
from memls.lsp.references import checkpoint_ref_at


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
            link = ws.graph().ref_at(doc.path, pos)
            if link is not None and link.kind not in NAME_KINDS:
                rng = (
                    link.range
                    if link.anchor_range is None
                    else _span(link.range, link.anchor_range)
                )
                return _markdown(link_summary(ws, link), codec.range_to_lsp(rng, doc.lines))
            return None

        return await self.server.memory.run(compute)


FIRST_LINES = 6
"""Lines of a linked file's text (or of the linked section) a link hover shows."""


def link_summary(ws: Workspace, ref: Ref) -> str:
    """A link's target: its title and description, its first lines (or the linked
    section's), and how many places point at it."""
    target = ref.target
    shown = relative_path(target, ws.root) if target.is_relative_to(ws.root) else str(target)
    # a file the root does not list as memory (a subfolder's topic) still exists: show it
    doc = ws.document(target) if ref.exists or target.is_file() else None
    if doc is None:
        return f"`{shown}` does not exist — the quick fix can create it."
    graph = ws.graph()
    title = file_title(doc)
    out = [f"**{title.title}** — `{shown}`" if title is not None else f"`{shown}`"]
    description = doc.frontmatter.get("description") if doc.frontmatter is not None else None
    if description is not None and isinstance(description.value, str) and description.value:
        out += ["", f"_{description.value}_"]
    start = doc.frontmatter.end_line + 1 if doc.frontmatter is not None else 0
    end = len(doc.lines)
    if ref.anchor:
        node = graph.heading(target, ref.anchor)
        if node is None:
            out += ["", f"No heading `#{ref.anchor}` in this file."]
            start = end
        else:
            section = next(s for s in doc.sections if s.heading.line == node.heading.line)
            out += ["", f"§ **{node.heading.title}**"]
            start, end = section.body_start, section.end_line
    body = [
        line
        for line in doc.lines[start:end]
        if line.strip() and not (title is not None and line.lstrip().startswith("# "))
    ][:FIRST_LINES]
    if body:
        out += ["", "```markdown", *body, "```"]
    count = graph.count(target, ref.anchor)
    files = len({r.source for r in graph.refs_to(target, ref.anchor)})
    out += [
        "",
        f"Referenced from {count} place{'s' if count != 1 else ''}"
        f" in {files} file{'s' if files != 1 else ''}.",
    ]
    return "\n".join(out)


def _span(a: Range, b: Range) -> Range:
    return Range(min(a.start, b.start), max(a.end, b.end))


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
    found = read_next_action(doc)
    return found.text if found is not None else None


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
