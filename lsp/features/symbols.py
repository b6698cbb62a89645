"""Document symbols: the section outline (``#`` headings nest by level)."""

from __future__ import annotations

from lsprotocol import types

from memls.core.model import Document, Range
from memls.lsp.convert import PositionCodec
from memls.lsp.features import LanguageFeature


class Symbols(LanguageFeature):
    async def document_symbols(
        self, params: types.DocumentSymbolParams
    ) -> list[types.DocumentSymbol]:
        def compute() -> list[types.DocumentSymbol]:
            found = self.locate(params.text_document.uri)
            return outline(found[1], self.server.codec) if found else []

        return await self.server.memory.run(compute)


def outline(doc: Document, codec: PositionCodec) -> list[types.DocumentSymbol]:

    roots: list[types.DocumentSymbol] = []
    stack: list[tuple[int, types.DocumentSymbol]] = []
    children: dict[int, list[types.DocumentSymbol]] = {}
    for section in doc.sections:
        last = max(section.start_line, section.end_line - 1)
        full = Range.of(section.start_line, 0, last, len(doc.line_text(last)))
        symbol = types.DocumentSymbol(
            name=section.title or "(untitled)",
            kind=types.SymbolKind.Namespace if section.level == 1 else types.SymbolKind.String,
            range=codec.range_to_lsp(full, doc.lines),
            selection_range=codec.range_to_lsp(section.heading.title_range, doc.lines),
        )
        children[id(symbol)] = []
        symbol.children = children[id(symbol)]
        while stack and stack[-1][0] >= section.level:
            stack.pop()
        if stack:
            children[id(stack[-1][1])].append(symbol)
        else:
            roots.append(symbol)
        stack.append((section.level, symbol))
    return roots
