"""Document symbols: the section outline (``#`` headings nest by level).

Clients that announce ``hierarchicalDocumentSymbolSupport`` get nested ``DocumentSymbol``s;
others get the flat ``SymbolInformation`` list the protocol prescribes for them, with each
section's parent heading as its container.
"""

from __future__ import annotations

from collections.abc import Sequence

from lsprotocol import types
from pygls.capabilities import get_capability

from memls.core.model import Document, Range
from memls.lsp.convert import PositionCodec
from memls.lsp.features import LanguageFeature


class Symbols(LanguageFeature):
    async def document_symbols(
        self, params: types.DocumentSymbolParams
    ) -> list[types.DocumentSymbol] | list[types.SymbolInformation]:
        nested = get_capability(
            self.server.client_capabilities,
            "text_document.document_symbol.hierarchical_document_symbol_support",
            False,
        )

        def compute() -> list[types.DocumentSymbol] | list[types.SymbolInformation]:
            found = self.locate(params.text_document.uri)
            if not found:
                return []
            tree = outline(found[1], self.server.codec)
            return tree if nested else flatten(tree, params.text_document.uri)

        return await self.server.memory.run(compute)


def flatten(
    tree: Sequence[types.DocumentSymbol], uri: str, container: str | None = None
) -> list[types.SymbolInformation]:
    """The outline as SymbolInformation, parents before their children."""
    out: list[types.SymbolInformation] = []
    for symbol in tree:
        out.append(
            types.SymbolInformation(
                name=symbol.name,
                kind=symbol.kind,
                location=types.Location(uri=uri, range=symbol.range),
                container_name=container,
            )
        )
        out.extend(flatten(symbol.children or [], uri, symbol.name))
    return out


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
