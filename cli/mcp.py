"""`memls mcp` — memory for coding agents over the Model Context Protocol (stdio).

Built on the official ``mcp`` SDK's low-level ``Server`` (memls's ``mcp`` extra,
imported only when this command runs). Every tool calls the same core operation as the
matching CLI command; refusals (an unsafe name, a compare-and-swap conflict, a missing
root, bad input) come back as tool results with ``isError`` and the CLI's message, and the
server keeps serving. Memory files are resources (listed, read, with change
notifications while files change); ``resume`` and ``checkpoint`` are prompts, which
Claude Code offers as slash commands.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import click

from memls.cli.common import root_option

if TYPE_CHECKING:
    import anyio
    import mcp_types as types
    from mcp.server import Server, ServerRequestContext
    from mcp.server.session import ServerSession
    from mcp.server.subscriptions import InMemorySubscriptionBus

INSTRUCTIONS = """\
memls keeps this project's agent memory (MEMORY.md, checkpoint-{name}.md files, .handoff.md,
LOG.md, archived session transcripts) healthy and searchable. Use it:
- At the start of a session, or after /clear or a compaction: call checkpoint_resume (or the
  `resume` prompt) and continue from the Next Action; do not retry a "Previously failed" approach.
- Before a risky step, before /clear or /compact, and when you stop: call checkpoint_save with
  next_action (the first concrete step, with file paths), done, and failed (what did not work
  and why). It returns the /compact (or /clear) line to use next.
- Before re-deriving something that was decided or found earlier: recall_search (hybrid
  semantic + full-text search over memory files and past session transcripts; results name
  file and line range, and for a transcript the JSONL lines of the matching messages).
- Record a decision or milestone with log_append; refresh .handoff.md with handoff_refresh
  before handing work over; memory_check reports what is wrong with the memory files.
Everything stays in the memory root on this machine."""

CHECKPOINT_TEMPLATE = "memls://memory/checkpoint-{name}.md"
MEMORY_TEMPLATE = "memls://memory/{path}"
RESOURCE_NOT_FOUND = -32002
"""The MCP specification's error code for a resource URI that names nothing."""
RECALL_REFRESH_BUDGET = 1.5
"""Seconds of refresh work recall_search waits for before answering from the index as it is
(``MEMLS_MCP_RECALL_BUDGET``); the refresh goes on in the background."""
RECALL_BUDGET_ENV = "MEMLS_MCP_RECALL_BUDGET"

_TOOL_COMMANDS: dict[str, tuple[str, str, str | None]] = {
    "recall_search": ("memls.cli.recall", "recall", "search"),
    "recall_status": ("memls.cli.recall", "recall", "status"),
    "checkpoint_save": ("memls.cli.checkpoint", "checkpoint", "save"),
    "checkpoint_resume": ("memls.cli.checkpoint", "checkpoint", "resume"),
    "checkpoint_list": ("memls.cli.checkpoint", "checkpoint", "list"),
    "checkpoint_clear": ("memls.cli.checkpoint", "checkpoint", "clear"),
    "handoff_refresh": ("memls.cli.ops", "handoff", "refresh"),
    "log_append": ("memls.cli.ops", "log", "append"),
    "memory_check": ("memls.cli.check", "check", None),
    "snapshot_save": ("memls.cli.snapshot", "snapshot", "save"),
}
"""The CLI command each tool runs the core operation of (where refusals name its flags)."""


@click.command()
@root_option
@click.option(
    "--http",
    "http",
    metavar="[HOST:]PORT",
    default=None,
    help="Serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio (HOST defaults to "
    "127.0.0.1; IPv6 as [::1]:PORT). Every request needs the bearer token written to "
    "ROOT/.memls/http-token.",
)
@click.option(
    "--allow-remote",
    is_flag=True,
    help="With --http: allow a host that is not loopback (0.0.0.0, ::, a LAN address). "
    "The token is still required; the traffic is not encrypted.",
)
@click.option(
    "--print-token",
    is_flag=True,
    help="With --http: print the token on stderr too (it is always in ROOT/.memls/http-token).",
)
def mcp(root: Path | None, http: str | None, allow_remote: bool, print_token: bool) -> None:
    """Serve memory tools, resources and prompts to a coding agent over MCP (stdio).

    \b
    Tools: recall_search, recall_status, checkpoint_save, checkpoint_resume,
           checkpoint_list, checkpoint_clear, handoff_refresh, log_append,
           memory_check, snapshot_save.
    Register it with an agent, e.g. `claude mcp add memls -- memls mcp`.
    Needs the mcp extra: install memls with it, e.g. uv tool install '/path/to/memls[mcp]'.

    \b
    With --http, a random token is made at each start (or taken from MEMLS_MCP_TOKEN)
    and written to ROOT/.memls/http-token (mode 0600); clients send it as
    `Authorization: Bearer TOKEN`. Host and Origin headers must name the served address.
    """
    try:
        import anyio
        from mcp.server.stdio import stdio_server
    except ImportError as exc:
        raise click.ClickException(
            f"memls mcp needs the MCP SDK ({exc.name} is missing): install memls with its mcp "
            f"extra, e.g. uv tool install '/path/to/memls[mcp]' from a clone (memls is not on "
            f"PyPI), or add the SDK to this environment with "
            f"`{_install_command('mcp>=2.3,<3')}`"
        ) from exc
    if http is None:
        for flag, given in (("--allow-remote", allow_remote), ("--print-token", print_token)):
            if given:
                raise Refused(f"{flag} needs --http [HOST:]PORT")
        found = _root_for(root)
        if found is None:
            click.echo(f"memls mcp: {no_root_message(Path.cwd())}", err=True)
        memls = MemlsServer(found, start=Path.cwd())

        async def main() -> None:
            async with stdio_server() as (read, write):
                await memls.serve(read, write)

        anyio.run(main)
        return
    found = _root_for(root)
    if found is None:
        raise Refused(no_root_message(Path.cwd()))
    _serve_http_command(found, http, allow_remote=allow_remote, print_token=print_token)


def no_root_message(start: Path) -> str:
    """Why a server started without ``--root`` has no memory root, and what to do."""
    return (
        f"no memory root: memls mcp was started in {start} without --root, and no memory "
        "root (a folder with MEMORY.md, LOG.md or checkpoint-*.md, or Claude Code's memory "
        "folder for the project) is there or above it; nothing is read or written. Add "
        '"--root", "/path/to/memory" to the server\'s args, or start it in the project folder'
    )


def _install_command(package: str) -> str:
    from memls.core.recall.minilm import install_command

    return install_command(f"'{package}'")


class Refused(click.ClickException):
    """A refusal to start: one line on stderr (``memls mcp: ...``), exit status 2."""

    exit_code = 2

    def show(self, file: Any = None) -> None:
        click.echo(f"memls mcp: {self.message}", err=True)


