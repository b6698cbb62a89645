"""Run the ``memls`` command line in a child process, the way a user or an editor would."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def run_memls(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -m memls ARGS`` in ``cwd``; output captured as text, exit status left to the test."""
    return subprocess.run(
        [sys.executable, "-m", "memls", *args], cwd=cwd, capture_output=True, text=True, check=False
    )


def memls_on(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``memls ARGS --root ROOT``, run from the root."""
    return run_memls(*args, "--root", str(root), cwd=root)
