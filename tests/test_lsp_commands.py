"""The ``workspace/executeCommand`` commands end to end through a real client session:
recall (backfill with work-done progress and cancellation, search, status, verify),
snapshots in a real git repository, checkpoints, the log, the handoff and index migration.

Recall runs on the weight-free ``memls-hash`` model, set through initializationOptions.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any, cast

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp_helpers import DEPLOY, NAME, SERVER, git, make_project, start, uri

OPTIONS: dict[str, object] = {"recall": {"model": "memls-hash"}}
CANCEL_FILES = 1500


def project_for(tmp_path: Path) -> tuple[Path, Path]:
    """The shared project, with a git identity (snapshots commit) and one more topic file."""
    project, root = make_project(tmp_path)
    git(project, "config", "user.name", "memls test")
    git(project, "config", "user.email", "memls@example.invalid")
    (root / "deploy.md").write_text(DEPLOY, encoding="utf-8")
    return project, root


@pytest_lsp.fixture(  # type: ignore[untyped-decorator]
    params=["visual_studio_code", "neovim"], config=ClientServerConfig(server_command=SERVER)
)
async def client(
    request: pytest.FixtureRequest, lsp_client: LanguageClient, tmp_path: Path
) -> AsyncIterator[None]:
    project, _ = project_for(tmp_path)
    await start(lsp_client, request.param, project, OPTIONS)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))  # type: ignore[untyped-decorator]
async def shows_results(lsp_client: LanguageClient, tmp_path: Path) -> AsyncIterator[None]:
    """A client that, like the VS Code extension, shows each command's message itself."""
    project, _ = project_for(tmp_path)
    options = {**OPTIONS, "clientShowsCommandResults": True}
    await start(lsp_client, "visual_studio_code", project, options)
    yield
    await lsp_client.shutdown_session()


def root_of(tmp_path: Path) -> Path:
    return tmp_path / "proj" / "mem"


async def execute(
    client: LanguageClient, command: str, args: dict[str, Any] | None = None, **extra: Any
) -> dict[str, Any]:
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command=command, arguments=[args] if args is not None else None, **extra
        )
    )
    assert isinstance(result, dict), result
    return result


def server_tokens(client: LanguageClient) -> list[str]:
    return [str(t) for t in client.progress_reports if str(t).startswith("memls-backfill-")]


def assert_progress_shape(reports: Sequence[object], end_message: str) -> None:
    """begin first, end last, reports (with percentages) in between."""
    assert isinstance(reports[0], types.WorkDoneProgressBegin)
    assert reports[0].cancellable is True
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)
    assert reports[-1].message == end_message
    middle = reports[1:-1]
    assert middle
    assert all(isinstance(r, types.WorkDoneProgressReport) for r in middle)
    percentages = [r.percentage for r in middle if isinstance(r, types.WorkDoneProgressReport)]
    assert all(p is not None and 0 <= p <= 100 for p in percentages)


async def test_backfill_reports_progress_then_search_finds_the_section(
    client: LanguageClient, tmp_path: Path
) -> None:
    deploy = root_of(tmp_path) / "deploy.md"
    result = await execute(client, "memls.recall.backfill", {"uri": uri(deploy)})
    assert result["cancelled"] is False
    assert result["model"] == "memls-hash"
    assert result["mode"] == "semantic"
    assert "memls-hash" in result["message"]
    (token,) = server_tokens(client)
    assert_progress_shape(client.progress_reports[token], "done")
    assert any(result["message"] in m.message for m in client.messages)

    found = await execute(
        client, "memls.recall.search", {"query": "zebra crossing rollout ferris wheel"}
    )
    assert found["degraded"] is False
    assert found["mode"] == "hybrid"
    top = found["results"][0]
    assert top["path"] == str(deploy.resolve())
    assert Path(top["path"]).is_absolute()
    lines = deploy.read_text(encoding="utf-8").splitlines()
    assert lines[top["start_line"]] == "## Zebra crossing rollout"
    assert top["end_line"] >= top["start_line"]
    assert "ferris wheel" in lines[top["end_line"]] or top["end_line"] == len(lines) - 1