def _serve_http_command(root: Path, value: str, *, allow_remote: bool, print_token: bool) -> None:
    """Check the address, bind, write the token file, serve; remove the token at the end."""
    import os

    import anyio

    from memls.core.httptoken import (
        TOKEN_ENV,
        TokenFileError,
        new_token,
        remove_token_file,
        write_token_file,
    )

    host, port = _address(value)
    loopback = _is_loopback(host)
    if not loopback and not allow_remote:
        raise Refused(
            f"{_display(host, port)} is not a loopback address: anyone who can reach it could "
            "use this memory root; pass --allow-remote to serve there anyway (the token is "
            "still required)"
        )
    try:
        token = new_token()
    except TokenFileError as exc:
        raise Refused(str(exc)) from None
    sock = _bind(host, port)
    try:
        port = sock.getsockname()[1]
        stopper = _Stopper()
        try:
            path = write_token_file(root, token)
        except TokenFileError as exc:
            stopper.restore()
            raise Refused(str(exc)) from None
        try:
            try:
                sock.listen(128)
            except OSError as exc:
                raise Refused(f"cannot listen on {_display(host, port)}: {_reason(exc)}") from None
            memls = MemlsServer(root)
            policy = HttpPolicy.for_address(host, port, token)
            url = f"http://{_display(host, port)}/mcp"
            click.echo(f"memls mcp: serving {root} at {url}", err=True)
            source = f" (from {TOKEN_ENV})" if os.environ.get(TOKEN_ENV) else ""
            click.echo(
                f'memls mcp: every request needs "Authorization: Bearer <token>"; the token{source} '
                f"is in {path} (readable by you only)",
                err=True,
            )
            if print_token:
                click.echo(f"memls mcp: token: {token}", err=True)
            if not loopback:
                click.echo(
                    f"memls mcp: {host} is not loopback (--allow-remote): plain HTTP, not "
                    "encrypted; anyone who can reach it and has the token can read and write "
                    "this memory root",
                    err=True,
                )
            if not stopper.stopping:
                anyio.run(memls.serve_http, sock, policy, stopper)
        finally:
            stopper.restore()
            remove_token_file(root, token)
    finally:
        sock.close()


class _Stopper:
    """SIGINT and SIGTERM handlers, from before the token file is written until it is removed.

    A signal stops uvicorn (or, before it runs, keeps it from starting), and the token file
    is removed on the way out. uvicorn's own handlers, while it serves, re-raise the signal
    after its shutdown under the handlers it found: these, so the process is not killed
    before the cleanup. The exit status is 0, as for any clean shutdown.
    """

    def __init__(self) -> None:
        import signal

        self.stopping = False
        self.server: Any = None
        self.previous: dict[int, Any] = {}
        if threading.current_thread() is threading.main_thread():
            for number in (signal.SIGINT, signal.SIGTERM):
                self.previous[number] = signal.signal(number, self)

    def __call__(self, number: int, frame: Any) -> None:
        self.stopping = True
        if self.server is not None:
            self.server.should_exit = True

    def attach(self, server: Any) -> None:
        self.server = server
        if self.stopping:
            server.should_exit = True

    def restore(self) -> None:
        import signal

        for number, handler in self.previous.items():
            signal.signal(number, handler)
        self.previous = {}


_PORT = re.compile(r"[0-9]{1,5}")
_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?")


DEFAULT_HTTP_PORT = 8765


def _address(value: str) -> tuple[str, int]:
    """``PORT``, ``:PORT``, ``HOST:PORT``, ``[IPV6]:PORT``, or a host alone (``::1``,
    ``[::1]``, ``localhost``) on port 8765; the host defaults to 127.0.0.1. ``localhost``
    is served on 127.0.0.1 (the name is never resolved)."""
    import ipaddress

    text = value.strip()
    bracketed = re.fullmatch(r"\[([^\]]*)\](?::(.*))?", text)
    if _PORT.fullmatch(text):
        host, port = "127.0.0.1", text
    elif bracketed:
        host, port = bracketed[1], bracketed[2]
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise Refused(f"--http {value!r}: [{host}] is not an IPv6 address") from None
        if port is None:
            port = str(DEFAULT_HTTP_PORT)
    elif text.count(":") > 1:
        try:
            ipaddress.IPv6Address(text)
        except ValueError:
            raise Refused(
                f"--http {value!r}: write an IPv6 address in brackets with a port, e.g. [::1]:8765"
            ) from None
        host, port = text, str(DEFAULT_HTTP_PORT)
    elif ":" in text:
        host, port = text.split(":")
        host = host or "127.0.0.1"
        if not _NAME.fullmatch(host):
            raise Refused(f"--http {value!r}: {host!r} is not a host name or address")
    elif _NAME.fullmatch(text):
        host, port = text, str(DEFAULT_HTTP_PORT)
    else:
        raise Refused(f"--http {value!r}: write PORT, HOST:PORT or [IPV6]:PORT, e.g. 8765")
    if not _PORT.fullmatch(port) or int(port) > 65535:
        raise Refused(f"--http {value!r}: {port!r} is not a port (0-65535)")
    return host, int(port)


def _is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 or ``localhost``: nothing else (not 0.0.0.0, ::, or other names)."""
    import ipaddress

    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _display(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _reason(exc: OSError) -> str:
    text = exc.strerror or str(exc) or type(exc).__name__
    return text[:1].lower() + text[1:]


def _bind(host: str, port: int) -> socket.socket:
    """A socket bound to host:port; any failure is a one-line refusal (exit 2)."""
    bind_host = "127.0.0.1" if host.lower() == "localhost" else host
    try:
        infos = socket.getaddrinfo(
            bind_host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
        family, kind, proto, _, addr = infos[0]
        sock = socket.socket(family, kind, proto)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(addr)
        except BaseException:
            sock.close()
            raise
    except OSError as exc:  # gaierror, EADDRINUSE, EADDRNOTAVAIL, EACCES ...
        raise Refused(f"cannot listen on {_display(host, port)}: {_reason(exc)}") from None
    return sock


# --- who may talk to the HTTP server ----------------------------------------------------------

_HOST_HEADER = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::([0-9]{1,5}))?")


def _host_port(value: str) -> tuple[str, int] | None:
    """A Host header's (name, port), name lowercased, IPv6 in brackets; port 80 if absent."""
    match = _HOST_HEADER.fullmatch(value)
    if match is None:
        return None
    return match[1].lower(), int(match[2]) if match[2] else 80


