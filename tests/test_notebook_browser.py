"""The example notebook in a real browser: JupyterLab 4 + headless Debian Chromium (Playwright).

Starts JupyterLab on 127.0.0.1 (free port, no token, private config/data/IPython dirs whose
``python3`` kernelspec is this interpreter) serving a copy of ``examples/``, opens
``recall.ipynb``, runs every cell, types a query into the explorer, waits for its results,
checks the memory map drew points and that clicking one opens it in the explorer, checks
the board's rows, and saves screenshots under ``tests/artifacts/``. Skips with the reason
when /usr/bin/chromium is absent; never downloads a browser.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.jupyter_browser import ARTIFACTS, check_widgets, chromium_page, wait_for_notebook_kernel
from tests.jupyter_server import example_notebooks, running_jupyter

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[str]:
    """A JupyterLab server over a copy of examples/; yields its base URL."""
    pytest.importorskip("jupyterlab")
    notebooks, env = example_notebooks(tmp_path)
    extra = [
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    with running_jupyter("jupyterlab", notebooks, env, tmp_path / "lab.log", extra) as base:
        yield base


def test_example_notebook_in_jupyterlab(lab: str) -> None:
    with chromium_page() as (page, errors):
        page.goto(f"{lab}/lab/tree/recall.ipynb?reset", wait_until="domcontentloaded")
        assert wait_for_notebook_kernel(page) == "python3"
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")

        explorer, memory_map, board = check_widgets(page)

        explorer.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "notebook.png"))
        explorer.screenshot(path=str(ARTIFACTS / "notebook-explorer.png"))
        memory_map.scroll_into_view_if_needed()
        memory_map.screenshot(path=str(ARTIFACTS / "notebook-map.png"))
        board.scroll_into_view_if_needed()
        board.screenshot(path=str(ARTIFACTS / "notebook-board.png"))
        assert not [e for e in errors if "memls" in e.lower()], errors