async def test_backfill_reports_on_the_clients_token(
    client: LanguageClient, tmp_path: Path
) -> None:
    token = "client-backfill-token"
    client.progress_reports[token] = []
    result = await execute(
        client, "memls.recall.backfill", {"uri": uri(root_of(tmp_path))}, work_done_token=token
    )
    assert result["cancelled"] is False
    assert_progress_shape(client.progress_reports[token], "done")
    assert server_tokens(client) == []


async def test_status_and_verify_return_messages(client: LanguageClient) -> None:
    before = await execute(client, "memls.recall.status")
    assert before["message"]
    await execute(client, "memls.recall.backfill")
    after = await execute(client, "memls.recall.status")
    assert after["mode"] == "semantic"
    assert after["model"] == "memls-hash"
    assert after["message"]
    assert sum(after["chunks"].values()) > 0
    verified = await execute(client, "memls.recall.verify")
    assert verified["ok"] is True
    assert verified["message"]
    assert any(verified["message"] in m.message for m in client.messages)


@pytest.mark.parametrize("how", ["progress", "request"])
async def test_cancelled_backfill_stops_and_says_so(
    client: LanguageClient, tmp_path: Path, how: str
) -> None:
    root = root_of(tmp_path)
    for number in range(CANCEL_FILES):
        (root / f"note-{number:04}.md").write_text(
            f"# Note {number}\n\nThe note about item {number}.\n", encoding="utf-8"
        )
    request_id = "backfill-to-cancel"
    pending = asyncio.ensure_future(
        client.protocol.send_request_async(  # type: ignore[no-untyped-call]
            types.WORKSPACE_EXECUTE_COMMAND,
            types.ExecuteCommandParams(command="memls.recall.backfill", arguments=[{}]),
            msg_id=request_id,
        )
    )

    def first_report() -> str | None:
        for token in server_tokens(client):
            if any(
                isinstance(r, types.WorkDoneProgressReport) for r in client.progress_reports[token]
            ):
                return token
        return None

    while (token := first_report()) is None:
        await client.wait_for_notification(types.PROGRESS)
    if how == "progress":
        client.protocol.notify(
            types.WINDOW_WORK_DONE_PROGRESS_CANCEL, types.WorkDoneProgressCancelParams(token)
        )
        result = await pending
        assert result["cancelled"] is True
        assert "cancelled" in result["message"].lower()
    else:
        client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=request_id))
        with pytest.raises(JsonRpcException, match="cancel"):
            await pending
    while not isinstance(client.progress_reports[token][-1], types.WorkDoneProgressEnd):
        await client.wait_for_notification(types.PROGRESS)
    # pytest-lsp stores the structured progress value (annotated as ProgressParams)
    end = cast("types.WorkDoneProgressEnd", client.progress_reports[token][-1])
    assert end.message == "cancelled"
    while not any("cancelled" in m.message.lower() for m in client.messages):
        await client.wait_for_notification(types.WINDOW_SHOW_MESSAGE)
    status = await execute(client, "memls.recall.status")
    assert status["last_backfill"]["complete"] is False
    assert status["last_backfill"]["changed"] < CANCEL_FILES