def _loopback_name(name: str) -> bool:
    import ipaddress

    if name == "localhost":
        return True
    try:
        if name.startswith("["):
            return ipaddress.IPv6Address(name[1:-1]).is_loopback
        return ipaddress.IPv4Address(name).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class HttpPolicy:
    """What a request needs: the bearer token, and a Host (and Origin) naming this server.

    Host must be ``NAME:PORT`` with the served port, NAME a loopback literal (127.0.0.0/8,
    [::1]) or localhost, or the bound host; on a wildcard address (0.0.0.0, ::) any NAME.
    An Origin, when sent, must be ``http://`` and such a Host (on a wildcard address: the
    request's own Host).
    """

    token: str
    port: int
    names: frozenset[str] = frozenset()
    any_name: bool = False

    @classmethod
    def for_address(cls, host: str, port: int, token: str) -> HttpPolicy:
        import ipaddress

        if _is_loopback(host):
            return cls(token, port)
        try:
            if ipaddress.ip_address(host).is_unspecified:
                return cls(token, port, any_name=True)
        except ValueError:
            pass
        return cls(token, port, frozenset({f"[{host}]" if ":" in host else host.lower()}))

    def host_ok(self, value: str) -> bool:
        parsed = _host_port(value)
        if parsed is None or parsed[1] != self.port:
            return False
        name = parsed[0]
        return self.any_name or name in self.names or _loopback_name(name)

    def origin_ok(self, origin: str, host: str) -> bool:
        if not origin.startswith("http://"):
            return False
        rest = origin[len("http://") :]
        if not self.host_ok(rest):
            return False
        return not self.any_name or _host_port(rest) == _host_port(host)

    def check(self, headers: list[tuple[bytes, bytes]]) -> tuple[int, str]:
        """``(0, "")`` for a request to serve, else the HTTP status and why."""
        from memls.core.httptoken import token_matches

        def values(name: bytes) -> list[str]:
            return [v.decode("latin-1") for k, v in headers if k.lower() == name]

        hosts = values(b"host")
        if len(hosts) != 1 or not self.host_ok(hosts[0].strip()):
            return 403, "the Host header does not name this server"
        origins = values(b"origin")
        if len(origins) > 1 or (origins and not self.origin_ok(origins[0].strip(), hosts[0])):
            return 403, "the Origin header does not name this server"
        auth = values(b"authorization")
        scheme, _, credential = auth[0].strip().partition(" ") if len(auth) == 1 else ("", "", "")
        if scheme.lower() != "bearer" or not token_matches(
            credential.strip().encode("latin-1"), self.token
        ):
            return 401, (
                "send Authorization: Bearer <token>; the token is in .memls/http-token "
                "in the memory root of the user who started the server"
            )
        return 0, ""


class HttpGuard:
    """ASGI middleware in front of the whole SDK app: every path, every method, websockets too."""

    def __init__(self, app: Any, policy: HttpPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)  # lifespan
            return
        status, why = self.policy.check(list(scope.get("headers", [])))
        if status == 0:
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        error = "unauthorized" if status == 401 else "forbidden"
        body = json.dumps({"error": error, "message": why}).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"cache-control", b"no-store"),
        ]
        if status == 401:
            headers.append((b"www-authenticate", b'Bearer realm="memls"'))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def _root_for(root: Path | None) -> Path | None:
    """``--root`` as given, else the root discovered from the working directory, else None:
    unlike the CLI, the server never falls back to its working directory (an agent starts
    it wherever it runs, and memory must not appear there)."""
    from memls.cli.common import resolve_root

    if root is not None:
        return resolve_root(root)
    return _discover(Path.cwd(), check=True)


def _discover(start: Path, *, check: bool = False) -> Path | None:
    from memls.cli.common import InvalidInput
    from memls.core.config import ConfigError, check_configs, load_config
    from memls.core.roots import discover_root

    try:
        if check:
            check_configs(start)
        found = discover_root(start)
        if found is not None:
            load_config(found)
    except ConfigError as exc:
        raise InvalidInput(f"broken configuration: {exc}") from exc
    return found


# --- tool arguments ---------------------------------------------------------------------------


def _models() -> dict[str, Any]:
    """The argument models of the tools (pydantic comes with the SDK; imported here, lazily)."""
    from pydantic import BaseModel, ConfigDict, Field

    from memls.core.recall.chunking import KINDS
    from memls.core.recall.query import MODES

    class _Args(BaseModel):
        model_config = ConfigDict(extra="forbid")

    class RecallSearch(_Args):
        query: str = Field(
            min_length=1, description="What to look for: words, a question, a name (not empty)."
        )
        # The enums are core's own lists: what the schema advertises is what core accepts.
        mode: Literal[MODES] = Field(  # type: ignore[valid-type]
            "hybrid",
            description="hybrid fuses semantic and BM25 full-text rankings; text needs no model.",
        )
        limit: int = Field(8, ge=1, le=50, description="Number of results.")
        kind: Literal[KINDS] | None = Field(  # type: ignore[valid-type]
            None,
            description="Only chunks of this kind: "
            + ", ".join(KINDS)
            + " (MEMORY.md itself is an index of pointers and is not searched).",
        )
        since: str | None = Field(
            None, description="Only chunks dated at or after this: YYYY-MM-DD, ISO time, 7d, 12h."
        )

    class Empty(_Args):
        pass

    class CheckpointSave(_Args):
        name: str | None = Field(
            None,
            description="Checkpoint name (default: the current git branch, lowercased, / → -).",
        )
        next_action: str = Field(
            description="The Next Action: a one-line title; further lines (after a newline) "
            "become its body — say what to do first, with file paths."
        )
        done: list[str] = Field(default_factory=list, description="What this session achieved.")
        failed: list[str] = Field(
            default_factory=list,
            description="Approaches that failed: what was tried and why it failed.",
        )
        summary: str | None = Field(
            None, description="One-line summary for the MEMORY.md bullet (default: next action)."
        )
        plan: str | None = Field(None, description="The plan file driving the work.")
        step: str | None = Field(None, description="Progress in the plan, N/M (needs plan).")
        expect_sha: str | None = Field(
            None,
            description="Save only if the checkpoint's sha256 is still this (from an earlier "
            "save or resume); a conflict is reported, nothing is written.",
        )

    class CheckpointResume(_Args):
        name: str | None = Field(
            None, description="Checkpoint to resume (default: the only one, else a list)."
        )
        consume: bool = Field(False, description="Delete the checkpoint after presenting it.")

    class CheckpointClear(_Args):
        name: str = Field(
            min_length=1, description="Checkpoint to delete (its file and its index bullet)."
        )

    class LogAppend(_Args):
        title: str = Field(description="Entry title, one line.")
        body: str = Field("", description="Entry body (Markdown; use ### for headings).")

    class MemoryCheck(_Args):
        path: str | None = Field(
            None, description="One file to check, relative to the memory root (default: all)."
        )

    class SnapshotSave(_Args):
        paths: list[str] = Field(
            default_factory=list,
            description="Files to commit, relative to the root (default: every memory file).",
        )
        expect: str | None = Field(
            None,
            description="The commit the snapshot ref must hold now (default: whatever it "
            "holds; a concurrent save is still detected).",
        )
        message: str | None = Field(
            None,
            description="One line saying why you snapshot now (the commit's subject; "
            "`memls snapshot log` lists it).",
        )

    return {
        "recall_search": RecallSearch,
        "recall_status": Empty,
        "checkpoint_save": CheckpointSave,
        "checkpoint_resume": CheckpointResume,
        "checkpoint_list": Empty,
        "checkpoint_clear": CheckpointClear,
        "handoff_refresh": Empty,
        "log_append": LogAppend,
        "memory_check": MemoryCheck,
        "snapshot_save": SnapshotSave,
    }


