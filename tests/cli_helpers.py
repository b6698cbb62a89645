"""Run the ``memls`` command line in a child process, the way a user or an editor would."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TIMEOUT = 120
"""Seconds a command may take before the test fails (no test waits forever on memls)."""


def run_memls(*args: str, cwd: Path, timeout: float = TIMEOUT) -> subprocess.CompletedProcess[str]:
    """``python -m memls ARGS`` in ``cwd``; output captured as text, exit status left to the test."""
    return subprocess.run(
        [sys.executable, "-m", "memls", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
    )


def memls_on(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``memls ARGS --root ROOT``, run from the root."""
    return run_memls(*args, "--root", str(root), cwd=root)


def memls_bytes_on(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    """``memls ARGS --root ROOT`` with its output kept as bytes."""
    return subprocess.run(
        [sys.executable, "-m", "memls", *args, "--root", str(root)],
        cwd=root,
        capture_output=True,
        check=False,
        timeout=TIMEOUT,
    )
