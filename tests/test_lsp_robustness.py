"""The server survives bad input: malformed JSON-RPC, unknown methods, didChange for a
document never opened, out-of-range positions, a 10 MB document and binary content; and
many files created or deleted on disk at once."""

from __future__ import annotations

import datetime as dt
import json
import queue
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp_helpers import (
    BRANCH,
    NAME,
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


METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INVALID_REQUEST = -32600
PARSE_ERROR = -32700


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
    with pytest.raises(JsonRpcException) as caught:
        await client.protocol.send_request_async("memls/noSuchMethod", {})  # type: ignore[no-untyped-call]
    assert caught.value.code == METHOD_NOT_FOUND
    await still_serves(client, index)


async def test_unsupported_methods_answer_method_not_found_quietly(
    client: LanguageClient, tmp_path: Path
) -> None:
    """Editors ask for what they support (inlay hints, semantic tokens, …): memls answers
    MethodNotFound and logs nothing at Error level, and no traceback anywhere."""
    index = root_of(tmp_path) / "MEMORY.md"
    client.text_document_did_open(open_params(index))
    ident = types.TextDocumentIdentifier(uri=uri(index))
    whole = types.Range(types.Position(0, 0), types.Position(5, 0))
    requests: list[tuple[str, object]] = [
        (types.TEXT_DOCUMENT_INLAY_HINT, types.InlayHintParams(ident, whole)),
        (types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, types.SemanticTokensParams(ident)),
        (
            types.TEXT_DOCUMENT_FORMATTING,
            types.DocumentFormattingParams(ident, types.FormattingOptions(2, True)),
        ),
        ("memls/noSuchMethod", {}),
    ]
    for method, params in requests:
        with pytest.raises(JsonRpcException) as caught:
            await client.protocol.send_request_async(method, params)  # type: ignore[no-untyped-call]
        assert caught.value.code == METHOD_NOT_FOUND, method
    await still_serves(client, index)
    errors = [m.message for m in client.log_messages if m.type == types.MessageType.Error]
    assert errors == []
    assert not any("Traceback" in m.message for m in client.log_messages)


async def answers(client: LanguageClient, path: Path, hover_lines: list[int]) -> list[object]:
    """What the read-only requests say about ``path`` (to compare before and after)."""
    ident = types.TextDocumentIdentifier(uri=uri(path))
    out: list[object] = [
        await client.text_document_folding_range_async(types.FoldingRangeParams(ident)),
        await client.text_document_document_symbol_async(types.DocumentSymbolParams(ident)),
        await client.text_document_document_link_async(types.DocumentLinkParams(ident)),
    ]
    for line in hover_lines:
        out.append(
            await client.text_document_hover_async(
                types.HoverParams(ident, types.Position(line, 4))
            )
        )
    return out


async def test_code_action_request_leaves_the_document_state_alone(
    client: LanguageClient, tmp_path: Path
) -> None:
    """Listing code actions computes "Fix all" on a scratch copy: afterwards folding ranges,
    symbols, links and hovers answer exactly as before (they used to go one line off)."""
    root = root_of(tmp_path)
    when = dt.datetime.now().replace(second=0, microsecond=0)
    (root / "checkpoint-other-task.md").write_text(
        checkpoint_text("other-task", BRANCH, when), encoding="utf-8"
    )
    index = root / "MEMORY.md"
    text = index.read_text(encoding="utf-8")
    client.text_document_did_open(open_params(index, text))
    diags = await wait_for_diagnostics(client, index, lambda codes: "IX003" in codes)
    lines = text.splitlines()
    hover_lines = [
        next(n for n, ln in enumerate(lines) if ln.startswith("- **")),
        lines.index("- [Testing notes](testing.md)"),
        len(lines) - 1,
    ]
    before = await answers(client, index, hover_lines)
    for _ in range(2):
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri(index)),
                range=types.Range(types.Position(0, 0), types.Position(len(lines), 0)),
                context=types.CodeActionContext(diagnostics=diags),
            )
        )
        assert actions is not None
        titles = [a.title for a in actions]
        assert any(t.startswith("Fix all memls problems") for t in titles), titles
        assert await answers(client, index, hover_lines) == before
    # every other request leaves it alone too (a rename only returns its edit)
    ident = types.TextDocumentIdentifier(uri=uri(index))
    bullet = types.Position(hover_lines[0], 5)
    edit = await client.text_document_rename_async(
        types.RenameParams(text_document=ident, position=bullet, new_name="renamed")
    )
    assert edit is not None
    await client.text_document_completion_async(
        types.CompletionParams(text_document=ident, position=bullet)
    )
    await client.text_document_references_async(
        types.ReferenceParams(
            text_document=ident,
            position=bullet,
            context=types.ReferenceContext(include_declaration=True),
        )
    )
    await client.text_document_code_lens_async(types.CodeLensParams(text_document=ident))
    await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="feat"))
    assert await answers(client, index, hover_lines) == before
    assert (root / f"checkpoint-{NAME}.md").is_file()
    # and the diagnostics of the untouched buffer are still the same findings
    client.text_document_did_change(change_all(index, text, 2))
    again = await wait_for_diagnostics(client, index, lambda codes: "IX003" in codes)
    assert [(d.code, d.range) for d in again] == [(d.code, d.range) for d in diags]


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
    # over the large-document threshold: the SZ rules and one note saying so, nothing else
    assert sorted(str(d.code) for d in diags) == ["SZ002", "SZ006"]
    note = next(d for d in diags if d.code == "SZ006")
    assert note.severity == types.DiagnosticSeverity.Information
    assert "1,048,576" in note.message
    client.text_document_did_open(open_params(root_of(tmp_path) / "MEMORY.md"))
    await still_serves(client, root_of(tmp_path) / "MEMORY.md")
    # an edit deep in the buffer is applied where it was made
    change = types.TextDocumentContentChangePartial(
        range=types.Range(types.Position(200_000, 2), types.Position(200_000, 3)), text="A"
    )
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri(path), version=2), [change]
        )
    )
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri=uri(path)), types.Position(5, 5))
    )
    assert hover is None
    symbols = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(types.TextDocumentIdentifier(uri=uri(path)))
    )
    assert symbols