_DESCRIPTIONS = {
    "recall_search": "Search memory files and past session transcripts (hybrid semantic + "
    "full-text). Use before re-deriving something decided or found earlier. Results give "
    "path, start_line, end_line, kind, heading, snippet and score, plus the mode that ran and "
    "whether it was degraded to text. A transcript result's `lines` are the JSONL lines of "
    "the messages that matched (start_line/end_line span them; `turn_lines` is the whole "
    "turn): open those lines, not the turn. Changed files are indexed first.",
    "recall_status": "Recall's state: mode (semantic/text/unavailable), model, chunk counts, "
    "last backfill and verification.",
    "checkpoint_save": "Save a named checkpoint (checkpoint-NAME.md + its MEMORY.md bullet), "
    "atomically and under a lock. Call before a risky step, before /clear or /compact, and "
    "when stopping. Returns path, sha, changed and the /compact (or /clear) line to use.",
    "checkpoint_resume": "Present a checkpoint: branch-mismatch warning, previously failed "
    "approaches (do not retry them), then the Next Action. Without a name: the only "
    "checkpoint, or the list to choose from.",
    "checkpoint_list": "List checkpoints, newest first: name, branch, saved, age, stale, "
    "branch mismatch, next action.",
    "checkpoint_clear": "Delete a checkpoint file and its MEMORY.md bullet (when its work is done).",
    "handoff_refresh": "Refresh .handoff.md (create it when missing): the memls-generated "
    "blocks are updated from checkpoints, git and the log; the author's text stays.",
    "log_append": "Append an entry (## YYYY-MM-DD HH:MM — title) to the append-only LOG.md: "
    "decisions, milestones, lessons.",
    "memory_check": "Check the memory files against memls's rules; the diagnostics as `memls "
    "check --format json` prints them (path, line, column, code, severity, message, fixable).",
    "snapshot_save": "Commit memory files to the git ref refs/memls/<instance> (work tree, "
    "index and HEAD untouched). Unchanged content makes no commit.",
}

_READ_ONLY = {"recall_status", "checkpoint_list", "memory_check"}


# --- the server -------------------------------------------------------------------------------


class ToolError(Exception):
    """A refusal: the CLI's message, its exit status, and extra JSON fields."""

    def __init__(self, text: str, exit_code: int = 2, **extra: Any) -> None:
        super().__init__(text)
        self.exit_code = exit_code
        self.extra = extra


@dataclass
class _Watch:
    """What the resource watcher knows: the resources last listed and who listens."""

    listed: dict[str, tuple[int, int]] = field(default_factory=dict)  # uri -> (size, mtime)
    sessions: list[ServerSession] = field(default_factory=list)
    subscribed: set[str] = field(default_factory=set)


