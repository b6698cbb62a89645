"""The Claude Code plugin and `memls mcp` through the real Claude Code CLI.

The CLI (npm ``@anthropic-ai/claude-code``) lives in ``build/claude`` (``make install-dev``
puts it there; this module installs it when npm is available and it is missing). It runs
with HOME and CLAUDE_CONFIG_DIR in a temporary folder and needs no login for these commands.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agent_fixtures import make_project, payload

PROJECT = Path(__file__).resolve().parents[1]
PLUGIN = PROJECT / "editors" / "claude-code"
LAUNCHER = PLUGIN / "bin" / "memls-launch"
PREFIX = PROJECT / "build" / "claude"
CLAUDE = PREFIX / "node_modules" / ".bin" / "claude"
VENV_BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def claude() -> Path:
    if not CLAUDE.exists():
        npm = shutil.which("npm")
        if npm is None:
            reason = "npm is not available: cannot install @anthropic-ai/claude-code"
            print(f"SKIP: {reason}")
            pytest.skip(reason)
        PREFIX.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [npm, "install", "--prefix", str(PREFIX), "--no-audit", "--no-fund",
             "--loglevel=error", "@anthropic-ai/claude-code"],
            check=True,
            timeout=600,
        )  # fmt: skip
    return CLAUDE


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    return {
        **os.environ,
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "MEMLS_HOOK_BACKFILL": "off",
    }


def run(
    claude: Path, env: dict[str, str], *args: str, cwd: Path = PROJECT
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(claude), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=180,
    )


def test_the_plugin_and_the_marketplace_validate(claude: Path, env: dict[str, str]) -> None:
    plugin = run(claude, env, "plugin", "validate", "--strict", str(PLUGIN))
    assert plugin.returncode == 0, plugin.stdout + plugin.stderr
    assert "Validation passed" in plugin.stdout
    market = run(claude, env, "plugin", "validate", "--strict", str(PROJECT))
    assert market.returncode == 0, market.stdout + market.stderr
    assert "marketplace.json" in market.stdout
    assert "Validation passed" in market.stdout


def test_marketplace_add_then_install_gives_hooks_skills_and_the_mcp_server(
    claude: Path, env: dict[str, str], tmp_path: Path
) -> None:
    added = run(claude, env, "plugin", "marketplace", "add", str(PROJECT))
    assert added.returncode == 0, added.stdout + added.stderr
    installed = run(claude, env, "plugin", "install", "memls@memls")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    listed = run(claude, env, "plugin", "list")
    assert "memls@memls" in listed.stdout
    assert "enabled" in listed.stdout
    details = run(claude, env, "plugin", "details", "memls@memls").stdout
    assert "SessionStart, PreCompact, PostCompact, SessionEnd" in details
    for skill in ("memls", "checkpoint", "resume", "recall"):
        assert skill in details
    project = make_project(tmp_path)
    servers = run(claude, env, "mcp", "list", cwd=project)
    assert "plugin:memls:memls" in servers.stdout
    assert "Connected" in servers.stdout, servers.stdout + servers.stderr


def test_mcp_add_then_list_shows_memls_connected(
    claude: Path, env: dict[str, str], tmp_path: Path
) -> None:
    project = make_project(tmp_path)
    memls = str(VENV_BIN / "memls")
    added = run(claude, env, "mcp", "add", "memls", "-s", "user", "--", memls, "mcp", cwd=project)
    assert added.returncode == 0, added.stdout + added.stderr
    listed = run(claude, env, "mcp", "list", cwd=project)
    line = next(ln for ln in listed.stdout.splitlines() if ln.startswith("memls:"))
    assert f"{memls} mcp" in line
    assert "Connected" in line


# --- the plugin's hooks and launcher, run as Claude Code runs them ---------------------------------


def _shell_env(tmp_path: Path, python: str | None) -> dict[str, str]:
    """PATH without memls, python3 a shim without it; MEMLS_PYTHON as given."""
    shims = tmp_path / "shims"
    shims.mkdir(exist_ok=True)
    fake = shims / "python3"
    fake.write_text("#!/bin/sh\nexit 1\n")
    fake.chmod(0o755)
    out = {
        "PATH": f"{shims}{os.pathsep}/usr/bin{os.pathsep}/bin",
        "HOME": str(tmp_path / "home"),
        "CLAUDE_PLUGIN_ROOT": str(PLUGIN),
        "MEMLS_HOOK_BACKFILL": "off",
    }
    if python:
        out["MEMLS_PYTHON"] = python
    return out


def test_every_plugin_hook_runs_through_the_launcher(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    hooks = json.loads((PLUGIN / "hooks" / "hooks.json").read_text(encoding="utf-8"))["hooks"]
    assert set(hooks) == {"SessionStart", "PreCompact", "PostCompact", "SessionEnd"}
    transcript = tmp_path / "s.jsonl"
    transcript.write_text("", encoding="utf-8")
    extra = {
        "SessionStart": {"source": "startup"},
        "PreCompact": {"trigger": "auto", "custom_instructions": ""},
        "PostCompact": {"trigger": "auto", "compact_summary": "Kept."},
        "SessionEnd": {"reason": "other"},
    }
    for event, groups in hooks.items():
        command = groups[0]["hooks"][0]["command"]
        data = payload(event, project, transcript, **extra[event])
        proc = subprocess.run(
            ["sh", "-c", command],
            input=json.dumps(data),
            cwd=project,
            env=_shell_env(tmp_path, sys.executable),
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        assert proc.returncode == 0, (event, proc.stderr)
        assert proc.stderr == "", (event, proc.stderr)
        if event == "SessionStart":
            out = json.loads(proc.stdout)
            assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
        else:
            assert proc.stdout == ""
    assert "Kept." in (project / "LOG.md").read_text(encoding="utf-8")


def test_without_memls_the_launcher_says_how_to_install_and_exits_zero(tmp_path: Path) -> None:
    proc = subprocess.run(
        [str(LAUNCHER), "hook", "session-start"],
        input="{}",
        env=_shell_env(tmp_path, None),
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 0
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "uv tool install 'memls[mcp]'" in lines[0]


def test_the_plugin_mcp_config_starts_memls_mcp() -> None:
    config = json.loads((PLUGIN / ".mcp.json").read_text(encoding="utf-8"))
    server = config["mcpServers"]["memls"]
    assert server["command"] == "${CLAUDE_PLUGIN_ROOT}/bin/memls-launch"
    assert server["args"] == ["mcp"]


def test_the_skill_is_a_plain_agent_skill() -> None:
    """Name = folder, a one-line quoted description (strict YAML readers, e.g. Pi), and the
    CLI command for each MCP tool so agents without the MCP server can follow it."""
    skill = PLUGIN / "skills" / "memls" / "SKILL.md"
    text = skill.read_text(encoding="utf-8")
    head, _, body = text.removeprefix("---\n").partition("\n---\n")
    fields = dict(line.split(": ", 1) for line in head.splitlines())
    assert fields["name"] == skill.parent.name == "memls"
    description = json.loads(fields["description"])  # a double-quoted scalar
    assert 100 < len(description) <= 1024
    for tool, command in [
        ("checkpoint_resume", "memls checkpoint resume"),
        ("checkpoint_save", "memls checkpoint save"),
        ("recall_search", "memls recall search"),
        ("log_append", "memls log append"),
        ("handoff_refresh", "memls handoff refresh"),
        ("memory_check", "memls check"),
    ]:
        assert tool in body
        assert command in body
