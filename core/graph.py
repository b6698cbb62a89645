"""The memory as a linked graph: which memory file, checkpoint or heading points at which.

Nodes are the memory files of a root (topic files, checkpoints, the index, LOG.md, the
handoff), the headings in them (LOG entries are the ``## `` headings of LOG.md) and
checkpoints by name. Edges (:class:`Ref`) are

- Markdown links ``[text](path.md#anchor)`` (and ``[text](#anchor)`` inside one file),
  wikilinks ``[[name#anchor]]`` and code spans naming a ``.md`` path;
- ``## Active Checkpoints`` bullets (``- **name** …``) and ``continue name`` lines, which
  point at ``checkpoint-{name}.md``;
- ``Plan:`` lines, which point at the plan file.

Links are the link format's (:mod:`memls.core.formats.links`): the same extractor and the
same resolver as the rules, so an edge leads where IX009 says the link leads. Per-file
extraction is cached on the parsed document, so an edit re-extracts one file; resolution
is the workspace's cached resolver (one ``stat`` per distinct candidate), and the reverse
index (who points at a file) is patched per changed file. ``LinkGraph.version`` changes
only when some edge changed, which is what a front needs to refresh reference counts.
"""

from __future__ import annotations

import bisect
import os
import re
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple
from urllib.parse import unquote

from memls.core.formats.index import bullets
from memls.core.formats.links import Link, extract_links
from memls.core.gcpause import no_gc
from memls.core.model import Document, FileKind, Heading, Position, Range
from memls.core.workspace import Workspace

MARKDOWN = "markdown"
REFERENCE = "reference"
WIKILINK = "wikilink"
PATH_BULLET = "bullet"
CODE = "code"
PLAN = "plan"
ANCHOR = "anchor"
INDEX_BULLET = "index-bullet"
CONTINUE = "continue"
"""Ref kinds: the first five are :mod:`memls.core.formats.links`' link kinds (``bullet`` is
a list item starting with a path); ``plan`` is a ``Plan:`` line's path; ``anchor`` a link
to a heading of its own file (``[x](#heading)``); ``index-bullet`` an Active Checkpoints
bullet and ``continue`` a ``continue name`` line, both naming a checkpoint."""

PATH_KINDS = frozenset((MARKDOWN, REFERENCE, PATH_BULLET, CODE, PLAN))
"""Refs that write a path (rewritten with the new relative path when the target moves)."""
NAME_KINDS = frozenset((INDEX_BULLET, CONTINUE))
"""Refs that name a checkpoint (rewritten with the new name on a rename)."""

CONTINUE_NAME = re.compile(r"\bcontinue\s+`?(?P<name>[A-Za-z0-9](?:[\w.-]*\w)?)`?")
"""A `continue name` line; the name never takes the sentence's closing period."""
_SELF_ANCHOR = re.compile(r"(?<![!\\])\[[^\[\]\n]*\]\(\s*<?#(?P<anchor>[^)\s>]+)>?\s*\)")
_CHECKPOINT_TITLE = re.compile(r"^Checkpoint:\s*(?P<name>\S.*?)\s*$")
_SLUG_DROP = re.compile(r"[^\w\- ]", re.UNICODE)
_EXTRACTED = "memls.graph.raw"


def slug(title: str) -> str:
    """A heading's anchor as GitHub writes it (lowercase, punctuation dropped, spaces → ``-``).

    Idempotent, so ``slug(anchor)`` compares an anchor as written with a heading's slug."""
    return _SLUG_DROP.sub("", title.strip().lower()).replace(" ", "-")


class RawRef(NamedTuple):
    """An edge as written in one file, before it is resolved against the workspace."""

    kind: str
    line: int
    range: Range  # the text a rename rewrites: the path part, the wikilink name, or the name
    text: str  # the text in ``range``
    anchor: str | None  # the ``#heading`` part, without ``#``
    anchor_range: Range | None
    link: Link | None = None  # the file link this edge is (None: a checkpoint name, an anchor)


@dataclass(frozen=True, slots=True)
class Ref:
    """A resolved edge: ``source`` points at ``target`` (an absolute path inside or outside
    the memory root; for a checkpoint name, ``root/checkpoint-{name}.md``)."""

    source: Path
    kind: str
    line: int
    range: Range
    text: str
    anchor: str | None
    anchor_range: Range | None
    target: Path
    exists: bool  # the target is a file of the workspace
    via_root: bool  # a path written relative to the root rather than to the source's folder

    @property
    def name(self) -> str | None:
        """The checkpoint name a bullet or ``continue`` line gives."""
        return self.text if self.kind in NAME_KINDS else None

    @property
    def is_path(self) -> bool:
        return self.kind in PATH_KINDS


