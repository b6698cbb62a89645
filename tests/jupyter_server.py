"""Starting a throwaway Jupyter server on 127.0.0.1 for the JupyterLab tests."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def running_jupyter(
    module: str, root: Path, env: Mapping[str, str], log_path: Path, extra: Sequence[str] = ()
) -> Iterator[str]:
    """Run ``python -m <module>`` (jupyter_server or jupyterlab) with no token on a free
    port over ``root``; yield its base URL once /api/status answers; stop it afterwards."""
    port = free_port()
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                module,
                "--no-browser",
                "--allow-root",
                "--ServerApp.ip=127.0.0.1",
                f"--ServerApp.port={port}",
                "--IdentityProvider.token=",
                "--ServerApp.password=",
                f"--ServerApp.root_dir={root}",
                *extra,
            ],
            cwd=root,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=dict(env),
        )
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        try:
            while True:
                try:
                    with urllib.request.urlopen(f"{base}/api/status", timeout=2):
                        break
                except OSError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        pytest.fail(f"{module} did not start:\n{log_path.read_text()[-3000:]}")
                    time.sleep(0.2)
            yield base
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