async def test_large_document_threshold_is_a_setting(tmp_path: Path) -> None:
    """``largeDocumentBytes`` (here 200 bytes) puts a small topic file in large mode; the
    root's ``large_document_bytes`` applies when the setting is absent."""
    from pytest_lsp import make_test_lsp_client

    from tests.lsp_helpers import make_project

    project, root = make_project(tmp_path)
    topic = root / "topic.md"
    text = "# Topic\n\n" + "Plain words about the project, repeated.\n" * 20
    cases: list[tuple[dict[str, object] | None, str | None, bool]] = [
        ({"largeDocumentBytes": 200}, None, True),
        (None, "large_document_bytes = 200\n", True),
        ({"largeDocumentBytes": 0}, "large_document_bytes = 200\n", False),
    ]
    for options, config, expect_note in cases:
        if config is not None:
            (root / "memls.toml").write_text(config, encoding="utf-8")
        client = make_test_lsp_client()
        await client.start_io(*SERVER)
        try:
            await start(client, "neovim", project, options)
            client.text_document_did_open(open_params(topic, text))
            diags = await wait_for_diagnostics(client, topic, lambda codes: codes != [])
            codes = sorted(str(d.code) for d in diags)
            assert ("SZ006" in codes) is expect_note, (options, config, codes)
            if expect_note:
                assert all(c.startswith("SZ") for c in codes), codes
            await client.shutdown_session()
        finally:
            await client.stop()  # type: ignore[no-untyped-call]


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


