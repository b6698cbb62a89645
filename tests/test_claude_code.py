"""The Claude Code plugin and `memls mcp` through the real Claude Code CLI.

The CLI (npm ``@anthropic-ai/claude-code``) lives in ``build/claude`` (``make install-dev``
puts it there; this module installs it when npm is available and it is missing). It runs
with HOME and CLAUDE_CONFIG_DIR in a temporary folder and needs no login for these commands.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.agent_fixtures import (
    BRANCH,
    FakeAnthropic,
    git,
    is_compaction,
    make_project,
    memls_json,
    message_text,
    payload,
)

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
    assert not (PLUGIN / "commands").exists()  # skills/, not the legacy commands/
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
            assert proc.stdout == ""  # no checkpoint: PreCompact has nothing to carry
    assert "— Compaction summary" in (project / "LOG.md").read_text(encoding="utf-8")
    (kept,) = (project / "transcripts").glob("*.compact-*.md")
    assert "Kept." in kept.read_text(encoding="utf-8")


def _installed_plugin(tmp_path: Path) -> Path:
    """The plugin where Claude Code installs it: a copy, outside any clone."""
    copy = tmp_path / "home" / ".claude" / "plugins" / "cache" / "memls" / "memls" / "0.1.0"
    shutil.copytree(PLUGIN, copy)
    return copy


def _launch(
    plugin: Path, env: dict[str, str], *args: str, stdin: str = "{}"
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(plugin / "bin" / "memls-launch"), *args],
        input=stdin,
        env={**env, "CLAUDE_PLUGIN_ROOT": str(plugin)},
        cwd=plugin,  # not a folder python3 could import memls from
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def test_without_memls_the_launcher_says_what_is_missing_and_exits_zero(tmp_path: Path) -> None:
    plugin = _installed_plugin(tmp_path)
    proc = _launch(plugin, _shell_env(tmp_path, None), "hook", "session-start")
    assert proc.returncode == 0
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    line = lines[0]
    assert "not on PATH" in line
    assert "~/.local/bin" in line
    assert "python3 has no memls module" in line
    assert "uv tool install '<path-to-clone>[mcp]'" in line
    assert "'memls[mcp]'" not in line  # memls is not on a package index
    bad = _launch(plugin, _shell_env(tmp_path, "/nowhere/python"), "hook", "session-start")
    assert "MEMLS_PYTHON=/nowhere/python cannot import memls" in bad.stderr


def test_the_launcher_names_the_clone_it_was_installed_from(tmp_path: Path) -> None:
    plugin = _installed_plugin(tmp_path)
    clone = tmp_path / "src" / "memls-clone"
    clone.mkdir(parents=True)
    known = plugin.parents[3] / "known_marketplaces.json"
    source = {"source": "directory", "path": str(clone)}
    record = {"memls": {"source": source, "installLocation": str(clone)}}
    known.write_text(json.dumps(record, indent=2), encoding="utf-8")
    proc = _launch(plugin, _shell_env(tmp_path, None), "hook", "session-end")
    assert f"uv tool install '{clone}[mcp]'" in proc.stderr
    assert f"{clone}/.venv" in proc.stderr
    # a clone with its own .venv: memls is run from there
    (clone / ".venv" / "bin").mkdir(parents=True)
    (clone / ".venv" / "bin" / "memls").symlink_to(VENV_BIN / "memls")
    found = _launch(plugin, _shell_env(tmp_path, None), "--version")
    assert (found.returncode, found.stderr) == (0, "")
    assert found.stdout.startswith("memls, version")


@pytest.mark.parametrize(
    "place",
    [
        ".local/bin/memls",  # uv tool install, pipx install, pip install --user
        ".local/share/uv/tools/memls/bin/memls",  # uv's tool environment
        ".local/share/pipx/venvs/memls/bin/memls",  # pipx's
        ".local/pipx/venvs/memls/bin/memls",  # older pipx
    ],
)
def test_the_launcher_finds_memls_where_installers_put_it(tmp_path: Path, place: str) -> None:
    plugin = _installed_plugin(tmp_path)
    target = tmp_path / "home" / place
    target.parent.mkdir(parents=True, exist_ok=True)
    target.symlink_to(VENV_BIN / "memls")
    proc = _launch(plugin, _shell_env(tmp_path, None), "--version")  # PATH has no memls
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout.startswith("memls, version")


def _system_python_env(tmp_path: Path) -> dict[str, str]:
    """PATH with the system's python3 (without memls) and no memls."""
    path = f"/usr/bin{os.pathsep}/bin"
    python = shutil.which("python3", path=path)
    if python is None or shutil.which("memls", path=path) is not None:
        reason = "needs a system python3 and no memls in /usr/bin:/bin"
        print(f"SKIP: {reason}")
        pytest.skip(reason)
    probe = subprocess.run(
        [python, "-c", "import memls"], cwd=tmp_path, capture_output=True, check=False
    )
    if probe.returncode == 0:
        print("SKIP: the system python3 has memls")
        pytest.skip("the system python3 has memls")
    return {"PATH": path, "HOME": str(tmp_path / "home")}


