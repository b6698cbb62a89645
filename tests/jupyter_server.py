"""Starting a throwaway Jupyter server on 127.0.0.1 for the JupyterLab and Notebook 7 tests."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def write_kernelspec(data_dir: Path) -> None:
    """A ``python3`` kernelspec that launches ipykernel with this very interpreter."""
    spec = data_dir / "kernels" / "python3"
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Python 3 (memls venv)",
                "language": "python",
            }
        ),
        encoding="utf-8",
    )


def example_notebooks(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A copy of examples/ to serve, and an environment whose Jupyter config, data, runtime
    and IPython dirs are private to ``tmp_path`` (so no user or system kernel or setting
    leaks in), whose ``python3`` kernel is this interpreter, whose TMPDIR is removed with
    ``tmp_path``, and whose frontends never ask to fetch news over the screenshots."""
    notebooks = tmp_path / "notebooks"
    shutil.copytree(EXAMPLES, notebooks, ignore=shutil.ignore_patterns(".memls"))
    data = tmp_path / "data"
    write_kernelspec(data)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_DATA_DIR": str(data),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "IPYTHONDIR": str(tmp_path / "ipython"),
        "JUPYTER_PLATFORM_DIRS": "1",
        "TMPDIR": str(scratch),
        "MEMLS_NOTEBOOK_MODEL": "memls-hash",
    }
    env.pop("JUPYTER_PATH", None)
    # JupyterLab and Notebook 7 both read user settings from <config>/lab/user-settings
    settings = tmp_path / "config" / "lab" / "user-settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}')
    return notebooks, env


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def running_jupyter(
    module: str, root: Path, env: Mapping[str, str], log_path: Path, extra: Sequence[str] = ()
) -> Iterator[str]:
    """Run ``python -m <module>`` (jupyter_server, jupyterlab or notebook) with no token on a free
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
