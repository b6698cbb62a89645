"""What the agent fronts (``memls mcp``, ``memls hook``) need beyond the operations.

Protocol-free: transcript archiving (:mod:`.archive`), the context a new or compacted
session starts with (:mod:`.context`), keeping a compaction summary (:mod:`.summary`), and
the memory-health figures both use (:mod:`.health`). Nothing here knows MCP or Claude
Code's hook JSON; ``mcpserver/`` and ``cli/hook.py`` translate.
"""
