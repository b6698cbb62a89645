"""The table of operations (``memls.core.ops.table``) against every front that offers them.

Every operation's parameters appear as CLI options or arguments (same choices, flags for
booleans, repeatable for lists), as MCP schema properties (same types and enums, which are
core's own lists), and as LSP command argument keys (parsed through the table); a refusal
names its parameter and each front spells it in its own words.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import click
import pytest

from memls.cli import main
from memls.core.ops import OpError, OpResult, as_refusal, result_json
from memls.core.ops.table import OPERATIONS, Operation, Param, respell, spelling
from memls.core.recall.chunking import KINDS
from memls.core.recall.search import MODES
from memls.lsp.commands import SERVER_COMMANDS

CLI_OPS = [op for op in OPERATIONS.values() if op.cli_path is not None]
LSP_OPS = [op for op in OPERATIONS.values() if op.lsp]


def test_every_parameter_is_documented_and_named_once() -> None:
    for op in OPERATIONS.values():
        assert op.summary, op.name
        names = [p.name for p in op.params()]
        assert len(names) == len(set(names)), op.name
        for p in op.params():
            assert p.doc.strip(), (op.name, p.name)
            assert not (p.required and p.kind == "list"), (op.name, p.name)


def _cli_command(op: Operation) -> click.Command:
    assert op.cli_path is not None
    ctx = click.Context(main)
    command: click.Command | None = main
    for word in op.cli_path:
        assert isinstance(command, click.Group), (op.name, word)
        command = command.get_command(ctx, word)
    assert command is not None, op.name
    return command


def _cli_param(command: click.Command, spelled: str) -> click.Parameter:
    for param in command.params:
        if isinstance(param, click.Option) and spelled in (*param.opts, *param.secondary_opts):
            return param
        if isinstance(param, click.Argument) and param.human_readable_name == spelled:
            return param
    raise AssertionError(f"{command.name}: no {spelled}")


@pytest.mark.parametrize("op", CLI_OPS, ids=lambda op: op.name)
def test_every_parameter_is_a_cli_option_or_argument(op: Operation) -> None:
    command = _cli_command(op)
    for p in op.params():
        spelled = p.spell("cli")
        if spelled is None:
            continue
        param = _cli_param(command, spelled)
        if p.kind == "bool":
            assert isinstance(param, click.Option)
            assert param.is_flag, (op.name, spelled)
        if p.kind == "list":
            assert param.multiple or param.nargs == -1, (op.name, spelled)
        if p.kind == "int":
            assert isinstance(param.type, click.types.IntParamType), (op.name, spelled)
        if p.choices:
            assert isinstance(param.type, click.Choice), (op.name, spelled)
            assert tuple(param.type.choices) == p.choices, (op.name, spelled)
        if p.required:
            assert param.required, (op.name, spelled)


def test_the_enums_are_cores_own_lists() -> None:
    search = OPERATIONS["recall.search"]
    assert search.param("kind").choices == KINDS
    assert search.param("mode").choices == MODES
    assert "index" not in KINDS  # MEMORY.md is not a chunk kind: core rejects it


_JSON_TYPES = {"str": "string", "int": "integer", "bool": "boolean", "list": "array"}


def _schema_types(prop: dict[str, Any]) -> tuple[set[str], list[Any] | None]:
    options = prop.get("anyOf", [prop])
    types = {o["type"] for o in options if "type" in o} - {"null"}
    enums = [o["enum"] for o in options if "enum" in o]
    return types, enums[0] if enums else None


def test_every_mcp_tool_schema_is_its_operations_parameters() -> None:
    pytest.importorskip("pydantic")
    from memls.mcpserver.tools import TOOLS, models

    schemas = {name: model.model_json_schema() for name, model in models().items()}
    assert [t.name for t in TOOLS] == list(schemas)
    for tool in TOOLS:
        op = tool.operation
        schema = schemas[tool.name]
        params: dict[str, Param] = {p.name: p for p in op.params() if p.mcp}
        assert set(schema.get("properties", {})) == set(params), tool.name
        assert set(tool.required) <= set(params), tool.name
        required = {n for n, p in params.items() if p.required} | set(tool.required)
        assert set(schema.get("required", [])) == required, tool.name
        assert schema["additionalProperties"] is False
        for name, p in params.items():
            prop = schema["properties"][name]
            types, enum = _schema_types(prop)
            assert types == {_JSON_TYPES[p.kind]}, (tool.name, name)
            assert enum == (list(p.choices) if p.choices else None), (tool.name, name)
            assert prop["description"] == p.doc, (tool.name, name)


def _sample(p: Param) -> Any:
    return {"str": "x", "int": 3, "bool": True, "list": ["a", "b"]}[p.kind]


@pytest.mark.parametrize("op", LSP_OPS, ids=lambda op: op.name)
def test_every_lsp_command_parses_its_arguments_through_the_table(op: Operation) -> None:
    from memls.lsp.features.commands import Commands

    assert op.lsp_command in SERVER_COMMANDS
    handler = getattr(Commands, "cmd_" + op.name.replace(".", "_"))
    spelled = {p.name: p.spell("lsp") for p in op.params()}
    if any(spelled.values()):
        assert f'self.args("{op.name}"' in inspect.getsource(handler), op.name
    commands = object.__new__(Commands)
    raw = {key: _sample(p) for p in op.params() if (key := p.spell("lsp")) is not None}
    parsed = commands.args(op.name, raw)
    for p in op.params():
        if spelled[p.name] is None:
            assert p.name not in parsed
        else:
            assert parsed[p.name] == _sample(p), (op.name, p.name)


def test_a_refusal_names_its_parameter_in_each_fronts_words() -> None:
    refusal = OpError("{step} needs {plan} (the plan file)", param=("step", "plan"))
    assert refusal.param == "step"
    assert str(refusal) == "step needs plan (the plan file)"
    cli = refusal.render(spelling("checkpoint.save", "cli"))
    assert cli == "--step needs --plan (the plan file)"
    save = OpError("{next_action} is empty", param="next_action")
    assert save.render(spelling("checkpoint.save", "cli")) == "--next is empty"
    assert save.render(spelling("checkpoint.save", "lsp")) == "next is empty"
    assert save.render(spelling("checkpoint.save", "mcp")) == "next_action is empty"
    assert save.to_json() == {
        "error": "next_action is empty",
        "exit_code": 2,
        "param": "next_action",
    }
    # braces that name no parameter stay as they are
    assert str(OpError("checkpoint-{name}.md", param="title")) == "checkpoint-{name}.md"
    # a message core still words with flags (snapshots) is respelled through the table
    conflict = "refs/memls/x is at abc; pass --expect abc (or --initial, or --ref R)"
    words = {"--initial": "no expect"}
    assert respell("snapshot.save", "mcp", conflict, words) == (
        "refs/memls/x is at abc; pass expect abc (or no expect, or --ref R)"
    )
    assert respell("snapshot.save", "lsp", conflict) == (
        "refs/memls/x is at abc; pass expect abc (or initial, or ref R)"
    )
    assert respell("snapshot.save", "cli", conflict) == conflict


def test_no_core_message_quotes_a_cli_flag_of_its_operation() -> None:
    """Core names parameters (``{plan}``); only a front spells them as flags."""
    import re

    flags = {
        spelled
        for op in OPERATIONS.values()
        for p in op.params()
        if (spelled := p.spell("cli")) is not None and spelled.startswith("--")
    }
    ops = Path(__file__).resolve().parents[1] / "core" / "ops"
    quoted = {
        f"{path.name}: {flag}"
        for path in ops.glob("*.py")
        for flag in flags
        if re.search(rf"OpError\([^)]*?(?<![\w-]){re.escape(flag)}\b", path.read_text())
    }
    assert quoted == set()


def test_one_result_and_one_refusal_mapping_for_every_front(tmp_path: Path) -> None:
    result = OpResult("Saved.", True, (tmp_path / "a.md",), {"sha": "0" * 64})
    assert result_json(result) == {
        "message": "Saved.",
        "changed": True,
        "paths": [str(tmp_path / "a.md")],
        "sha": "0" * 64,
    }
    from memls.core.config import ConfigError
    from memls.core.fsutil import UnsafePathError
    from memls.core.ops import ConflictError

    conflict = ConflictError("changed since you read it", "f" * 64)
    assert as_refusal(conflict) is conflict
    assert conflict.to_json() == {
        "current_sha": "f" * 64,
        "error": "changed since you read it",
        "exit_code": 3,
    }
    unsafe = as_refusal(UnsafePathError("checkpoint name is empty"))
    assert unsafe is not None
    assert (str(unsafe), unsafe.exit_code) == ("checkpoint name is empty", 2)
    broken = as_refusal(ConfigError("memls.toml:1: bad"))
    assert broken is not None
    assert str(broken) == "broken configuration: memls.toml:1: bad"
    denied = as_refusal(PermissionError(13, "Permission denied", "/x/MEMORY.md"))
    assert denied is not None
    assert str(denied) == "Permission denied: /x/MEMORY.md"
    assert as_refusal(TypeError("a bug")) is None


def test_the_cli_spells_a_refusals_parameter_as_its_flag(tmp_path: Path) -> None:
    from tests.cli_helpers import memls_on

    proc = memls_on(tmp_path, "log", "append", "--title", " ", "--json")
    assert proc.returncode == 2
    assert "(--title)" in proc.stderr
    assert '"param": "title"' in proc.stdout
    assert not (tmp_path / "LOG.md").exists()


async def test_every_kind_the_mcp_schema_advertises_is_one_core_accepts(tmp_path: Path) -> None:
    pytest.importorskip("mcp", reason="the mcp extra is not installed")
    from tests.agent_fixtures import make_project
    from tests.test_mcp import connect, payload

    project = make_project(tmp_path)
    async with connect(project, project) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        prop = tools["recall_search"].input_schema["properties"]["kind"]
        (advertised,) = [o["enum"] for o in prop["anyOf"] if "enum" in o]
        assert advertised == list(KINDS)
        for kind in advertised:
            found = await session.call_tool(
                "recall_search", {"query": "login", "kind": kind, "mode": "text"}
            )
            assert payload(found)["mode"] == "text", kind
        index = await session.call_tool("recall_search", {"query": "login", "kind": "index"})
        assert index.is_error  # not advertised, so refused before core sees it