async def test_snapshot_save_then_unchanged(client: LanguageClient, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    head = git(project, "rev-parse", "HEAD")
    porcelain = git(project, "status", "--porcelain")
    first = await execute(client, "memls.snapshot.save", {"uri": uri(root_of(tmp_path))})
    assert first["status"] == "saved"
    assert first["changed"] is True
    assert git(project, "rev-parse", first["ref"]).strip() == first["commit"]
    second = await execute(client, "memls.snapshot.save", {"uri": uri(root_of(tmp_path))})
    assert second["status"] == "unchanged"
    assert second["changed"] is False
    assert second["commit"] == first["commit"]
    shown = [m.message for m in client.messages]
    assert any(first["message"] in m for m in shown)
    assert any(second["message"] in m for m in shown)
    assert git(project, "rev-parse", "HEAD") == head
    assert git(project, "status", "--porcelain") == porcelain


async def test_checkpoint_list_resume_clear(client: LanguageClient, tmp_path: Path) -> None:
    root = root_of(tmp_path)
    checkpoint = root / f"checkpoint-{NAME}.md"
    listed = await execute(client, "memls.checkpoint.list")
    assert [c["name"] for c in listed["checkpoints"]] == [NAME]
    assert NAME in listed["message"]

    resumed = await execute(client, "memls.checkpoint.resume", {"uri": uri(root)})
    assert resumed["status"] == "one"
    assert resumed["name"] == NAME
    assert "Wire the login form" in resumed["message"]
    assert [d.uri for d in client.shown_documents] == [uri(checkpoint)]

    with pytest.raises(JsonRpcException, match="name a checkpoint"):
        await execute(client, "memls.checkpoint.clear", {})
    cleared = await execute(client, "memls.checkpoint.clear", {"name": NAME})
    assert cleared["changed"] is True
    assert not checkpoint.exists()
    assert f"**{NAME}**" not in (root / "MEMORY.md").read_text(encoding="utf-8")
    assert (await execute(client, "memls.checkpoint.list"))["checkpoints"] == []
    none = await execute(client, "memls.checkpoint.resume")
    assert none["status"] == "none"


async def test_log_append_and_handoff_new(client: LanguageClient, tmp_path: Path) -> None:
    root = root_of(tmp_path)
    logged = await execute(
        client, "memls.log.append", {"title": "Switched to pytest", "body": "Faster runs."}
    )
    assert logged["changed"] is True
    log = (root / "LOG.md").read_text(encoding="utf-8")
    assert "Switched to pytest" in log
    assert "Faster runs." in log
    with pytest.raises(JsonRpcException, match="needs a title"):
        await execute(client, "memls.log.append", {"body": "no title"})

    handoff = await execute(client, "memls.handoff.new", {"uri": uri(root)})
    assert handoff["message"].startswith("Wrote .handoff.md")
    assert Path(handoff["file"]) == root / ".handoff.md"
    assert (root / ".handoff.md").is_file()
    assert uri(root / ".handoff.md") in [d.uri for d in client.shown_documents]
    with pytest.raises(JsonRpcException, match="exists"):
        await execute(client, "memls.handoff.new", {"uri": uri(root)})
    refreshed = await execute(client, "memls.handoff.new", {"uri": uri(root), "refresh": True})
    assert refreshed["refreshed"] is True


async def test_index_migrate_moves_legacy_sections(client: LanguageClient, tmp_path: Path) -> None:
    root = root_of(tmp_path)
    index = root / "MEMORY.md"
    index.write_text(
        index.read_text(encoding="utf-8") + "\n## Next Action\nFinish the signup page.\n",
        encoding="utf-8",
    )
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=uri(index), type=types.FileChangeType.Changed)]
        )
    )
    moved = await execute(client, "memls.index.migrate", {"name": "migrated"})
    assert moved["changed"] is True
    assert "## Next Action" not in index.read_text(encoding="utf-8")
    assert "signup page" in (root / "checkpoint-migrated.md").read_text(encoding="utf-8")
    again = await execute(client, "memls.index.migrate", {"name": "migrated"})
    assert again["changed"] is False
    assert again["message"].startswith("Nothing to migrate")


async def test_client_that_shows_results_gets_no_show_message(
    shows_results: LanguageClient, tmp_path: Path
) -> None:
    client = shows_results
    saved = await execute(client, "memls.snapshot.save")
    assert saved["status"] == "saved"
    listed = await execute(client, "memls.checkpoint.list")
    with pytest.raises(JsonRpcException, match="needs a title"):
        await execute(client, "memls.log.append", {})
    assert client.messages == []
    # the outcome still reaches the log
    logged = [m.message for m in client.log_messages]
    assert any(saved["message"] in m for m in logged)
    assert any(listed["message"] in m for m in logged)
