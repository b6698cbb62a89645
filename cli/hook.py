"""`memls hook EVENT` — Claude Code's lifecycle hooks (and Codex's SessionStart).

The hook JSON arrives on stdin (``session_id``, ``transcript_path``, ``cwd``,
``hook_event_name``, and ``source`` / ``trigger`` / ``reason`` / ``compact_summary`` by
event). The memory root is a memory root at or above ``cwd`` (up to the repository), else
Claude Code's own memory folder for the session, found as Claude Code finds it
(:mod:`memls.core.agent.claude_memory`: ``autoMemoryDirectory``, then
``<config>/projects/<slug of the repository>/memory`` with the configuration folder the
payload's ``transcript_path`` lies in, then ``$CLAUDE_CONFIG_DIR`` / ``~/.claude``). A hook
never blocks or breaks the session: whatever goes wrong is one line on stderr and exit 0.

A compaction runs PreCompact → SessionStart(``compact``) → PostCompact:

- ``pre-compact``: archive the transcript's new lines into ``<root>/transcripts/``, refresh
  the handoff (when there is one), index a small new tail for text search at once and
  leave the health summary and the embedding to a detached worker; then print the
  *compaction instructions* — the branch checkpoint's Next Action, failed approaches and
  open bundle items, which Claude Code hands to the summariser — and keep the same carry
  for the SessionStart that follows. Nothing else is ever printed on stdout.
- ``session-start``: print ``hookSpecificOutput.additionalContext`` — the carry (after
  ``compact``: what PreCompact kept), the handoff's Next Steps after ``compact``/``clear``
  without what the checkpoint already said, memory health, the other checkpoints — within
  a budget.
- ``post-compact``: archive the summary once (``transcripts/<session>.compact-<digest>.md``,
  ``<analysis>`` dropped, tags off, redacted) with a short LOG entry pointing at it, then
  archive the transcript's new lines (Claude Code writes the summary there too).
- ``session-end``: archive as ``pre-compact`` does, within SessionEnd's budget
  (``$CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS``, else 1.5 s; a plugin's declared timeout
  does not raise it): indexing goes to the worker, and ``MEMLS_HOOK_BACKFILL=inline``/``off``
  stop at the budget and leave the rest to the worker or the next hook.

What a hook writes on its own is private: the archive and the kept summaries (0600, their
folder 0700, kept out of git by ``transcripts/.gitignore``), ``.memls/`` (0700) and
everything in it (0600), and a LOG.md it creates (0600; an existing one keeps its mode). A
symlink at any of those paths, or a ``.memls`` that is a link, not a folder or not the
user's, is refused (``UnsafeStateError``): one line on stderr, exit 0, nothing written there.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

EVENTS = ("session-start", "pre-compact", "post-compact", "session-end")
BUDGET_ENV = "MEMLS_CONTEXT_BUDGET"
LOCK_TIMEOUT_ENV = "MEMLS_HOOK_LOCK_TIMEOUT"
DEFAULT_LOCK_TIMEOUT = 2.0
"""Seconds a hook waits for the root lock another memls process holds, then gives up."""
SESSION_END_ENV = "CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS"
SESSION_END_BUDGET = 1.5
"""Seconds Claude Code gives all SessionEnd hooks together unless ``SESSION_END_ENV`` says."""
SESSION_END_MARGIN = 0.5
"""Seconds kept back from that budget for exiting."""


class HookError(Exception):
    """Something the hook could not do; its message is the one stderr line."""


def _payload(stream: Any) -> dict[str, Any]:
    if stream.isatty():
        return {}
    raw = stream.read()
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise HookError(f"stdin is not hook JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise HookError("stdin is not hook JSON (expected an object)")
    return data


def _text(payload: dict[str, Any], key: str) -> str | None:
    value = payload.get(key)
    return value if isinstance(value, str) and value else None


def _root(payload: dict[str, Any], explicit: Path | None) -> Path:
    """The memory root for the session; also makes ``cwd`` the working directory so the
    branch and ``git status`` come from the project, as for the CLI.

    ``--root``, else a memory root at or above ``cwd`` (configured ``roots`` first, up to
    the repository), else Claude Code's memory folder for the session."""
    from memls.core.agent.claude_memory import memory_folder_candidates
    from memls.core.roots import enclosing_root

    cwd = Path(_text(payload, "cwd") or os.getcwd()).expanduser()
    if cwd.is_dir():
        os.chdir(cwd)
    if explicit is not None:
        root: Path | None = explicit.resolve()
    else:
        root = enclosing_root(cwd)
    if root is None:
        transcript = _text(payload, "transcript_path")
        places = memory_folder_candidates(cwd, Path(transcript) if transcript else None)
        root = next((p for p in places if p.is_dir()), None)
        if root is None:
            where = places[0] if places else "~/.claude/projects"
            raise HookError(
                f"no memory root for {cwd}: no MEMORY.md, LOG.md or checkpoint at or above it "
                f"and no Claude Code memory folder ({where}); nothing to do"
            )
    if not root.is_dir():
        raise HookError(f"the memory root {root} is not a folder; nothing to do")
    return root


