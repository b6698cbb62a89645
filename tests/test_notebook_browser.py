"""The example notebook in a real browser: JupyterLab 4 + headless Debian Chromium (Playwright).

Starts JupyterLab on 127.0.0.1 (free port, no token, private config/data/IPython dirs whose
``python3`` kernelspec is this interpreter) serving a copy of ``examples/``, opens
``recall.ipynb``, runs every cell, types a query into the explorer, waits for its results,
checks the memory map drew points and that clicking one opens it in the explorer, checks
the board's rows, and saves screenshots under ``tests/artifacts/``. Skips with the reason
when /usr/bin/chromium is absent; never downloads a browser.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.jupyter_server import running_jupyter
from tests.test_notebook_exec import write_kernelspec

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PROJECT = Path(__file__).resolve().parents[1]
ARTIFACTS = PROJECT / "tests" / "artifacts"
CHROMIUM = Path("/usr/bin/chromium")


CLICKABLE_POINT = """(map, shownPath) => {
    // the first point, from a file other than the one previewed, that is on top where it is drawn
    for (const circle of map.querySelectorAll("svg circle.memls-point")) {
        const where = circle.querySelector("title").textContent.split(": ")[1].split(" — ")[0];
        if (where.startsWith(shownPath + ":")) continue;
        const box = circle.getBoundingClientRect();
        const top = document.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2);
        if (top === circle || circle.contains(top)) {
            return [Number(circle.dataset.index), where.replace(/-(\\d+)$/, "\u2013$1")];
        }
    }
    return [-1, ""];
}"""


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[str]:
    """A JupyterLab server over a copy of examples/; yields its base URL."""
    pytest.importorskip("jupyterlab")
    notebooks = tmp_path / "notebooks"
    shutil.copytree(PROJECT / "examples", notebooks, ignore=shutil.ignore_patterns(".memls"))
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
    # no "get Jupyter news?" toast over the screenshots
    settings = tmp_path / "config" / "lab" / "user-settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}')
    extra = [
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    with running_jupyter("jupyterlab", notebooks, env, tmp_path / "lab.log", extra) as base:
        yield base


def test_example_notebook_in_jupyterlab(lab: str) -> None:
    if not CHROMIUM.exists():
        print(f"skipping: {CHROMIUM} is absent (make test installs it with apt)")
        pytest.skip(f"{CHROMIUM} is absent (make test installs chromium with apt)")
    sync_api = pytest.importorskip("playwright.sync_api")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1100})
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(f"{lab}/lab/tree/recall.ipynb?reset", wait_until="domcontentloaded")
            page.wait_for_function(
                "() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
                " && window.jupyterapp.shell.currentWidget.sessionContext",
                timeout=60_000,
            )
            kernel = page.evaluate(
                """async () => {
                    const panel = window.jupyterapp.shell.currentWidget;
                    await panel.context.ready;
                    await panel.sessionContext.ready;
                    return panel.sessionContext.session.kernel.name;
                }"""
            )
            assert kernel == "python3"
            page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")

            explorer = page.locator(".memls-explorer")
            explorer.locator(".memls-result").first.wait_for(timeout=90_000)
            assert "memory/recall-degraded-mode.md" in explorer.inner_text()

            # type a new query: the typed value syncs to the kernel, which searches and re-renders
            box = explorer.locator(".memls-query input")
            box.click()
            box.fill("testing feedback sleep")
            box.press("Enter")
            hit = explorer.locator(".memls-result", has_text="memory/feedback-testing.md")
            hit.first.wait_for(timeout=30_000)
            assert hit.first.is_visible()
            explorer.locator(".memls-preview mark").first.wait_for(timeout=10_000)
            status = explorer.locator(".memls-status").first.inner_text()
            assert "memls-hash" in status
            assert "semantic" in status

            memory_map = page.locator(".memls-memorymap")
            memory_map.locator("svg circle.memls-point").first.wait_for(
                state="attached", timeout=30_000
            )
            points = memory_map.locator("svg circle.memls-point").count()
            assert points > 5

            # click a point: the kernel hears it and the explorer previews that chunk
            memory_map.scroll_into_view_if_needed()
            shown = explorer.locator(".memls-preview .memls-path").first.inner_text()
            index, where = memory_map.evaluate(CLICKABLE_POINT, shown.split(":")[0])
            assert index >= 0, "no unobstructed point from another file"
            memory_map.locator(f'svg circle.memls-point[data-index="{index}"]').click()
            explorer.locator(".memls-preview .memls-path", has_text=where).wait_for(timeout=30_000)
            ring = memory_map.locator("svg circle.memls-selected-point")
            ring.wait_for(state="attached", timeout=10_000)
            # the list beside the picture follows the click
            assert memory_map.locator("select").input_value().startswith(f"#{index + 1} ")
            board = page.locator(".memls-board")
            board.get_by_role("button", name="Draft_Notes").wait_for(timeout=30_000)

            explorer.scroll_into_view_if_needed()
            page.screenshot(path=str(ARTIFACTS / "notebook.png"))
            explorer.screenshot(path=str(ARTIFACTS / "notebook-explorer.png"))
            memory_map.scroll_into_view_if_needed()
            memory_map.screenshot(path=str(ARTIFACTS / "notebook-map.png"))
            board.scroll_into_view_if_needed()
            board.screenshot(path=str(ARTIFACTS / "notebook-board.png"))
            assert not [e for e in errors if "memls" in e.lower()], errors
        finally:
            browser.close()
