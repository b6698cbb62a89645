"""Document links: every link the rules check, to the file the one resolver finds for it
(:mod:`memls.core.formats.links`, as IX009 does), and bullets / ``continue name`` to
checkpoints."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from pygls.capabilities import get_capability

from memls.core.formats.links import extract_links
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
            uris: dict[Path, str] = {}  # one URI per target: an index repeats its targets
            for link in extract_links(doc):
                target = ws.links.resolve(link)
                if target is None:
                    continue
                uri = uris.get(target)
                if uri is None:
                    uri = uris[target] = convert.path_to_uri(target.resolve())
                out.append(
                    types.DocumentLink(
                        range=codec.range_to_lsp(link.range, doc.lines),
                        target=uri,
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
