"""Folding ranges: every section, every fenced code block and the frontmatter."""

from __future__ import annotations

from lsprotocol import types

from memls.lsp.features import LanguageFeature


class Folding(LanguageFeature):
    async def folding_ranges(self, params: types.FoldingRangeParams) -> list[types.FoldingRange]:
        def compute() -> list[types.FoldingRange]:
            found = self.locate(params.text_document.uri)
            if found is None:
                return []
            doc = found[1]
            out: list[types.FoldingRange] = []
            for section in doc.sections:
                last = section.end_line - 1
                while last > section.start_line and not doc.line_text(last).strip():
                    last -= 1
                if last > section.start_line:
                    out.append(types.FoldingRange(start_line=section.start_line, end_line=last))
            for first, end in doc.fences:
                if end > first:
                    out.append(types.FoldingRange(first, end, kind=types.FoldingRangeKind.Region))
            fm = doc.frontmatter
            if fm is not None and fm.end_line > fm.start_line:
                out.append(
                    types.FoldingRange(
                        fm.start_line, fm.end_line, kind=types.FoldingRangeKind.Comment
                    )
                )
            return out

        return await self.server.memory.run(compute)
