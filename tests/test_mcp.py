"""`memls mcp` through the MCP SDK's own stdio client (``ClientSession`` + ``stdio_client``)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed (make install-dev installs it)")

import mcp_types as types
from mcp import ClientSession, MCPDeprecationWarning, StdioServerParameters, stdio_client

from tests.agent_fixtures import diagnostics, make_project, memls_json, write_turns

TOOLS = {
    "recall_search",
    "recall_status",
    "checkpoint_save",
    "checkpoint_resume",
    "checkpoint_list",
    "checkpoint_clear",
    "handoff_refresh",
    "log_append",
    "memory_check",
    "snapshot_save",
    "bundle_status",
}


@asynccontextmanager
async def connect(
    root: Path, cwd: Path, notes: list[Any] | None = None
) -> AsyncIterator[ClientSession]:
    """An initialized client session with ``memls mcp --root ROOT`` started in ``cwd``."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memls", "mcp", "--root", str(root)], cwd=str(cwd)
    )

    async def handler(message: Any) -> None:
        if notes is not None:
            notes.append(message)

    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, message_handler=handler) as session,
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
    assert result.is_error
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path)


async def test_every_tool_prompt_and_instruction_is_offered(project: Path) -> None:
    async with connect(project, project) as session:
        tools = (await session.list_tools()).tools
        assert {t.name for t in tools} == TOOLS
        for tool in tools:
            assert tool.description
            assert tool.input_schema["type"] == "object"
        save = next(t for t in tools if t.name == "checkpoint_save")
        assert save.input_schema["required"] == ["next_action"]
        assert set(save.input_schema["properties"]) >= {"name", "done", "failed", "expect_sha"}
        prompts = (await session.list_prompts()).prompts
        assert {p.name for p in prompts} == {"resume", "checkpoint"}


