"""`memls mcp` — serve memory to coding agents over MCP (stdio, or Streamable HTTP).

The server itself is the :mod:`memls.mcpserver` front package; this command finds the
memory root, checks the options and starts it. The SDK (memls's ``mcp`` extra) is
imported only when this command runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from memls.cli.common import InvalidInput, resolve_root, root_option
from memls.core.ops import OpError


class Refused(click.ClickException):
    """A refusal to start: one line on stderr (``memls mcp: ...``), exit status 2."""

    exit_code = 2

    def show(self, file: Any = None) -> None:
        click.echo(f"memls mcp: {self.message}", err=True)


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
    {tools}
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
    from memls.mcpserver.server import McpFront, no_root_message

    try:
        if http is None:
            for flag, given in (("--allow-remote", allow_remote), ("--print-token", print_token)):
                if given:
                    raise Refused(f"{flag} needs --http [HOST:]PORT")
            found = _root_for(root)
            if found is None:
                click.echo(f"memls mcp: {no_root_message(Path.cwd())}", err=True)
            memls = McpFront(found, start=Path.cwd())

            async def main() -> None:
                async with stdio_server() as (read, write):
                    await memls.serve(read, write)

            anyio.run(main)
            return
        from memls.mcpserver.http import serve_http_command

        found = _root_for(root)
        if found is None:
            raise Refused(no_root_message(Path.cwd()))
        serve_http_command(found, http, allow_remote=allow_remote, print_token=print_token)
    except OpError as exc:
        raise Refused(exc.render(lambda name: "--" + name.replace("_", "-"))) from None


def _tools_help() -> str:
    """The tools, as the help lists them (from the tools list: nothing to keep in step)."""
    import textwrap

    from memls.mcpserver.tools import TOOLS

    names = ", ".join(tool.name for tool in TOOLS) + "."
    lines = textwrap.wrap(names, 72, initial_indent="Tools: ", subsequent_indent=" " * 7)
    return "\n    ".join(lines)


mcp.help = (mcp.help or "").replace("{tools}", _tools_help())


def _root_for(root: Path | None) -> Path | None:
    """``--root`` as given, else the root discovered from the working directory, else None:
    unlike the CLI, the server never falls back to its working directory (an agent starts
    it wherever it runs, and memory must not appear there)."""
    from memls.mcpserver.server import discover

    if root is not None:
        return resolve_root(root)
    try:
        return discover(Path.cwd(), check=True)
    except OpError as exc:
        raise InvalidInput(str(exc)) from exc


def _install_command(package: str) -> str:
    from memls.core.recall.minilm import install_command

    return install_command(f"'{package}'")
