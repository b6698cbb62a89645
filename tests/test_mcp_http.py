"""`memls mcp --http` is as safe as a Jupyter server: a bearer token, loopback, Host/Origin checks.

Servers run as subprocesses on free ports; header checks use plain ``http.client`` (so the
Host and Origin headers are exactly what the test says), tool calls the MCP SDK's own
Streamable HTTP client.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import secrets
import shutil
import socket
import stat
import string
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed (make install-dev installs it)")

import httpx2
import mcp_types as types
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.agent_fixtures import make_project
from tests.test_mcp import TOOLS, payload

INIT = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "0"},
        },
    }
)
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


@dataclass
class Running:
    proc: subprocess.Popen[str]
    root: Path
    host: str
    port: int
    token: str

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/mcp"

    @property
    def bearer(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


def free_port(host: str = "127.0.0.1") -> int:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as probe:
        probe.bind((host, 0))
        port: int = probe.getsockname()[1]
        return port


def can_bind(host: str) -> bool:
    try:
        free_port(host)
    except OSError:
        return False
    return True


def memls_mcp(root: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "memls", "mcp", "--root", str(root), *args]


def token_file(root: Path) -> Path:
    return root / ".memls" / "http-token"


def stop(proc: subprocess.Popen[str]) -> str:
    """Terminate (kill after 10 s) and return what the server wrote on stderr."""
    if proc.poll() is None:
        proc.terminate()
    try:
        _, err = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate(timeout=10)
    return err or ""


@contextlib.contextmanager
def serving(
    root: Path,
    address: str,
    *extra: str,
    host: str = "127.0.0.1",
    port: int,
    env: dict[str, str] | None = None,
    stderr: list[str] | None = None,
) -> Iterator[Running]:
    """A running ``memls mcp --http ADDRESS``, ready (token written, port accepting)."""
    proc = subprocess.Popen(
        memls_mcp(root, "--http", address, *extra),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=root,
    )
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        deadline = time.monotonic() + 20
        while True:
            assert proc.poll() is None, stop(proc)
            if token_file(root).is_file():
                with socket.socket(family) as attempt:
                    if attempt.connect_ex((host, port)) == 0:
                        break
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.05)
        token = token_file(root).read_text(encoding="ascii")
        yield Running(proc, root, host, port, token)
    finally:
        err = stop(proc)
        if stderr is not None:
            stderr.append(err)


def request(
    running: Running,
    headers: dict[str, str],
    *,
    method: str = "POST",
    path: str = "/mcp",
    body: str | None = INIT,
) -> tuple[int, http.client.HTTPMessage, bytes]:
    conn = http.client.HTTPConnection(running.host, running.port, timeout=10)
    try:
        conn.request(method, path, body=body if method == "POST" else None, headers=headers)
        response = conn.getresponse()
        return response.status, response.headers, response.read()
    finally:
        conn.close()


def status(running: Running, headers: dict[str, str], **kwargs: Any) -> int:
    return request(running, headers, **kwargs)[0]


@asynccontextmanager
async def client(url: str, token: str) -> AsyncIterator[ClientSession]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http_,
        streamable_http_client(url, http_client=http_) as (read, write),
        ClientSession(read, write) as session,
    ):
        with anyio.fail_after(30):
            await session.initialize()
        yield session


def run_refused(root: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """Run ``memls mcp`` expecting a refusal: exit 2, one line on stderr, no traceback."""
    proc = subprocess.run(
        memls_mcp(root, *args),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        env=env,
        cwd=root.parent,
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("memls mcp: ")
    return lines[0]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path)


# --- the token -------------------------------------------------------------------------------


def test_every_request_needs_the_bearer_token(project: Path) -> None:
    port = free_port()
    err: list[str] = []
    with serving(project, str(port), port=port, stderr=err) as server:
        code, headers, body = request(server, MCP_HEADERS)
        assert code == 401
        assert headers["WWW-Authenticate"].startswith("Bearer")
        assert json.loads(body)["error"] == "unauthorized"
        wrong = "x" * len(server.token)
        assert status(server, {**MCP_HEADERS, "Authorization": f"Bearer {wrong}"}) == 401
        assert (
            status(server, {**MCP_HEADERS, "Authorization": f"Bearer {server.token[:-1]}"}) == 401
        )
        assert status(server, {**MCP_HEADERS, "Authorization": f"Basic {server.token}"}) == 401
        assert status(server, {**MCP_HEADERS, "Authorization": server.token}) == 401
        for method, path in [("GET", "/mcp"), ("DELETE", "/mcp"), ("OPTIONS", "/mcp")]:
            assert status(server, MCP_HEADERS, method=method, path=path) == 401
        assert status(server, {}, method="GET", path="/no/such/path") == 401
        # the token lets a request through to the app, wherever it goes
        assert status(server, server.bearer, method="GET", path="/no/such/path") == 404
        assert status(server, {**MCP_HEADERS, "Authorization": f"bearer {server.token}"}) == 200
        token = server.token
    assert f"at http://127.0.0.1:{port}/mcp" in err[0]
    assert str(token_file(project)) in err[0]
    assert token not in err[0]  # printed only with --print-token
    assert not token_file(project).exists()  # removed at a clean shutdown


async def test_the_sdk_client_calls_tools_with_the_token(project: Path) -> None:
    port = free_port()
    with serving(project, f"127.0.0.1:{port}", port=port) as server:
        async with client(server.url, server.token) as session:
            assert {t.name for t in (await session.list_tools()).tools} == TOOLS
            saved = await session.call_tool("checkpoint_save", {"next_action": "Over HTTP"})
            assert payload(saved)["changed"] is True
            listed = payload(await session.call_tool("checkpoint_list", {}))
        assert [row["name"] for row in listed["checkpoints"]] == ["feature-login"]
        with pytest.raises(Exception):  # noqa: B017, PT011 — whatever the SDK raises on a 401
            async with client(server.url, "not-the-token"):
                pass


def test_the_token_file_is_private_and_removed_only_when_still_ours(project: Path) -> None:
    assert not (project / ".memls").exists()
    port = free_port()
    with serving(project, str(port), port=port) as server:
        state = project / ".memls"
        assert stat.S_IMODE(state.stat().st_mode) == 0o700
        assert stat.S_IMODE(token_file(project).stat().st_mode) == 0o600
        assert (state / ".gitignore").read_text(encoding="utf-8") == "*\n"
        assert len(server.token) >= 43
        token_file(project).write_text("a newer server's token", encoding="ascii")
    assert token_file(project).read_text(encoding="ascii") == "a newer server's token"


def test_memls_mcp_token_supplies_the_token_and_print_token_shows_it(project: Path) -> None:
    given = "".join(secrets.choice(string.ascii_letters) for _ in range(32))
    port = free_port()
    err: list[str] = []
    env = {**os.environ, "MEMLS_MCP_TOKEN": given}
    with serving(project, str(port), "--print-token", port=port, env=env, stderr=err) as server:
        assert server.token == given
        assert status(server, {**MCP_HEADERS, "Authorization": f"Bearer {given}"}) == 200
    assert f"memls mcp: token: {given}" in err[0].splitlines()
    assert "MEMLS_MCP_TOKEN" in err[0]
    line = run_refused(project, "--http", str(port), env={**os.environ, "MEMLS_MCP_TOKEN": "short"})
    assert "MEMLS_MCP_TOKEN" in line


@pytest.mark.parametrize(
    "layout", ["token-symlink", "state-symlink", "state-file", "state-foreign"]
)
def test_an_unsafe_token_location_is_refused(project: Path, tmp_path: Path, layout: str) -> None:
    state = project / ".memls"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target = elsewhere / "precious"
    target.write_text("do not touch\n", encoding="utf-8")
    if layout == "token-symlink":
        state.mkdir(mode=0o700)
        (state / "http-token").symlink_to(target)
    elif layout == "state-symlink":
        state.symlink_to(elsewhere, target_is_directory=True)
    elif layout == "state-file":
        state.write_text("not a directory\n", encoding="utf-8")
    else:
        if os.geteuid() != 0:
            pytest.skip("needs root to give .memls to another user")
        state.mkdir(mode=0o700)
        os.chown(state, 65534, 65534)
    line = run_refused(project, "--http", str(free_port()))
    assert "refusing" in line or "not a directory" in line, line
    assert target.read_text(encoding="utf-8") == "do not touch\n"
    assert sorted(p.name for p in elsewhere.iterdir()) == ["precious"]
    if layout == "token-symlink":
        assert (state / "http-token").is_symlink()
    if layout == "state-foreign":
        assert list(state.iterdir()) == []


# --- addresses -------------------------------------------------------------------------------


def _listening(port: int) -> list[str]:
    """Local addresses (hex, as /proc/net/tcp* writes them) listening on ``port``."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table, encoding="ascii") as rows:
            for row in list(rows)[1:]:
                fields = row.split()
                address, _, hex_port = fields[1].rpartition(":")
                if int(hex_port, 16) == port and fields[3] == "0A":
                    found.append(address)
    return found


