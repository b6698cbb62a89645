"""The recall API every front calls: search, status, backfill, verify.

These four names (and the result types) are the stable entry points: the CLI, the
language server, the notebook, the MCP server, hooks, benchmarks and outside scripts call
``backfill(root, model=...)`` and ``search(root, query, mode=..., limit=..., model=...)``.
Each stage lives in its own module, named after its entry point: ``backfill``, ``search``,
``status``, ``verify``, with model choice and loading in ``models``. A front that must stay
light imports one stage directly (``memls recall search`` imports ``search`` alone).

Honesty rules the stages enforce: a search that could not use vectors says so
(``degraded=True`` and a plain message); status reports ``semantic`` only when a working
model and stored vectors exist, and says whether that was *verified*; a store made with a
model no installed plugin provides gets a message naming the model and the plugin, and
full-text search keeps working.
"""

from __future__ import annotations

from memls.core.recall.backfill import Progress, backfill
from memls.core.recall.models import EMBED_BATCH, HASH, MINILM, plugin_hint
from memls.core.recall.search import MODES, SearchResponse, SearchResult, search
from memls.core.recall.status import status
from memls.core.recall.verify import PROBE_CHARS, verify

__all__ = [
    "EMBED_BATCH",
    "HASH",
    "MINILM",
    "MODES",
    "PROBE_CHARS",
    "Progress",
    "SearchResponse",
    "SearchResult",
    "backfill",
    "plugin_hint",
    "search",
    "status",
    "verify",
]
