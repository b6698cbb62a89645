"""Go to definition: from an Active Checkpoints bullet or ``continue name`` to the checkpoint
file, from a link (``file.md#anchor``, ``[[name#heading]]``, ``#anchor``) to the heading it
names (else the file's title), and from any other link to the file the one resolver finds
for it (:mod:`memls.core.formats.links`, as IX009 does)."""

from __future__ import annotations

from lsprotocol import types

from memls.core.formats.links import link_at
from memls.core.graph import NAME_KINDS
from memls.core.model import Range
from memls.lsp import convert
from memls.lsp.features import LanguageFeature
from memls.lsp.features.references import declaration
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
            edge = ws.graph().ref_at(doc.path, pos)
            if edge is not None and edge.kind not in NAME_KINDS and edge.exists:
                # a link into a memory file: to the #anchor's heading, else the file's title
                target_doc = ws.document(edge.target)
                rng = declaration(ws, edge.target, edge.anchor) or start
                lines = target_doc.lines if target_doc is not None else ()
                return [convert.location(edge.target, rng, self.server.codec, lines)]
            link = link_at(doc, pos)
            resolved = ws.links.resolve(link) if link is not None else None
            if resolved is not None:
                return [convert.location(resolved, start, self.server.codec, ())]
            return []

        return await self.server.memory.run(compute)
