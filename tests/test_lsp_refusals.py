"""A refusal from core inside an LSP command reaches the user, not the log as a traceback.

Reproduced bug (issue 25): ``memls.log.append`` with a blank title made core raise
``OpError``, which came back as JSON-RPC -32603 (internal error) with a traceback in the log
and no message to the user. A refusal is now shown (``window/showMessage``) and answered as
"invalid params" carrying the refusal's JSON, in the command's argument names.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp_helpers import SERVER, make_project, start

INVALID_PARAMS = -32602


@pytest_lsp.fixture(  # type: ignore[untyped-decorator]
    params=["visual_studio_code", "neovim"], config=ClientServerConfig(server_command=SERVER)
)
async def client(
    request: pytest.FixtureRequest, lsp_client: LanguageClient, tmp_path: Path
) -> AsyncIterator[None]:
    project, _ = make_project(tmp_path)
    await start(lsp_client, request.param, project, {"recall": {"model": "memls-hash"}})
    yield
    await lsp_client.shutdown_session()


async def test_a_blank_log_title_is_a_refusal_shown_to_the_user(
    client: LanguageClient, tmp_path: Path
) -> None:
    root = tmp_path / "proj" / "mem"
    with pytest.raises(JsonRpcException) as caught:
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="memls.log.append", arguments=[{"title": "   "}])
        )
    assert caught.value.code == INVALID_PARAMS
    assert "needs a title (title)" in caught.value.message  # the argument, not --title
    assert caught.value.data == {
        "error": caught.value.message,
        "exit_code": 2,
        "param": "title",
    }
    shown = [m for m in client.messages if "needs a title" in m.message]
    assert [m.type for m in shown] == [types.MessageType.Error]
    assert "--title" not in shown[0].message
    assert not any("Traceback" in m.message for m in client.log_messages)
    assert not (root / "LOG.md").exists()

    # the server goes on serving
    logged = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="memls.log.append", arguments=[{"title": "Fine"}])
    )
    assert isinstance(logged, dict)
    assert logged["changed"] is True
    assert logged["paths"] == [str(root / "LOG.md")]  # the result is every front's JSON


async def test_a_core_refusal_names_the_commands_argument(client: LanguageClient) -> None:
    with pytest.raises(JsonRpcException) as caught:
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="memls.checkpoint.save", arguments=[{"name": "../x"}]
            )
        )
    assert caught.value.code == INVALID_PARAMS
    assert "'..'" in caught.value.message
    assert not any("Traceback" in m.message for m in client.log_messages)