@dataclass(frozen=True, slots=True)
class HeadingNode:
    path: Path
    heading: Heading
    slug: str


def checkpoint_title_range(doc: Document) -> Range | None:
    """The name in a checkpoint's ``# Checkpoint: name`` title."""
    for h in doc.headings:
        if h.level != 1:
            continue
        m = _CHECKPOINT_TITLE.match(h.title)
        if m is None:
            return None
        start = h.title_range.start.character + m.start("name")
        return Range.of(h.line, start, h.line, start + len(m.group("name")))
    return None


def file_title(doc: Document) -> Heading | None:
    """The first ``# `` heading (a topic file's title)."""
    return next((h for h in doc.headings if h.level == 1), None)


# -- extraction (per document, cached on it) ---------------------------------
def extract(doc: Document) -> tuple[RawRef, ...]:
    """Every edge written in ``doc`` (cached on the document object)."""
    cached = doc.extra.get(_EXTRACTED)
    if isinstance(cached, tuple):
        return cached
    with no_gc():
        refs = tuple(_extract(doc))
    doc.extra[_EXTRACTED] = refs
    return refs


def _extract(doc: Document) -> Iterator[RawRef]:
    plan_lines = {f.line for f in doc.fields if f.name.casefold() == "plan"}
    for link in extract_links(doc):
        raw = _from_link(doc, link, plan_lines)
        if raw is not None:
            yield raw
    bullet_lines: set[int] = set()
    if doc.kind is FileKind.INDEX:
        for bullet in bullets(doc):
            bullet_lines.add(bullet.line)
            yield RawRef(INDEX_BULLET, bullet.line, bullet.name_range, bullet.name, None, None)
    first = doc.frontmatter.end_line + 1 if doc.frontmatter is not None else 0
    for number in range(first, len(doc.lines)):
        text = doc.lines[number]
        has_continue = "continue" in text and number not in bullet_lines
        if not (has_continue or "](#" in text) or doc.in_fence(number):
            continue
        if has_continue:
            for m in CONTINUE_NAME.finditer(text):
                rng = Range.of(number, m.start("name"), number, m.end("name"))
                yield RawRef(CONTINUE, number, rng, m.group("name"), None, None)
        for m in _SELF_ANCHOR.finditer(text):
            rng = Range.of(number, m.start("anchor"), number, m.end("anchor"))
            anchor = m.group("anchor")
            yield RawRef(ANCHOR, number, rng, anchor, anchor, rng)


def _from_link(doc: Document, link: Link, plan_lines: set[int]) -> RawRef | None:
    """A file link as a graph edge (links to files that are not Markdown are left out)."""
    if not link.is_markdown_file:
        return None
    line = link.line
    text = doc.line_text(line)
    anchor_range: Range | None = None
    if link.anchor:
        at = text.find(link.anchor, link.range.end.character)
        if at >= 0:
            anchor_range = Range.of(line, at, line, at + len(link.anchor))
    kind = PLAN if line in plan_lines and link.kind == CODE else link.kind
    return RawRef(kind, line, link.range, link.target, link.anchor, anchor_range, link)