def test_without_memls_the_mcp_server_fails_with_the_reason(
    claude: Path, env: dict[str, str], tmp_path: Path
) -> None:
    """The reason is the server's own startup error: Claude Code records it as such."""
    plugin = _installed_plugin(tmp_path)
    bare = _system_python_env(tmp_path)
    request = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}
    proc = _launch(plugin, bare, "mcp", stdin=json.dumps(request) + "\n")
    assert proc.returncode == 1
    answer = json.loads(proc.stdout)
    assert answer["id"] == 0
    message = answer["error"]["message"]
    assert message.startswith("memls plugin: memls is not installed")
    assert "uv tool install '<path-to-clone>[mcp]'" in message
    assert proc.stderr.strip() == message  # and the same line on stderr
    # through Claude Code: the connection fails with that message as the server's error
    project = make_project(tmp_path)
    cc_env = {**env, "PATH": bare["PATH"]}
    launcher = str(plugin / "bin" / "memls-launch")
    added = run(
        claude, cc_env, "mcp", "add", "memls", "-s", "user", "--", launcher, "mcp", cwd=project
    )
    assert added.returncode == 0, added.stderr
    listed = run(claude, cc_env, "mcp", "list", cwd=project)
    assert "Failed to connect" in listed.stdout
    logs = (Path(env["HOME"]) / ".cache").rglob("*.jsonl")
    text = "".join(p.read_text(encoding="utf-8") for p in logs if "mcp-logs-memls" in str(p))
    assert "Connection failed: MCP error -32603: memls plugin: memls is not installed" in text


# --- a whole session through the real CLI, against a fake model on 127.0.0.1 ----------------------

TRACE_HOOK = (
    'python3 -c "import json, os, sys; d = json.load(sys.stdin); '
    "open(os.environ['MEMLS_TEST_TRACE'], 'a').write(json.dumps(d) + chr(10))\""
)
"""A user hook beside the plugin's that writes each event's payload down, in order."""


def _trace_every_event(env: dict[str, str], trace: Path) -> None:
    settings = Path(env["CLAUDE_CONFIG_DIR"]) / "settings.json"
    data = json.loads(settings.read_text(encoding="utf-8")) if settings.exists() else {}
    hook = [{"hooks": [{"type": "command", "command": TRACE_HOOK}]}]
    events = ("SessionStart", "PreCompact", "PostCompact", "SessionEnd")
    data["hooks"] = dict.fromkeys(events, hook)
    settings.write_text(json.dumps(data, indent=2), encoding="utf-8")
    env["MEMLS_TEST_TRACE"] = str(trace)


def _session(
    claude: Path, env: dict[str, str], cwd: Path, *prompts: str
) -> subprocess.CompletedProcess[str]:
    """One ``claude -p`` session fed ``prompts`` in turn (slash commands included)."""
    lines = [
        json.dumps({"type": "user", "message": {"role": "user", "content": p}}) for p in prompts
    ]
    return subprocess.run(
        [str(claude), "-p", "--input-format", "stream-json", "--output-format", "stream-json",
         "--verbose"],
        input="\n".join(lines) + "\n",
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )  # fmt: skip


def _start_contexts(body: dict[str, Any]) -> list[str]:
    """The SessionStart hook contexts in a request body, as Claude Code sends them."""
    marker = "SessionStart hook additional context: "
    text = message_text(body)
    return [part.split("\n\nAvailable agent types", 1)[0] for part in text.split(marker)[1:]]


