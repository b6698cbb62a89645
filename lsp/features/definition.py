"""Go to definition: from an Active Checkpoints bullet or ``continue name`` to the checkpoint
file, and from a pointer to the memory file it names."""

from __future__ import annotations

from lsprotocol import types

from memls.core.model import Range
from memls.lsp import convert
from memls.lsp.features import LanguageFeature
from memls.lsp.references import checkpoint_ref_at


class Definition(LanguageFeature):
    async def definition(self, params: types.DefinitionParams) -> list[types.Location]:
        def compute() -> list[types.Location]:
            found = self.locate(params.text_document.uri)
            if found is None:
                return []
            ws, doc = found
            pos = self.server.codec.from_lsp(params.position, doc.lines)
            start = Range.point(0)
            ref = checkpoint_ref_at(ws, doc, pos)
            if ref is not None:
                target = ws.checkpoints().get(ref.name)
                return [convert.location(target, start, self.server.codec, ())] if target else []
            for link in doc.links:
                if link.line == pos.line and link.range.contains(pos):
                    resolved = ws.resolve_pointer(doc, link.target)
                    if resolved is not None:
                        return [convert.location(resolved, start, self.server.codec, ())]
            return []

        return await self.server.memory.run(compute)
