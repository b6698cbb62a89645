"""The Streamable HTTP transport of ``memls mcp --http``: the address, the bind, the token
file, and who may talk to the server (:class:`HttpPolicy`, enforced by :class:`HttpGuard`
in front of the SDK's whole app).

Every refusal to start is an :class:`memls.core.ops.OpError` (``memls mcp`` prints it as
one line and exits 2).
"""

from __future__ import annotations

import json
import re
import socket
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from memls.core.ops import OpError


def serve_http_command(root: Path, value: str, *, allow_remote: bool, print_token: bool) -> None:
    """``memls mcp --http``: check the address, bind, write the token file, serve; remove
    the token at the end."""
    import os

    import anyio

    from memls.core.httptoken import (
        TOKEN_ENV,
        TokenFileError,
        new_token,
        remove_token_file,
        write_token_file,
    )

    host, port = parse_address(value)
    loopback = _is_loopback(host)
    if not loopback and not allow_remote:
        raise OpError(
            f"{_display(host, port)} is not a loopback address: anyone who can reach it could "
            "use this memory root; pass --allow-remote to serve there anyway (the token is "
            "still required)"
        )
    try:
        token = new_token()
    except TokenFileError as exc:
        raise OpError(str(exc)) from None
    sock = _bind(host, port)
    try:
        port = sock.getsockname()[1]
        stopper = Stopper()
        try:
            path = write_token_file(root, token)
        except TokenFileError as exc:
            stopper.restore()
            raise OpError(str(exc)) from None
        try:
            try:
                sock.listen(128)
            except OSError as exc:
                raise OpError(f"cannot listen on {_display(host, port)}: {_reason(exc)}") from None
            from memls.mcpserver.server import McpFront

            memls = McpFront(root)
            policy = HttpPolicy.forparse_address(host, port, token)
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


class Stopper:
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


def parse_address(value: str) -> tuple[str, int]:
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
            raise OpError(f"--http {value!r}: [{host}] is not an IPv6 address") from None
        if port is None:
            port = str(DEFAULT_HTTP_PORT)
    elif text.count(":") > 1:
        try:
            ipaddress.IPv6Address(text)
        except ValueError:
            raise OpError(
                f"--http {value!r}: write an IPv6 address in brackets with a port, e.g. [::1]:8765"
            ) from None
        host, port = text, str(DEFAULT_HTTP_PORT)
    elif ":" in text:
        host, port = text.split(":")
        host = host or "127.0.0.1"
        if not _NAME.fullmatch(host):
            raise OpError(f"--http {value!r}: {host!r} is not a host name or address")
    elif _NAME.fullmatch(text):
        host, port = text, str(DEFAULT_HTTP_PORT)
    else:
        raise OpError(f"--http {value!r}: write PORT, HOST:PORT or [IPV6]:PORT, e.g. 8765")
    if not _PORT.fullmatch(port) or int(port) > 65535:
        raise OpError(f"--http {value!r}: {port!r} is not a port (0-65535)")
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
        raise OpError(f"cannot listen on {_display(host, port)}: {_reason(exc)}") from None
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
    def forparse_address(cls, host: str, port: int, token: str) -> HttpPolicy:
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
