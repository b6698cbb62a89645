"""Shared fixtures: paths to project data and to the read-only ../shared material."""

from __future__ import annotations

import datetime as dt
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.recall_fixtures import FakePlugin

PROJECT = Path(__file__).resolve().parents[1]
SHARED = PROJECT.parent / "shared"
NOW = dt.datetime(2026, 11, 30, 12, 0)


@pytest.fixture
def shared_dir() -> Path:
    """../shared, or skip with the reason when this checkout has none beside it."""
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent (fresh clone without ../shared)")
    return SHARED


@pytest_lsp.fixture(  # type: ignore[untyped-decorator]
    params=["visual_studio_code", "neovim"],
    config=ClientServerConfig(server_command=[sys.executable, "-m", "memls.lsp"]),
)
async def client(
    request: pytest.FixtureRequest, lsp_client: LanguageClient, tmp_path: Path
) -> AsyncIterator[None]:
    """A language client (VS Code and Neovim profiles) on a fresh project made by
    ``tests.lsp_helpers.make_project``; LSP test modules may define their own."""
    from tests.lsp_helpers import make_project, start

    project, _ = make_project(tmp_path)
    await start(lsp_client, request.param, project)
    yield
    await lsp_client.shutdown_session()


@pytest.fixture(name="fake_model")
def fake_model_fixture() -> Iterator[FakePlugin]:
    """Register the deterministic fake embedding model as an ``llm`` plugin for one test
    (``fake-embed``, plus ``fake-broken`` that fails); ``.calls`` holds the embedded texts."""
    from llm.plugins import pm

    plugin = FakePlugin()
    pm.register(plugin, name="memls-test-fake-embed")
    try:
        yield plugin
    finally:
        pm.unregister(name="memls-test-fake-embed")
