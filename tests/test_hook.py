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
    # the health summary cached; a handoff is refreshed when there is one, never started
    assert not (project / "transcripts" / ".handoff.md").exists()
    assert not (project / ".handoff.md").exists()
    assert (project / ".memls" / "health.json").is_file()


def test_pre_compact_refreshes_an_existing_handoff(project: Path, transcript: Path) -> None:
    memls_json(project, "handoff", "new", "--json")
    handoff = project / ".handoff.md"
    _save(project, "--next", "Ship the signup form")
    before = handoff.read_text(encoding="utf-8")
    assert "Ship the signup form" not in before
    data = payload("PreCompact", project, transcript, trigger="auto", custom_instructions="")
    assert run_hook("pre-compact", data, cwd=project).returncode == 0
    assert "Ship the signup form" in handoff.read_text(encoding="utf-8")


def test_pre_compact_prints_what_the_summary_must_keep_and_nothing_else(
    project: Path, transcript: Path
) -> None:
    _save(project, "--next", "Wire argon2id into signup", "--failed", "bcrypt: 72-byte limit")
    checkpoint = project / "checkpoint-feature-login.md"
    checkpoint.write_text(
        checkpoint.read_text(encoding="utf-8")
        + "\n## Checkpoint Bundle\n\n- [ ] index: `MEMORY.md` pointer for auth\n"
        '- [x] log: LOG.md entry "Chose argon2id"\n',
        encoding="utf-8",
    )
    data = payload("PreCompact", project, transcript, trigger="manual", custom_instructions="")
    proc = run_hook("pre-compact", data, cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    out = proc.stdout
    assert out.startswith("Keep the following in the summary word for word")
    assert "Next Action: Wire argon2id into signup" in out
    assert "⚠ Previously failed: bcrypt: 72-byte limit" in out
    assert "- index: `MEMORY.md` pointer for auth" in out  # the open bundle item
    assert "Chose argon2id" not in out  # a done item is not carried
    assert "(author:" not in out
    assert "Memory health" not in out  # only the carry
    assert "(memls memory root:" not in out
    # SessionStart(compact) of the same session injects exactly that carry, once
    start = run_hook("session-start", {**data, "source": "compact"}, cwd=project)
    text = _context(start.stdout)
    carry = out.split("\n\n", 1)[1].strip()
    assert text.startswith(carry)
    assert text.count("Next Action:") == 1
    assert not (project / ".memls" / "compact-carry.json").exists()  # taken


def test_pre_compact_prints_nothing_without_a_checkpoint(project: Path, transcript: Path) -> None:
    data = payload("PreCompact", project, transcript, trigger="auto", custom_instructions="")
    proc = run_hook("pre-compact", data, cwd=project)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_a_carry_kept_for_another_session_is_not_injected(project: Path, transcript: Path) -> None:
    _save(project, "--next", "First next action")
    data = payload("PreCompact", project, transcript, trigger="auto", custom_instructions="")
    assert run_hook("pre-compact", data, cwd=project).returncode == 0
    _save(project, "--next", "Second next action")
    other = {**data, "session_id": "another", "source": "compact"}
    text = _context(run_hook("session-start", other, cwd=project).stdout)
    assert "Next Action: Second next action" in text  # read afresh, not the other's carry
    assert "First next action" not in text
    assert (project / ".memls" / "compact-carry.json").is_file()  # left for its session
    mine = run_hook("session-start", {**data, "source": "compact"}, cwd=project)
    assert "Next Action: First next action" in _context(mine.stdout)  # what PreCompact kept
    assert not (project / ".memls" / "compact-carry.json").exists()


def test_session_end_stays_within_its_budget_and_hands_the_rest_to_the_worker(
    project: Path, transcript: Path
) -> None:
    """inline embedding at SessionEnd stops at CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS."""
    write_turns(transcript, [(f"question {i} " * 50, f"answer {i} " * 50) for i in range(200)], 1)
    data = payload("SessionEnd", project, transcript, reason="other")
    env = {"MEMLS_HOOK_BACKFILL": "inline", "CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS": "300"}
    proc = run_hook("session-end", data, cwd=project, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert (project / "transcripts" / transcript.name).read_bytes() == transcript.read_bytes()
    pid = int((project / ".memls" / "backfill.pid").read_text())  # the worker finishes it
    started = time.monotonic()
    while _alive(pid):
        assert time.monotonic() - started < 120, "the detached backfill did not finish"
        time.sleep(0.1)
    status = memls_json(project, "recall", "status", "--json")
    assert status["embedded"] == status["chunks_total"] > 0


def test_memls_own_files_are_never_the_sessions_work(project: Path, transcript: Path) -> None:
    """A root that is the repository: LOG.md, the handoff, MEMORY.md, checkpoints, the archive
    and the kept summaries changed by memls are not listed as work; the project's file is."""
    _save(project, "--next", "First step")
    memls_json(project, "handoff", "new", "--json")
    git(project, "add", "-A")
    git(project, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "memory")
    for event, extra in [
        ("pre-compact", {"trigger": "auto", "custom_instructions": ""}),
        ("post-compact", {"trigger": "auto", "compact_summary": "<summary>Kept.</summary>"}),
        ("session-end", {"reason": "other"}),
    ]:
        assert (
            run_hook(event, payload("X", project, transcript, **extra), cwd=project).returncode == 0
        )
    (project / "MEMORY.md").write_text("# Memory\n\n- edited\n", encoding="utf-8")
    (project / "work.py").write_text("x = 1\n", encoding="utf-8")
    changed = git(project, "status", "--porcelain")
    assert "LOG.md" in changed
    assert ".handoff.md" in changed
    saved = memls_json(
        project, "checkpoint", "save", "--root", str(project), "--json", "--next", "Go"
    )
    text = (project / "checkpoint-feature-login.md").read_text(encoding="utf-8")
    modified = text[text.index("## Modified Files") :].split("\n\n", 1)[0]
    assert modified.strip() == "## Modified Files\n- work.py (??)", modified
    assert saved["next_step"].endswith("files: work.py"), saved["next_step"]
    memls_json(project, "handoff", "refresh", "--json")
    handoff = (project / ".handoff.md").read_text(encoding="utf-8")
    state = handoff[handoff.index("## Current State") : handoff.index("## Decisions")]
    assert "`?? work.py`" in state
    for own in ("LOG.md", "MEMORY.md", ".handoff.md", "checkpoint-", "transcripts", ".memls"):
        assert own not in state.split("Uncommitted changes", 1)[-1], own


def test_session_end_budget_comes_from_claude_codes_setting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from memls.cli.hook import SESSION_END_ENV, session_end_budget

    monkeypatch.delenv(SESSION_END_ENV, raising=False)
    assert session_end_budget() == 1.5
    monkeypatch.setenv(SESSION_END_ENV, "10000")
    assert session_end_budget() == 10.0
    monkeypatch.setenv(SESSION_END_ENV, "soon")
    assert session_end_budget() == 1.5


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
    path = project / ".handoff.md"
    text = path.read_text(encoding="utf-8")
    path.write_text(text + "- Ask Dana which pepper the staging hasher uses\n", encoding="utf-8")
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
    assert "- Ask Dana which pepper the staging hasher uses" in lines  # what it adds
    assert text.count("Wire the argon2id hasher") == 1  # and not what it repeats
    assert text.count("72-byte limit") == 1
    assert "(author:" not in text  # no template prompt passed on
    said = [ln for ln in lines if len(ln) > 20]
    assert len(said) == len(set(said))
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


def test_a_fresh_checkpoints_placeholder_is_not_injected(project: Path) -> None:
    git(project, "add", "-A")
    git(project, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "memory")
    proc = memls_json(project, "checkpoint", "save", "--root", str(project), "--json")
    assert proc["changed"]
    text = (project / "checkpoint-feature-login.md").read_text(encoding="utf-8")
    assert "(author: 1-3 lines" in text  # the template's prompt is in the file …
    data = payload("SessionStart", project, None, source="clear")
    context = _context(run_hook("session-start", data, cwd=project).stdout)
    assert "Next Action: Continue feature-login" in context
    assert "(author:" not in context  # … and not in what the agent is told


def _claude_project(tmp_path: Path, name: str) -> tuple[Path, Path, dict[str, str]]:
    """A git project named ``name`` and Claude Code's memory folder for it."""
    from memls.core.agent.claude_memory import project_slug

    home = tmp_path / "home"
    project = tmp_path / "work" / name
    project.mkdir(parents=True)
    git(project, "init", "-q", "-b", "main")
    memory = home / ".claude" / "projects" / project_slug(str(project.resolve())) / "memory"
    memory.mkdir(parents=True)
    return project, memory, {"HOME": str(home)}


def test_session_start_finds_claude_codes_auto_memory_folder(tmp_path: Path) -> None:
    project, memory, env = _claude_project(tmp_path, "my_proj.v2")
    assert memory.parent.name.endswith("-work-my-proj-v2")  # `_` and `.` become `-` too
    (project / "src" / "deep").mkdir(parents=True)
    for cwd in (project, project / "src" / "deep"):  # from any folder of the project
        saved = run_hook(
            "session-start", payload("SessionStart", cwd, None, source="startup"), cwd=cwd, env=env
        )
        assert saved.returncode == 0, saved.stderr
        assert _context(saved.stdout).endswith(f"(memls memory root: {memory.resolve()})")


def test_the_memory_folder_follows_the_transcript_path_and_claude_config_dir(
    tmp_path: Path,
) -> None:
    from memls.core.agent.claude_memory import project_slug

    project, _, env = _claude_project(tmp_path, "app")
    config = tmp_path / "elsewhere" / "claude-config"
    sessions = config / "projects" / project_slug(str(project.resolve()))
    (sessions / "memory").mkdir(parents=True)
    live = sessions / "5e55.jsonl"
    write_turns(live, [("q", "a")])
    data = payload("SessionStart", project, live, source="startup")
    proc = run_hook("session-start", data, cwd=project, env=env)  # the payload names it
    assert _context(proc.stdout).endswith(f"(memls memory root: {(sessions / 'memory').resolve()})")
    no_path = payload("SessionStart", project, None, source="startup")
    proc = run_hook(
        "session-start", no_path, cwd=project, env={**env, "CLAUDE_CONFIG_DIR": str(config)}
    )
    assert _context(proc.stdout).endswith(f"(memls memory root: {(sessions / 'memory').resolve()})")


def test_the_auto_memory_directory_setting_wins(tmp_path: Path) -> None:
    project, _, env = _claude_project(tmp_path, "app")
    chosen = tmp_path / "home" / "notes" / "app-memory"
    chosen.mkdir(parents=True)
    settings = tmp_path / "home" / ".claude" / "settings.json"
    settings.write_text(json.dumps({"autoMemoryDirectory": "~/notes/app-memory"}), encoding="utf-8")
    data = payload("SessionStart", project, None, source="startup")
    proc = run_hook("session-start", data, cwd=project, env=env)
    assert _context(proc.stdout).endswith(f"(memls memory root: {chosen.resolve()})")
    # a checked-in .claude/settings.json is not trusted with it (as Claude Code documents)
    settings.unlink()
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(
        json.dumps({"autoMemoryDirectory": str(chosen)}), encoding="utf-8"
    )
    proc = run_hook("session-start", data, cwd=project, env=env)
    assert str(chosen) not in proc.stdout


def test_without_a_memory_folder_the_hook_says_where_it_looked(tmp_path: Path) -> None:
    from memls.core.agent.claude_memory import project_slug

    project = tmp_path / "my_proj.v2"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    env = {"HOME": str(tmp_path / "home")}
    data = payload("PreCompact", project, None, trigger="auto")
    proc = run_hook("pre-compact", data, cwd=project, env=env)
    assert (proc.returncode, proc.stdout) == (0, "")
    assert proc.stderr.count("\n") == 1
    assert project_slug(str(project.resolve())) in proc.stderr
    assert "nothing to do" in proc.stderr


# --- post-compact ---------------------------------------------------------------------------------


SUMMARY = (
    "<analysis>\nLet me think about what happened: the user asked about hashing.\n</analysis>\n\n"
    "<summary>\n1. Primary Request and Intent:\n   Moved hashing to argon2id.\n"
    "# Open\n- session tokens\n</summary>"
)


def test_post_compact_archives_the_summary_once_and_logs_a_pointer(
    project: Path, transcript: Path
) -> None:
    data = payload("PostCompact", project, transcript, trigger="auto", compact_summary=SUMMARY)
    for _ in range(3):  # the same summary delivered again is one compaction
        proc = run_hook("post-compact", data, cwd=project)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    log = (project / "LOG.md").read_text(encoding="utf-8")
    assert log.count("— Compaction summary") == 1
    assert "argon2id" not in log  # a pointer, not the text
    assert "<analysis>" not in log
    kept = sorted((project / "transcripts").glob("*.compact-*.md"))
    assert len(kept) == 1
    rel = kept[0].relative_to(project).as_posix()
    assert f"`{rel}`" in log
    assert kept[0].name.startswith("sess-1.compact-")
    text = kept[0].read_text(encoding="utf-8")
    assert "Moved hashing to argon2id." in text
    assert "<analysis>" not in text
    assert "Let me think" not in text
    assert "<summary>" not in text
    assert "</summary>" not in text
    assert oct(kept[0].stat().st_mode & 0o777) == "0o600"
    # the archive (and the summary beside it) stays out of git and out of memory files
    assert git(project, "status", "--short", "--", "transcripts") == ""
    other = payload(
        "PostCompact", project, transcript, trigger="manual", compact_summary="Second summary."
    )
    assert run_hook("post-compact", other, cwd=project).returncode == 0
    assert (project / "LOG.md").read_text(encoding="utf-8").count("— Compaction summary") == 2
    assert diagnostics(memls_json(project, "check", "--format", "json", "LOG.md")) == []
    assert cached_health(project) is not None  # refreshed for the session that goes on


def test_recall_finds_a_compaction_summary_once(project: Path, transcript: Path) -> None:
    """Claude Code writes the summary into the session file; memls indexes it only there."""
    record = {
        "type": "user",
        "isCompactSummary": True,
        "uuid": "sum-1",
        "sessionId": "sess-1",
        "timestamp": "2026-11-30T11:00:00.000Z",
        "message": {"role": "user", "content": "Summary: the platypus migration is done."},
    }
    with transcript.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")
    summary = "<summary>Summary: the platypus migration is done.</summary>"
    data = payload("PostCompact", project, transcript, trigger="auto", compact_summary=summary)
    assert run_hook("post-compact", data, cwd=project).returncode == 0
    memls_json(project, "recall", "backfill", "--json")
    found = memls_json(project, "recall", "search", "platypus", "--mode", "text", "--json")
    paths = [r["path"] for r in found["results"]]
    assert paths == [f"transcripts/{transcript.name}"], paths


def test_post_compact_points_a_stale_handoff_at_the_summary(
    project: Path, transcript: Path
) -> None:
    memls_json(project, "handoff", "new", "--json")
    handoff = project / ".handoff.md"
    os.utime(handoff, (time.time() - 3600, time.time() - 3600))  # older than the session
    data = payload("PostCompact", project, transcript, trigger="auto", compact_summary=SUMMARY)
    assert run_hook("post-compact", data, cwd=project).returncode == 0
    text = handoff.read_text(encoding="utf-8")
    state = text[text.index("## Current State") : text.index("## Decisions")]
    assert "- Compaction summary (" in state
    assert "transcripts/sess-1.compact-" in state
    assert "argon2id" not in text  # a pointer: the summary is indexed once
    os.utime(handoff, (time.time() - 3600, time.time() - 3600))
    again = payload("PostCompact", project, transcript, trigger="manual", compact_summary="Two.")
    assert run_hook("post-compact", again, cwd=project).returncode == 0
    text = handoff.read_text(encoding="utf-8")
    assert text.count("memls:compact-summary —") == 1  # replaced, not piled up


def test_post_compact_leaves_a_current_handoff_alone(project: Path, transcript: Path) -> None:
    memls_json(project, "handoff", "new", "--json")
    handoff = project / ".handoff.md"
    os.utime(transcript, (time.time() - 3600, time.time() - 3600))
    before = handoff.read_bytes()
    data = payload("PostCompact", project, transcript, trigger="auto", compact_summary="Short one.")
    assert run_hook("post-compact", data, cwd=project).returncode == 0
    assert handoff.read_bytes() == before
    assert "— Compaction summary" in (project / "LOG.md").read_text(encoding="utf-8")


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
    room = {"CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS": "120000"}  # index all of it at the end
    proc = run_hook("session-end", end, cwd=project, env=room)
    assert proc.returncode == 0, proc.stderr
    assert (project / "transcripts" / real.name).read_bytes() == real.read_bytes()
    status = memls_json(project, "recall", "status", "--json")
    assert status["chunks"]["transcript"] >= 10


def test_in_claude_codes_memory_folder_a_session_is_found_once_then_from_its_archive(
    tmp_path: Path,
) -> None:
    """The live session file beside the memory folder and its archive are one source."""
    from memls.core.agent.claude_memory import project_slug

    home = tmp_path / "home"
    project = tmp_path / "work" / "app"
    project.mkdir(parents=True)
    git(project, "init", "-q", "-b", "main")
    sessions = home / ".claude" / "projects" / project_slug(str(project.resolve()))
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
