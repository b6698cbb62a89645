"""Driving examples/recall.ipynb's widgets in headless Debian Chromium, for every frontend.

The JupyterLab 4 and Notebook 7 tests differ only in how they open and run the notebook; the
checks on the rendered widgets (query, results, preview, map click, board) are shared here.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

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


@contextlib.contextmanager
def chromium_page() -> Iterator[tuple[Page, list[str]]]:
    """A page in headless /usr/bin/chromium (never a downloaded browser) and the list its
    uncaught page errors go to; skips, printing why, when Chromium or Playwright is absent."""
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
            yield page, errors
        finally:
            browser.close()


def wait_for_notebook_kernel(page: Page) -> str:
    """Wait until the frontend exposed as ``window.jupyterapp`` has the notebook open with a
    ready kernel session (no kernel-picker dialog in the way); return the kernel's name."""
    page.wait_for_function(
        "() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
        " && window.jupyterapp.shell.currentWidget.sessionContext",
        timeout=60_000,
    )
    return str(
        page.evaluate(
            """async () => {
                const panel = window.jupyterapp.shell.currentWidget;
                await panel.context.ready;
                await panel.sessionContext.ready;
                return panel.sessionContext.session.kernel.name;
            }"""
        )
    )


def check_widgets(page: Page) -> tuple[Locator, Locator, Locator]:
    """After the notebook ran: the explorer shows the prefilled query's results, a typed query
    finds its expected file with the match marked in the preview, the map drew points and a
    click on one previews that chunk in the explorer, and the board lists the checkpoints.
    Returns the explorer, map and board locators for screenshots."""
    explorer = page.locator(".memls-explorer")
    explorer.locator(".memls-result").first.wait_for(timeout=90_000)
    # The first results may be an earlier render (the prefilled query also searches as it is
    # set); wait for the notebook's own search to show its expected file.
    expected = explorer.locator(".memls-result", has_text="memory/recall-degraded-mode.md")
    expected.first.wait_for(timeout=30_000)
    # the output area may re-render its views once more (the next cells run): read the text
    # with Playwright's retrying assertion, not a single inner_text() taken mid-render
    from playwright.sync_api import expect

    expect(explorer).to_contain_text("memory/recall-degraded-mode.md", timeout=30_000)

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
    memory_map.locator("svg circle.memls-point").first.wait_for(state="attached", timeout=30_000)
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
    select = memory_map.locator("select")
    deadline = time.monotonic() + 10
    while not select.input_value().startswith(f"#{index + 1} ") and time.monotonic() < deadline:
        page.wait_for_timeout(100)  # the list is set by the same round trip as the ring
    assert select.input_value().startswith(f"#{index + 1} ")
    board = page.locator(".memls-board")
    board.get_by_role("button", name="Draft_Notes").wait_for(timeout=30_000)
    return explorer, memory_map, board
