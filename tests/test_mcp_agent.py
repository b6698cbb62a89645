"""`memls mcp` as an agent meets it, through the MCP SDK's own stdio client: the schema says
what core accepts, transcript hits name their message lines, refusals speak in the tools'
parameters, resource templates and linked topic files, empty queries and a missing root."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed (make install-dev installs it)")

import mcp_types as types
from mcp import ClientSession, StdioServerParameters, stdio_client

from memls.core.recall.chunking import KINDS
from memls.core.recall.search import MODES
from tests.agent_fixtures import make_project, memls_json, turn

FLAG = re.compile(r"(?<![\w-])--[a-z]")


@asynccontextmanager
async def connect(
    cwd: Path, *args: str, home: Path | None = None, errlog: Any = None
) -> AsyncIterator[ClientSession]:
    """An initialized session with ``memls mcp ARGS`` started in ``cwd`` (HOME=home)."""
    env = dict(os.environ)
    if home is not None:
        env["HOME"] = str(home)
        env.pop("CLAUDE_CONFIG_DIR", None)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memls", "mcp", *args], cwd=str(cwd), env=env
    )
    async with (
        stdio_client(params, errlog=errlog or sys.stderr) as (read, write),
        ClientSession(read, write) as session,
    ):
        with anyio.fail_after(60):
            await session.initialize()
        yield session


def payload(result: types.CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    data = json.loads(block.text)
    assert isinstance(data, dict)
    return data


def refusal(result: types.CallToolResult) -> str:
    assert result.is_error, result.content
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    assert result.structured_content is not None
    assert result.structured_content["error"] == block.text  # the reason travels in the JSON
    return block.text


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path)


# --- the schema is core's -----------------------------------------------------------------------


async def test_the_advertised_kinds_and_modes_are_the_ones_core_accepts(project: Path) -> None:
    (project / "notes.md").write_text("# Notes\n\n## Queue\n\nWe use RabbitMQ.\n")
    async with connect(project, "--root", str(project)) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        properties = tools["recall_search"].input_schema["properties"]
        kind_enum = next(a["enum"] for a in properties["kind"]["anyOf"] if "enum" in a)
        assert kind_enum == list(KINDS)
        assert properties["mode"]["enum"] == list(MODES)
        assert "index" not in kind_enum
        assert "index," not in properties["kind"]["description"]
        # every advertised value runs in core; a value core rejects is not advertised
        for kind in kind_enum:
            payload(await session.call_tool("recall_search", {"query": "queue", "kind": kind}))
        for mode in properties["mode"]["enum"]:
            found = payload(
                await session.call_tool("recall_search", {"query": "RabbitMQ", "mode": mode})
            )
            assert found["results"], mode
        rejected = refusal(
            await session.call_tool("recall_search", {"query": "queue", "kind": "index"})
        )
    assert "kind" in rejected
    from memls.core.recall import api

    with pytest.raises(ValueError, match="unknown kind 'index'"):
        api.search(project, "queue", kinds=("index",))


# --- transcript hits name their message lines ----------------------------------------------------


def _tool_call(n: int) -> str:
    return json.dumps(
        {
            "type": "assistant",
            "uuid": f"t-use-{n}",
            "sessionId": "sess-1",
            "timestamp": "2026-11-30T10:30:00.000Z",
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": f"toolu_{n}",
                        "name": "Bash",
                        "input": {"command": f"ls build/part-{n}"},
                    }
                ],
            },
        }
    )


def _tool_result(n: int) -> str:
    return json.dumps(
        {
            "type": "user",
            "uuid": f"t-res-{n}",
            "sessionId": "sess-1",
            "timestamp": "2026-11-30T10:30:01.000Z",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": f"toolu_{n}",
                        "content": "undefined symbol zebrafish" if n == 5 else f"file{n}.o",
                    }
                ],
            },
        }
    )


async def test_transcript_results_name_the_jsonl_lines_of_the_matching_messages(
    project: Path,
) -> None:
    """One turn of 1 + 1 + 2x60 + 1 lines: the hit names the message lines, not 1-123."""
    lines = [
        turn("user", "Why does the release build keep failing on the linker step?", n=0),
        turn("assistant", "Let me look at the build folder first.", n=1),
    ]
    for n in range(60):
        lines += [_tool_call(n) + "\n", _tool_result(n) + "\n"]
    lines.append(turn("assistant", "Found it: the narwhal flag doubles the symbols.", n=2))
    lines.append(turn("user", "Thanks, and the docs?", n=3))
    lines.append(turn("assistant", "The docs build is fine.", n=4))
    (project / "transcripts").mkdir()
    session_file = project / "transcripts" / "s1.jsonl"
    session_file.write_text("".join(lines), encoding="utf-8")
    file_lines = session_file.read_text(encoding="utf-8").splitlines()
    answer = next(i for i, t in enumerate(file_lines, 1) if "narwhal" in t)
    question = next(i for i, t in enumerate(file_lines, 1) if "linker" in t)
    assert (question, answer) == (1, 123)
    async with connect(project, "--root", str(project)) as session:
        found = payload(
            await session.call_tool("recall_search", {"query": "narwhal", "kind": "transcript"})
        )
        asked = payload(
            await session.call_tool(
                "recall_search", {"query": "linker step failing", "mode": "text", "limit": 1}
            )
        )
        fuzzy = payload(
            await session.call_tool(
                "recall_search", {"query": "narwhalish flaggery", "mode": "semantic", "limit": 1}
            )
        )
        tool_hit = payload(
            await session.call_tool(
                "recall_search", {"query": "zebrafish", "mode": "text", "limit": 1}
            )
        )
    hit = found["results"][0]
    assert hit["path"] == "transcripts/s1.jsonl"
    assert hit["lines"] == [answer]  # the assistant's message that says it
    assert (hit["start_line"], hit["end_line"]) == (answer, answer)
    assert hit["turn_lines"] == [1, 123]  # the whole turn, for context
    assert "narwhal" in json.loads(file_lines[hit["lines"][0] - 1])["message"]["content"][0]["text"]
    assert asked["results"][0]["lines"] == [question]
    # a semantic hit whose words the text does not hold: the turn's conversation messages
    # (the question and the two answers), never its 120 lines of tool traffic
    assert fuzzy["results"][0]["path"] == "transcripts/s1.jsonl"
    assert fuzzy["results"][0]["lines"] == [question, 2, answer]
    # a word only a tool result holds: that result's own line
    result_line = next(i for i, t in enumerate(file_lines, 1) if "zebrafish" in t)
    assert tool_hit["results"][0]["lines"] == [result_line]
    # the CLI's JSON names the same lines (start_line/end_line stay the turn there)
    cli = memls_json(
        project,
        "recall",
        "search",
        "narwhal",
        "--kind",
        "transcript",
        "--json",
        "--root",
        str(project),
    )
    assert cli["results"][0]["lines"] == [answer]
    assert (cli["results"][0]["start_line"], cli["results"][0]["end_line"]) == (1, 123)


# --- refusals in the tools' own terms ------------------------------------------------------------


async def test_refusals_name_tool_parameters_not_cli_flags(project: Path) -> None:
    cli_step = memls_json(
        project, "checkpoint", "save", "x", "--next", "y", "--step", "2/5", "--json"
    )
    assert "--step needs --plan" in cli_step["error"]  # the CLI keeps its flags
    async with connect(project, "--root", str(project)) as session:
        texts = {
            "step without plan": refusal(
                await session.call_tool(
                    "checkpoint_save", {"name": "x", "next_action": "y", "step": "2/5"}
                )
            ),
            "bad step": refusal(
                await session.call_tool(
                    "checkpoint_save",
                    {"name": "x", "next_action": "y", "plan": "plan.md", "step": "two"},
                )
            ),
            "empty plan": refusal(
                await session.call_tool(
                    "checkpoint_save", {"name": "x", "next_action": "y", "plan": " "}
                )
            ),
            "no title": refusal(await session.call_tool("log_append", {"title": " "})),
            "bad expect": refusal(await session.call_tool("snapshot_save", {"expect": "zz"})),
            "empty clear": refusal(await session.call_tool("checkpoint_clear", {"name": ""})),
        }
        structured = (
            await session.call_tool(
                "checkpoint_save", {"name": "x", "next_action": "y", "step": "2/5"}
            )
        ).structured_content
    for what, text in texts.items():
        assert not FLAG.search(text), (what, text)
    assert texts["step without plan"].startswith("step needs plan")
    assert "step 'two' is not N/M" in texts["bad step"]
    assert texts["empty plan"].startswith("plan is empty")
    assert "(title)" in texts["no title"]
    assert "expect 'zz' is not a commit id" in texts["bad expect"]
    assert "name" in texts["empty clear"]
    assert structured is not None
    assert not FLAG.search(json.dumps(structured))
    assert not (project / "checkpoint-x.md").exists()
    assert not (project / "LOG.md").exists()


# --- resources -----------------------------------------------------------------------------------


async def test_resource_templates_and_topic_files_linked_from_memory_md(project: Path) -> None:
    (project / "memory").mkdir()
    (project / "memory" / "garden.md").write_text("# Garden\n\nDrip line at 6am.\n")
    (project / "notes").mkdir()
    (project / "notes" / "deploy.md").write_text("# Deploy\n\nBlue-green.\n")
    (project / "memory" / "unlinked.md").write_text("# Unlinked\n\nStill memory.\n")
    (project.parent / "outside.md").write_text("# Outside the root\n")
    (project / "MEMORY.md").write_text(
        "# Memory\n\n- [Garden](memory/garden.md) — watering\n"
        "- Deploys: `notes/deploy.md`\n- [Elsewhere](../outside.md)\n"
    )
    async with connect(project, "--root", str(project)) as session:
        names = [r.name for r in (await session.list_resources()).resources]
        templates = (await session.list_resource_templates()).resource_templates
        payload(await session.call_tool("checkpoint_save", {"name": "t1", "next_action": "Go"}))
        by_name = await session.read_resource("memls://memory/checkpoint-t1.md")
        by_path = await session.read_resource("memls://memory/memory/unlinked.md")
        encoded = await session.read_resource("memls://memory/memory%2Fgarden.md")
        with pytest.raises(Exception, match="no memory file"):
            await session.read_resource("memls://memory/../outside.md")
        with pytest.raises(Exception, match="no memory file"):
            await session.read_resource("memls://memory/memls.toml")
        checkpoint_ref = types.ResourceTemplateReference(
            type="ref/resource", uri="memls://memory/checkpoint-{name}.md"
        )
        path_ref = types.ResourceTemplateReference(type="ref/resource", uri="memls://memory/{path}")
        named = await session.complete(checkpoint_ref, {"name": "name", "value": "t"})
        pathed = await session.complete(path_ref, {"name": "path", "value": "memory/"})
        prompted = await session.complete(
            types.PromptReference(type="ref/prompt", name="resume"), {"name": "name", "value": ""}
        )
    assert names == ["MEMORY.md", "memory/garden.md", "notes/deploy.md"]
    assert named.completion.values == ["t1"]
    assert pathed.completion.values == ["memory/garden.md", "memory/unlinked.md"]
    assert prompted.completion.values == ["t1"]
    assert {t.uri_template for t in templates} == {
        "memls://memory/checkpoint-{name}.md",
        "memls://memory/{path}",
    }
    for read, expected in (
        (by_name, "# Checkpoint: t1"),
        (by_path, "# Unlinked"),
        (encoded, "# Garden"),
    ):
        first = read.contents[0]
        assert isinstance(first, types.TextResourceContents)
        assert first.text.startswith(expected)


# --- empty queries -------------------------------------------------------------------------------


async def test_an_empty_query_is_a_refusal_with_a_reason(project: Path) -> None:
    (project / "notes.md").write_text("# Notes\n\n## Queue\n\nWe use RabbitMQ.\n")
    async with connect(project, "--root", str(project)) as session:
        empty = refusal(await session.call_tool("recall_search", {"query": ""}))
        blank = refusal(await session.call_tool("recall_search", {"query": "   "}))
        marks = refusal(await session.call_tool("recall_search", {"query": "?!"}))
        payload(await session.call_tool("recall_search", {"query": "RabbitMQ"}))
    assert "query" in empty
    assert "no words to search for" in blank
    assert "no words to search for" in marks


# --- no memory root ------------------------------------------------------------------------------


async def test_without_a_root_every_tool_refuses_and_nothing_is_written(tmp_path: Path) -> None:
    cwd = tmp_path / "somewhere"
    cwd.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    log = tmp_path / "stderr.txt"
    calls: list[tuple[str, dict[str, Any]]] = [
        ("checkpoint_save", {"next_action": "Go"}),
        ("checkpoint_resume", {}),
        ("checkpoint_list", {}),
        ("log_append", {"title": "T"}),
        ("handoff_refresh", {}),
        ("memory_check", {}),
        ("snapshot_save", {}),
        ("recall_search", {"query": "anything"}),
        ("recall_status", {}),
    ]
    with log.open("w") as errlog:
        async with connect(cwd, home=home, errlog=errlog) as session:
            reasons = [refusal(await session.call_tool(name, args)) for name, args in calls]
            no_resources = (await session.list_resources()).resources
            prompt = await session.get_prompt("resume", {})
            assert sorted(p.name for p in cwd.rglob("*")) == []
            assert sorted(p.name for p in home.rglob("*")) == []
            # a memory root created there later is found by the next call
            (cwd / "MEMORY.md").write_text("# Memory\n")
            saved = payload(
                await session.call_tool("checkpoint_save", {"name": "n1", "next_action": "Go"})
            )
    for reason in reasons:
        assert reason.startswith("no memory root"), reason
        assert str(cwd) in reason
        assert '"--root"' in reason
    assert no_resources == []
    text = prompt.messages[0].content
    assert isinstance(text, types.TextContent)
    assert "no memory root" in text.text
    assert "memls mcp: no memory root" in log.read_text()
    assert Path(saved["path"]) == cwd.resolve() / "checkpoint-n1.md"


def test_http_without_a_root_refuses_to_start(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home)}
    env.pop("CLAUDE_CONFIG_DIR", None)
    proc = subprocess.run(
        [sys.executable, "-m", "memls", "mcp", "--http", "0"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("memls mcp: no memory root")
    assert not (tmp_path / ".memls").exists()
