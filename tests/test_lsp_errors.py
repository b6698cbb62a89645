"""A request handler that raises: the client gets a JSON-RPC error, the traceback reaches
``window/logMessage``, and the server answers the next request.

The failure is a genuine one: ``memls.recall.search`` iterates its ``kind`` argument without
checking that it is a string or a list, so ``"kind": 5`` raises ``TypeError`` inside the
handler.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp_helpers import SERVER, make_project, open_params, start, uri, wait_for_log

INTERNAL_ERROR = -32603


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


async def test_a_raising_handler_is_an_error_logged_with_its_traceback(
    client: LanguageClient, tmp_path: Path
) -> None:
    index = tmp_path / "proj" / "mem" / "MEMORY.md"
    client.text_document_did_open(open_params(index))
    with pytest.raises(JsonRpcException) as caught:
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="memls.recall.search", arguments=[{"query": "login", "kind": 5}]
            )
        )
    assert caught.value.code == INTERNAL_ERROR
    assert "TypeError" in str(caught.value)

    await wait_for_log(client, "Traceback")
    logged = next(m for m in client.log_messages if "Traceback" in m.message)
    assert logged.type == types.MessageType.Error
    assert "TypeError: 'int' object is not iterable" in logged.message
    # the frames point at the handler that raised, not only at pygls
    assert "cmd_recall_search" in logged.message
    assert "commands.py" in logged.message

    symbols = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=uri(index)))
    )
    assert symbols
    listed = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="memls.checkpoint.list")
    )
    assert isinstance(listed, dict)
    assert "feat-login" in listed["message"]