# -- the graph ---------------------------------------------------------------
class LinkGraph:
    """The edges of one workspace, kept up to date file by file (see :func:`graph_of`)."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.version = 0
        """Bumped whenever an edge appears, disappears or resolves differently."""
        self._generation = -1
        self._paths: frozenset[Path] = frozenset()
        self._by_text: dict[str, Path] = {}
        """The listed paths by their text: resolution compares strings and hands back the
        workspace's own Path objects (whose hashes are cached)."""
        self._docs: dict[Path, Document] = {}
        self._out: dict[Path, tuple[Ref, ...]] = {}
        self._in: dict[Path, dict[Path, tuple[Ref, ...]]] = {}
        self._dirty: set[Path] = set()
        self._everything = True
        listeners = getattr(ws, "listeners", None)
        self._listening = isinstance(listeners, list)
        if isinstance(listeners, list):
            listeners.append(self._changed)

    def _changed(self, path: Path | None) -> None:
        """The workspace invalidated ``path`` (None: everything)."""
        if path is None:
            self._everything = True
        else:
            self._dirty.add(path)

    # -- keeping up to date ---------------------------------------------------
    def update(self) -> LinkGraph:
        """Bring the graph up to date with the workspace (cheap when nothing changed).

        The workspace tells the graph which files it invalidated, so an edit costs the
        edited files' links; a change of the file list (a file created, deleted, moved)
        re-resolves every edge, since a link may now lead somewhere."""
        ws = self.ws
        if ws.generation == self._generation:
            return self
        paths = ws.paths()
        if self._listening and not self._everything and self._files_unchanged(paths):
            dirty, self._dirty = self._dirty, set()
            for path in dirty:
                self._refresh_file(path)
            self._generation = ws.generation
            return self
        self._dirty = set()
        self._everything = False
        pathset = frozenset(paths)
        relink = pathset != self._paths
        if relink:
            self._paths = pathset
            self._by_text = {str(p): p for p in paths}
        for gone in [p for p in self._docs if p not in pathset]:
            del self._docs[gone]
            self._set_out(gone, ())
        for path in paths:
            if relink or self._docs.get(path) is not ws.document(path):
                self._refresh_file(path)
        self._generation = ws.generation
        return self

    def _files_unchanged(self, paths: list[Path]) -> bool:
        """Whether every invalidated file is still listed exactly when it was before."""
        for path in self._dirty:
            at = bisect.bisect_left(paths, path)
            listed = at < len(paths) and paths[at] == path
            if listed != (path in self._paths):
                return False
        return True

    def _refresh_file(self, path: Path) -> None:
        doc = self.ws.document(path) if path in self._paths else None
        if doc is None:
            if path in self._docs:
                del self._docs[path]
            self._set_out(path, ())
            return
        if self._docs.get(path) is not doc or path not in self._out:
            self._docs[path] = doc
            with no_gc():
                self._set_out(path, self._resolve(doc))

    def _set_out(self, source: Path, refs: tuple[Ref, ...]) -> None:
        old = self._out.get(source, ())
        if old == refs:
            return
        self.version += 1
        for ref in old:
            bucket = self._in.get(ref.target)
            if bucket is not None:
                bucket.pop(source, None)
                if not bucket:
                    del self._in[ref.target]
        if refs:
            self._out[source] = refs
            grouped: dict[Path, list[Ref]] = {}
            for ref in refs:
                grouped.setdefault(ref.target, []).append(ref)
            for target, group in grouped.items():
                self._in.setdefault(target, {})[source] = tuple(group)
        else:
            self._out.pop(source, None)

    def _resolve(self, doc: Document) -> tuple[Ref, ...]:
        root = str(self.ws.root)
        known = self._by_text
        out: list[Ref] = []
        append = out.append
        source = doc.path
        folder = str(source.parent)
        # One resolution per distinct (kind, text, hints): an index of 200,000 pointers to
        # 1,000 files resolves 1,000 times and shares one Path per target.
        resolved: dict[tuple[str, str, tuple[str, ...]], tuple[Path, bool, bool]] = {}
        for raw in extract(doc):
            link = raw.link
            key = (raw.kind, raw.text, link.hints if link is not None else ())
            hit = resolved.get(key)
            if hit is None:
                via_root = False
                if raw.kind in NAME_KINDS:
                    text = os.path.join(root, f"checkpoint-{raw.text}.md")
                elif raw.kind == ANCHOR or link is None:
                    text = str(source)
                else:
                    text, via_root = self._resolve_link(folder, link, raw.kind == PLAN)
                target = known.get(text)
                hit = (target if target is not None else Path(text), target is not None, via_root)
                resolved[key] = hit
            append(
                Ref(
                    source,
                    raw.kind,
                    raw.line,
                    raw.range,
                    raw.text,
                    raw.anchor,
                    raw.anchor_range,
                    hit[0],
                    hit[1],
                    hit[2],
                )
            )
        return tuple(out)

    def _resolve_link(self, folder: str, link: Link, plan: bool) -> tuple[str, bool]:
        """Where a file link leads (the workspace's resolver, as the rules resolve it) and
        whether it is written relative to the root rather than to the source's folder.

        A ``Plan:`` path names the root's plan first (plans are written from the root). A
        link that leads nowhere gets where it would be: a wikilink a note beside its file,
        a path relative to its file (a plan's to the root). An absolute or home path is
        the file it names (a move rewrites it as one); where the resolver finds it under
        the root or the repository instead, go-to-definition and document links follow
        the resolver."""
        if link.kind == WIKILINK:
            found = self.ws.links.resolve(link)
            return (str(found) if found is not None else f"{folder}/{link.target}.md"), False
        written = unquote(link.target) if "%" in link.target else link.target
        if written.startswith("~"):
            return os.path.normpath(os.path.expanduser(written)), False
        if written.startswith("/"):
            return os.path.normpath(written), False
        here = os.path.normpath(os.path.join(folder, written))
        there = os.path.normpath(os.path.join(str(self.ws.root), written))
        if plan and there in self._by_text:
            return there, there != here
        found = self.ws.links.resolve(link)
        if found is None:
            return (there, there != here) if plan else (here, False)
        text = str(found)
        return text, text != here and text == there

    # -- questions --------------------------------------------------------------
    def refs_from(self, path: Path) -> tuple[Ref, ...]:
        return self._out.get(path, ())

    def refs_to(self, target: Path, anchor: str | None = None) -> list[Ref]:
        """Edges into ``target`` (every one, or those whose anchor is ``anchor``'s heading)."""
        bucket = self._in.get(target)
        if not bucket:
            return []
        refs = [r for group in bucket.values() for r in group]
        if anchor is not None:
            key = slug(anchor)
            refs = [r for r in refs if r.anchor is not None and slug(r.anchor) == key]
        refs.sort(key=lambda r: (str(r.source), r.line, r.range.start.character))
        return refs

    def count(self, target: Path, anchor: str | None = None) -> int:
        """How many places point at ``target`` (or at one of its headings)."""
        if anchor is None:
            bucket = self._in.get(target)
            if not bucket:
                return 0
            # same-file anchors (a file's own table of contents) are not references to the file
            return sum(
                1
                for src, group in bucket.items()
                for r in group
                if src != target or r.kind != ANCHOR
            )
        return len(self.refs_to(target, anchor))

    def ref_at(self, path: Path, pos: Position) -> Ref | None:
        """The edge written at ``pos`` (a bullet counts anywhere on its line)."""
        best: Ref | None = None
        for ref in self._out.get(path, ()):
            if ref.line != pos.line:
                continue
            if ref.range.contains(pos) or (
                ref.anchor_range is not None and ref.anchor_range.contains(pos)
            ):
                return ref
            if ref.kind == INDEX_BULLET:
                best = ref
        return best

    def broken(self) -> Iterator[Ref]:
        """Edges to memory files that do not exist."""
        for refs in self._out.values():
            for ref in refs:
                if not ref.exists and ref.kind != ANCHOR:
                    yield ref

    def headings(self, path: Path) -> list[HeadingNode]:
        doc = self.ws.document(path)
        if doc is None:
            return []
        return [HeadingNode(path, h, slug(h.title)) for h in doc.headings]

    def heading(self, path: Path, anchor: str) -> HeadingNode | None:
        key = slug(anchor)
        return next((h for h in self.headings(path) if h.slug == key), None)

    def paths(self) -> frozenset[Path]:
        return self._paths


