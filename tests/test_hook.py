"""`memls hook EVENT` fed hook JSON shaped like Claude Code's, through the command line."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from memls.core.agent.health import cached_health
from tests.agent_fixtures import (
    BRANCH,
    diagnostics,
    git,
    make_project,
    memls_json,
    payload,
    run_hook,
    turn,
    write_turns,
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path)


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    """A session file where Claude Code keeps it: outside the memory root."""
    folder = tmp_path / "claude-sessions"
    folder.mkdir()
    path = folder / "0f3c2a.jsonl"
    write_turns(path, [("How do we hash passwords?", "We use argon2id, decided after review.")])
    return path


def _save(project: Path, *args: str) -> None:
    out = memls_json(project, "checkpoint", "save", "--root", str(project), "--json", *args)
    assert out["changed"], out


def _context(proc_stdout: str) -> str:
    data = json.loads(proc_stdout)
    assert data["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    text = data["hookSpecificOutput"]["additionalContext"]
    assert isinstance(text, str)
    return text


# --- pre-compact / session-end -------------------------------------------------------------------


def test_pre_compact_twice_archives_exactly_the_new_lines(project: Path, transcript: Path) -> None:
    data = payload("PreCompact", project, transcript, trigger="auto", custom_instructions="")
    first = run_hook("pre-compact", data, cwd=project)
    assert first.returncode == 0, first.stderr
    assert first.stdout == ""  # PreCompact's stdout is not for the agent
    archive = project / "transcripts" / transcript.name
    assert archive.read_bytes() == transcript.read_bytes()
    before = archive.read_bytes()
    first_inode = archive.stat().st_ino

    write_turns(transcript, [("And the session tokens?", "Opaque tokens in Redis, 24 h.")], start=1)
    new_lines = transcript.read_bytes()[len(before) :]
    second = run_hook("pre-compact", data, cwd=project)
    assert second.returncode == 0, second.stderr
    after = archive.read_bytes()
    assert after == before + new_lines  # the archived bytes stay, the new lines follow
    assert after.count(b"\n") == before.count(b"\n") + 2
    assert archive.stat().st_ino == first_inode  # appended in place, never rewritten

    third = run_hook("pre-compact", data, cwd=project)
    assert third.returncode == 0
    assert archive.read_bytes() == after


def test_a_line_still_being_written_waits_for_its_newline(project: Path, transcript: Path) -> None:
    data = payload("PreCompact", project, transcript, trigger="manual", custom_instructions="")
    complete = transcript.read_bytes()
    half = turn("user", "a half-written line")[:25]
    with transcript.open("a", encoding="utf-8") as handle:
        handle.write(half)
    assert run_hook("pre-compact", data, cwd=project).returncode == 0
    archive = project / "transcripts" / transcript.name
    assert archive.read_bytes() == complete
    with transcript.open("a", encoding="utf-8") as handle:
        handle.write(turn("user", "a half-written line")[25:])
    assert (
        run_hook(
            "session-end", {**data, "hook_event_name": "SessionEnd", "reason": "other"}, cwd=project
        ).returncode
        == 0
    )
    assert archive.read_bytes() == transcript.read_bytes()


def test_a_rewritten_session_file_leaves_the_archive_alone(project: Path, transcript: Path) -> None:
    data = payload("PreCompact", project, transcript, trigger="auto", custom_instructions="")
    assert run_hook("pre-compact", data, cwd=project).returncode == 0
    archive = project / "transcripts" / transcript.name
    kept = archive.read_bytes()
    transcript.write_text(turn("user", "something else entirely"), encoding="utf-8")
    proc = run_hook("pre-compact", data, cwd=project)
    assert proc.returncode == 0
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "rewritten" in proc.stderr
    assert archive.read_bytes() == kept


def test_archived_lines_are_searchable_at_once_and_embedding_is_deferred(
    project: Path, transcript: Path
) -> None:
    write_turns(transcript, [("What about the quokka cache?", "Dropped it: stale reads.")], start=1)
    data = payload("PreCompact", project, transcript, trigger="auto", custom_instructions="")
    assert run_hook("pre-compact", data, cwd=project).returncode == 0
    found = memls_json(project, "recall", "search", "quokka", "--mode", "text", "--json")
    assert [r["path"] for r in found["results"]][:1] == [f"transcripts/{transcript.name}"]
    status = memls_json(project, "recall", "status", "--json")
    assert status["chunks"].get("transcript", 0) >= 2
    assert status["embedded"] == 0  # the hook itself embedded nothing
    # the same root, with the handoff refreshed and the health summary cached
    assert (project / "transcripts" / ".handoff.md").is_file()
    assert (project / ".memls" / "health.json").is_file()


def test_the_detached_backfill_embeds_and_exits(project: Path, transcript: Path) -> None:
    data = payload("SessionEnd", project, transcript, reason="prompt_input_exit")
    started = time.monotonic()
    proc = run_hook("session-end", data, cwd=project, env={"MEMLS_HOOK_BACKFILL": "detached"})
    assert proc.returncode == 0, proc.stderr
    pid = int((project / ".memls" / "backfill.pid").read_text())
    while _alive(pid):
        assert time.monotonic() - started < 120, "the detached backfill did not finish"
        time.sleep(0.1)
    status = memls_json(project, "recall", "status", "--json")
    assert status["embedded"] == status["chunks_total"] > 0
    assert status["model"] == "memls-hash"
    assert (project / ".memls" / "health.json").is_file()  # the worker refreshed it too


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:  # a finished child of an exited parent may linger as a zombie until reaped
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            return handle.read().split(") ")[1][:1] != "Z"
    except OSError:
        return True


# --- session-start --------------------------------------------------------------------------------


def test_session_start_after_compaction_gives_the_branch_next_action_within_budget(
    project: Path, transcript: Path
) -> None:
    _save(
        project,
        "--next",
        "Wire the argon2id hasher into signup",
        "--failed",
        "bcrypt: 72-byte limit",
    )
    _save(project, "other-work", "--next", "Unrelated next step")
    git(
        project, "checkout", "-q", "-b", "scratch"
    )  # the other checkpoint's file names no branch of ours
    git(project, "checkout", "-q", BRANCH)
    handoff = memls_json(project, "handoff", "new", "--json")
    assert handoff["changed"]
    data = payload("SessionStart", project, transcript, source="compact", model="claude-sonnet-4-6")
    proc = run_hook("session-start", data, cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    text = _context(proc.stdout)
    assert len(text) <= 2000 * 4
    lines = text.splitlines()
    assert "Next Action: Wire the argon2id hasher into signup" in lines
    assert "⚠ Previously failed: bcrypt: 72-byte limit" in lines
    assert "## Next Steps (from .handoff.md)" in lines  # after a compaction: the handoff too
    assert any(line.startswith("Memory health: ") for line in lines)
    assert "- other-work (branch `feature/login`" in text
    # most important first: the branch's next action before the handoff and the rest
    assert (
        text.index("Next Action:") < text.index("## Next Steps") < text.index("Other checkpoints")
    )

    small = run_hook("session-start", data, cwd=project, args=("--budget", "60"))
    cut = _context(small.stdout)
    assert len(cut) <= 60 * 4
    assert "Next Action: Wire the argon2id hasher into signup" in cut
    assert "cut to fit the context budget" in cut


def test_session_start_at_startup_warns_when_the_only_checkpoint_is_another_branch(
    project: Path,
) -> None:
    _save(project, "--next", "Finish the login form")
    git(project, "checkout", "-q", "-b", "main-2")
    memls_json(project, "handoff", "new", "--json")
    data = payload("SessionStart", project, None, source="startup")
    text = _context(run_hook("session-start", data, cwd=project).stdout)
    assert "Warning: You're on `main-2` but this checkpoint was saved on `feature/login`" in text
    assert "Next Action: Finish the login form" in text
    assert "## Next Steps" not in text  # a fresh start does not need the handoff's steps


def test_session_start_finds_claude_codes_auto_memory_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = tmp_path / "work" / "app"
    project.mkdir(parents=True)
    git(project, "init", "-q", "-b", "main")
    slug = str(project.resolve()).replace("/", "-")
    memory = home / ".claude" / "projects" / slug / "memory"
    memory.mkdir(parents=True)
    env = {"HOME": str(home)}
    saved = run_hook(
        "session-start",
        payload("SessionStart", project, None, source="startup"),
        cwd=project,
        env=env,
    )
    assert saved.returncode == 0
    assert _context(saved.stdout).endswith(f"(memls memory root: {memory.resolve()})")


# --- post-compact ---------------------------------------------------------------------------------


def test_post_compact_keeps_the_summary_in_log_and_a_stale_handoff(
    project: Path, transcript: Path
) -> None:
    memls_json(project, "handoff", "new", "--json")
    handoff = project / ".handoff.md"
    os.utime(handoff, (time.time() - 3600, time.time() - 3600))  # older than the session
    summary = "# Summary\nMoved hashing to argon2id.\n## Open\n- session tokens"
    data = payload("PostCompact", project, transcript, trigger="auto", compact_summary=summary)
    proc = run_hook("post-compact", data, cwd=project)
    assert proc.returncode == 0
    assert proc.stderr == ""
    assert proc.stdout == ""
    log = (project / "LOG.md").read_text(encoding="utf-8")
    assert "— Compaction summary" in log
    assert "Moved hashing to argon2id." in log
    assert "\n### Open\n" in log  # a heading inside the summary does not split the entry
    text = handoff.read_text(encoding="utf-8")
    state = text[text.index("## Current State") : text.index("## Decisions")]
    assert "> Moved hashing to argon2id." in state

    os.utime(handoff, (time.time() - 3600, time.time() - 3600))
    again = payload(
        "PostCompact", project, transcript, trigger="manual", compact_summary="Second summary."
    )
    assert run_hook("post-compact", again, cwd=project).returncode == 0
    text = handoff.read_text(encoding="utf-8")
    assert text.count("memls:compact-summary —") == 1  # replaced, not piled up
    assert "> Second summary." in text
    assert "argon2id" not in text
    assert (project / "LOG.md").read_text(encoding="utf-8").count("— Compaction summary") == 2
    assert diagnostics(memls_json(project, "check", "--format", "json", "LOG.md")) == []
    assert cached_health(project) is not None  # refreshed for the SessionStart that follows


def test_post_compact_leaves_a_current_handoff_alone(project: Path, transcript: Path) -> None:
    memls_json(project, "handoff", "new", "--json")
    handoff = project / ".handoff.md"
    os.utime(transcript, (time.time() - 3600, time.time() - 3600))
    before = handoff.read_bytes()
    data = payload("PostCompact", project, transcript, trigger="auto", compact_summary="Short one.")
    assert run_hook("post-compact", data, cwd=project).returncode == 0
    assert handoff.read_bytes() == before
    assert "Short one." in (project / "LOG.md").read_text(encoding="utf-8")


# --- a hook never breaks the session --------------------------------------------------------------


@pytest.mark.parametrize("case", ["garbage stdin", "no root", "missing transcript", "no summary"])
def test_bad_input_exits_zero_with_one_line(case: str, tmp_path: Path) -> None:
    project = make_project(tmp_path)
    env = {"HOME": str(tmp_path / "home")}
    if case == "garbage stdin":
        proc = run_hook("session-start", "{not json", cwd=project, env=env)
    elif case == "no root":
        empty = tmp_path / "elsewhere"
        empty.mkdir()
        proc = run_hook(
            "pre-compact",
            payload("PreCompact", empty, tmp_path / "t.jsonl", trigger="auto"),
            cwd=empty,
            env=env,
        )
    elif case == "missing transcript":
        data = payload("PreCompact", project, tmp_path / "gone.jsonl", trigger="auto")
        proc = run_hook("pre-compact", data, cwd=project, env=env)
    else:
        proc = run_hook(
            "post-compact",
            payload("PostCompact", project, None, trigger="auto"),
            cwd=project,
            env=env,
        )
    assert proc.returncode == 0
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("memls hook ")
    assert "Traceback" not in proc.stderr


def test_a_real_claude_code_session_is_archived_in_two_steps(
    shared_dir: Path, project: Path, tmp_path: Path
) -> None:
    """A real session file (../shared), archived as it grows: half, then the rest."""
    real = next((shared_dir / "reference" / "transcripts" / "claude-code").glob("ae4a77f8-*.jsonl"))
    lines = real.read_bytes().splitlines(keepends=True)
    live = tmp_path / real.name
    live.write_bytes(b"".join(lines[: len(lines) // 2]))
    data = payload("PreCompact", project, live, trigger="auto", custom_instructions="")
    assert run_hook("pre-compact", data, cwd=project).returncode == 0
    with live.open("ab") as handle:
        handle.write(b"".join(lines[len(lines) // 2 :]))
    end = payload("SessionEnd", project, live, reason="logout")
    proc = run_hook("session-end", end, cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert (project / "transcripts" / real.name).read_bytes() == real.read_bytes()
    status = memls_json(project, "recall", "status", "--json")
    assert status["chunks"]["transcript"] >= 10


def test_in_claude_codes_memory_folder_a_session_is_found_once_then_from_its_archive(
    tmp_path: Path,
) -> None:
    """The live session file beside the memory folder and its archive are one source."""
    home = tmp_path / "home"
    project = tmp_path / "work" / "app"
    project.mkdir(parents=True)
    git(project, "init", "-q", "-b", "main")
    sessions = home / ".claude" / "projects" / str(project.resolve()).replace("/", "-")
    memory = sessions / "memory"
    memory.mkdir(parents=True)
    (memory / "memls.toml").write_text('recall_model = "memls-hash"\n', encoding="utf-8")
    live = sessions / "5e55.jsonl"
    write_turns(live, [("Where is the wombat config?", "In settings/wombat.toml.")])
    env = {"HOME": str(home)}
    data = payload("PreCompact", project, live, trigger="auto", custom_instructions="")
    assert run_hook("pre-compact", data, cwd=project, env=env).returncode == 0
    assert (memory / "transcripts" / live.name).read_bytes() == live.read_bytes()

    def hits() -> list[str]:
        memls_json(memory, "recall", "backfill", "--json")
        found = memls_json(memory, "recall", "search", "wombat", "--mode", "text", "--json")
        return [r["path"] for r in found["results"]]

    assert hits() == [f"../{live.name}"]
    live.unlink()  # Claude Code's 30-day clean-up
    assert hits() == [f"transcripts/{live.name}"]
