"""`memls hook EVENT` — Claude Code's lifecycle hooks (and Codex's SessionStart).

The hook JSON arrives on stdin (``session_id``, ``transcript_path``, ``cwd``,
``hook_event_name``, and ``source`` / ``trigger`` / ``reason`` / ``compact_summary`` by
event). The memory root is found from ``cwd`` as everywhere else. A hook never blocks or
breaks the session: whatever goes wrong is one line on stderr and exit status 0.

- ``pre-compact``, ``session-end``: archive the transcript's new lines into
  ``<root>/transcripts/``, refresh the handoff, and leave the health summary and the
  embedding to a detached worker; pre-compact also indexes a small new tail for text search
  at once (the session goes on), session-end leaves that to the worker too (Claude Code
  gives SessionEnd hooks little time). Nothing is printed on stdout (PreCompact's stdout is
  not context for the agent).
- ``session-start``: print ``hookSpecificOutput.additionalContext`` — the branch's
  checkpoint, the handoff's Next Steps after ``compact``/``clear``, memory health, the
  other checkpoints — within a budget.
- ``post-compact``: keep ``compact_summary`` as a LOG entry, and in the handoff's Current
  State when the handoff is older than the session.

What a hook writes on its own is private: the archive (0600, its folder 0700, kept out of
git by ``transcripts/.gitignore``), ``.memls/`` (0700) and everything in it (0600), and a
LOG.md or handoff it creates (0600; an existing one keeps its mode). A symlink at any of
those paths, or a ``.memls`` that is a link, not a folder or not the user's, is refused
(``UnsafeStateError``): one line on stderr, exit 0, nothing written there.
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

EVENTS = ("session-start", "pre-compact", "post-compact", "session-end")
BUDGET_ENV = "MEMLS_CONTEXT_BUDGET"
LOCK_TIMEOUT_ENV = "MEMLS_HOOK_LOCK_TIMEOUT"
DEFAULT_LOCK_TIMEOUT = 2.0
"""Seconds a hook waits for the root lock another memls process holds, then gives up."""


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
    """The memory root for the session's ``cwd``; also makes ``cwd`` the working directory
    so the branch and ``git status`` come from the project, as for the CLI."""
    from memls.core.workspace import discover_root

    cwd = Path(_text(payload, "cwd") or os.getcwd()).expanduser()
    if cwd.is_dir():
        os.chdir(cwd)
    root = discover_root(cwd, explicit)
    if root is None or not root.is_dir():
        raise HookError(f"no memory root for {cwd}; nothing to do")
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
    pre-compact    archive the transcript's new lines, index them, refresh the handoff
    session-end    the same as pre-compact, when the session ends
    post-compact   keep the compaction summary in LOG.md (and a stale handoff)

    Always exits 0: a problem is one line on stderr, and the session goes on.
    """
    from memls.core.fsutil import LockTimeoutError, lock_wait, private_new_files

    try:
        payload = _payload(sys.stdin)
        base = _root(payload, root)
        # a LOG.md or handoff the hook creates is 0600; the root lock is waited for briefly
        with private_new_files(), lock_wait(lock_timeout()):
            _refuse_special_files(base)
            if event == "session-start":
                _session_start(base, payload, budget)
            elif event == "post-compact":
                _post_compact(base, payload)
            else:
                _archive(base, payload, index_now=event == "pre-compact")
    except (HookError, LockTimeoutError) as exc:
        _say(event, str(exc))
    except Exception as exc:  # a hook never breaks the session
        _say(event, f"{type(exc).__name__}: {exc}")
    sys.exit(0)


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
    from memls.core.agent.context import DEFAULT_BUDGET_TOKENS, session_context
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
    text = session_context(root, source, git=git_for(root), budget_tokens=tokens, health_line=line)
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


def _archive(root: Path, payload: dict[str, Any], *, index_now: bool) -> None:
    """Archive, then the handoff, then text index / health / embedding (see ``after_archive``).

    A step that finds the root locked by another process past the hook's wait stops the
    hook there: the steps after it would wait for the same lock."""
    from memls.cli.opsutil import git_for
    from memls.core.agent.archive import archive_transcript
    from memls.core.agent.indexing import after_archive
    from memls.core.fsutil import LockTimeoutError
    from memls.core.ops.handoff import write_handoff

    problems: list[str] = []
    appended = 0
    transcript = _text(payload, "transcript_path")
    if transcript is None:
        problems.append("the hook JSON has no transcript_path; nothing archived")
    else:
        try:
            appended = archive_transcript(root, Path(transcript)).appended_bytes
        except LockTimeoutError as exc:
            raise HookError(f"{exc}; nothing archived") from exc
        except Exception as exc:
            problems.append(str(exc))
    steps: list[Callable[[], object]] = [
        lambda: write_handoff(root, refresh=True, git=git_for(root)),
        lambda: after_archive(root, appended, index_now=index_now),
    ]
    for step in steps:
        try:
            step()
        except LockTimeoutError as exc:
            problems.append(str(exc))
            break
        except Exception as exc:
            problems.append(f"{type(exc).__name__}: {exc}")
    if problems:
        raise HookError("; ".join(problems))


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
    # The LOG entry changed the memory files: refresh the health summary now, so the
    # SessionStart that follows a compaction finds it current even on a large root.
    compute_health(root)