_GRAPHS: weakref.WeakKeyDictionary[Workspace, LinkGraph] = weakref.WeakKeyDictionary()


def graph_of(ws: Workspace) -> LinkGraph:
    """The workspace's link graph, built on first use and brought up to date on each call."""
    graph = _GRAPHS.get(ws)
    if graph is None:
        graph = LinkGraph(ws)
        _GRAPHS[ws] = graph
    return graph.update()


def node_target(ws: Workspace, doc: Document, pos: Position) -> tuple[Path, str | None] | None:
    """What a position names, as a graph node (file, heading anchor or None):

    an edge → its target (and anchor); a checkpoint's ``# Checkpoint:`` title → the
    checkpoint file; a file's ``# `` title (or its first line) → the file; another heading
    → that heading."""
    graph = graph_of(ws)
    ref = graph.ref_at(doc.path, pos)
    if ref is not None:
        anchor = ref.anchor if (ref.anchor and ref.anchor_range is not None) else None
        if ref.kind == ANCHOR:
            return doc.path, ref.anchor
        if anchor is not None and ref.anchor_range is not None and ref.anchor_range.contains(pos):
            return ref.target, anchor
        return ref.target, None
    for h in doc.headings:
        if h.line != pos.line:
            continue
        if h.level == 1:
            return doc.path, None
        return doc.path, h.title
    if pos.line == 0 and file_title(doc) is None:
        return doc.path, None
    return None


def relative_path(target: Path, source_dir: Path) -> str:
    """``target`` as a POSIX path relative to ``source_dir``."""
    return Path(os.path.relpath(target, source_dir)).as_posix()


__all__ = [
    "ANCHOR",
    "CODE",
    "CONTINUE",
    "INDEX_BULLET",
    "MARKDOWN",
    "NAME_KINDS",
    "PATH_BULLET",
    "PATH_KINDS",
    "PLAN",
    "REFERENCE",
    "WIKILINK",
    "HeadingNode",
    "LinkGraph",
    "RawRef",
    "Ref",
    "checkpoint_title_range",
    "extract",
    "file_title",
    "graph_of",
    "node_target",
    "relative_path",
    "slug",
]
