"""The ids of the server's ``workspace/executeCommand`` commands (editors list them too).

Each operation the table marks ``lsp`` (:mod:`memls.core.ops.table`) is the command
``memls.<operation>``, handled by ``Commands.cmd_<operation>`` in ``features/commands.py``;
:data:`EDITOR_ONLY` are commands that run no operation of the table.
"""

from __future__ import annotations

from memls.core.ops.table import OPERATIONS

EDITOR_ONLY: tuple[str, ...] = ("memls.checkpoint.suggest",)
"""What an editor's save-checkpoint flow asks before it saves (writes nothing)."""

SERVER_COMMANDS: tuple[str, ...] = (
    *(op.lsp_command for op in OPERATIONS.values() if op.lsp),
    *EDITOR_ONLY,
)
