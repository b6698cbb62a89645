"""Document links: pointers to memory files, and bullets / ``continue name`` to checkpoints."""

from __future__ import annotations

from lsprotocol import types
from pygls.capabilities import get_capability

from memls.lsp import convert
from memls.lsp.features import LanguageFeature
from memls.lsp.references import checkpoint_refs


class Links(LanguageFeature):
    async def document_links(self, params: types.DocumentLinkParams) -> list[types.DocumentLink]:
        def compute() -> list[types.DocumentLink]:
            found = self.locate(params.text_document.uri)
            if found is None:
                return []
            ws, doc = found
            codec = self.server.codec
            tips = bool(
                get_capability(
                    self.server.client_capabilities,
                    "text_document.document_link.tooltip_support",
                    False,
                )
            )
            out: list[types.DocumentLink] = []
            for link in doc.links:
                target = ws.resolve_pointer(doc, link.target)
                if target is not None:
                    out.append(
                        types.DocumentLink(
                            range=codec.range_to_lsp(link.target_range, doc.lines),
                            target=convert.path_to_uri(target.resolve()),
                            tooltip=f"Open {link.target}" if tips else None,
                        )
                    )
            checkpoints = ws.checkpoints()
            for ref in checkpoint_refs(ws, doc):
                path = checkpoints.get(ref.name)
                if path is not None:
                    out.append(
                        types.DocumentLink(
                            range=codec.range_to_lsp(ref.range, doc.lines),
                            target=convert.path_to_uri(path),
                            tooltip=f"Open checkpoint {ref.name}" if tips else None,
                        )
                    )
            return out

        return await self.server.memory.run(compute)
