"""``memls serve``: run the language server (stdio by default; TCP or WebSocket to debug)."""

from __future__ import annotations

import logging

import click


def _host_port(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    if not port.isdigit():
        raise click.BadParameter(f"expected HOST:PORT, got {value!r}")
    return host or "127.0.0.1", int(port)


@click.command("serve")
@click.option(
    "--tcp", "tcp", metavar="HOST:PORT", help="Listen on TCP instead of stdio (debugging)."
)
@click.option(
    "--ws", "ws", metavar="HOST:PORT", help="Listen on a WebSocket instead of stdio (debugging)."
)
@click.option(
    "--log-level",
    type=click.Choice(["debug", "info", "warning", "error"]),
    default="warning",
    help="Server log level on stderr.",
)
def serve(tcp: str | None, ws: str | None, log_level: str) -> None:
    """Run the memls language server over stdio (what editors start), or TCP / WebSocket."""
    if tcp and ws:
        raise click.UsageError("choose one of --tcp and --ws")
    logging.basicConfig(level=log_level.upper())
    from memls.lsp.server import create_server

    server = create_server()
    if tcp:
        server.start_tcp(*_host_port(tcp))
    elif ws:
        server.start_ws(*_host_port(ws))
    else:
        server.start_io()
