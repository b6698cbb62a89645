"""The MCP prompts (Claude Code offers them as slash commands): ``resume`` (the branch's
checkpoint, the handoff's next steps and memory health) and ``checkpoint`` (ask the agent to
save one now)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import mcp_types as types
    from mcp.server import ServerRequestContext

    from memls.mcpserver.server import McpFront


class Prompts:
    """prompts/list and prompts/get."""

    def __init__(self, front: McpFront) -> None:
        self.front = front

    async def list(
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

    async def get(
        self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        import anyio
        import mcp_types as types
        from mcp.shared.exceptions import MCPError

        name = (params.arguments or {}).get("name") or None
        if params.name == "resume":
            text = await anyio.to_thread.run_sync(self.resume_text, name)
            description = "Resume from memls memory"
        elif params.name == "checkpoint":
            text = _checkpoint_prompt(name)
            description = "Save a memls checkpoint"
        else:
            raise MCPError(types.INVALID_PARAMS, f"unknown prompt {params.name!r}")
        text = self.front.redact(text)
        return types.GetPromptResult(
            description=description,
            messages=[
                types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
            ],
        )

    def resume_text(self, name: str | None) -> str:
        from memls.core.agent.context import present_checkpoint, session_context
        from memls.core.formats.checkpoint import sanitize_name
        from memls.core.ops.checkpoint import checkpoint_path
        from memls.mcpserver.server import no_root_message

        root = self.front.root
        if root is None:
            return f"There is no memory root yet: nothing to resume ({no_root_message(self.front.start or Path.cwd())})."
        if not root.is_dir():
            return f"There is no memory root at {root} yet: nothing to resume."
        git = self.front.git()
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
