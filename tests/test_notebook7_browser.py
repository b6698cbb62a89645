"""The example notebook in a real browser: Jupyter Notebook 7 + headless Debian Chromium.

Starts ``python -m notebook`` (Notebook 7) on 127.0.0.1 with the same private Jupyter dirs and
venv kernelspec as the JupyterLab test, opens ``/notebooks/recall.ipynb``, runs every cell from
the Run menu, and runs the shared widget checks (query, results, preview, map click, board);
saves ``tests/artifacts/notebook7.png``.

The repository's top-level ``notebook/`` folder (memls's own subpackage) would shadow Jupyter's
``notebook`` package on a ``sys.path`` that holds the project root, so Jupyter's package is
never imported here: the server runs as a subprocess from the temporary copy of examples/, and
the test first checks that ``python -m notebook`` there really is Notebook 7.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.jupyter_browser import ARTIFACTS, check_widgets, chromium_page, wait_for_notebook_kernel
from tests.jupyter_server import example_notebooks, running_jupyter

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def notebook7(tmp_path: Path) -> Iterator[str]:
    """A Notebook 7 server over a copy of examples/; yields its base URL."""
    notebooks, env = example_notebooks(tmp_path)
    env.pop("PYTHONPATH", None)  # nothing may put the project root (and its notebook/) first
    version = subprocess.run(
        [sys.executable, "-m", "notebook", "--version"],
        cwd=notebooks,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if version.returncode != 0:
        print(f"skipping: Jupyter Notebook is not installed ({version.stderr.strip()[-200:]})")
        pytest.skip("Jupyter Notebook 7 is not installed (make install-dev installs it)")
    assert version.stdout.strip().startswith("7."), version.stdout + version.stderr
    extra = ["--expose-app-in-browser"]
    with running_jupyter("notebook", notebooks, env, tmp_path / "notebook7.log", extra) as base:
        yield base


def test_example_notebook_in_notebook7(notebook7: str) -> None:
    with chromium_page() as (page, errors):
        page.goto(f"{notebook7}/notebooks/recall.ipynb", wait_until="domcontentloaded")
        assert wait_for_notebook_kernel(page) == "python3"
        assert page.evaluate("() => window.jupyterapp.name") == "Jupyter Notebook"
        # Notebook 7's own menu bar, as a user would: Run → Run All Cells
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_role("menuitem", name="Run All Cells", exact=True).click()

        explorer, _memory_map, _board = check_widgets(page)

        explorer.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "notebook7.png"))
        assert not [e for e in errors if "memls" in e.lower()], errors
