"""The MCP server over one memory root: :class:`McpFront` wires the SDK's low-level
``Server`` to the tools, resources, watcher and prompts, and serves it over stdio or
Streamable HTTP. The SDK (memls's ``mcp`` extra) is imported only when a server is made.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memls.core.ops import OpError

if TYPE_CHECKING:
    from mcp.server import Server
    from mcp.server.subscriptions import InMemorySubscriptionBus

    from memls.core.gitfacade import Git
    from memls.mcpserver.http import HttpPolicy, Stopper

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


def no_root_message(start: Path) -> str:
    """Why a server started without ``--root`` has no memory root, and what to do."""
    return (
        f"no memory root: memls mcp was started in {start} without --root, and no memory "
        "root (a folder with MEMORY.md, LOG.md or checkpoint-*.md, or Claude Code's memory "
        "folder for the project) is there or above it; nothing is read or written. Add "
        '"--root", "/path/to/memory" to the server\'s args, or start it in the project folder'
    )


def discover(start: Path, *, check: bool = False) -> Path | None:
    """The memory root found from ``start`` (None: none there); a broken configuration on
    the way is a refusal. ``check``: also the configuration files discovery passes."""
    from memls.core.config import ConfigError, check_configs, load_config
    from memls.core.roots import discover_root

    try:
        if check:
            check_configs(start)
        found = discover_root(start)
        if found is not None:
            load_config(found)
    except ConfigError as exc:
        raise OpError(f"broken configuration: {exc}") from exc
    return found


class McpFront:
    """The MCP front over one memory root (the language server's is ``lsp.server``)."""

    def __init__(self, root: Path | None, *, start: Path | None = None) -> None:
        """``root`` None: no memory root was found from ``start`` (the working directory);
        every tool refuses, nothing is written, until one appears there (each call looks
        again)."""
        from mcp.server import Server
        from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler

        from memls import __version__
        from memls.mcpserver.prompts import Prompts
        from memls.mcpserver.refresh import RecallRefresh
        from memls.mcpserver.resources import Resources
        from memls.mcpserver.tools import Tools
        from memls.mcpserver.watcher import Watcher

        self._root = root
        self.start = start
        self.bus: InMemorySubscriptionBus = InMemorySubscriptionBus()
        self.tools = Tools(self)
        self.resources = Resources(self)
        self.watcher = Watcher(self)
        self.prompts = Prompts(self)
        self.recall = RecallRefresh()
        self.server: Server[Any] = Server(
            "memls",
            version=__version__,
            title="memls — agent memory",
            instructions=INSTRUCTIONS,
            on_list_tools=self.tools.list,
            on_call_tool=self.tools.call,
            on_list_resources=self.resources.list,
            on_list_resource_templates=self.resources.templates,
            on_read_resource=self.resources.read,
            on_subscribe_resource=self.watcher.subscribe,
            on_unsubscribe_resource=self.watcher.unsubscribe,
            on_subscriptions_listen=ListenHandler(self.bus),
            on_list_prompts=self.prompts.list,
            on_get_prompt=self.prompts.get,
            on_completion=self.resources.complete,
        )

    async def serve(self, read: Any, write: Any) -> None:
        """Serve one session on a pair of streams (stdio)."""
        import anyio
        from mcp.server import NotificationOptions

        options = self.server.create_initialization_options(
            NotificationOptions(resources_changed=True)
        )
        stop = anyio.Event()
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self.watcher.watch, stop)
            await self.server.run(read, write, options)
            stop.set()  # the watcher's thread ends within a step, not at its 5 s timeout
            self.recall.stop()
            tasks.cancel_scope.cancel()

    async def serve_http(
        self, sock: socket.socket, policy: HttpPolicy, stopper: Stopper | None = None
    ) -> None:
        """Streamable HTTP at ``/mcp`` on a bound socket (the SDK's app, run by uvicorn).

        :class:`~memls.mcpserver.http.HttpGuard` checks Host, Origin and the token before the
        SDK sees a request, so the SDK's own DNS-rebinding check (any port, 421, 127.0.0.1
        only) is turned off. ``stopper`` tells uvicorn to stop on SIGINT or SIGTERM.
        """
        import anyio
        import uvicorn
        from mcp.server.transport_security import TransportSecuritySettings

        from memls.mcpserver.http import HttpGuard

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
            tasks.start_soon(self.watcher.watch, stop)
            await server.serve(sockets=[sock])
            stop.set()  # the watcher's thread ends within a step, not at its 5 s timeout
            self.recall.stop()
            tasks.cancel_scope.cancel()

    @property
    def root(self) -> Path | None:
        """The memory root; without one, the working directory is looked at again (a
        MEMORY.md created there later is found), never used as a root by itself."""
        if self._root is None and self.start is not None:
            self._root = discover(self.start)
        return self._root

    def base(self) -> Path:
        """The memory root a tool works on; a refusal when there is none."""
        root = self.root
        if root is None:
            raise OpError(no_root_message(self.start or Path.cwd()), root=None)
        if not root.is_dir():
            raise OpError(f"memory root {root} does not exist or is not a directory")
        return root

    def git(self) -> Git:
        from memls.core.ops.table import git_for

        return git_for(self.base())

    def redact(self, text: str) -> str:
        """A memory file or prompt on its way to the agent, secrets replaced (a project's
        known fakes in ``allow_secrets`` stay)."""
        from memls.core.config import ConfigError, load_config
        from memls.core.secrets import redact

        try:
            allowed = frozenset(load_config(self.root).allow_secrets) if self.root else frozenset()
        except ConfigError:
            allowed = frozenset()
        return redact(text, allowed)