class MemlsServer:
    """The MCP server over one memory root."""

    def __init__(self, root: Path | None, *, start: Path | None = None) -> None:
        """``root`` None: no memory root was found from ``start`` (the working directory);
        every tool refuses, nothing is written, until one appears there (each call looks
        again)."""
        from mcp.server import Server
        from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler

        from memls import __version__

        self._root = root
        self.start = start
        self.models = _models()
        self.bus: InMemorySubscriptionBus = InMemorySubscriptionBus()
        self.watch = _Watch()
        self._topics: tuple[tuple[str, int, int], list[Path]] | None = None
        self._recall_lock = threading.Lock()
        self._recall_seen: str | None = None
        self._refresh: _Refresh | None = None  # the one background refresh, while it runs
        self._refresh_again = False  # a call saw newer files while it ran: run once more
        self._refresh_error: str | None = None  # how the last refresh failed, if it did
        self._refresh_cancel = threading.Event()  # set at shutdown
        self.server: Server[Any] = Server(
            "memls",
            version=__version__,
            title="memls — agent memory",
            instructions=INSTRUCTIONS,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_list_resource_templates=self._list_resource_templates,
            on_read_resource=self._read_resource,
            on_subscribe_resource=self._subscribe,
            on_unsubscribe_resource=self._unsubscribe,
            on_subscriptions_listen=ListenHandler(self.bus),
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
            on_completion=self._complete,
        )

    async def serve(self, read: Any, write: Any) -> None:
        import anyio
        from mcp.server import NotificationOptions

        options = self.server.create_initialization_options(
            NotificationOptions(resources_changed=True)
        )
        stop = anyio.Event()
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self._watch_files, stop)
            await self.server.run(read, write, options)
            stop.set()  # the watcher's thread ends within a step, not at its 5 s timeout
            self.stop_refresh()
            tasks.cancel_scope.cancel()

    async def serve_http(
        self, sock: socket.socket, policy: HttpPolicy, stopper: _Stopper | None = None
    ) -> None:
        """Streamable HTTP at ``/mcp`` on a bound socket (the SDK's app, run by uvicorn).

        :class:`HttpGuard` checks Host, Origin and the token before the SDK sees a request,
        so the SDK's own DNS-rebinding check (any port, 421, 127.0.0.1 only) is turned off.
        ``stopper`` (see :class:`_Stopper`) tells uvicorn to stop on SIGINT or SIGTERM.
        """
        import anyio
        import uvicorn
        from mcp.server.transport_security import TransportSecuritySettings

        app = self.server.streamable_http_app(
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False)
        )
        config = uvicorn.Config(
            HttpGuard(app, policy),
            log_level="warning",
            proxy_headers=False,
            server_header=False,
            timeout_graceful_shutdown=3,
        )
        server = uvicorn.Server(config)
        if stopper is not None:
            stopper.attach(server)
        stop = anyio.Event()
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self._watch_files, stop)
            await server.serve(sockets=[sock])
            stop.set()  # the watcher's thread ends within a step, not at its 5 s timeout
            self.stop_refresh()
            tasks.cancel_scope.cancel()

    # -- tools ------------------------------------------------------------------------------------

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        import mcp_types as types

        tools = []
        for name, model in self.models.items():
            schema = model.model_json_schema()
            schema.pop("title", None)
            tools.append(
                types.Tool(
                    name=name,
                    description=_DESCRIPTIONS[name],
                    input_schema=schema,
                    annotations=types.ToolAnnotations(
                        read_only_hint=name in _READ_ONLY,
                        destructive_hint=name == "checkpoint_clear",
                        open_world_hint=False,
                    ),
                )
            )
        return types.ListToolsResult(tools=tools)

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        import anyio
        from pydantic import ValidationError

        model = self.models.get(params.name)
        try:
            if model is None:
                raise ToolError(
                    f"unknown tool {params.name!r}: the tools are {', '.join(self.models)}"
                )
            raw = params.arguments or {}
            clean = _redact_arguments(raw)
            try:
                args = model.model_validate(clean)
            except ValidationError as exc:
                problems = "; ".join(
                    f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
                    for e in exc.errors()
                )
                raise ToolError(f"invalid arguments for {params.name}: {problems}") from exc
            handler: Callable[[Any], dict[str, Any]] = getattr(self, f"tool_{params.name}")
            payload = await anyio.to_thread.run_sync(handler, args)
            if clean != raw:
                payload = {
                    **payload,
                    "arguments_redacted": "a secret in the arguments was replaced by "
                    "[redacted …] before memls used them: memory never stores a secret an "
                    "agent passes in",
                }
        except ToolError as exc:
            return self._refuse(params.name, str(exc), exc.exit_code, exc.extra)
        except Exception as exc:  # refusals from core, and anything unexpected: never a crash
            message, code, extra = _refusal(exc)
            return self._refuse(params.name, message, code, extra)
        line = freshness_line(payload.get("freshness")) if params.name == "recall_search" else None
        return _tool_result(payload, note=line)

    def _refuse(
        self, tool: str, message: str, code: int, extra: dict[str, Any]
    ) -> types.CallToolResult:
        """A refusal as a tool result, worded in the tool's parameter names (core words its
        messages for the command line: ``--step needs --plan`` reaches the agent as
        ``step needs plan``)."""
        model = self.models.get(tool)
        if model is not None:
            names = parameter_names(tool, set(model.model_fields))
            message = _in_parameters(message, names)
            extra = {
                k: _in_parameters(v, names) if isinstance(v, str) else v for k, v in extra.items()
            }
        return _error_result(message, code, extra)

    def _base(self) -> Path:
        root = self.root
        if root is None:
            raise ToolError(no_root_message(self.start or Path.cwd()), root=None)
        if not root.is_dir():
            raise ToolError(f"memory root {root} does not exist or is not a directory")
        return root

    @property
    def root(self) -> Path | None:
        """The memory root; without one, the working directory is looked at again (a
        MEMORY.md created there later is found), never used as a root by itself."""
        if self._root is None and self.start is not None:
            self._root = _discover(self.start)
        return self._root

    def _git(self) -> Any:
        from memls.cli.opsutil import git_for

        return git_for(self._base())

    def tool_recall_search(self, args: Any) -> dict[str, Any]:
        from memls.core.recall import api
        from memls.core.recall.search import query_words

        if not query_words(args.query):
            raise ToolError(
                f"query {args.query!r} has no words to search for: give words, a question or "
                "a name (an empty query would return arbitrary memory)"
            )
        base = self._base()
        indexed, freshness = self._refresh_recall(base)
        response = api.search(
            base,
            args.query,
            mode=args.mode,
            kinds=(args.kind,) if args.kind else (),
            since=args.since,
            limit=args.limit,
        )
        data = response.to_dict()
        for hit in data["results"]:
            if hit.get("lines"):
                # a transcript hit: the lines to open are its messages', not the turn's
                hit["turn_lines"] = [hit["start_line"], hit["end_line"]]
                hit["start_line"], hit["end_line"] = hit["lines"][0], hit["lines"][-1]
        return {**data, "index": indexed, "freshness": freshness}

    def _refresh_recall(self, base: Path) -> tuple[str, dict[str, Any]]:
        """Bring the recall index up to date when memory files or transcripts changed, within
        a budget: the index message (``"up to date"`` when nothing changed) and how fresh the
        index the search reads is.

        Cheap when nothing did: one directory listing and a stat per source file. Otherwise
        one background thread backfills (never two: a call that finds it running waits for
        it, within what is left of the budget since it started); when it is not done within
        :data:`RECALL_REFRESH_BUDGET` seconds the search answers from the index as it is
        (what the refresh committed so far is in it: SQLite's WAL lets searches read while
        it writes) and the thread finishes on its own.
        """
        seen = _sources_fingerprint(base)
        with self._recall_lock:
            if seen == self._recall_seen and self._refresh is None:
                return "up to date", _freshness(True, None, self._refresh_error)
            refresh = self._refresh
            if refresh is None:
                refresh = self._refresh = _Refresh(seen)
                thread = threading.Thread(
                    target=self._refresh_loop,
                    args=(base, refresh),
                    name="memls-recall-refresh",
                    daemon=True,
                )
                thread.start()
            elif refresh.fingerprint != seen:
                self._refresh_again = True  # newer than what it reads: once more after it
        deadline = refresh.started + _refresh_budget()
        refresh.done.wait(max(0.0, deadline - _monotonic()))
        with self._recall_lock:
            fresh = self._recall_seen == seen
            current = self._refresh
            error = self._refresh_error
        if fresh:
            return str(refresh.message or "up to date"), _freshness(True, None, error)
        if current is None:  # it ended without reaching these files (an error, or busy)
            state = _freshness(False, None, error)
            reason = error or "the refresh was cancelled"
            return f"not refreshed: {reason}; results come from the index as it is", state
        state = _freshness(False, current, error)
        return (
            "refreshing in the background: results come from the index as it is "
            f"({_pending_words(state)})",
            state,
        )

    def _refresh_loop(self, base: Path, refresh: _Refresh) -> None:
        """The background refresh: backfill until the files it saw are indexed; errors are
        logged and kept for the next answer, never raised."""
        import logging

        from memls.core.recall import api
        from memls.core.recall.lock import default_timeout

        log = logging.getLogger("memls.mcp")
        while True:
            try:
                result = api.backfill(
                    base,
                    progress=refresh.progress,
                    cancel=self._refresh_cancel,
                    lock_timeout=default_timeout(),
                    on_wait=refresh.waiting,
                )
            except Exception as exc:  # a refresh must never take the server down
                log.warning("recall refresh failed: %s", exc)
                with self._recall_lock:
                    self._refresh_error = str(exc) or type(exc).__name__
                    self._refresh = None
                    self._refresh_again = False
                refresh.done.set()
                return
            with self._recall_lock:
                if result.get("complete"):
                    self._recall_seen = refresh.fingerprint
                    self._refresh_error = None
                refresh.message = str(result["message"])
                again = self._refresh_again and not self._refresh_cancel.is_set()
                self._refresh_again = False
                if not again:
                    self._refresh = None
            if not again:
                refresh.done.set()
                return
            refresh.restart(_sources_fingerprint(base))

    def stop_refresh(self, wait: float = 5.0) -> None:
        """Cancel a running background refresh (at shutdown) and wait a moment for it: what
        it indexed stays, the next server picks up the rest."""
        self._refresh_cancel.set()
        with self._recall_lock:
            refresh = self._refresh
        if refresh is not None:
            refresh.done.wait(wait)

    def tool_recall_status(self, args: Any) -> dict[str, Any]:
        from memls.core.recall import api

        return api.status(self._base())

    def tool_checkpoint_save(self, args: Any) -> dict[str, Any]:
        from memls.core.ops.checkpoint import save_checkpoint

        base = self._base()
        result = save_checkpoint(
            base,
            args.name,
            next_action=args.next_action,
            summary=args.summary,
            done=args.done,
            failed=args.failed,
            plan=args.plan,
            step=args.step,
            expect_sha=args.expect_sha,
            git=self._git(),
        )
        payload = _op_payload(result)
        payload["path"] = payload.get("checkpoint")
        payload["hint"] = payload.get("next_step")
        return payload

    def tool_checkpoint_resume(self, args: Any) -> dict[str, Any]:
        from memls.core.ops.checkpoint import resume_checkpoint

        base = self._base()
        before = _checkpoint_text(base, args.name) if args.name is not None else None
        result = resume_checkpoint(base, args.name, consume=args.consume, git=self._git())
        if args.name is not None and result.data.get("status") != "one":
            raise ToolError(result.message, **_op_payload(result))
        payload = _op_payload(result)
        if result.data.get("status") == "one":
            # the whole file too (Done This Session, Modified Files, notes), read before a consume
            payload["text"] = before or _checkpoint_text(base, str(result.data["name"]))
        return payload

    def tool_checkpoint_list(self, args: Any) -> dict[str, Any]:
        from memls.cli.checkpoint import checkpoint_row
        from memls.core.ops.checkpoint import list_checkpoints

        base = self._base()
        return {"checkpoints": [checkpoint_row(i) for i in list_checkpoints(base, git=self._git())]}

    def tool_checkpoint_clear(self, args: Any) -> dict[str, Any]:
        from memls.core.ops.checkpoint import clear_checkpoint

        result = clear_checkpoint(self._base(), args.name)
        if not result.data.get("cleared"):
            raise ToolError(result.message, **_op_payload(result))
        return _op_payload(result)

    def tool_handoff_refresh(self, args: Any) -> dict[str, Any]:
        from memls.core.ops.handoff import write_handoff

        return _op_payload(write_handoff(self._base(), refresh=True, git=self._git()))

    def tool_log_append(self, args: Any) -> dict[str, Any]:
        from memls.core.ops.log import append_log

        return _op_payload(append_log(self._base(), args.title, args.body))

    def tool_memory_check(self, args: Any) -> dict[str, Any]:
        from memls.core.agent.health import check_root
        from memls.core.fsutil import inside
        from memls.core.model import Severity
        from memls.core.report import to_json

        base = self._base()
        paths = None
        if args.path:
            target = Path(args.path).expanduser()
            target = target if target.is_absolute() else base / target
            if not inside(base, target):
                raise ToolError(f"{args.path} is outside the memory root {base}")
            if not target.is_file():
                raise ToolError(f"{args.path} is not a file in the memory root {base}")
            paths = [target.resolve()]
        diags = check_root(base, paths)
        errors = sum(1 for d in diags if d.severity is Severity.ERROR)
        return {
            "diagnostics": to_json(diags, base),
            "errors": errors,
            "total": len(diags),
            "message": f"{len(diags)} finding(s), {errors} error(s).",
        }

    def tool_snapshot_save(self, args: Any) -> dict[str, Any]:
        from memls.core.snapshot import default_ref, save_snapshot, snapshot_head

        base = self._base()
        expect = args.expect
        if expect is None:
            try:
                expect = snapshot_head(base)
            except Exception:
                expect = None  # not a repository: save_snapshot says so
        result = save_snapshot(
            base,
            expect=expect,
            initial=expect is None,
            paths=tuple(args.paths),
            message=args.message,
        )
        payload = result.to_json()
        payload["message"] = result.message
        if result.status in ("conflict", "invalid"):
            payload.pop("exit_code", None)
            raise ToolError(result.message, result.exit_code, **payload)
        payload.setdefault("ref", default_ref(base))
        return payload

    # -- resources --------------------------------------------------------------------------------

    def resources(self) -> dict[str, Path]:
        """URI → file for MEMORY.md, each checkpoint, the handoff, LOG.md and the topic
        files MEMORY.md links to (inside the root)."""
        from memls.core.ops.handoff import handoff_path
        from memls.core.workspace import CHECKPOINT_RE, index_path

        base = self.root
        if base is None or not base.is_dir():
            return {}
        index = index_path(base)
        found: list[Path] = [index]
        with contextlib.suppress(OSError):
            found += sorted(p for p in base.iterdir() if CHECKPOINT_RE.match(p.name))
        with contextlib.suppress(ValueError):
            found.append(handoff_path(base))
        found.append(base / "LOG.md")
        found += self._linked_topics(base, index)
        out: dict[str, Path] = {}
        for path in found:
            if path.is_file() and not path.is_symlink():
                out.setdefault(_uri(base, path), path)
        return out

    def _linked_topics(self, base: Path, index: Path) -> list[Path]:
        """Markdown files inside the root that MEMORY.md links to, in link order (cached
        while MEMORY.md's size and modification time stay the same)."""
        from memls.core.fsutil import inside
        from memls.core.links import LinkResolver, distinct_links
        from memls.core.parse import parse_file
        from memls.core.workspace import repo_root_for

        try:
            st = index.stat()
        except OSError:
            return []
        key = (str(index), st.st_size, st.st_mtime_ns)
        if self._topics is not None and self._topics[0] == key:
            return self._topics[1]
        topics: list[Path] = []
        try:
            doc = parse_file(index)
            resolver = LinkResolver(base, repo_root_for(base))
            for _link, target in resolver.resolve_all(distinct_links(doc)):
                if target is None or target.suffix.lower() != ".md" or target == index:
                    continue
                if target.is_relative_to(base) and inside(base, target) and target not in topics:
                    topics.append(target)
        except (OSError, ValueError):
            topics = []
        self._topics = (key, topics)
        return topics

    def readable(self) -> dict[str, Path]:
        """What resources/read serves: the listed resources, and every other Markdown memory
        file of the root by its path (the ``memls://memory/{path}`` template)."""
        from memls.core.workspace import memory_files

        found = self.resources()
        base = self.root
        if base is None or not base.is_dir():
            return found
        for path in memory_files(base):
            if path.is_file() and not path.is_symlink():
                found.setdefault(_uri(base, path), path)
        return found

    async def _list_resources(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        import mcp_types as types

        self._remember(ctx)
        found = self.resources()
        base = self.root
        self.watch.listed = _stats(found)
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=uri,
                    name=path.relative_to(base).as_posix() if base else path.name,
                    title=_title(path),
                    mime_type="text/markdown",
                    size=self.watch.listed.get(uri, (None, 0))[0],
                )
                for uri, path in found.items()
            ]
        )

    async def _list_resource_templates(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        import mcp_types as types

        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    name="checkpoint",
                    title="A checkpoint by name",
                    uri_template=CHECKPOINT_TEMPLATE,
                    description="checkpoint-{name}.md of the memory root (checkpoint_list "
                    "names them).",
                    mime_type="text/markdown",
                ),
                types.ResourceTemplate(
                    name="memory-file",
                    title="A memory file by path",
                    uri_template=MEMORY_TEMPLATE,
                    description="Any Markdown memory file of the root by its path relative "
                    "to the root (MEMORY.md, LOG.md, memory/topic.md, transcripts/.handoff.md, "
                    "a topic file MEMORY.md links to); URL-encoded, '/' kept.",
                    mime_type="text/markdown",
                ),
            ]
        )

    async def _read_resource(
        self, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        import mcp_types as types
        from mcp.shared.exceptions import MCPError

        path = self.readable().get(_normal_uri(str(params.uri)))
        if path is None:
            raise MCPError(
                RESOURCE_NOT_FOUND,
                f"no memory file {params.uri} (resources/list and "
                "resources/templates/list show what there is)",
            )
        text = self._redact(path.read_bytes().decode("utf-8", "replace"))
        return types.ReadResourceResult(
            contents=[
                types.TextResourceContents(
                    uri=str(params.uri), mime_type="text/markdown", text=text
                )
            ]
        )

    async def _complete(
        self, ctx: ServerRequestContext[Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        """Completions for the templates' ``name`` and ``path`` and the prompts' ``name``:
        the checkpoints and memory files there are, by prefix."""
        import mcp_types as types

        from memls.core.workspace import CHECKPOINT_RE

        ref, argument = params.ref, params.argument
        prefix = argument.value or ""
        base = self.root
        values: list[str] = []
        if base is not None and base.is_dir():
            files = self.readable()
            paths = sorted(p.relative_to(base).as_posix() for p in files.values())
            names = sorted(
                m["name"]
                for m in (CHECKPOINT_RE.match(Path(p).name) for p in paths if "/" not in p)
                if m
            )
            wants_names = argument.name == "name" and (
                isinstance(ref, types.PromptReference)
                or getattr(ref, "uri", None) == CHECKPOINT_TEMPLATE
            )
            if wants_names:
                values = [n for n in names if n.startswith(prefix)]
            elif argument.name == "path" and getattr(ref, "uri", None) == MEMORY_TEMPLATE:
                values = [p for p in paths if p.startswith(prefix)]
        return types.CompleteResult(
            completion=types.Completion(
                values=values[:100], total=len(values), has_more=len(values) > 100
            )
        )

    async def _subscribe(
        self, ctx: ServerRequestContext[Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        import mcp_types as types

        self._remember(ctx)
        self.watch.subscribed.add(str(params.uri))
        return types.EmptyResult()

    async def _unsubscribe(
        self, ctx: ServerRequestContext[Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        import mcp_types as types

        self.watch.subscribed.discard(str(params.uri))
        return types.EmptyResult()

    def _remember(self, ctx: ServerRequestContext[Any]) -> None:
        session = getattr(ctx, "session", None)
        if session is not None and all(s is not session for s in self.watch.sessions):
            self.watch.sessions.append(session)

    async def _watch_files(self, stop: anyio.Event | None = None) -> None:
        """Tell clients when memory files appear, disappear or change (until ``stop`` is set)."""
        import watchfiles

        base = self.root
        if base is None or not base.is_dir():
            return
        self.watch.listed = _stats(self.resources())
        # The folders resources live in, not the tree below (a root may be a whole repository).
        places = [p for p in (base, base / "transcripts", base / "memory") if p.is_dir()]
        places += sorted({p.parent for p in self.resources().values()} - set(places))
        async for _ in watchfiles.awatch(
            *places,
            watch_filter=lambda _, p: p.endswith(".md"),
            recursive=False,
            debounce=200,
            step=50,
            stop_event=stop,
        ):
            await self.check_resources()

    async def check_resources(self) -> None:
        from mcp.server.subscriptions import ResourcesListChanged, ResourceUpdated

        now = _stats(self.resources())
        before = self.watch.listed
        self.watch.listed = now
        changed = [u for u in now if u in before and now[u] != before[u]]
        if set(now) != set(before):
            await self.bus.publish(ResourcesListChanged())
            for session in list(self.watch.sessions):
                await self._tell(session, session.send_resource_list_changed())
        for uri in changed:
            await self.bus.publish(ResourceUpdated(uri=uri))
            if uri in self.watch.subscribed:
                for session in list(self.watch.sessions):
                    await self._tell(session, session.send_resource_updated(uri))

    async def _tell(self, session: ServerSession, call: Any) -> None:
        """Send one notification; a session that cannot take it any more is forgotten."""
        try:
            await call
        except Exception:
            self.watch.sessions = [s for s in self.watch.sessions if s is not session]

    # -- prompts ----------------------------------------------------------------------------------

    async def _list_prompts(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        import mcp_types as types

        name_arg = types.PromptArgument(
            name="name",
            description="Checkpoint name (default: the current branch's).",
            required=False,
        )
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(
                    name="resume",
                    title="Resume from memls memory",
                    description="The branch's checkpoint (next action, failed approaches), the "
                    "handoff's next steps and memory health, to continue where work stopped.",
                    arguments=[name_arg],
                ),
                types.Prompt(
                    name="checkpoint",
                    title="Save a memls checkpoint",
                    description="Ask the agent to save a checkpoint of the session now.",
                    arguments=[name_arg],
                ),
            ]
        )

    async def _get_prompt(
        self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        import anyio
        import mcp_types as types
        from mcp.shared.exceptions import MCPError

        name = (params.arguments or {}).get("name") or None
        if params.name == "resume":
            text = await anyio.to_thread.run_sync(self._resume_text, name)
            description = "Resume from memls memory"
        elif params.name == "checkpoint":
            text = _checkpoint_prompt(name)
            description = "Save a memls checkpoint"
        else:
            raise MCPError(types.INVALID_PARAMS, f"unknown prompt {params.name!r}")
        text = self._redact(text)
        return types.GetPromptResult(
            description=description,
            messages=[
                types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
            ],
        )

    def _redact(self, text: str) -> str:
        """A memory file or prompt on its way to the agent, secrets replaced (a project's
        known fakes in ``allow_secrets`` stay)."""
        from memls.core.config import ConfigError, load_config
        from memls.core.secrets import redact

        try:
            allowed = frozenset(load_config(self.root).allow_secrets) if self.root else frozenset()
        except ConfigError:
            allowed = frozenset()
        return redact(text, allowed)

    def _resume_text(self, name: str | None) -> str:
        from memls.core.agent.context import present_checkpoint, session_context
        from memls.core.ops.checkpoint import checkpoint_path, sanitize_name

        root = self.root
        if root is None:
            return f"There is no memory root yet: nothing to resume ({no_root_message(self.start or Path.cwd())})."
        if not root.is_dir():
            return f"There is no memory root at {root} yet: nothing to resume."
        git = self._git()
        if name:
            try:
                path = checkpoint_path(root, sanitize_name(name))
            except ValueError as exc:
                return f"Cannot resume {name!r}: {exc}"
            if not path.is_file():
                return f'There is no checkpoint "{name}". Call checkpoint_list to see them.'
            context = present_checkpoint(path, git.current_branch())
        else:
            context = session_context(root, "compact", git=git)
        return (
            "Resume the work from this memls memory. Continue with the Next Action; do not "
            "retry an approach marked as previously failed. If a branch warning is shown, "
            "switch branches first or ask.\n\n" + context
        )


def _checkpoint_prompt(name: str | None) -> str:
    target = f'name "{name}"' if name else "the default name (the current branch)"
    return (
        f"Save a memls checkpoint now: call the checkpoint_save tool with {target} and\n"
        "- next_action: the first concrete step for whoever continues, one line, then on the "
        "following lines the files and commands involved;\n"
        "- done: what this session achieved, one item each;\n"
        "- failed: each approach that did not work, with why, so nobody retries it;\n"
        "- plan and step (N/M) if a plan file drives the work.\n"
        "Then show me the line it returns as `next_step` (the /compact or /clear to run)."
    )


def _uri(root: Path, path: Path) -> str:
    from urllib.parse import quote

    return "memls://memory/" + quote(path.relative_to(root).as_posix())


def _normal_uri(uri: str) -> str:
    """A resource URI as :func:`_uri` spells it (a client may encode more or fewer
    characters when it fills in a template); anything that is not a plain relative path
    inside ``memls://memory/`` stays as it is and so names nothing."""
    from urllib.parse import quote, unquote

    prefix = "memls://memory/"
    if not uri.startswith(prefix):
        return uri
    rel = unquote(uri[len(prefix) :])
    parts = rel.split("/")
    if not rel or any(p in ("", ".", "..") for p in parts) or "\\" in rel or "\x00" in rel:
        return uri
    return prefix + quote(rel)


def _title(path: Path) -> str:
    if path.name.startswith("checkpoint-"):
        return f"Checkpoint {path.name[len('checkpoint-') : -len('.md')]}"
    return {"MEMORY.md": "Memory index", "LOG.md": "Log", ".handoff.md": "Handoff"}.get(
        path.name, path.name
    )


def _stats(found: dict[str, Path]) -> dict[str, tuple[int, int]]:
    out = {}
    for uri, path in found.items():
        try:
            st = path.stat()
        except OSError:
            continue
        out[uri] = (st.st_size, st.st_mtime_ns)
    return out


def _monotonic() -> float:
    import time

    return time.monotonic()


def _refresh_budget() -> float:
    import os

    raw = os.environ.get(RECALL_BUDGET_ENV)
    try:
        return max(0.0, float(raw)) if raw else RECALL_REFRESH_BUDGET
    except ValueError:
        return RECALL_REFRESH_BUDGET


class _Refresh:
    """What the background refresh is doing, as its progress callback last said."""

    def __init__(self, fingerprint: str) -> None:
        self.done = threading.Event()
        self.message: str | None = None
        self.restart(fingerprint)

    def restart(self, fingerprint: str) -> None:
        self.fingerprint = fingerprint
        self.started = _monotonic()
        self.phase = "scan"
        self.done_count = 0
        self.total = 0
        self.files_pending: int | None = None
        self.wait_note: str | None = None

    def progress(self, done: int, total: int, label: str) -> None:
        if label.startswith("embed"):
            if self.phase != "embed":
                self.files_pending = 0
            self.phase = "embed"
        else:
            self.phase = "index"
            self.files_pending = max(0, total - done)
        self.done_count, self.total = done, total

    def waiting(self, sentence: str) -> None:
        self.phase = "waiting"
        self.wait_note = sentence


def _freshness(fresh: bool, refresh: _Refresh | None, error: str | None) -> dict[str, Any]:
    """How fresh the index a search read is: the ``freshness`` of a recall_search result."""
    state: dict[str, Any] = {"fresh": fresh, "refreshing": refresh is not None}
    if refresh is not None:
        state["phase"] = refresh.phase
        state["pending_files"] = refresh.files_pending
        if refresh.phase == "embed":
            state["pending_chunks"] = max(0, refresh.total - refresh.done_count)
        if refresh.wait_note:
            state["waiting_for"] = refresh.wait_note
        state["seconds"] = round(_monotonic() - refresh.started, 1)
    elif not fresh:
        state["pending_files"] = None
    if error:
        state["error"] = error
    return state


def _pending_words(state: dict[str, Any]) -> str:
    files = state.get("pending_files")
    chunks = state.get("pending_chunks")
    if state.get("phase") == "waiting":
        return "waiting for another backfill to finish"
    if chunks:
        return f"{chunks} chunks still to embed"
    if files is None:
        return "finding changed files"
    return f"{files} files still to index"


def freshness_line(state: dict[str, Any] | None) -> str | None:
    """The line recall_search's text adds about the index's freshness (None when fresh)."""
    if not state or state.get("fresh"):
        return None
    if state.get("refreshing"):
        return (
            f"Index not fresh: {_pending_words(state)}, refreshing in the background; "
            "these results come from the index as it is. Search again in a moment."
        )
    return "Index not fresh: " + str(state.get("error") or "the refresh did not finish") + "."


def _sources_fingerprint(root: Path) -> str:
    """Sizes and modification times of everything recall indexes, as one string."""
    import hashlib

    from memls.core.config import load_config
    from memls.core.workspace import memory_files, transcript_files

    parts = []
    config = load_config(root)
    for path in [*memory_files(root), *transcript_files(root, config.transcripts)]:
        try:
            st = path.stat()
        except OSError:
            continue
        parts.append(f"{path}:{st.st_size}:{st.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _checkpoint_text(root: Path, name: str) -> str | None:
    from memls.core.ops.checkpoint import checkpoint_path, sanitize_name

    try:
        return checkpoint_path(root, sanitize_name(name)).read_bytes().decode("utf-8", "replace")
    except (OSError, ValueError):
        return None


def _op_payload(result: Any) -> dict[str, Any]:
    """An operation's result as the CLI's ``--json`` prints it."""
    return {
        "message": result.message,
        "changed": result.changed,
        "paths": [str(p) for p in result.paths],
        **result.data,
    }


_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def parameter_names(tool: str, fields: set[str]) -> dict[str, str]:
    """The CLI flags of the command a tool stands for, mapped to the tool's parameter names
    (``--next`` → ``next_action``; ``fields`` are the tool's parameters), read from the
    click command itself: a refusal core words for the command line reaches the agent in
    the tool's own terms."""
    import importlib

    entry = _TOOL_COMMANDS.get(tool)
    if entry is None:
        return {}
    module, attr, sub = entry
    command = getattr(importlib.import_module(module), attr)
    if sub is not None:
        command = command.commands[sub]
    out: dict[str, str] = dict(_NO_PARAMETER.get(tool, {}))
    for param in command.params:
        if isinstance(param, click.Option) and param.name in fields:
            for flag in (*param.opts, *param.secondary_opts):
                if flag.startswith("--"):
                    out[flag] = param.name
    return out


_NO_PARAMETER = {"snapshot_save": {"--initial": "no expect"}}
"""Flags whose meaning a tool expresses by leaving a parameter out."""


def _in_parameters(message: str, names: dict[str, str]) -> str:
    """A message with the CLI flags in ``names`` replaced by the tool's parameter names."""
    if "--" not in message:
        return message
    return _FLAG.sub(lambda m: names.get(m.group(0), m.group(0)), message)


def _refusal(exc: Exception) -> tuple[str, int, dict[str, Any]]:
    """The CLI's message and exit status for an exception from core."""
    from memls.core.ops import ConflictError

    if isinstance(exc, ConflictError):
        return str(exc), 3, {"current_sha": exc.current_sha}
    if isinstance(exc, ValueError | OSError) or type(exc).__name__.endswith("Error"):
        return str(exc), 2, {}
    return f"{type(exc).__name__}: {exc}", 1, {}


def _error_result(message: str, code: int, extra: dict[str, Any]) -> types.CallToolResult:
    return _tool_result({**extra, "error": message, "exit_code": code}, message, is_error=True)


def _redact_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    """Tool arguments with every secret replaced before any operation sees them: an agent
    that saw a key must not write it into memory (a checkpoint, LOG.md) through memls."""
    from memls.core.secrets import redact_data

    cleaned = redact_data(arguments)
    return cleaned if isinstance(cleaned, dict) else arguments


def _tool_result(
    body: dict[str, Any],
    text: str | None = None,
    *,
    is_error: bool = False,
    note: str | None = None,
) -> types.CallToolResult:
    """Every tool result, success or refusal, is built here: secrets redacted on the way out.

    Each string in the structured content goes through :func:`memls.core.secrets.redact`
    (before the JSON text is made from it, so an escaped value cannot slip past), and so
    does the text of a refusal.
    """
    import mcp_types as types

    from memls.core.secrets import redact, redact_data

    structured = redact_data(json.loads(json.dumps(body, default=str)))
    if text is None:
        text = json.dumps(structured, ensure_ascii=False, indent=1)
    content: list[types.ContentBlock] = [types.TextContent(type="text", text=redact(text))]
    if note:  # a plain sentence after the JSON (recall_search: how fresh the index is)
        content.append(types.TextContent(type="text", text=redact(note)))
    return types.CallToolResult(
        content=content,
        structured_content=structured,
        is_error=is_error,
    )