async def test_checkpoint_save_writes_the_file_and_bullet_and_check_is_clean(
    project: Path,
) -> None:
    async with connect(project, project) as session:
        result = await session.call_tool(
            "checkpoint_save",
            {
                "next_action": "Wire argon2id into signup\nFiles: `auth/hash.py`",
                "done": ["Chose argon2id"],
                "failed": ["bcrypt: 72-byte input limit"],
            },
        )
        data = payload(result)
        listed = payload(await session.call_tool("checkpoint_list", {}))
    path = project / "checkpoint-feature-login.md"
    assert data["path"] == str(path)
    assert data["changed"] is True
    assert len(data["sha"]) == 64
    assert data["hint"].startswith("/compact focus on: Wire argon2id into signup")
    text = path.read_text(encoding="utf-8")
    assert "## Next Action: Wire argon2id into signup" in text
    assert "- bcrypt: 72-byte input limit" in text
    index = (project / "MEMORY.md").read_text(encoding="utf-8")
    assert "- **feature-login** (feature/login, " in index
    assert [row["name"] for row in listed["checkpoints"]] == ["feature-login"]
    check = subprocess.run(
        [sys.executable, "-m", "memls", "check", "--root", str(project)],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert " error" not in check.stdout.split("\n")[-2]


async def test_recall_search_finds_a_word_written_after_the_server_started(
    project: Path,
) -> None:
    sessions = project / "transcripts"
    sessions.mkdir()
    transcript = sessions / "a1b2.jsonl"
    write_turns(transcript, [("Which queue do we use?", "RabbitMQ for now.")])
    async with connect(project, project) as session:
        first = payload(await session.call_tool("recall_search", {"query": "RabbitMQ"}))
        assert first["results"]
        assert first["results"][0]["path"] == "transcripts/a1b2.jsonl"
        again = payload(await session.call_tool("recall_search", {"query": "RabbitMQ"}))
        assert again["index"] == "up to date"  # nothing changed: no re-index
        write_turns(transcript, [("And the dead letters?", "Park them in the narwhal queue.")], 1)
        found = payload(await session.call_tool("recall_search", {"query": "narwhal", "limit": 3}))
        status = payload(await session.call_tool("recall_status", {}))
    assert found["index"] != "up to date"
    hit = found["results"][0]
    assert hit["path"] == "transcripts/a1b2.jsonl"
    assert "narwhal" in hit["snippet"]
    assert {"start_line", "end_line", "kind", "heading", "score"} <= set(hit)
    assert found["mode"] == "hybrid"
    assert found["degraded"] is False
    assert status["model"] == "memls-hash"


async def test_an_unsafe_name_is_refused_like_the_cli_and_the_server_keeps_serving(
    project: Path,
) -> None:
    cli = memls_json(
        project, "checkpoint", "save", "../x", "--next", "y", "--root", str(project), "--json"
    )
    before = sorted(p.name for p in project.parent.rglob("*"))
    async with connect(project, project) as session:
        bad = await session.call_tool("checkpoint_save", {"name": "../x", "next_action": "y"})
        assert refusal(bad) == cli["error"]
        assert bad.structured_content == {"error": cli["error"], "exit_code": 2}
        assert sorted(p.name for p in project.parent.rglob("*")) == before
        missing = await session.call_tool("checkpoint_resume", {"name": "nope"})
        assert "not found" in refusal(missing)
        wrong = await session.call_tool("checkpoint_save", {"name": "x"})
        assert "next_action" in refusal(wrong)
        good = await session.call_tool("checkpoint_save", {"name": "x", "next_action": "y"})
        assert payload(good)["changed"] is True
        stale = await session.call_tool(
            "checkpoint_save", {"name": "x", "next_action": "z", "expect_sha": "0" * 64}
        )
        assert "changed since you read it" in refusal(stale)
        assert stale.structured_content is not None
        assert stale.structured_content["exit_code"] == 3
        assert stale.structured_content["current_sha"] == payload(good)["sha"]
    assert (project / "checkpoint-x.md").is_file()


async def test_concurrent_saves_from_two_clients_lose_nothing(project: Path) -> None:
    names = [f"task-{i}" for i in range(8)]
    results: dict[str, dict[str, Any]] = {}
    async with connect(project, project) as one, connect(project, project) as two:

        async def save(session: ClientSession, name: str) -> None:
            result = await session.call_tool(
                "checkpoint_save", {"name": name, "next_action": f"Continue {name}"}
            )
            results[name] = payload(result)

        async with anyio.create_task_group() as group:
            for i, name in enumerate(names):
                group.start_soon(save, one if i % 2 else two, name)
    assert sorted(results) == names
    index = (project / "MEMORY.md").read_text(encoding="utf-8")
    for name in names:
        assert (project / f"checkpoint-{name}.md").is_file()
        assert index.count(f"- **{name}** (") == 1
    check = memls_json(project, "check", "--format", "json", "--root", str(project))
    assert [d for d in diagnostics(check) if d["code"].startswith("IX")] == []


async def test_log_handoff_check_and_resume_go_through_the_core_operations(
    project: Path,
) -> None:
    async with connect(project, project) as session:
        payload(await session.call_tool("checkpoint_save", {"next_action": "Ship it"}))
        logged = payload(
            await session.call_tool(
                "log_append", {"title": "Chose argon2id", "body": "Why: review."}
            )
        )
        handoff = payload(await session.call_tool("handoff_refresh", {}))
        checked = payload(await session.call_tool("memory_check", {"path": "MEMORY.md"}))
        resumed = payload(await session.call_tool("checkpoint_resume", {}))
        outside = await session.call_tool("memory_check", {"path": "../../etc/passwd"})
        prompt = await session.get_prompt("resume", {})
    assert logged["heading"].endswith("— Chose argon2id")
    assert "Why: review." in (project / "LOG.md").read_text(encoding="utf-8")
    assert Path(handoff["file"]).is_file()
    cli = memls_json(project, "check", "--format", "json", "MEMORY.md")
    assert checked["diagnostics"] == diagnostics(cli)
    assert "Next Action: Ship it" in resumed["message"]
    assert resumed["text"] == (project / "checkpoint-feature-login.md").read_text(encoding="utf-8")
    assert "outside the memory root" in refusal(outside)
    text = prompt.messages[0].content
    assert isinstance(text, types.TextContent)
    assert "Next Action: Ship it" in text.text


async def test_memory_files_are_resources_with_change_notifications(project: Path) -> None:
    notes: list[Any] = []
    async with connect(project, project, notes) as session:
        listed = (await session.list_resources()).resources
        assert [r.name for r in listed] == ["MEMORY.md"]
        read = await session.read_resource("memls://memory/MEMORY.md")
        first = read.contents[0]
        assert isinstance(first, types.TextResourceContents)
        assert first.text == "# Memory\n"
        with warnings.catch_warnings():  # deprecated as of 2026-07-28; what clients use today
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await session.subscribe_resource("memls://memory/MEMORY.md")
        payload(await session.call_tool("checkpoint_save", {"next_action": "Go"}))
        with anyio.fail_after(20):
            while not any(isinstance(n, types.ResourceListChangedNotification) for n in notes):
                await anyio.sleep(0.05)
            while not any(
                isinstance(n, types.ResourceUpdatedNotification)
                and n.params.uri == "memls://memory/MEMORY.md"
                for n in notes
            ):
                await anyio.sleep(0.05)
        names = [r.name for r in (await session.list_resources()).resources]
        assert names == ["MEMORY.md", "checkpoint-feature-login.md"]
        with pytest.raises(Exception, match="no memory file"):
            await session.read_resource("memls://memory/../../secret.md")


async def test_a_missing_root_is_a_tool_error_not_a_crash(tmp_path: Path) -> None:
    async with connect(tmp_path / "nowhere", tmp_path) as session:
        result = await session.call_tool("checkpoint_list", {})
        assert "does not exist" in refusal(result)
        assert (await session.list_resources()).resources == []


@pytest.mark.parametrize("argv", [["check", "--exit-zero"], ["hook", "session-start"]])
def test_other_commands_never_load_the_mcp_sdk(project: Path, argv: list[str]) -> None:
    """The SDK is imported by `memls mcp` alone: `memls check` and the hooks stay fast."""
    code = (
        "import sys\n"
        "from memls.cli import main\n"
        "try:\n"
        f"    main({argv!r}, standalone_mode=False)\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('LOADED', sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types')))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=project,
        input="{}",
        capture_output=True,
        text=True,
        check=False,
    )
    assert "LOADED []" in proc.stdout, proc.stdout + proc.stderr


async def test_streamable_http_on_loopback(project: Path) -> None:
    import socket

    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "memls", "mcp", "--root", str(project), "--http", str(port)],
        cwd=project,
        stderr=subprocess.PIPE,
        text=True,
    )
    token_file = project / ".memls" / "http-token"
    try:
        with anyio.fail_after(60):
            while True:
                with socket.socket() as attempt:
                    if token_file.is_file() and attempt.connect_ex(("127.0.0.1", port)) == 0:
                        break
                assert server.poll() is None, server.stderr.read() if server.stderr else ""
                await anyio.sleep(0.1)
            headers = {"Authorization": f"Bearer {token_file.read_text(encoding='ascii')}"}
            async with (
                httpx2.AsyncClient(headers=headers, timeout=30) as http,
                streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http) as (
                    read,
                    write,
                ),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                assert {t.name for t in (await session.list_tools()).tools} == TOOLS
                saved = await session.call_tool("checkpoint_save", {"next_action": "Over HTTP"})
                assert payload(saved)["changed"] is True
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert "Over HTTP" in (project / "checkpoint-feature-login.md").read_text(encoding="utf-8")
    assert not token_file.exists()  # removed at a clean shutdown