@click.command()
@click.argument("event", type=click.Choice(EVENTS))
@click.option(
    "--root",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Memory root (default: discovered from the hook's cwd).",
)
@click.option(
    "--budget",
    type=click.IntRange(min=50),
    default=None,
    metavar="TOKENS",
    help=f"session-start: context budget in tokens (default ${BUDGET_ENV} or 2000; ~4 chars each).",
)
def hook(event: str, root: Path | None, budget: int | None) -> None:
    """Run memls at a Claude Code lifecycle event; the hook JSON is read from stdin.

    \b
    session-start  print the branch's checkpoint, the handoff's Next Steps (after
                   compact/clear) and memory health as additionalContext
    pre-compact    archive the transcript's new lines, index them, refresh the handoff;
                   print what the summary must keep (Next Action, failed approaches,
                   open bundle items) for Claude Code's summariser
    post-compact   keep the compaction summary once in transcripts/, a LOG.md entry
                   pointing at it
    session-end    archive as pre-compact does, within SessionEnd's budget

    Always exits 0: a problem is one line on stderr, and the session goes on.
    """
    from memls.core.fsutil import LockTimeoutError, lock_wait, private_new_files

    deadline = None
    if event == "session-end":
        deadline = time.monotonic() - process_age() + session_end_budget() - SESSION_END_MARGIN
    try:
        payload = _payload(sys.stdin)
        base = _root(payload, root)
        # a LOG.md the hook creates is 0600; the root lock is waited for briefly
        with private_new_files(), lock_wait(lock_timeout()):
            _refuse_special_files(base)
            if event == "session-start":
                _session_start(base, payload, budget)
            elif event == "post-compact":
                _post_compact(base, payload)
            elif event == "pre-compact":
                _pre_compact(base, payload)
            else:
                _raise(_archive(base, payload, index_now=False, deadline=deadline))
    except (HookError, LockTimeoutError) as exc:
        _say(event, str(exc))
    except Exception as exc:  # a hook never breaks the session
        _say(event, f"{type(exc).__name__}: {exc}")
    indexing = sys.modules.get("memls.core.agent.indexing")
    if indexing is not None and indexing.LEFT_RUNNING.is_set():
        # SessionEnd's budget is up and indexing still runs (a model load, a batch): end
        # now, as Claude Code's cancel would; what was committed stays, the worker goes on
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    sys.exit(0)


def session_end_budget() -> float:
    """SessionEnd's budget in seconds: ``$CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS`` (Claude
    Code's own setting), else 1.5."""
    try:
        value = float(os.environ.get(SESSION_END_ENV, "")) / 1000
    except ValueError:
        return SESSION_END_BUDGET
    return value if value > 0 and not math.isnan(value) else SESSION_END_BUDGET


def process_age() -> float:
    """Seconds since this process started (Claude Code's clock started with it)."""
    try:
        with open("/proc/self/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        with open("/proc/uptime", "rb") as handle:
            uptime = float(handle.read().split()[0])
        ticks = os.sysconf("SC_CLK_TCK")
        return max(0.0, uptime - int(fields[19]) / ticks)
    except (OSError, ValueError, IndexError):
        return 0.3  # about what starting Python and memls takes


def _raise(problems: list[str]) -> None:
    if problems:
        raise HookError("; ".join(problems))


def lock_timeout() -> float:
    """``$MEMLS_HOOK_LOCK_TIMEOUT`` seconds (0 to 60), else :data:`DEFAULT_LOCK_TIMEOUT`."""
    try:
        value = float(os.environ.get(LOCK_TIMEOUT_ENV, ""))
    except ValueError:
        return DEFAULT_LOCK_TIMEOUT
    if math.isnan(value) or value < 0:
        return DEFAULT_LOCK_TIMEOUT
    return min(value, 60.0)


def _say(event: str, message: str) -> None:
    line = " ".join(message.split())
    click.echo(f"memls hook {event}: {line}", err=True)


def _session_start(root: Path, payload: dict[str, Any], budget: int | None) -> None:
    from memls.cli.opsutil import git_for
    from memls.core.agent.context import DEFAULT_BUDGET_TOKENS, session_context, take_carry
    from memls.core.agent.health import quick_health
    from memls.core.fsutil import UnsafeStateError

    tokens = budget or _env_int(BUDGET_ENV) or DEFAULT_BUDGET_TOKENS
    refused: str | None = None
    try:
        health = quick_health(root)
    except UnsafeStateError as exc:  # the context still goes out; the refusal on stderr
        health, refused = None, str(exc)
    line = (
        health.line()
        if health is not None
        else "Memory health: not checked since the memory files changed (`memls check`)."
    )
    source = _text(payload, "source") or "startup"
    carry = take_carry(root, _text(payload, "session_id")) if source == "compact" else None
    text = session_context(
        root, source, git=git_for(root), budget_tokens=tokens, health_line=line, carry=carry
    )
    out = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}
    click.echo(json.dumps(out, ensure_ascii=False))
    if refused is not None:
        raise HookError(refused)


def _env_int(name: str) -> int | None:
    try:
        value = int(os.environ.get(name, ""))
    except ValueError:
        return None
    return value if value >= 50 else None


def _archive(
    root: Path,
    payload: dict[str, Any],
    *,
    index_now: bool,
    handoff: bool = True,
    deadline: float | None = None,
) -> list[str]:
    """Archive, then refresh the handoff (when there is one), then text index / health /
    embedding (see ``after_archive``); the problems met, as stderr's words.

    A step that finds the root locked by another process past the hook's wait stops the
    hook there: the steps after it would wait for the same lock."""
    from memls.cli.opsutil import git_for
    from memls.core.agent.archive import archive_transcript
    from memls.core.agent.indexing import after_archive
    from memls.core.fsutil import LockTimeoutError
    from memls.core.ops.handoff import handoff_path, write_handoff

    problems: list[str] = []
    appended = 0
    transcript = _text(payload, "transcript_path")
    if transcript is None:
        problems.append("the hook JSON has no transcript_path; nothing archived")
    else:
        try:
            appended = archive_transcript(root, Path(transcript)).appended_bytes
        except LockTimeoutError as exc:
            return [f"{exc}; nothing archived"]
        except Exception as exc:
            problems.append(str(exc))
    steps: list[Callable[[], object]] = []
    if handoff and handoff_path(root).is_file():  # a handoff is refreshed, never started
        steps.append(lambda: write_handoff(root, refresh=True, git=git_for(root)))
    steps.append(lambda: after_archive(root, appended, index_now=index_now, deadline=deadline))
    for step in steps:
        try:
            step()
        except LockTimeoutError as exc:
            problems.append(str(exc))
            break
        except Exception as exc:
            problems.append(f"{type(exc).__name__}: {exc}")
    return problems


def _pre_compact(root: Path, payload: dict[str, Any]) -> None:
    """Archive and refresh, then print what the summary must keep (and keep it for the
    SessionStart(compact) that follows). stdout carries the instructions and nothing else."""
    from memls.cli.opsutil import git_for
    from memls.core.agent.context import compaction_instructions, current_carry, save_carry

    problems = _archive(root, payload, index_now=True)
    try:
        carry = current_carry(root, git_for(root))
        save_carry(root, _text(payload, "session_id"), carry)
    except Exception as exc:
        problems.append(f"{type(exc).__name__}: {exc}")
    else:
        text = compaction_instructions(carry)
        if text:
            click.echo(text)
    _raise(problems)


def _refuse_special_files(root: Path) -> None:
    """Refuse a memory file a hook reads or writes that is not a regular file (a FIFO there
    would block the hook's open): the root's top-level Markdown files, the handoff and
    ``transcripts/``'s Markdown files. Links are followed (what they lead to is read)."""
    import stat

    folders = (root, root / "transcripts", root / "memory")
    for folder in folders:
        try:
            with os.scandir(folder) as entries:
                names = [e.name for e in entries if e.name.endswith(".md")]
        except OSError:
            continue
        for name in names:
            path = folder / name
            try:
                mode = os.stat(path).st_mode
            except OSError:
                continue  # dangling link or gone: the step that needs it says so
            if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
                raise HookError(
                    f"refusing to read {path}: it is not a regular file "
                    "(a FIFO or device there would block the hook; remove it)"
                )


def _post_compact(root: Path, payload: dict[str, Any]) -> None:
    from memls.cli.opsutil import git_for
    from memls.core.agent.health import compute_health
    from memls.core.agent.summary import keep_summary

    summary = _text(payload, "compact_summary")
    if summary is None or not summary.strip():
        raise HookError("the hook JSON has no compact_summary; nothing kept")
    transcript = _text(payload, "transcript_path")
    keep_summary(
        root,
        summary,
        session_id=_text(payload, "session_id"),
        trigger=_text(payload, "trigger"),
        transcript=Path(transcript) if transcript else None,
        git=git_for(root),
    )
    # The session file now holds the summary too: archive it, so recall finds it there
    # (the one place it is indexed), and refresh the health summary for the next start.
    problems = _archive(root, payload, index_now=True, handoff=False)
    compute_health(root)
    _raise(problems)