class RawServer:
    """``memls serve`` over raw stdio, for what a well-behaved client never sends.

    A thread reads the server's messages into a queue, so a test waits with a deadline
    and fails instead of hanging."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self.messages: queue.Queue[dict[str, object] | None] = queue.Queue()
        self.seen: list[dict[str, object]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            while True:
                self.messages.put(read_message(self.proc.stdout))
        except (EOFError, ValueError, OSError):
            self.messages.put(None)

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def request(self, msg_id: int, method: str, params: object = None) -> None:
        message: dict[str, object] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(frame(json.dumps(message).encode()))

    def notify(self, method: str, params: object = None) -> None:
        message: dict[str, object] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(frame(json.dumps(message).encode()))

    def response(self, msg_id: object, timeout: float = 30.0) -> dict[str, object]:
        """The response to ``msg_id`` (fails after ``timeout`` seconds)."""
        deadline = time.monotonic() + timeout
        while True:
            for message in self.seen:
                if message.get("id") == msg_id and ("result" in message or "error" in message):
                    return message
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no response to {msg_id!r}; saw {self.seen}")
            try:
                received = self.messages.get(timeout=left)
            except queue.Empty:
                continue
            if received is None:
                raise AssertionError(f"the server closed before answering {msg_id!r}")
            self.seen.append(received)

    def initialize(self, folder: Path | None = None) -> None:
        self.request(
            1,
            "initialize",
            {"capabilities": {}, "rootUri": folder.resolve().as_uri() if folder else None},
        )
        assert "result" in self.response(1)
        self.notify("initialized", {})

    def exit_code(self, timeout: float = 20.0) -> int:
        self.notify("exit")
        return self.proc.wait(timeout=timeout)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def raw() -> Iterator[RawServer]:
    server = RawServer()
    try:
        yield server
    finally:
        server.close()


def error_code(message: dict[str, object]) -> object:
    error = message.get("error")
    assert isinstance(error, dict), message
    return error.get("code")


def test_invalid_params_are_answered_with_invalid_params(raw: RawServer) -> None:
    """Issue 15 defect 6: ``textDocument/hover`` with ``{"bogus": 1}`` got no response."""
    raw.initialize()
    raw.request(2, "textDocument/hover", {"bogus": 1})
    answer = raw.response(2)
    assert error_code(answer) == INVALID_PARAMS
    error = answer["error"]
    assert isinstance(error, dict)
    assert "position" in str(error["message"])
    raw.notify("textDocument/didOpen", {"bogus": 1})  # a notification: nothing to answer
    raw.request(3, "textDocument/documentSymbol", {"textDocument": 5})
    assert error_code(raw.response(3)) == INVALID_PARAMS
    raw.request(4, "shutdown")
    assert raw.response(4)["result"] is None
    assert raw.exit_code() == 0


def test_malformed_headers_resynchronise_and_exit_still_works(raw: RawServer) -> None:
    """Issue 15 defect 6: after ``Content-Length: abc`` (or no header) the server answered
    nothing more and ignored shutdown/exit. Now it skips to the next header, answers a
    request it can recognise in what it skipped, and honours shutdown and exit."""
    raw.initialize()
    hover = {"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {}}
    raw.send(b"Content-Length: abc\r\n\r\n" + json.dumps(hover).encode())
    raw.send(json.dumps({**hover, "id": 3}).encode())  # no header at all
    raw.send(b"\r\nX-Junk\r\n\r\ngarbage \x00\xff bytes")
    raw.send(b'Content-Length: 9999\r\n\r\n{"jsonrpc":')  # longer than what follows
    raw.request(4, "textDocument/documentSymbol", {"textDocument": {"uri": "file:///x/none.md"}})
    assert raw.response(4).get("result") is not None or "error" in raw.response(4)
    assert error_code(raw.response(2)) == INVALID_REQUEST
    assert error_code(raw.response(3)) == INVALID_REQUEST
    raw.request(5, "shutdown")
    assert raw.response(5)["result"] is None
    logged = [m.get("params") for m in raw.seen if m.get("method") == "window/logMessage"]
    warnings = [p for p in logged if isinstance(p, dict) and "unframed" in str(p.get("message"))]
    assert warnings
    assert raw.exit_code() == 0


def test_not_json_is_a_parse_error_and_requests_after_shutdown_are_refused(
    raw: RawServer,
) -> None:
    raw.initialize()
    raw.send(frame(b"{not json"))
    raw.send(frame(b"[1, 2]"))
    raw.request(2, "shutdown")
    assert raw.response(2)["result"] is None
    raw.request(3, "textDocument/hover", {"bogus": 1})
    assert error_code(raw.response(3)) == INVALID_REQUEST
    parse_errors = [m for m in raw.seen if m.get("id") is None and "error" in m]
    assert {error_code(m) for m in parse_errors} == {PARSE_ERROR, INVALID_REQUEST}
    assert raw.exit_code() == 0


def test_exit_without_shutdown_ends_the_process_with_code_1(raw: RawServer) -> None:
    raw.initialize()
    assert raw.exit_code() == 1


def test_messages_in_one_write_take_effect_in_order(raw: RawServer, tmp_path: Path) -> None:
    """A didOpen and a hover arriving in one read: the hover sees the opened text."""
    from tests.lsp_helpers import make_project

    project, root = make_project(tmp_path)
    raw.initialize(project)
    index = root / "MEMORY.md"
    lines = index.read_text(encoding="utf-8").splitlines()
    line = next(n for n, ln in enumerate(lines) if ln.startswith("- **"))
    edited = "\n".join(["", "", *lines]) + "\n"  # the bullet two lines further down
    opened = {
        "jsonrpc": "2.0",
        "method": "textDocument/didOpen",
        "params": {
            "textDocument": {
                "uri": uri(index),
                "languageId": "markdown",
                "version": 1,
                "text": edited,
            }
        },
    }
    hover = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "textDocument/hover",
        "params": {
            "textDocument": {"uri": uri(index)},
            "position": {"line": line + 2, "character": 4},
        },
    }
    raw.send(frame(json.dumps(opened).encode()) + frame(json.dumps(hover).encode()))
    result = raw.response(2)["result"]
    assert isinstance(result, dict)
    assert "Wire the login form" in str(result["contents"])
    raw.request(3, "shutdown")
    raw.response(3)
    assert raw.exit_code() == 0


def test_exit_is_prompt_while_a_huge_document_is_parsed(raw: RawServer, tmp_path: Path) -> None:
    """``exit`` does not wait for the parse of a 10 MB buffer that was just opened."""
    from tests.lsp_helpers import make_project

    project, root = make_project(tmp_path)
    raw.initialize(project)
    text = "# Huge\n\n" + "- a line of memory text that goes on and on\n" * 240_000
    opened = {
        "jsonrpc": "2.0",
        "method": "textDocument/didOpen",
        "params": {
            "textDocument": {
                "uri": uri(root / "huge.md"),
                "languageId": "markdown",
                "version": 1,
                "text": text,
            }
        },
    }
    raw.send(frame(json.dumps(opened).encode()))
    raw.request(2, "shutdown")
    assert raw.response(2)["result"] is None
    started = time.monotonic()
    assert raw.exit_code(timeout=30) == 0
    assert time.monotonic() - started < 10


def test_tcp_transport_has_the_same_framing(tmp_path: Path) -> None:
    """``memls serve --tcp`` (for debugging) reads with the same framing as stdio."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen(
        [*SERVER[:2], "memls", "serve", "--tcp", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                conn = socket.create_connection(("127.0.0.1", port), timeout=30)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        with conn, conn.makefile("rb") as stream:

            def send(message: dict[str, object]) -> None:
                conn.sendall(frame(json.dumps(message).encode()))

            def answer(msg_id: int) -> dict[str, object]:
                while True:
                    message = read_message(stream)
                    if message.get("id") == msg_id:
                        return message

            send(
                {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
            )
            assert "result" in answer(1)
            conn.sendall(b"Content-Length: abc\r\n\r\n{}")
            send(
                {"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {"bogus": 1}}
            )
            assert error_code(answer(2)) == INVALID_PARAMS
            send({"jsonrpc": "2.0", "id": 3, "method": "shutdown"})
            assert answer(3)["result"] is None
            send({"jsonrpc": "2.0", "method": "exit"})
            assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_end_of_input_ends_the_process_while_the_server_watches_files(
    raw: RawServer, tmp_path: Path
) -> None:
    """A client that dies without ``exit`` closes stdin: the server must end even though
    its own file watcher (clients without watcher registration) left threads behind."""
    from tests.lsp_helpers import make_project

    project, _ = make_project(tmp_path)
    raw.initialize(project)
    raw.request(2, "workspace/symbol", {"query": "checkpoint"})
    assert "result" in raw.response(2)
    time.sleep(1.0)  # the watcher is running by now
    assert raw.proc.stdin is not None
    raw.proc.stdin.close()
    assert raw.proc.wait(timeout=20) == 0