def _non_loopback_address() -> str | None:
    """This machine's own non-loopback IPv4 address, if it has one (nothing is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # UDP connect: a route lookup, no packet
        except OSError:
            return None
        address: str = probe.getsockname()[0]
    return None if address.startswith("127.") or address == "0.0.0.0" else address


def test_colon_port_listens_on_127_0_0_1_only(project: Path) -> None:
    port = free_port()
    with serving(project, f":{port}", port=port) as server:
        if Path("/proc/net/tcp").is_file():
            assert _listening(port) == ["0100007F"]  # 127.0.0.1, and nothing on tcp6
        other = _non_loopback_address()
        if other is None:
            print("no non-loopback address here: only the listening table was checked")
        else:
            with socket.socket() as attempt:
                attempt.settimeout(5)
                assert attempt.connect_ex((other, port)) != 0
        assert status(server, {**MCP_HEADERS, **server.bearer}) == 200


async def test_ipv6_loopback_in_brackets_is_served(project: Path) -> None:
    if not can_bind("::1"):
        print("skipped: this machine has no IPv6 loopback")
        pytest.skip("no IPv6 loopback (::1) here")
    port = free_port("::1")
    with serving(project, f"[::1]:{port}", host="::1", port=port) as server:
        assert status(server, {**MCP_HEADERS, **server.bearer, "Host": f"[::1]:{port}"}) == 200
        async with client(server.url, server.token) as session:
            listed = payload(await session.call_tool("checkpoint_list", {}))
        assert listed["checkpoints"] == []


@pytest.mark.parametrize(
    ("address", "says"),
    [
        ("0.0.0.0:{port}", "not a loopback address"),
        ("[::]:{port}", "not a loopback address"),
        ("::1:x", "in brackets with a port"),
        ("[::1]:99999", "is not a port"),
    ],
)
def test_an_address_that_is_not_loopback_or_has_no_port_is_refused(
    project: Path, address: str, says: str
) -> None:
    port = free_port()
    line = run_refused(project, "--http", address.format(port=port))
    assert says in line
    assert "--allow-remote" in line or "not a port" in line or "brackets" in line
    assert _listening(port) == []
    assert not token_file(project).exists()


def test_a_host_alone_parses_on_the_default_port() -> None:
    from memls.mcpserver.http import DEFAULT_HTTP_PORT
    from memls.mcpserver.http import parse_address as _address

    assert _address("::1") == ("::1", DEFAULT_HTTP_PORT)
    assert _address("[::1]") == ("::1", DEFAULT_HTTP_PORT)
    assert _address("[::1]:9000") == ("::1", 9000)
    assert _address("localhost") == ("localhost", DEFAULT_HTTP_PORT)
    assert _address(":9000") == ("127.0.0.1", 9000)
    assert _address("9000") == ("127.0.0.1", 9000)


def test_a_busy_port_is_one_line_and_exit_2(project: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        line = run_refused(project, "--http", str(port))
    assert line == f"memls mcp: cannot listen on 127.0.0.1:{port}: address already in use"
    assert not token_file(project).exists()


# --- Host and Origin -------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2"])
def test_a_foreign_host_or_origin_is_forbidden(project: Path, host: str) -> None:
    if not can_bind(host):
        print(f"skipped: {host} does not bind here")
        pytest.skip(f"{host} does not bind here")
    port = free_port(host)
    other = port + 1 if port < 65535 else port - 1
    with serving(project, f"{host}:{port}", host=host, port=port) as server:
        ok = {**MCP_HEADERS, **server.bearer}
        # DNS rebinding: a name the attacker controls, resolving to loopback
        assert status(server, {**ok, "Host": "evil.example"}) == 403
        assert status(server, {**ok, "Host": f"evil.example:{port}"}) == 403
        assert status(server, {**MCP_HEADERS, "Host": f"evil.example:{port}"}) == 403
        assert status(server, {**ok, "Host": f"{host}:{other}"}) == 403
        assert status(server, {**ok, "Host": f"{host}.evil.example:{port}"}) == 403
        for good in (f"{host}:{port}", f"localhost:{port}", f"127.0.0.2:{port}", f"[::1]:{port}"):
            assert status(server, {**ok, "Host": good}) == 200, good
        for bad in (
            f"http://evil.example:{port}",
            "http://evil.example",
            f"http://{host}:{other}",
            f"https://localhost:{port}",
            "null",
        ):
            assert status(server, {**ok, "Origin": bad}) == 403, bad
        _, _, body = request(server, {**ok, "Origin": "http://evil.example"})
        assert json.loads(body)["error"] == "forbidden"
        assert status(server, {**ok, "Origin": f"http://localhost:{port}"}) == 200
        assert status(server, {**ok, "Origin": f"http://{host}:{port}"}) == 200


# --- another user ----------------------------------------------------------------------------

_INTRUDER = """
import http.client, json, os, sys
path, port = sys.argv[1], int(sys.argv[2])
out = {}
for what, probe in (("read", lambda: open(path).read()), ("list", lambda: os.listdir(os.path.dirname(path)))):
    try:
        probe()
        out[what] = "ok"
    except OSError as exc:
        out[what] = type(exc).__name__
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
conn.request("POST", "/mcp", body=sys.argv[3], headers={"Content-Type": "application/json",
             "Accept": "application/json, text/event-stream"})
