"""References: from a link, an Active Checkpoints bullet, a ``continue`` line, a checkpoint's
``# Checkpoint:`` title, a file's title or a heading, every place in the memory that points
there (answered from the core link graph)."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from memls.core.graph import ANCHOR, Ref, file_title, graph_of, node_target, slug
from memls.core.model import Range
from memls.core.workspace import Workspace
from memls.lsp import convert
from memls.lsp.convert import PositionCodec
from memls.lsp.features import LanguageFeature


class References(LanguageFeature):
    async def references(self, params: types.ReferenceParams) -> list[types.Location]:
        def compute() -> list[types.Location]:
            found = self.locate(params.text_document.uri)
            if found is None:
                return []
            ws, doc = found
            pos = self.server.codec.from_lsp(params.position, doc.lines)
            node = node_target(ws, doc, pos)
            if node is None:
                return []
            path, anchor = node
            return locations(
                ws, path, anchor, self.server.codec, params.context.include_declaration
            )

        return await self.server.memory.run(compute)


def incoming(ws: Workspace, path: Path, anchor: str | None) -> list[Ref]:
    """The edges into a file (its own table-of-contents anchors left out) or a heading."""
    refs = graph_of(ws).refs_to(path, anchor)
    if anchor is None:
        refs = [r for r in refs if r.kind != ANCHOR]
    return refs


def locations(
    ws: Workspace,
    path: Path,
    anchor: str | None,
    codec: PositionCodec,
    include_declaration: bool = False,
) -> list[types.Location]:
    """Where ``path`` (or its heading ``anchor``) is referenced, as LSP locations."""
    out: list[types.Location] = []
    if include_declaration:
        declared = declaration(ws, path, anchor)
        if declared is not None:
            lines = doc.lines if (doc := ws.document(path)) is not None else ()
            out.append(convert.location(path, declared, codec, lines))
    for ref in incoming(ws, path, anchor):
        doc = ws.document(ref.source)
        lines = doc.lines if doc is not None else ()
        rng = ref.anchor_range if anchor is not None and ref.anchor_range else ref.range
        out.append(convert.location(ref.source, rng, codec, lines))
    return out


def declaration(ws: Workspace, path: Path, anchor: str | None) -> Range | None:
    """The heading a reference leads to: the named heading, else the file's title."""
    doc = ws.document(path)
    if doc is None:
        return None
    if anchor is not None:
        key = slug(anchor)
        heading = next((h for h in doc.headings if slug(h.title) == key), None)
        return heading.title_range if heading is not None else None
    title = file_title(doc)
    return title.title_range if title is not None else Range.point(0)
