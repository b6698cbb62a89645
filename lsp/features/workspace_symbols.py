"""Workspace symbols across every memory root: checkpoints, topic files (by title and
name), headings and LOG entries, matched fuzzily (the query's letters in order)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from lsprotocol import types

from memls.core.graph import checkpoint_title_range, file_title
from memls.core.model import Document, FileKind, Range
from memls.core.workspace import Workspace, checkpoint_name
from memls.lsp import convert
from memls.lsp.features import LanguageFeature

LIMIT = 500


class WorkspaceSymbols(LanguageFeature):
    async def symbols(self, params: types.WorkspaceSymbolParams) -> list[types.SymbolInformation]:
        def compute() -> list[types.SymbolInformation]:
            scored: list[tuple[int, str, types.SymbolInformation]] = []
            for ws in list(self.server.memory.workspaces.values()):
                for name, kind, path, rng, container in symbols_of(ws):
                    score = fuzzy_score(params.query, name)
                    if score is None:
                        continue
                    doc = ws.document(path)
                    lines = doc.lines if doc is not None else ()
                    info = types.SymbolInformation(
                        name=name,
                        kind=kind,
                        location=convert.location(path, rng, self.server.codec, lines),
                        container_name=container,
                    )
                    scored.append((score, name.casefold(), info))
            scored.sort(key=lambda s: (-s[0], s[1]))
            return [info for _, _, info in scored[:LIMIT]]

        return await self.server.memory.run(compute)


Symbol = tuple[str, types.SymbolKind, Path, Range, str]


def symbols_of(ws: Workspace) -> Iterator[Symbol]:
    """(name, kind, file, range, container) for every symbol of one root."""
    root_name = ws.root.name
    for path in ws.paths():
        doc = ws.document(path)
        if doc is None or doc.kind is FileKind.TRANSCRIPT:
            continue
        rel = path.relative_to(ws.root).as_posix()
        yield from _of_document(doc, rel, root_name)


def _of_document(doc: Document, rel: str, root_name: str) -> Iterator[Symbol]:
    path = doc.path
    title = file_title(doc)
    top = title.title_range if title is not None else Range.point(0)
    name = checkpoint_name(path)
    if doc.kind is FileKind.CHECKPOINT and name is not None:
        rng = checkpoint_title_range(doc) or top
        yield f"checkpoint {name}", types.SymbolKind.Event, path, rng, root_name
    elif doc.kind is FileKind.TOPIC:
        label = title.title if title is not None and title.title else path.stem
        yield label, types.SymbolKind.File, path, top, rel
        if label != path.stem:
            yield path.name, types.SymbolKind.File, path, top, rel
    for heading in doc.headings:
        if heading.level == 1 or not heading.title:
            continue
        if doc.kind is FileKind.LOG and heading.level == 2:
            kind = types.SymbolKind.Event
        else:
            kind = types.SymbolKind.String
        yield heading.title, kind, path, heading.title_range, rel


def fuzzy_score(query: str, name: str) -> int | None:
    """None when ``query``'s characters do not all appear in ``name`` in order; otherwise a
    score that favours prefixes, word starts and consecutive runs (empty query: 0)."""
    q = "".join(query.split()).casefold()
    if not q:
        return 0
    text = name.casefold()
    score = 0
    at = 0
    previous = -2
    for ch in q:
        found = text.find(ch, at)
        if found < 0:
            return None
        if found == previous + 1:
            score += 5
        if found == 0 or not text[found - 1].isalnum():
            score += 3
        score -= min(found - at, 10) // 3
        previous = found
        at = found + 1
    if text.startswith(q):
        score += 20
    elif q in text:
        score += 10
    return score - len(text) // 20


__all__ = ["WorkspaceSymbols", "fuzzy_score", "symbols_of"]