out["status"] = conn.getresponse().status
print(json.dumps(out))
"""


def test_another_local_user_can_neither_read_the_token_nor_call_the_server() -> None:
    if os.geteuid() != 0:
        print("skipped: not root, cannot become another user")
        pytest.skip("needs root to run a client as nobody")
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        print("skipped: setpriv is missing")
        pytest.skip("setpriv is missing")
    drop = [setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
    python = next(
        (
            p
            for p in (sys.executable, "/usr/bin/python3")
            if subprocess.run([*drop, p, "-c", "pass"], capture_output=True, check=False).returncode
            == 0
        ),
        None,
    )
    if python is None:
        print("skipped: no python that nobody may run")
        pytest.skip("no python runnable by nobody")
    # a root every user may traverse, so only the modes memls sets keep the token in
    root = Path(tempfile.mkdtemp(prefix="memls-http-"))
    try:
        root.chmod(0o755)
        port = free_port()
        with serving(root, str(port), port=port) as server:
            proc = subprocess.run(
                [*drop, python, "-c", _INTRUDER, str(token_file(root)), str(port), INIT],
                capture_output=True,
                text=True,
                cwd="/",
                env={"PATH": "/usr/bin:/bin"},
                timeout=30,
                check=False,
            )
            assert proc.returncode == 0, proc.stderr
            seen = json.loads(proc.stdout)
            assert seen == {"read": "PermissionError", "list": "PermissionError", "status": 401}
            assert status(server, {**MCP_HEADERS, **server.bearer}) == 200  # we still can
    finally:
        shutil.rmtree(root, ignore_errors=True)


# --- redaction -------------------------------------------------------------------------------


def _texts(result: types.CallToolResult) -> str:
    parts = [b.text for b in result.content if isinstance(b, types.TextContent)]
    return "\n".join([*parts, json.dumps(result.structured_content)])


async def test_tool_results_never_carry_a_secret_from_memory(project: Path) -> None:
    alphabet = string.ascii_letters + string.digits
    key = "sk-proj-" + "".join(secrets.choice(alphabet) for _ in range(40))  # a fake, made now
    port = free_port()
    with serving(project, str(port), port=port) as server:
        async with client(server.url, server.token) as session:
            saved = await session.call_tool(
                "checkpoint_save",
                {
                    "name": "narwhal",
                    "next_action": f"Rotate the narwhal key {key}",
                    "done": [f"Exported OPENAI_API_KEY={key} for the narwhal client"],
                    "failed": [f"Calling staging with {key}: 401"],
                },
            )
            # planted in the file itself too, whatever the save kept of it
            path = project / "checkpoint-narwhal.md"
            text = path.read_text(encoding="utf-8")
            text = text.replace("## Done This Session\n", f"## Done This Session\n- Used {key}\n")
            path.write_text(text, encoding="utf-8")
            assert key in path.read_text(encoding="utf-8")
            resumed = await session.call_tool("checkpoint_resume", {"name": "narwhal"})
            searched = await session.call_tool("recall_search", {"query": "narwhal key"})
            echoed = await session.call_tool("recall_search", {"query": key, "mode": "text"})
            listed = await session.call_tool("checkpoint_list", {})
    assert payload(resumed)["status"] == "one"
    assert payload(searched)["results"], "the checkpoint should be found"
    for result in (saved, resumed, searched, echoed, listed):
        assert key not in _texts(result)
    assert "[redacted" in _texts(resumed)
    assert "arguments_redacted" in payload(saved)
