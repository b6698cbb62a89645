"""jupyter-lsp spec (entry point ``jupyter_lsp_spec_v1``): lets JupyterLab start memls for Markdown."""

from __future__ import annotations

import sys
from typing import Any


def spec(app: Any) -> dict[str, Any]:
    """The language server spec jupyter-lsp reads; ``app`` is the Jupyter app (unused)."""
    return {
        "memls": {
            "display_name": "memls",
            "argv": [sys.executable, "-m", "memls.lsp"],
            "languages": ["markdown"],
            "mime_types": ["text/markdown", "text/x-markdown"],
            "version": 2,
        }
    }
