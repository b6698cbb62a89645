"""Branch rules follow a ``git checkout`` made outside the editor.

VS Code watches files for the server once it registered watchers for ``.git/HEAD`` (the
test plays that client and sends the event only when a registered glob covers the file);
Neovim cannot register watchers, so there the server's own watcher must see ``.git/HEAD``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path, PurePosixPath

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp_helpers import (
    SERVER,
    git,
    make_project,
    open_params,
    start,
    uri,
    wait_for_diagnostics,
)

BRANCH = "feat/a"
NAME = "feat-a"


def make_repo(base: Path) -> tuple[Path, Path]:
    """A repository on ``main`` whose memory root holds a checkpoint saved on ``feat/a``."""
    return make_project(base, BRANCH, switch=False)


@pytest_lsp.fixture(  # type: ignore[untyped-decorator]
    params=["visual_studio_code", "neovim"], config=ClientServerConfig(server_command=SERVER)
)
async def client(
    request: pytest.FixtureRequest, lsp_client: LanguageClient, tmp_path: Path
) -> AsyncIterator[None]:
    project, _ = make_repo(tmp_path)
    await start(lsp_client, request.param, project)
    yield
    await lsp_client.shutdown_session()


def registered_globs(client: LanguageClient) -> list[str]:
    """The glob patterns the server asked this client to watch (none if it never asked)."""
    globs: list[str] = []
    for reg in getattr(client, "registrations", []):
        if reg.method != types.WORKSPACE_DID_CHANGE_WATCHED_FILES:
            continue
        options = reg.register_options
        watchers = options.get("watchers", []) if isinstance(options, dict) else options.watchers
        for w in watchers:
            pattern = w["globPattern"] if isinstance(w, dict) else w.glob_pattern
            if isinstance(pattern, str):
                globs.append(pattern)
    return globs


async def test_checkout_of_the_checkpoint_branch_clears_cp021(
    client: LanguageClient, tmp_path: Path
) -> None:
    project = tmp_path / "proj"
    checkpoint = project / "mem" / f"checkpoint-{NAME}.md"
    client.text_document_did_open(open_params(checkpoint))
    diags = await wait_for_diagnostics(client, checkpoint, lambda codes: "CP021" in codes)
    cp021 = next(d for d in diags if d.code == "CP021")
    assert "you're on `main`" in cp021.message
    assert f"git checkout {BRANCH}" in cp021.message

    git(project, "checkout", "-q", BRANCH)
    head = project / ".git" / "HEAD"
    assert head.read_text(encoding="utf-8").strip() == f"ref: refs/heads/{BRANCH}"
    globs = registered_globs(client)
    if globs:
        # A client that accepted watchers reports the change of a file they cover.
        assert any(PurePosixPath(head.as_posix()).match(g) for g in globs), globs
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[types.FileEvent(uri=uri(head), type=types.FileChangeType.Changed)]
            )
        )
    after = await wait_for_diagnostics(client, checkpoint, lambda codes: "CP021" not in codes)
    assert [d.code for d in after] == []


async def test_profiles_decide_who_watches_git(client: LanguageClient) -> None:
    """VS Code registers watchers (including ``.git/HEAD``); Neovim registers none."""
    assert client.capabilities is not None
    dynamic = (
        client.capabilities.workspace and client.capabilities.workspace.did_change_watched_files
    )
    globs = registered_globs(client)
    if dynamic and dynamic.dynamic_registration:
        assert "**/.git/HEAD" in globs
    else:
        assert globs == []
