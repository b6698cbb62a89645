"""The server survives bad input: malformed JSON-RPC, unknown methods, didChange for a
document never opened, out-of-range positions, a 10 MB document and binary content; and
many files created or deleted on disk at once."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp_helpers import (
    BRANCH,
    SERVER,
    change_all,
    checkpoint_text,
    open_params,
    start,
    uri,
    wait_for_diagnostics,
)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))  # type: ignore[untyped-decorator]
async def client(lsp_client: LanguageClient, tmp_path: Path) -> AsyncIterator[None]:
    from tests.lsp_helpers import make_project

    project, _ = make_project(tmp_path)
    await start(lsp_client, "neovim", project)
    yield
    await lsp_client.shutdown_session()


def root_of(tmp_path: Path) -> Path:
    return tmp_path / "proj" / "mem"


async def still_serves(client: LanguageClient, path: Path) -> None:
    symbols = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=uri(path)))
    )
    assert symbols


async def test_unknown_method_is_an_error_and_the_server_goes_on(
    client: LanguageClient, tmp_path: Path
) -> None:
    index = root_of(tmp_path) / "MEMORY.md"
    client.text_document_did_open(open_params(index))
    with pytest.raises(Exception, match=r"not found|Method Not Found|-32601"):
        await client.protocol.send_request_async("memls/noSuchMethod", {})  # type: ignore[no-untyped-call]
    await still_serves(client, index)


async def test_did_change_for_a_never_opened_document(
    client: LanguageClient, tmp_path: Path
) -> None:
    ghost = root_of(tmp_path) / "ghost.md"
    client.text_document_did_change(change_all(ghost, "# Ghost\n", 3))
    index = root_of(tmp_path) / "MEMORY.md"
    client.text_document_did_open(open_params(index))
    await still_serves(client, index)
    assert any("unopened" in m.message for m in client.log_messages)


async def test_out_of_range_positions(client: LanguageClient, tmp_path: Path) -> None:
    index = root_of(tmp_path) / "MEMORY.md"
    client.text_document_did_open(open_params(index))
    ident = types.TextDocumentIdentifier(uri=uri(index))
    far = types.Position(10_000, 10_000)
    assert (
        await client.text_document_hover_async(types.HoverParams(text_document=ident, position=far))
        is None
    )
    completion = await client.text_document_completion_async(
        types.CompletionParams(text_document=ident, position=far)
    )
    assert completion is not None
    assert (
        await client.text_document_definition_async(
            types.DefinitionParams(text_document=ident, position=far)
        )
        == []
    )
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=ident,
            range=types.Range(far, types.Position(20_000, 0)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    assert actions is not None
    await still_serves(client, index)


async def test_ten_megabyte_document(client: LanguageClient, tmp_path: Path) -> None:
    path = root_of(tmp_path) / "huge.md"
    text = "# Huge\n\n" + ("- a line of memory text that goes on and on\n" * 240_000)
    assert len(text) > 10_000_000
    client.text_document_did_open(open_params(path, text))
    diags = await wait_for_diagnostics(client, path, lambda codes: "SZ002" in codes)
    assert diags
    client.text_document_did_open(open_params(root_of(tmp_path) / "MEMORY.md"))
    await still_serves(client, root_of(tmp_path) / "MEMORY.md")


async def test_binary_content(client: LanguageClient, tmp_path: Path) -> None:
    path = root_of(tmp_path) / "blob.md"
    client.text_document_did_open(open_params(path, "# Blob\n\x00\x01\x02\ufffd\x7f binary\n"))
    diags = await wait_for_diagnostics(client, path, lambda codes: "SZ001" in codes)
    nul = next(d for d in diags if d.code == "SZ001")
    assert "NUL" in nul.message
    assert nul.range.start.line == 1
    assert nul.severity == types.DiagnosticSeverity.Error
    await still_serves(client, path)
    # the same bytes on disk (invalid UTF-8 too), reached through a pointer, are decoded leniently
    path.write_bytes(b"# Blob\n\x00\xff\xfe binary\n")
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri(path)))
    )
    client.text_document_did_open(open_params(path, "# Blob\n"))
    await still_serves(client, path)


async def test_many_files_created_and_deleted_at_once(
    client: LanguageClient, tmp_path: Path
) -> None:
    """The server's own watcher (this client cannot register watchers) sees a burst of new
    checkpoints as one batch: MEMORY.md reports the missing bullets, then drops them."""
    root = root_of(tmp_path)
    index = root / "MEMORY.md"
    client.text_document_did_open(open_params(index))
    await wait_for_diagnostics(client, index, lambda codes: codes == [])
    when = dt.datetime.now().replace(second=0, microsecond=0)
    created = [root / f"checkpoint-burst-{n:03}.md" for n in range(60)]
    for path in created:
        path.write_text(checkpoint_text(path.stem[11:], BRANCH, when), encoding="utf-8")
    diags = await wait_for_diagnostics(client, index, lambda codes: "IX003" in codes)
    assert any("burst-000" in d.message for d in diags)
    for path in created:
        path.unlink()
    await wait_for_diagnostics(client, index, lambda codes: codes == [])


def frame(payload: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(payload) + payload


def read_message(stream: object) -> dict[str, object]:
    assert hasattr(stream, "readline")
    assert hasattr(stream, "read")
    length = 0
    while True:
        line = stream.readline()
        if not line:
            raise EOFError("server closed its output")
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    result: dict[str, object] = json.loads(stream.read(length))
    return result


def test_malformed_payload_over_raw_stdio(tmp_path: Path) -> None:
    """Garbage JSON is reported, and the next well-formed request is still answered."""
    proc = subprocess.Popen(
        SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    try:
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"capabilities": {}, "rootUri": None},
        }
        proc.stdin.write(frame(json.dumps(init).encode()))
        proc.stdin.write(frame(b'{"jsonrpc": "2.0", "id": 2, "method": '))  # truncated JSON
        proc.stdin.write(frame(b"\xff\xfe not json"))
        proc.stdin.write(
            frame(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}).encode())
        )
        proc.stdin.flush()
        answered: set[object] = set()
        while 3 not in answered:
            message = read_message(proc.stdout)
            if "id" in message and ("result" in message or "error" in message):
                answered.add(message["id"])
        assert 1 in answered
        proc.stdin.write(frame(json.dumps({"jsonrpc": "2.0", "method": "exit"}).encode()))
        proc.stdin.flush()
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
