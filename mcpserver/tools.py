"""The MCP tools: one :class:`Tool` entry each in :data:`TOOLS`, over the table of operations.

A tool names the operation it runs (:mod:`memls.core.ops.table`): its input schema is made
from that operation's argument dataclass (descriptions, enums and bounds are the table's,
so they are core's), it is annotated read-only or destructive as the table says, and
without a ``run`` of its own it calls the operation's core function and returns its result
as :func:`memls.core.ops.result_json` writes it. Adding a tool for an operation is one entry
here; adding an operation is one entry in the table and one here.

Every refusal is a :class:`memls.core.ops.OpError`, worded in the tool's parameter names
(core names a parameter; older messages that quote a CLI flag are translated through the
table's spellings). Every result, success or refusal, goes through :func:`tool_result`,
which redacts secrets on the way out; arguments are redacted before any operation sees them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from memls.core.ops import OpError, OpResult, as_refusal, result_json
from memls.core.ops.table import Operation, operation, respell

if TYPE_CHECKING:
    import mcp_types as types
    from mcp.server import ServerRequestContext

    from memls.mcpserver.server import McpFront

Handler = Callable[["McpFront", Any], dict[str, Any]]


@dataclass(frozen=True)
class Tool:
    """One MCP tool: its name, the operation it runs and what the agent reads about it."""

    name: str
    op: str
    """The operation in :data:`memls.core.ops.table.OPERATIONS`."""
    description: str
    required: tuple[str, ...] = ()
    """Parameters the tool requires although the operation has a default (an agent must
    give a checkpoint's next action; memls writes no placeholder)."""
    run: Handler | None = None
    """How the tool runs, when it is more than the operation's core function."""
    words: dict[str, str] = field(default_factory=dict)
    """CLI flags that a message may quote and the tool expresses otherwise."""
    writes: bool = False
    """The tool writes although its operation only reads (recall_search refreshes the index)."""

    @property
    def operation(self) -> Operation:
        return operation(self.op)


# --- the tools that do more than call their operation ------------------------------------------


def _recall_search(front: McpFront, args: Any) -> dict[str, Any]:
    from memls.core.recall.fulltext import query_words

    if not query_words(args.query):
        raise OpError(
            f"{{query}} {args.query!r} has no words to search for: give words, a question or "
            "a name (an empty query would return arbitrary memory)",
            param="query",
        )
    base = front.base()
    indexed, freshness = front.recall.refresh(base)
    response = operation("recall.search").run(base, _op_args("recall.search", args), None)
    data: dict[str, Any] = response.to_dict()
    for hit in data["results"]:
        if hit.get("lines"):
            # a transcript hit: the lines to open are its messages', not the turn's
            hit["turn_lines"] = [hit["start_line"], hit["end_line"]]
            hit["start_line"], hit["end_line"] = hit["lines"][0], hit["lines"][-1]
    return {**data, "index": indexed, "freshness": freshness}


def _checkpoint_save(front: McpFront, args: Any) -> dict[str, Any]:
    payload = _run_op(front, "checkpoint.save", args)
    payload["path"] = payload.get("checkpoint")
    payload["hint"] = payload.get("next_step")
    return payload


def _checkpoint_resume(front: McpFront, args: Any) -> dict[str, Any]:
    base = front.base()
    before = _checkpoint_text(base, args.name) if args.name is not None else None
    result = operation("checkpoint.resume").run(
        base, _op_args("checkpoint.resume", args), front.git()
    )
    if args.name is not None and result.data.get("status") != "one":
        raise OpError(result.message, **result_json(result))
    payload = result_json(result)
    if result.data.get("status") == "one":
        # the whole file too (Done This Session, Modified Files, notes), read before a consume
        payload["text"] = before or _checkpoint_text(base, str(result.data["name"]))
    return payload


def _checkpoint_list(front: McpFront, args: Any) -> dict[str, Any]:
    from memls.cli.checkpoint import checkpoint_row

    infos = operation("checkpoint.list").run(front.base(), args, front.git())
    return {"checkpoints": [checkpoint_row(i) for i in infos]}


def _checkpoint_clear(front: McpFront, args: Any) -> dict[str, Any]:
    base = front.base()
    result = operation("checkpoint.clear").run(base, _op_args("checkpoint.clear", args), None)
    if not result.data.get("cleared"):
        raise OpError(result.message, **result_json(result))
    return result_json(result)


def _memory_check(front: McpFront, args: Any) -> dict[str, Any]:
    from memls.core.fsutil import inside
    from memls.core.model import Severity
    from memls.core.report import to_json

    base = front.base()
    if args.path:
        target = Path(args.path).expanduser()
        target = target if target.is_absolute() else base / target
        if not inside(base, target):
            raise OpError(f"{args.path} is outside the memory root {base}")
        if not target.is_file():
            raise OpError(f"{args.path} is not a file in the memory root {base}")
    diags = operation("memory.check").run(base, _op_args("memory.check", args), None)
    errors = sum(1 for d in diags if d.severity is Severity.ERROR)
    return {
        "diagnostics": to_json(diags, base),
        "errors": errors,
        "total": len(diags),
        "message": f"{len(diags)} finding(s), {errors} error(s).",
    }


def _snapshot_save(front: McpFront, args: Any) -> dict[str, Any]:
    from memls.core.ops.table import SnapshotSave
    from memls.core.snapshot import default_ref, snapshot_head

    base = front.base()
    expect = args.expect
    if expect is None:
        try:
            expect = snapshot_head(base)
        except Exception:
            expect = None  # not a repository: save_snapshot says so
    request = SnapshotSave(
        paths=list(args.paths), expect=expect, message=args.message, initial=expect is None
    )
    result = operation("snapshot.save").run(base, request, None)
    payload: dict[str, Any] = result.to_json()
    payload["message"] = result.message
    if result.status in ("conflict", "invalid"):
        payload.pop("exit_code", None)
        raise OpError(result.message, exit_code=result.exit_code, **payload)
    payload.setdefault("ref", default_ref(base))
    return payload


TOOLS: tuple[Tool, ...] = (
    Tool(
        "recall_search",
        "recall.search",
        "Search memory files and past session transcripts (hybrid semantic + full-text). Use "
        "before re-deriving something decided or found earlier. Results give path, "
        "start_line, end_line, kind, heading, snippet and score, plus the mode that ran and "
        "whether it was degraded to text. A transcript result's `lines` are the JSONL lines "
        "of the messages that matched (start_line/end_line span them; `turn_lines` is the "
        "whole turn): open those lines, not the turn. Changed files are indexed first.",
        run=_recall_search,
        writes=True,
    ),
    Tool(
        "recall_status",
        "recall.status",
        "Recall's state: mode (semantic/text/unavailable), model, chunk counts, last backfill "
        "and verification.",
    ),
    Tool(
        "checkpoint_save",
        "checkpoint.save",
        "Save a named checkpoint (checkpoint-NAME.md + its MEMORY.md bullet), atomically and "
        "under a lock. Call before a risky step, before /clear or /compact, and when "
        "stopping. Returns path, sha, changed and the /compact (or /clear) line to use.",
        required=("next_action",),
        run=_checkpoint_save,
    ),
    Tool(
        "checkpoint_resume",
        "checkpoint.resume",
        "Present a checkpoint: branch-mismatch warning, previously failed approaches (do not "
        "retry them), then the Next Action. Without a name: the only checkpoint, or the list "
        "to choose from.",
        run=_checkpoint_resume,
    ),
    Tool(
        "checkpoint_list",
        "checkpoint.list",
        "List checkpoints, newest first: name, branch, saved, age, stale, branch mismatch, "
        "next action.",
        run=_checkpoint_list,
    ),
    Tool(
        "checkpoint_clear",
        "checkpoint.clear",
        "Delete a checkpoint file and its MEMORY.md bullet (when its work is done).",
        required=("name",),
        run=_checkpoint_clear,
    ),
    Tool(
        "bundle_status",
        "bundle.status",
        "Show a checkpoint bundle's five steps and which are still open (unapproved items, "
        "missing targets, recall not yet verified), so you finish it before approving. "
        "Read-only.",
    ),
    Tool(
        "handoff_refresh",
        "handoff.refresh",
        "Refresh .handoff.md (create it when missing): the memls-generated blocks are updated "
        "from checkpoints, git and the log; the author's text stays.",
    ),
    Tool(
        "log_append",
        "log.append",
        "Append an entry (## YYYY-MM-DD HH:MM — title) to the append-only LOG.md: decisions, "
        "milestones, lessons.",
    ),
    Tool(
        "memory_check",
        "memory.check",
        "Check the memory files against memls's rules; the diagnostics as `memls check "
        "--format json` prints them (path, line, column, code, severity, message, fixable).",
        run=_memory_check,
    ),
    Tool(
        "snapshot_save",
        "snapshot.save",
        "Commit memory files to the git ref refs/memls/<instance> (work tree, index and HEAD "
        "untouched). Unchanged content makes no commit.",
        run=_snapshot_save,
        words={"--initial": "no expect"},
    ),
)
"""Every tool, in the order tools/list gives them."""


# --- schemas, calls and results ----------------------------------------------------------------


def models() -> dict[str, Any]:
    """Each tool's argument model (pydantic, which comes with the SDK), made from the table."""
    from pydantic import BaseModel, ConfigDict, Field, create_model

    class _Args(BaseModel):
        model_config = ConfigDict(extra="forbid")

    out: dict[str, Any] = {}
    for tool in TOOLS:
        fields: dict[str, Any] = {}
        for p in tool.operation.params():
            if not p.mcp:
                continue
            kind: Any = {"str": str, "int": int, "bool": bool, "list": list[str]}[p.kind]
            if p.choices:
                # core's own list: what the schema advertises is what core accepts
                kind = Literal[p.choices]
            required = p.required or p.name in tool.required
            if p.optional and not required:
                kind = kind | None
            bounds: dict[str, Any] = {
                key: value
                for key, value in (
                    ("min_length", p.min_length),
                    ("ge", p.minimum),
                    ("le", p.maximum),
                )
                if value is not None
            }
            if p.kind == "list":
                spec = Field(default_factory=list, description=p.doc)
            elif required:
                spec = Field(description=p.doc, **bounds)
            else:
                spec = Field(p.default, description=p.doc, **bounds)
            fields[p.name] = (kind, spec)
        name = "".join(w.title() for w in tool.name.split("_"))
        out[tool.name] = create_model(name, __base__=_Args, **fields)
    return out


BY_NAME: dict[str, Tool] = {tool.name: tool for tool in TOOLS}


def _op_args(op: str, args: Any) -> Any:
    """The operation's argument dataclass from a tool's validated arguments (parameters
    the tool does not take keep the operation's defaults)."""
    return operation(op).args(**args.model_dump())


def _run_op(front: McpFront, op: str, args: Any) -> dict[str, Any]:
    result = operation(op).run(front.base(), _op_args(op, args), front.git())
    return result_json(result) if isinstance(result, OpResult) else dict(result)


class Tools:
    """tools/list and tools/call over :data:`TOOLS`."""

    def __init__(self, front: McpFront) -> None:
        self.front = front
        self.models = models()

    async def list(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        import mcp_types as types

        tools = []
        for tool in TOOLS:
            schema = self.models[tool.name].model_json_schema()
            schema.pop("title", None)
            tools.append(
                types.Tool(
                    name=tool.name,
                    description=tool.description,
                    input_schema=schema,
                    annotations=types.ToolAnnotations(
                        read_only_hint=tool.operation.read_only and not tool.writes,
                        destructive_hint=tool.operation.destructive,
                        open_world_hint=False,
                    ),
                )
            )
        return types.ListToolsResult(tools=tools)

    async def call(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        import anyio
        from pydantic import ValidationError

        tool = BY_NAME.get(params.name)
        try:
            if tool is None:
                raise OpError(f"unknown tool {params.name!r}: the tools are {', '.join(BY_NAME)}")
            raw = params.arguments or {}
            clean = _redact_arguments(raw)
            try:
                args = self.models[tool.name].model_validate(clean)
            except ValidationError as exc:
                problems = "; ".join(
                    f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
                    for e in exc.errors()
                )
                raise OpError(f"invalid arguments for {params.name}: {problems}") from exc
            front = self.front
            if tool.run is not None:
                run = tool.run
                payload = await anyio.to_thread.run_sync(lambda: run(front, args))
            else:
                op = tool.op
                payload = await anyio.to_thread.run_sync(lambda: _run_op(front, op, args))
            if clean != raw:
                payload = {
                    **payload,
                    "arguments_redacted": "a secret in the arguments was replaced by "
                    "[redacted …] before memls used them: memory never stores a secret an "
                    "agent passes in",
                }
        except Exception as exc:  # refusals from core, and anything unexpected: never a crash
            return refusal_result(tool, _refusal(exc))
        if params.name == "recall_search":
            from memls.mcpserver.refresh import freshness_line

            return tool_result(payload, note=freshness_line(payload.get("freshness")))
        return tool_result(payload)


def _refusal(exc: Exception) -> OpError:
    """The refusal an exception stands for; a bug is reported too, never a crash."""
    found = as_refusal(exc)
    if found is not None:
        return found
    if type(exc).__name__.endswith("Error"):  # GitError, ArchiveError …: core said no
        return OpError(str(exc))
    return OpError(f"{type(exc).__name__}: {exc}", exit_code=1)


def in_tool_words(tool: Tool | None, message: str) -> str:
    """A message with the CLI flags it quotes written as the tool's parameters (``--next``
    → ``next_action``, from the table): a message core still words for the command line
    reaches the agent in the tool's own terms."""
    if tool is None:
        return message
    return respell(tool.op, "mcp", message, tool.words)


def refusal_result(tool: Tool | None, error: OpError) -> types.CallToolResult:
    """A refusal as a tool result (``isError``), in the tool's parameter names."""
    from memls.core.ops.table import spelling

    body = error.to_json(spelling(tool.op if tool else None, "mcp"))
    body = {k: in_tool_words(tool, v) if isinstance(v, str) else v for k, v in body.items()}
    return tool_result(body, body["error"], is_error=True)


def _checkpoint_text(root: Path, name: str) -> str | None:
    from memls.core.formats.checkpoint import sanitize_name
    from memls.core.ops.checkpoint import checkpoint_path

    try:
        return checkpoint_path(root, sanitize_name(name)).read_bytes().decode("utf-8", "replace")
    except (OSError, ValueError):
        return None


def _redact_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    """Tool arguments with every secret replaced before any operation sees them: an agent
    that saw a key must not write it into memory (a checkpoint, LOG.md) through memls."""
    from memls.core.secrets import redact_data

    cleaned = redact_data(arguments)
    return cleaned if isinstance(cleaned, dict) else arguments


def tool_result(
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
