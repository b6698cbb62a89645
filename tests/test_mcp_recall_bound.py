"""recall_search answers within a bound after a lot of new memory (issue 21).

The refresh that indexes what changed gets ``RECALL_REFRESH_BUDGET`` seconds; then the
search answers from the index as it is, says how fresh it is, and the refresh finishes in
the background (one at a time; its errors are reported, never raised).
"""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed (make install-dev installs it)")

import mcp_types as types

from tests.agent_fixtures import make_project
from tests.test_mcp import connect, payload

WORDS = [
    "parser",
    "checkpoint",
    "branch",
    "recall",
    "index",
    "vector",
    "queue",
    "worker",
    "retry",
    "cache",
    "token",
    "session",
    "schema",
    "migration",
    "handoff",
    "log",
    "topic",
    "memory",
    "search",
    "rank",
    "chunk",
    "embed",
    "store",
    "lock",
]
MARKER = "quokkafjord"


def write_memory(root: Path, megabytes: int = 30, file_kb: int = 50) -> int:
    """Topic files of ``file_kb`` KB until ``megabytes`` MB are written; the last one holds
    :data:`MARKER`. Returns the number of files."""
    rng = random.Random(21)
    count = megabytes * 1000 // file_kb
    for i in range(count):
        parts = [f"---\nname: t{i}\ndescription: generated\ntype: reference\n---\n# Topic {i}\n"]
        size = 0
        while size < file_kb * 1000:
            line = " ".join(rng.choice(WORDS) for _ in range(14))
            section = f"\n## {line[:30]}\n\n- {line}\n- {line[::-1]}\n\n{line} {line}.\n"
            parts.append(section)
            size += len(section)
        if i == count - 1:
            parts.append(f"\n## Marker\n\nThe {MARKER} decision was made here.\n")
        (root / f"topic-gen-{i:04d}.md").write_text("".join(parts), encoding="utf-8")
    return count


def notes(result: types.CallToolResult) -> list[str]:
    return [b.text for b in result.content[1:] if isinstance(b, types.TextContent)]


async def test_recall_search_answers_within_the_bound_then_becomes_fresh(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    async with connect(project, project) as session:
        first = await session.call_tool("recall_search", {"query": "anything"})
        assert payload(first)["freshness"]["fresh"] is True
        assert notes(first) == []  # a fresh answer adds no line
        files = write_memory(project)
        started = time.monotonic()
        result = await session.call_tool("recall_search", {"query": MARKER})
        elapsed = time.monotonic() - started
        data = payload(result)
        assert elapsed < 3.5, f"first answer took {elapsed:.2f} s"
        state = data["freshness"]
        assert state["fresh"] is False, state
        assert state["refreshing"] is True
        pending = state.get("pending_files")
        assert pending is None or 0 <= pending <= files
        assert "pending_chunks" in state or pending is not None or state["phase"] == "scan"
        assert data["index"].startswith("refreshing in the background")
        assert notes(result)
        assert notes(result)[0].startswith("Index not fresh:")

        async def search() -> dict[str, Any]:
            return payload(await session.call_tool("recall_search", {"query": "parser"}))

        # concurrent calls while it refreshes: all answer, none starts a second refresh
        answers: list[dict[str, Any]] = []

        async def one() -> None:
            answers.append(await search())

        async with anyio.create_task_group() as tasks:
            for _ in range(3):
                tasks.start_soon(one)
        assert len(answers) == 3

        deadline = time.monotonic() + 180
        while True:
            data = payload(await session.call_tool("recall_search", {"query": MARKER}))
            if data["freshness"]["fresh"]:
                break
            assert time.monotonic() < deadline, data["freshness"]
            await anyio.sleep(1.0)
        assert data["results"], data
        assert data["results"][0]["path"] == f"topic-gen-{files - 1:04d}.md"
        assert MARKER in data["results"][0]["snippet"]
        again = await session.call_tool("recall_search", {"query": MARKER})
        assert payload(again)["index"] == "up to date"
        assert payload(again)["freshness"] == {"fresh": True, "refreshing": False}
        assert notes(again) == []


def test_one_refresh_at_a_time_and_its_error_is_reported_not_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memls.core.recall import api
    from memls.mcpserver import refresh as front

    project = make_project(tmp_path)
    server = front.RecallRefresh()
    monkeypatch.setenv(front.RECALL_BUDGET_ENV, "0.2")
    running = 0
    most = 0
    calls = 0
    guard = threading.Lock()
    release = threading.Event()

    def slow_backfill(root: Path, **kwargs: Any) -> dict[str, Any]:
        nonlocal running, most, calls
        with guard:
            running += 1
            calls += 1
            most = max(most, running)
        try:
            release.wait(10)
            if calls == 1:
                raise RuntimeError("disk on fire")
            return {"complete": True, "message": "Indexed."}
        finally:
            with guard:
                running -= 1

    monkeypatch.setattr(api, "backfill", slow_backfill)
    (project / "topic-new.md").write_text("# New\n\nfresh words\n", encoding="utf-8")
    results: list[tuple[str, dict[str, Any]]] = []
    threads = [
        threading.Thread(target=lambda: results.append(server.refresh(project))) for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert len(results) == 4
    assert all(state["fresh"] is False and state["refreshing"] for _, state in results)
    assert calls == 1
    assert most == 1
    release.set()
    deadline = time.monotonic() + 5
    while server.running is not None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.error == "disk on fire"  # logged and kept, not raised
    message, state = server.refresh(project)  # the failure is told, then retried
    assert state["fresh"] is True, state
    assert message == "Indexed."
    assert calls == 2
    assert most == 1
    assert front.freshness_line(state) is None
    assert server.refresh(project) == ("up to date", {"fresh": True, "refreshing": False})