async def test_binary_files_and_bad_bodies_are_answered_not_crashed_on(project: Path) -> None:
    (project / "checkpoint-blob.md").write_bytes(b"# Checkpoint: blob\n\x00\xff\xfe binary\n")
    cli = memls_json(
        project, "log", "append", "--title", "T", "--body", "## splits the entry", "--json"
    )
    async with connect(project, project) as session:
        checked = payload(await session.call_tool("memory_check", {"path": "checkpoint-blob.md"}))
        assert "SZ001" in {d["code"] for d in checked["diagnostics"]}
        read = await session.read_resource("memls://memory/checkpoint-blob.md")
        first = read.contents[0]
        assert isinstance(first, types.TextResourceContents)
        assert first.text.startswith("# Checkpoint: blob")
        resumed = payload(await session.call_tool("checkpoint_resume", {"name": "blob"}))
        assert resumed["status"] == "one"
        bad = await session.call_tool("log_append", {"title": "T", "body": "## splits the entry"})
        assert refusal(bad) == cli["error"]
        assert payload(await session.call_tool("recall_status", {}))["db"]
    assert not (project / "LOG.md").exists()


async def test_snapshot_save_commits_memory_to_its_ref(project: Path) -> None:
    async with connect(project, project) as session:
        payload(await session.call_tool("checkpoint_save", {"next_action": "Snapshot me"}))
        first = payload(await session.call_tool("snapshot_save", {}))
        again = payload(await session.call_tool("snapshot_save", {"message": "ignored: same"}))
        stale = await session.call_tool("snapshot_save", {"expect": "0" * 40})
        (project / "notes.md").write_text("# Notes\n\nA topic.\n")
        noted = payload(await session.call_tool("snapshot_save", {"message": "before refactor"}))
    assert first["status"] == "saved"
    assert first["changed"] is True
    assert first["ref"].startswith("refs/memls/")
    assert again["status"] == "unchanged"
    assert again["commit"] == first["commit"]
    assert stale.is_error
    assert stale.structured_content is not None
    assert stale.structured_content["status"] in ("conflict", "invalid")
    assert stale.structured_content["exit_code"] in (2, 3)
    listed = subprocess.run(
        ["git", "cat-file", "-t", first["commit"]],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert listed.stdout.strip() == "commit"
    assert noted["status"] == "saved"
    subject = subprocess.run(
        ["git", "log", "-1", "--format=%s", noted["commit"]],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert subject.stdout.strip() == "before refactor"


async def test_checkpoint_clear_removes_file_and_bullet_and_refuses_an_unknown_name(
    project: Path,
) -> None:
    cli = memls_json(project, "checkpoint", "clear", "ghost", "--json")
    async with connect(project, project) as session:
        payload(
            await session.call_tool("checkpoint_save", {"name": "done-work", "next_action": "x"})
        )
        cleared = payload(await session.call_tool("checkpoint_clear", {"name": "done-work"}))
        ghost = await session.call_tool("checkpoint_clear", {"name": "ghost"})
    assert cleared["cleared"] == ["done-work"]
    assert not (project / "checkpoint-done-work.md").exists()
    assert "done-work" not in (project / "MEMORY.md").read_text(encoding="utf-8")
    assert refusal(ghost) == cli["error"]


async def test_resources_prompts_and_written_arguments_carry_no_secret(project: Path) -> None:
    import secrets
    import string

    key = "nvapi-" + "".join(
        secrets.choice(string.ascii_letters + string.digits) for _ in range(60)
    )
    (project / "MEMORY.md").write_text(f"# Memory\n\n- the NVIDIA key {key} from the shell\n")
    async with connect(project, project) as session:
        read = await session.read_resource("memls://memory/MEMORY.md")
        first = read.contents[0]
        assert isinstance(first, types.TextResourceContents)
        assert key not in first.text
        assert "- the NVIDIA key [redacted NVIDIA API key] from the shell" in first.text
        saved = await session.call_tool(
            "checkpoint_save", {"next_action": f"Call the API with {key}", "done": [f"got {key}"]}
        )
        assert "arguments_redacted" in payload(saved)
        prompt = await session.get_prompt("resume", {})
    on_disk = "".join(p.read_text() for p in project.glob("checkpoint-*.md"))
    assert "Call the API with [redacted NVIDIA API key]" in on_disk
    assert key not in on_disk
    texts = "".join(
        m.content.text for m in prompt.messages if isinstance(m.content, types.TextContent)
    )
    assert key not in texts


async def test_bundle_status_names_the_open_steps_and_changes_nothing(tmp_path: Path) -> None:
    """The tool added as one ``Tool(...)`` row of mcpserver/tools.py: its schema, dispatch
    and refusals come from the operation table (bundle.status, read-only)."""
    root = tmp_path / "memory"
    shutil.copytree(Path(__file__).parent / "rule_cases" / "BN002-incomplete", root)
    (root / "expected.txt").unlink()
    shutil.rmtree(root / "fixed", ignore_errors=True)
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    async with connect(root, root) as session:
        tool = next(t for t in (await session.list_tools()).tools if t.name == "bundle_status")
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is True
        # no path argument over MCP (the table keeps `path` to the CLI): the root's bundle
        assert tool.input_schema.get("properties", {}) == {}
        data = payload(await session.call_tool("bundle_status", {}))
        assert data["open"], data
        assert data["paths"], data
        unknown = await session.call_tool("bundle_status", {"path": "/etc/passwd"})
        assert unknown.is_error
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before
