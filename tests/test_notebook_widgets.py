"""The notebook widgets driven without a frontend: set ``.value``, click buttons, read children.

Each test works on a copy of an example root under tmp_path with the weight-free
``memls-hash`` model, so backfills take milliseconds and the repository stays untouched.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("ipywidgets")

from memls.notebook import (
    CheckpointBoard,
    MemoryMap,
    RecallExplorer,
    render,
)
from memls.notebook.memorymap import project_2d, squarify
from tests.conftest import NOW

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
HASH = "memls-hash"


@pytest.fixture
def orchestrator(tmp_path: Path) -> Path:
    return Path(shutil.copytree(EXAMPLES / "orchestrator", tmp_path / "orchestrator"))


@pytest.fixture
def flat(tmp_path: Path) -> Path:
    return Path(shutil.copytree(EXAMPLES / "flat", tmp_path / "flat"))


def _backfilled(root: Path, **kwargs: object) -> RecallExplorer:
    explorer = RecallExplorer(root, model=HASH, debounce=0, **kwargs)
    explorer.backfill_button.click()
    assert explorer.wait(60)
    assert explorer.messages.error_text == ""
    return explorer


def _cards(explorer: RecallExplorer) -> list[str]:
    return [row.children[0].value for row in explorer.results.children]


def _until(condition: Callable[[], bool], timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


# --- RecallExplorer --------------------------------------------------------------------------


def test_fresh_root_shows_degraded_banner_until_backfill(orchestrator: Path) -> None:
    explorer = RecallExplorer(orchestrator, model=HASH, debounce=0)
    assert explorer.banner_visible
    assert "No recall index" in explorer.banner.value
    assert "mode</b> unavailable" in explorer.status_line.value

    explorer.backfill_button.click()
    assert explorer.wait(60)
    assert explorer.progress.value == explorer.progress.max > 0
    assert explorer.progress.bar_style == "success"
    assert not explorer.backfill_running
    assert not explorer.backfill_button.disabled
    assert explorer.cancel_button.disabled
    assert not explorer.banner_visible
    assert "mode</b> semantic" in explorer.status_line.value
    assert HASH in explorer.status_line.value
    assert "last backfill</b> never" not in explorer.status_line.value
    assert "done: Indexed" in explorer.progress_label.value
    assert explorer.last_backfill is not None
    assert explorer.last_backfill["embedded"] > 0


def test_typing_a_query_renders_ranked_cards_and_a_preview(orchestrator: Path) -> None:
    explorer = _backfilled(orchestrator)
    explorer.query.value = "MiniLM wheel"
    cards = _cards(explorer)
    assert cards, explorer.summary.value
    assert len(cards) == len(explorer.response.results)  # type: ignore[union-attr]
    assert any("transcripts/.handoff.md:3" in card for card in cards)
    handoff = next(card for card in cards if "transcripts/.handoff.md" in card)
    assert "<mark>MiniLM</mark>" in handoff
    assert 'class="memls-badge"' in handoff
    assert ">handoff<" in handoff
    assert 'class="memls-bar"' in handoff
    assert "Current State" in handoff  # the heading
    # the top result is previewed: its section rendered by mistune, the match marked
    top = explorer.response.results[0]  # type: ignore[union-attr]
    assert explorer.selected == top
    assert f"{top.path}:{top.start_line}" in explorer.preview.value
    assert "<mark>" in explorer.preview.value
    # Preview on another card switches the pane to that section
    explorer.query.value = "handoff current state"
    assert explorer.response is not None
    target = next(
        i for i, r in enumerate(explorer.response.results) if r.path == "transcripts/.handoff.md"
    )
    explorer.results.children[target].children[1].click()
    assert "<h2><mark>Current</mark> <mark>State</mark></h2>" in explorer.preview.value
    assert "memls-selected" in explorer.results.children[target]._dom_classes


def test_mode_kind_and_limit_filters_go_to_core(orchestrator: Path) -> None:
    explorer = _backfilled(orchestrator)
    explorer.query.value = "fallback"
    assert explorer.response is not None
    assert explorer.response.mode == "hybrid"
    explorer.mode.value = "text"
    assert explorer.response.mode == "text"
    assert "Full-text search" in explorer.summary.value
    explorer.mode.value = "semantic"
    assert explorer.response.mode == "semantic"
    explorer.kind.value = "transcript"
    paths = {r.path for r in explorer.response.results}
    assert paths == {"transcripts/2026-11-20-recall-fallback.jsonl"}
    assert all(">transcript<" in card for card in _cards(explorer))
    # a transcript chunk previews the indexed turn text, not raw JSON
    assert "{&quot;" not in explorer.preview.value
    assert '{"' not in explorer.preview.value
    explorer.kind.value = "any kind"
    explorer.limit.value = 2
    assert len(explorer.results.children) == 2
    explorer.since.value = "2030-01-01"
    assert explorer.results.children == ()
    assert "No results" in explorer.summary.value


def test_bad_input_shows_in_the_error_area_not_as_a_traceback(orchestrator: Path) -> None:
    explorer = _backfilled(orchestrator)
    explorer.query.value = "fallback"
    shown = len(explorer.results.children)
    explorer.since.value = "last tuesday"  # core rejects it; the widget must not raise
    assert (
        "last tuesday" in explorer.messages.error_text
        or "since" in explorer.messages.error_text.lower()
    )
    assert explorer.messages.error.layout.display != "none"
    assert len(explorer.results.children) == shown  # the previous results stay
    explorer.since.value = ""
    assert explorer.messages.error_text == ""


def test_missing_root_is_reported_in_the_widget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    explorer = RecallExplorer(tmp_path / "nowhere", model=HASH)
    assert "not a directory" in explorer.messages.error_text
    assert explorer.query.disabled
    assert explorer.backfill_button.disabled
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.chdir(empty)
    monkeypatch.setenv("HOME", str(tmp_path))
    board = CheckpointBoard()
    assert "No memory root found" in board.messages.error_text
    assert board.save_button.disabled


def test_unknown_model_degrades_with_a_visible_banner(orchestrator: Path) -> None:
    explorer = RecallExplorer(orchestrator, model="no-such-model", debounce=0)
    explorer.start_backfill()
    assert explorer.wait(60)
    assert explorer.banner_visible
    assert "no installed llm plugin provides it" in explorer.banner.value
    assert "mode</b> text" in explorer.status_line.value
    explorer.query.value = "fallback"
    assert explorer.response is not None
    assert explorer.response.degraded
    assert explorer.results.children  # full-text search keeps working
    assert "degraded" in explorer.banner.value.lower()


def test_cancel_stops_backfill_and_the_next_run_finishes(orchestrator: Path) -> None:
    explorer = RecallExplorer(orchestrator, model=HASH, debounce=0)
    original = explorer._progress
    seen: list[tuple[int, int, str]] = []

    def progress(done: int, total: int, stage: str) -> None:
        seen.append((done, total, stage))
        original(done, total, stage)
        if len(seen) == 1:
            explorer.cancel_button.click()

    explorer._progress = progress  # type: ignore[method-assign]
    explorer.start_backfill()
    assert explorer.wait(60)
    assert explorer.last_backfill is not None
    assert explorer.last_backfill["cancelled"]
    assert explorer.progress.bar_style == "warning"
    assert "cancelled:" in explorer.progress_label.value
    assert explorer.progress.value < explorer.progress.max
    explorer._progress = original  # type: ignore[method-assign]
    explorer.start_backfill()
    assert explorer.wait(60)
    assert not explorer.last_backfill["cancelled"]
    assert explorer.progress.value == explorer.progress.max


def test_debounced_typing_and_enter(orchestrator: Path) -> None:
    explorer = _backfilled(orchestrator)
    explorer.debounce = 0.2
    explorer.query.value = "fall"
    explorer.query.value = "fallback"
    assert explorer.response is None  # nothing yet: the pause has not elapsed
    assert _until(lambda: bool(explorer.results.children))
    assert explorer.response is not None
    assert explorer.response.results
    # Enter: the frontend sends a "submit" message; the search runs at once
    explorer.debounce = 60
    explorer.query.value = "testing feedback"
    explorer.query._handle_string_msg(None, {"event": "submit"}, [])
    assert explorer.response is not None
    assert any(r.path == "memory/feedback-testing.md" for r in explorer.response.results)


def test_verify_button_reports_and_updates_status(orchestrator: Path) -> None:
    explorer = _backfilled(orchestrator)
    assert "verification</b> never" in explorer.status_line.value
    explorer.verify_button.click()
    assert "Verified" in explorer.messages.note_text
    assert "verification</b> ok" in explorer.status_line.value


def test_file_text_is_escaped_everywhere(orchestrator: Path) -> None:
    (orchestrator / "memory" / "evil.md").write_text(
        "# Evil <b>bold</b>\n\n## Script <img src=x onerror=alert(1)>\n"
        "Injected <script>alert('x')</script> payload here.\n",
        encoding="utf-8",
    )
    explorer = _backfilled(orchestrator)
    explorer.query.value = "injected payload"
    cards = _cards(explorer)
    evil = next(card for card in cards if "memory/evil.md" in card)
    assert "<script>" not in evil
    assert "<img" not in evil
    assert "&lt;script&gt;" in evil
    explorer.show(next(r for r in explorer.response.results if r.path == "memory/evil.md"))  # type: ignore[union-attr]
    assert "<script>" not in explorer.preview.value
    assert "<img" not in explorer.preview.value
    assert "&lt;script&gt;" in explorer.preview.value
    assert "<mark>Injected</mark>" in explorer.preview.value


def test_highlight_keeps_real_brackets_and_entities() -> None:
    assert render.highlight("see [link] and [fallback] here", "fallback") == (
        "see [link] and <mark>fallback</mark> here"
    )
    assert render.highlight("a & amp", "amp") == "a &amp; <mark>amp</mark>"
    assert render.highlight_html("<p class='amp'>amp &amp; x</p>", "amp") == (
        "<p class='amp'><mark>amp</mark> &amp; x</p>"
    )
    assert render.highlight("Testing tests", "tests") == "<mark>Testing</mark> <mark>tests</mark>"
    # full-text snippets mark stemmed matches in brackets: "testing" found "Tests"
    assert render.highlight("must [Tests] wait", "testing") == "must <mark>Tests</mark> wait"


# --- CheckpointBoard -------------------------------------------------------------------------


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_board_table_flags_and_diagnostics(flat: Path) -> None:
    _git(flat, "init", "-q", "-b", "main")
    board = CheckpointBoard(flat, now=NOW)
    assert board.messages.error_text == ""
    assert set(board.names) == {"feature-recall-fallback", "fix-index-parser", "Draft_Notes"}
    cells = [c.value if hasattr(c, "value") else c.description for c in board.table.children]
    assert cells[:6] == [
        f"<b>{c}</b>" for c in ("checkpoint", "branch", "saved", "age", "flags", "diagnostics")
    ]
    row = cells.index("fix-index-parser")
    assert cells[row + 1] == "main"
    assert cells[row + 2] == "2026-10-02 09:15"
    assert cells[row + 3] == "59 d"
    assert "stale" in cells[row + 4]
    assert "other branch" not in cells[row + 4]
    other = cells.index("feature-recall-fallback")
    assert "other branch" in cells[other + 4]
    draft = cells.index("Draft_Notes")
    assert (
        int(cells[draft + 5].rsplit(">", 2)[-2].split("<")[0])
        == len(board.diagnostics["Draft_Notes"])
        > 0
    )
    # clicking a name renders the checkpoint and lists its diagnostics
    button = next(c for c in board.table.children if getattr(c, "description", "") == "Draft_Notes")
    button.click()
    assert board.selected == "Draft_Notes"
    assert button.button_style == "info"
    assert f"{len(board.diagnostics['Draft_Notes'])} diagnostic" in board.detail.value
    assert board.diagnostics["Draft_Notes"][0].code in board.detail.value
    assert "checkpoint-Draft_Notes.md" in board.detail.value
    assert not board.resume_button.disabled
    assert not board.clear_button.disabled


def test_board_save_resume_clear(flat: Path) -> None:
    board = CheckpointBoard(flat, now=NOW)
    board.save_name.value = "notebook-widgets"
    board.save_next.value = "Write the browser test"
    board.save_summary.value = "Widgets for recall and checkpoints"
    board.save_button.click()
    assert board.messages.error_text == ""
    assert 'Checkpoint "notebook-widgets" saved' in board.messages.note_text
    assert (flat / "checkpoint-notebook-widgets.md").is_file()
    assert "notebook-widgets" in board.names
    assert board.selected == "notebook-widgets"
    assert "Widgets for recall and checkpoints" in (flat / "MEMORY.md").read_text(encoding="utf-8")

    board.resume_button.click()
    assert "Resuming checkpoint" in board.messages.note_text
    assert "Write the browser test" in board.messages.note_text

    board.clear_button.click()
    assert board.confirm_row.layout.display != "none"
    assert (flat / "checkpoint-notebook-widgets.md").is_file()  # nothing happens before confirming
    board.keep_button.click()
    assert board.confirm_row.layout.display == "none"
    board.clear_button.click()
    board.confirm_button.click()
    assert not (flat / "checkpoint-notebook-widgets.md").exists()
    assert "notebook-widgets" not in board.names
    assert board.selected is None
    assert "notebook-widgets" not in (flat / "MEMORY.md").read_text(encoding="utf-8")
    assert board.resume_button.disabled


def test_board_refuses_escaping_names_and_nameless_saves(flat: Path) -> None:
    board = CheckpointBoard(flat, now=NOW)
    before = sorted(p.name for p in flat.parent.rglob("*"))
    board.save_name.value = "../outside"
    board.save_button.click()
    assert board.messages.error_text
    assert sorted(p.name for p in flat.parent.rglob("*")) == before
    board.save_name.value = ""
    board.save_button.click()  # no name, and not a git repository: core refuses
    assert "No checkpoint name given" in board.messages.error_text


# --- MemoryMap -------------------------------------------------------------------------------


def test_map_is_a_treemap_before_backfill_then_points_linked_to_the_explorer(
    orchestrator: Path,
) -> None:
    explorer = RecallExplorer(orchestrator, model=HASH, debounce=0)
    memory_map = MemoryMap(explorer=explorer)
    assert memory_map.root == orchestrator.resolve()
    assert memory_map.mode == "treemap"
    assert memory_map.picture.count("memls-file") == len(memory_map.files) > 3
    assert any(title.startswith("LOG.md (log, ") for title in memory_map.picture.titles())
    memory_map.picker.value = next(i for i, f in enumerate(memory_map.files) if f.path == "LOG.md")
    assert "LOG.md:1" in explorer.preview.value
    assert "<h2>" in explorer.preview.value
    assert memory_map.picture.selected == memory_map.picker.value  # the file is marked

    explorer.backfill_button.click()
    assert explorer.wait(60)
    assert memory_map.mode == "embeddings"  # the explorer's backfill redrew the map
    chunks = explorer.refresh_status()["chunks_total"]  # type: ignore[index]
    assert memory_map.picture.count("memls-point") == chunks == len(memory_map.points)
    assert memory_map.picture.selected == -1  # the redraw dropped the old selection
    assert len(memory_map.picker.options) == chunks
    titles = memory_map.picture.titles()
    assert titles[0].startswith("#1 ")
    assert all(title for title in titles)
    index = next(i for i, p in enumerate(memory_map.points) if p.kind == "transcript")
    memory_map.picker.value = index  # the keyboard way: pick it in the list
    point = memory_map.points[index]
    assert f"{point.path}:{point.start_line}" in explorer.preview.value
    assert memory_map.picture.selected == index  # and the picture marks it
    assert memory_map.messages.error_text == ""


def _point_line(memory_map: MemoryMap, index: int) -> str:
    point = memory_map.points[index]
    return f"{point.path}:{point.start_line}–{point.end_line}"


def test_clicking_a_point_opens_it_in_the_explorer(
    orchestrator: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    explorer = _backfilled(orchestrator)
    memory_map = MemoryMap(explorer=explorer)
    picture = memory_map.picture
    assert memory_map.mode == "embeddings"
    assert picture.marks[0]["shape"] == "circle"
    assert 0 < picture.marks[0]["x"] < picture.width
    assert 0 < picture.marks[0]["y"] < picture.height
    opened: list[str] = []
    show_chunk = explorer.show_chunk

    def record_then_show(*a: Any, **k: Any) -> None:
        opened.append(a[1])
        show_chunk(*a, **k)

    monkeypatch.setattr(explorer, "show_chunk", record_then_show)
    first = next(i for i, p in enumerate(memory_map.points) if p.kind == "topic")
    second = next(
        i for i, p in enumerate(memory_map.points) if p.path != memory_map.points[first].path
    )

    picture.selected = first  # set from Python
    assert _point_line(memory_map, first) in explorer.preview.value
    assert memory_map.picker.value == first

    # a browser click arrives as one state update carrying both traits: it opens once
    picture.set_state({"selected": second, "clicks": picture.clicks + 1})
    assert _point_line(memory_map, second) in explorer.preview.value
    assert memory_map.picker.value == second
    assert opened == [memory_map.points[first].path, memory_map.points[second].path]

    # the preview moves on (a search); clicking the same point again brings it back
    explorer.show_chunk(*_args(memory_map, first))
    assert _point_line(memory_map, second) not in explorer.preview.value
    picture.set_state({"clicks": picture.clicks + 1})
    assert _point_line(memory_map, second) in explorer.preview.value
    assert len(opened) == 4
    assert memory_map.messages.error_text == ""


def _args(memory_map: MemoryMap, index: int) -> tuple[str, str, int, int, str, str | None]:
    p = memory_map.points[index]
    return (p.id, p.path, p.start_line, p.end_line, p.kind, p.heading)


def test_clicking_a_file_in_the_treemap_opens_it(orchestrator: Path) -> None:
    explorer = RecallExplorer(orchestrator, model=HASH, debounce=0)
    memory_map = MemoryMap(explorer=explorer)
    assert memory_map.mode == "treemap"
    assert {m["shape"] for m in memory_map.picture.marks} == {"rect"}
    index = next(i for i, f in enumerate(memory_map.files) if f.path == "LOG.md")
    memory_map.picture.set_state({"selected": index, "clicks": 1})
    assert "LOG.md:1" in explorer.preview.value
    assert memory_map.picker.value == index


def test_an_out_of_range_click_shows_an_error_not_a_traceback(orchestrator: Path) -> None:
    explorer = RecallExplorer(orchestrator, model=HASH, debounce=0)
    memory_map = MemoryMap(explorer=explorer)
    before = explorer.preview.value
    memory_map.picture.set_state({"selected": len(memory_map.files) + 5, "clicks": 1})
    assert "no item" in memory_map.messages.error_text
    assert explorer.preview.value == before


def test_pca_keeps_planar_geometry() -> None:
    rng = np.random.default_rng(7)
    basis = np.linalg.qr(rng.normal(size=(16, 2)))[0].T  # two orthonormal 16-d directions
    # unit rows in a 2-d subspace: normalising leaves them alone, PCA must keep all distances
    angles = rng.uniform(0, 2 * np.pi, size=30)
    rows = np.stack([np.cos(angles), np.sin(angles)], axis=1) @ basis
    coords = project_2d(rows)
    assert coords.shape == (30, 2)
    original = np.linalg.norm(rows[:, None] - rows[None], axis=2)
    projected = np.linalg.norm(coords[:, None] - coords[None], axis=2)
    assert np.allclose(original, projected, atol=1e-9)
    assert np.allclose(project_2d(rows[:1]), 0)


def test_squarify_tiles_the_area_in_proportion() -> None:
    values = [500.0, 300.0, 120.0, 60.0, 15.0, 5.0]
    rects = squarify(values, 0, 0, 400, 200)
    assert len(rects) == len(values)
    areas = [w * h for _, _, w, h in rects]
    assert np.allclose(areas, [v / sum(values) * 400 * 200 for v in values])
    for x, y, w, h in rects:
        assert x >= -1e-9
        assert x + w <= 400 + 1e-9
        assert y >= -1e-9
        assert y + h <= 200 + 1e-9
    for i, a in enumerate(rects):
        for b in rects[i + 1 :]:
            overlap_w = min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0])
            overlap_h = min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1])
            assert overlap_w <= 1e-9 or overlap_h <= 1e-9
