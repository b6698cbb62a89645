"""The MCP front: memory for coding agents over the Model Context Protocol.

Built on the official ``mcp`` SDK's low-level ``Server`` (memls's ``mcp`` extra, imported
only when a server is made). One module per concern:

- :mod:`.server` — :class:`~.server.McpFront`, the server over one memory root;
- :mod:`.tools` — the tools, one entry each over the table of operations
  (:mod:`memls.core.ops.table`): every tool calls the same core operation as the matching
  CLI command; refusals come back as tool results with ``isError`` and the server keeps
  serving;
- :mod:`.resources` — memory files as resources (listed, read, completed);
- :mod:`.watcher` — change notifications while files change;
- :mod:`.refresh` — recall_search's bounded background refresh of the recall index;
- :mod:`.prompts` — ``resume`` and ``checkpoint``, which Claude Code offers as slash commands;
- :mod:`.http` — the Streamable HTTP transport and who may talk to it.

``memls mcp`` (``memls.cli.mcp``) starts it.
"""
