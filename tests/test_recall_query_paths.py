"""The cold path's shortcuts give the same responses as the plain serial path: hybrid search
runs BM25 on a thread of its own while the query is embedded, and falls back to running it
itself when that thread fails."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memls.core.recall import api, search, semantic
from memls.core.recall.hits import Hit
from tests.recall_fixtures.roots import write_root

QUERIES = [
    "why did the seedlings wilt",
    "parser tables line numbers",
    "compost",
    "recall fallback decision",
    "what did we decide about the drip line timer?",
]
OPTIONS: list[dict[str, Any]] = [
    {},
    {"limit": 2},
    {"kinds": ("topic", "log")},
    {"path_glob": "memory"},
    {"since": "2026-11-01"},
    {"mmr": True},
]


class _Serial:
    """Runs the call at once on the caller's thread (the path without the thread)."""

    def __init__(self, call: Any) -> None:
        self._value = call()

    def result(self) -> Any:
        return self._value


def _responses(root: Path) -> list[dict[str, Any]]:
    out = []
    for text in QUERIES:
        for options in OPTIONS:
            semantic.forget_cache()
            out.append(api.search(root, text, mode="hybrid", **options).to_dict())
    return out


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = write_root(tmp_path, model="memls-hash")
    api.backfill(root)
    return root


def test_hybrid_with_text_on_its_own_thread_equals_the_serial_path(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    threaded = _responses(root)
    assert any(r["results"] for r in threaded)
    assert all(r["mode"] == "hybrid" for r in threaded)
    monkeypatch.setattr(search, "_Background", _Serial)
    assert _responses(root) == threaded


def test_a_failing_text_thread_is_redone_on_the_callers_thread(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = _responses(root)
    calls: list[str] = []

    def broken(*args: object, **kwargs: object) -> list[Hit]:
        calls.append("thread")
        raise RuntimeError("database is locked")

    monkeypatch.setattr(search, "_text_on_own_connection", broken)
    assert _responses(root) == expected
    assert len(calls) == len(expected)


def test_the_search_command_leaves_the_garbage_collector_as_it_found_it(root: Path) -> None:
    """`memls recall search` runs without the cyclic collector (a short process) but turns
    it back on when it returns or fails, so a longer process (a test) keeps collecting."""
    import gc

    from click.testing import CliRunner

    from memls.cli import main

    assert gc.isenabled()
    done = CliRunner().invoke(main, ["recall", "search", "compost", "--root", str(root)])
    assert done.exit_code == 0, done.output
    assert "compost" in done.stdout.lower()
    assert gc.isenabled()
    failed = CliRunner().invoke(
        main, ["recall", "search", "compost", "--root", str(root), "--since", "not a time"]
    )
    assert failed.exit_code == 2
    assert gc.isenabled()
    gc.disable()
    try:
        CliRunner().invoke(main, ["recall", "search", "compost", "--root", str(root)])
        assert not gc.isenabled()
    finally:
        gc.enable()