def _memls_project(tmp_path: Path) -> Path:
    """A repository named with `_` and `.` that is a memory root: a checkpoint for the branch
    (a next action, a failed approach, an open bundle item) and a handoff, all committed."""
    project = tmp_path / "my_proj.v2"
    project.mkdir()
    git(project, "init", "-q", "-b", BRANCH)
    (project / "memls.toml").write_text('recall_model = "memls-hash"\n', encoding="utf-8")
    (project / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")
    (project / "LOG.md").write_text("# Log\n", encoding="utf-8")
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("print('hi')\n", encoding="utf-8")
    commit = ["-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm"]
    git(project, "add", "-A")
    git(project, *commit, "project")
    saved = memls_json(
        project, "checkpoint", "save", "--json", "--next", "Wire argon2id into signup",
        "--failed", "bcrypt: 72-byte limit",
    )  # fmt: skip
    assert saved["changed"], saved
    checkpoint = project / "checkpoint-feature-login.md"
    checkpoint.write_text(
        checkpoint.read_text(encoding="utf-8")
        + "\n## Checkpoint Bundle\n\n- [ ] index: `MEMORY.md` pointer for auth\n",
        encoding="utf-8",
    )
    assert memls_json(project, "handoff", "new", "--json")["changed"]
    handoff = project / ".handoff.md"
    handoff.write_text(
        handoff.read_text(encoding="utf-8") + "- Ask Dana which pepper staging uses\n",
        encoding="utf-8",
    )
    git(project, "add", "-A")
    git(project, *commit, "memory")
    return project


def test_a_session_with_a_compaction_through_the_real_cli(
    claude: Path, env: dict[str, str], tmp_path: Path
) -> None:
    project = _memls_project(tmp_path)
    assert run(claude, env, "plugin", "marketplace", "add", str(PROJECT)).returncode == 0
    assert run(claude, env, "plugin", "install", "memls@memls").returncode == 0
    trace = tmp_path / "trace.jsonl"
    _trace_every_event(env, trace)
    with FakeAnthropic() as api:
        env.update(
            ANTHROPIC_BASE_URL=api.url,
            ANTHROPIC_API_KEY=f"test-{secrets.token_hex(8)}",  # the fake takes any key
            # SessionEnd gets 1.5 s; this machine is shared, so give the hooks room
            CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS="30000",
        )
        proc = _session(
            claude, env, project / "src",  # from a subfolder of the project
            "How do we hash passwords?", "And the session tokens?", "/compact",
            "Carry on.", "/memls:resume", "/memls:checkpoint login-work",
        )  # fmt: skip
        bodies = api.messages()
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Hook cancelled" not in proc.stdout + proc.stderr
    assert "memls hook" not in proc.stdout + proc.stderr  # no hook had a problem to report

    # the real order of the hooks
    events = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    order = [
        (e["hook_event_name"], e.get("source") or e.get("trigger") or e.get("reason"))
        for e in events
    ]
    assert order == [
        ("SessionStart", "startup"),
        ("PreCompact", "manual"),
        ("SessionStart", "compact"),
        ("PostCompact", "manual"),
        ("SessionEnd", "other"),
    ]

    # the startup context reached the model once, without template prompts
    first = _start_contexts(bodies[0])
    assert len(first) == 1
    assert "Next Action: Wire argon2id into signup" in first[0]
    assert first[0].count("Next Action:") == 1
    assert "(author:" not in first[0]
    assert f"(memls memory root: {project.resolve()})" in first[0]

    # PreCompact's carry reached the summariser as compaction instructions
    (compaction,) = [b for b in bodies if is_compaction(b)]
    asked = message_text({"messages": compaction["messages"][-1:]})
    assert "Keep the following in the summary word for word" in asked
    assert "Next Action: Wire argon2id into signup" in asked
    assert "⚠ Previously failed: bcrypt: 72-byte limit" in asked
    assert "- index: `MEMORY.md` pointer for auth" in asked
    assert "Memory health" not in asked  # the carry and nothing else

    # after the compaction: what PreCompact prepared, once, no repeats, no placeholders
    after = _start_contexts(bodies[bodies.index(compaction) + 1])
    assert len(after) == 1, after
    context = after[0]
    assert context.count("Next Action: Wire argon2id into signup") == 1
    assert context.count("72-byte limit") == 1
    assert "- Ask Dana which pepper staging uses" in context  # what the handoff adds
    assert "(author:" not in context
    assert "(nothing to report)" not in context
    long_lines = [line for line in context.splitlines() if len(line) > 20]
    assert len(long_lines) == len(set(long_lines)), context

    # the plugin's skills, as typed: no argument renders nothing empty, one is passed on
    resume = message_text(bodies[-2])
    assert "Resume work with the memls `checkpoint_resume` tool" in resume
    assert "``" not in resume.split("Resume work with", 1)[1]
    assert "ARGUMENTS:" not in resume.split("Resume work with", 1)[1]
    checkpoint = message_text(bodies[-1])
    assert "Save a memls checkpoint now" in checkpoint
    assert "ARGUMENTS: login-work" in checkpoint

    # one short LOG entry pointing at the summary, archived once without its tags
    log = (project / "LOG.md").read_text(encoding="utf-8")
    assert log.count("— Compaction summary") == 1
    assert "platypus" not in log
    (kept,) = (project / "transcripts").glob("*.compact-*.md")
    assert f"`transcripts/{kept.name}`" in log
    summary = kept.read_text(encoding="utf-8")
    assert "Finish the platypus migration." in summary
    for tag in ("<analysis>", "Scratch notes", "<summary>", "</summary>"):
        assert tag not in summary

    # git shows nothing of memls's own: no archive, no state, no new file
    status = git(project, "status", "--porcelain", "--untracked-files=all").splitlines()
    assert not [line for line in status if line.startswith("??")], status
    assert {line.split()[-1] for line in status} <= {"LOG.md", ".handoff.md"}, status
    # and a checkpoint saved now lists none of memls's files as the session's work
    again = memls_json(project, "checkpoint", "save", "--json", "--next", "Ship it")
    text = (project / "checkpoint-feature-login.md").read_text(encoding="utf-8")
    modified = text[text.index("## Modified Files") :].split("\n\n", 1)[0]
    assert modified == "## Modified Files\n- None", modified
    assert "files:" not in again["next_step"]


def test_claude_codes_memory_folder_is_found_for_a_path_with_underscores_and_dots(
    claude: Path, env: dict[str, str], tmp_path: Path
) -> None:
    """A project with no memory files of its own: the root is Claude Code's memory folder,
    named as Claude Code names it — also for a path over 200 characters (cut and hashed)."""
    from memls.core.agent.claude_memory import project_slug

    assert run(claude, env, "plugin", "marketplace", "add", str(PROJECT)).returncode == 0
    assert run(claude, env, "plugin", "install", "memls@memls").returncode == 0
    trace = tmp_path / "trace.jsonl"
    _trace_every_event(env, trace)
    short = tmp_path / "my_app.v2"
    deep = tmp_path.joinpath(*["a_long_folder.name"] * 12, "my_app.v2")
    assert len(str(deep.resolve())) > 200
    for project in (short, deep):
        project.mkdir(parents=True)
        git(project, "init", "-q", "-b", "main")
        (project / "src").mkdir()
        slug = project_slug(str(project.resolve()))
        memory = Path(env["CLAUDE_CONFIG_DIR"]) / "projects" / slug / "memory"
        memory.mkdir(parents=True)
        (memory / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")
        with FakeAnthropic() as api:
            env.update(ANTHROPIC_BASE_URL=api.url, ANTHROPIC_API_KEY=f"test-{secrets.token_hex(8)}")
            proc = _session(claude, env, project / "src", "Hello.")
            bodies = api.messages()
        assert proc.returncode == 0, proc.stderr[-3000:]
        (context,) = _start_contexts(bodies[0])
        assert context.endswith(f"(memls memory root: {memory.resolve()})"), context
        # the session file Claude Code wrote sits in the folder named by the same rule
        start = json.loads(trace.read_text(encoding="utf-8").splitlines()[-2])
        assert start["hook_event_name"] == "SessionStart"
        assert Path(start["transcript_path"]).parent.name == project_slug(
            str((project / "src").resolve())
        )


@pytest.mark.parametrize("name", ["checkpoint", "resume", "recall"])
def test_the_user_run_skills_render_cleanly_without_an_argument(name: str) -> None:
    """Typed as /memls:NAME: name = folder, user-run only, and no `$ARGUMENTS` placeholder
    (Claude Code appends ``ARGUMENTS: …`` when one is given, so nothing renders empty)."""
    skill = PLUGIN / "skills" / name / "SKILL.md"
    head, _, body = skill.read_text(encoding="utf-8").removeprefix("---\n").partition("\n---\n")
    fields = dict(line.split(": ", 1) for line in head.splitlines())
    assert fields["name"] == name
    assert fields["disable-model-invocation"] == "true"
    assert f"/memls:{name}" in json.loads(fields["description"])
    assert "$ARGUMENTS" not in body
    assert "``" not in body
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    assert f"`/memls:{name}" in readme  # documented as the user types it
    assert "`/checkpoint`, `/resume` and `/recall`" not in readme  # the names that clashed
