"""Files a broken link or an orphan bullet asks for, and the text a new one starts with.

The language server's "create missing file" quick fix offers these; the templates carry
what the rules expect of a new file, so it is healthy from its first save:

- a topic file: ``name`` / ``description`` / ``type`` frontmatter (MF001) and a ``# `` title;
- a checkpoint: ``# Checkpoint: {name}``, Branch, Saved and the four required sections.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from dataclasses import dataclass
from pathlib import Path

from memls.core.formats.checkpoint import NO_BRANCH, sanitize_name, saved_stamp
from memls.core.formats.links import find_repo_root
from memls.core.fsutil import UnsafePathError
from memls.core.graph import INDEX_BULLET, MARKDOWN, REFERENCE, WIKILINK, Ref, graph_of
from memls.core.model import Document
from memls.core.workspace import Workspace

CREATE_KINDS = frozenset((MARKDOWN, REFERENCE, WIKILINK))
"""Links that name a memory file explicitly (code spans and path bullets may name project
files, so a missing one is not created from them)."""
MEMORY_TYPES = ("user", "feedback", "project", "reference")


@dataclass(frozen=True)
class NewFile:
    """A file that does not exist yet, the edge that asks for it, and its first content."""

    path: Path
    content: str
    kind: str  # "topic" | "checkpoint"
    ref: Ref


def missing_files(ws: Workspace, doc: Document, first: int, last: int) -> list[NewFile]:
    """Files the links and bullets on lines ``first..last`` of ``doc`` point at but that
    exist nowhere (the memory root, the linking file's folder or the repository)."""
    graph = graph_of(ws)
    out: list[NewFile] = []
    seen: set[Path] = set()
    for ref in graph.refs_from(doc.path):
        if not first <= ref.line <= last or ref.exists or ref.target in seen:
            continue
        new = _new_file(ws, doc, ref)
        if new is not None:
            seen.add(new.path)
            out.append(new)
    return out


def _new_file(ws: Workspace, doc: Document, ref: Ref) -> NewFile | None:
    root = ws.root
    target = ref.target
    if target.parent not in (root, root / "memory") or not target.name.endswith(".md"):
        return None
    if ref.kind == INDEX_BULLET:
        try:
            if sanitize_name(ref.text) != ref.text:
                return None
        except UnsafePathError:
            return None
        if target.exists():
            return None
        return NewFile(target, checkpoint_template(ws, ref.text), "checkpoint", ref)
    if ref.kind not in CREATE_KINDS or _exists_elsewhere(ws, doc, ref):
        return None
    title = _link_title(doc, ref) or target.stem.replace("-", " ").replace("_", " ").strip()
    return NewFile(target, topic_template(target, title), "topic", ref)


def _exists_elsewhere(ws: Workspace, doc: Document, ref: Ref) -> bool:
    if ref.target.exists():
        return True
    if ref.kind == WIKILINK:
        return False
    repo = find_repo_root(ws.root)
    bases = [doc.path.parent, ws.root] + ([repo] if repo is not None else [])
    return any(os.path.exists(os.path.normpath(base / ref.text)) for base in bases)


def _link_title(doc: Document, ref: Ref) -> str | None:
    """The link text of ``[text](target)`` (or a wikilink's alias), when there is one."""
    line = doc.line_text(ref.line)
    before = line[: ref.range.start.character]
    if ref.kind == WIKILINK:
        after = line[ref.range.end.character :]
        m = re.match(r"[^\]|]*\|(?P<alias>[^\]]+)\]\]", after)
        return m.group("alias").strip() if m else None
    m = re.search(r"\[(?P<text>[^\[\]]+)\]\(\s*<?$", before)
    return m.group("text").strip() if m else None


def topic_template(path: Path, title: str) -> str:
    """A topic file with the frontmatter MF001 asks for and a title."""
    stem = path.stem
    prefix = re.split(r"[-_]", stem, maxsplit=1)[0].casefold()
    kind = prefix if prefix in MEMORY_TYPES else "project"
    description = _yaml(title)
    return f"---\nname: {stem}\ndescription: {description}\ntype: {kind}\n---\n\n# {title}\n\n"


def checkpoint_template(ws: Workspace, name: str, now: _dt.datetime | None = None) -> str:
    """A checkpoint with everything the CP rules require (as ``checkpoint save`` writes it)."""
    when = saved_stamp(now or _dt.datetime.now())
    branch = ws.git.current_branch() or NO_BRANCH
    return (
        f"# Checkpoint: {name}\n\n"
        f"- **Branch:** `{branch}`\n"
        f"- **Saved:** {when}\n\n"
        f"## Next Action: Continue {name}\n"
        "- (author: 1-3 lines on what to do next, with file paths)\n\n"
        "## Done This Session\n- None recorded\n\n"
        "## Failed Approaches\n- None\n\n"
        "## Modified Files\n- None\n"
    )


def _yaml(text: str) -> str:
    text = " ".join(text.split())
    if re.search(r"[:#\[\]{},&*!|>'\"%@`]", text) or text[:1] in ("-", "?", ""):
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return text


__all__ = ["NewFile", "checkpoint_template", "missing_files", "topic_template"]
