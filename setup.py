"""Refuse to build or install a checkout whose ``memls/`` links are text files.

Everything else about the build is in pyproject.toml. ``memls/core``, ``memls/lsp``, … are
symbolic links to the top-level folders (ARCHITECTURE.md, "Windows" says why); a checkout
made with Git's ``core.symlinks`` off turns them into text files, and a wheel or an
editable install of it would lack the whole package. ``memls/__init__.py`` makes the check
(the same message at import time); this runs it before setuptools does anything.
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent


def refuse_flattened_links() -> None:
    try:
        runpy.run_path(str(HERE / "memls" / "__init__.py"), run_name="memls_checkout_check")
    except ImportError as exc:
        sys.exit(f"error: cannot build memls from {HERE}: {exc}")


refuse_flattened_links()
if __name__ == "__main__":
    setup()
