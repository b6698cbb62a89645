"""`memls checkpoint save|resume|clear|list` — the named-checkpoints procedure in a shell."""

from __future__ import annotations

import json
from pathlib import Path

import click

from memls.cli.common import resolve_root, root_option
from memls.cli.opsutil import git_for, run_op
from memls.core.formats.checkpoint import saved_stamp
from memls.core.ops.checkpoint import (
    CheckpointInfo,
    clear_checkpoint,
    list_checkpoints,
    resume_checkpoint,
    save_checkpoint,
)


@click.group()
def checkpoint() -> None:
    """Save, resume, list and clear named checkpoints (checkpoint-{name}.md + the MEMORY.md index)."""


@checkpoint.command()
@click.argument("name", required=False)
@root_option
@click.option("--next", "next_action", metavar="TITLE", help="Next Action title (first line).")
@click.option("--summary", help="One-line summary for the index bullet (default: the next action).")
@click.option(
    "--done", multiple=True, metavar="ITEM", help="Accomplished this session (repeatable)."
)
@click.option(
    "--failed", multiple=True, metavar="ITEM", help="Failed approach: what + why (repeatable)."
)
@click.option("--plan", metavar="PATH", help="The plan file driving the work.")
@click.option("--step", metavar="N/M", help="Progress in the plan, e.g. 2/5 (needs --plan).")
@click.option(
    "--expect-sha", metavar="SHA", help="Save only if the checkpoint's sha256 is still SHA."
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def save(
    name: str | None,
    root: Path | None,
    next_action: str | None,
    summary: str | None,
    done: tuple[str, ...],
    failed: tuple[str, ...],
    plan: str | None,
    step: str | None,
    expect_sha: str | None,
    as_json: bool,
) -> None:
    """Write checkpoint-NAME.md and update only ## Active Checkpoints in MEMORY.md.

    NAME defaults to the current git branch (lowercased, / replaced by -). Sections given
    here replace the checkpoint's; the others keep your text. Exit 2 for an unsafe name,
    3 when --expect-sha does not match.
    """
    base = resolve_root(root)
    run_op(
        lambda: save_checkpoint(
            base,
            name,
            next_action=next_action,
            summary=summary,
            done=done,
            failed=failed,
            plan=plan,
            step=step,
            expect_sha=expect_sha,
            git=git_for(base),
        ),
        as_json,
        op="checkpoint.save",
    )


@checkpoint.command()
@click.argument("name", required=False)
@root_option
@click.option("--consume", is_flag=True, help="Delete the checkpoint after presenting it.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def resume(name: str | None, root: Path | None, consume: bool, as_json: bool) -> None:
    """Present a checkpoint: branch warning, previously failed approaches, then the next action.

    Without NAME: the only checkpoint, or the list to pick from. Exit 2 when NAME does not
    exist (the available ones are listed).
    """
    base = resolve_root(root)
    run_op(
        lambda: resume_checkpoint(base, name, consume=consume, git=git_for(base)),
        as_json,
        missing=lambda r: name is not None and r.data.get("status") != "one",
        op="checkpoint.resume",
    )


@checkpoint.command()
@click.argument("name", required=False)
@root_option
@click.option("--all", "all_", is_flag=True, help="Clear every checkpoint.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def clear(name: str | None, root: Path | None, all_: bool, as_json: bool) -> None:
    """Delete checkpoint-NAME.md and its index bullet (the section goes with the last one).

    Exit 2 when there is no checkpoint NAME (the available ones are listed).
    """
    if not all_ and not name:
        raise click.UsageError("give a NAME or --all")
    base = resolve_root(root)
    run_op(
        lambda: clear_checkpoint(base, name, all=all_),
        as_json,
        missing=lambda r: not all_ and not r.data.get("cleared"),
        op="checkpoint.clear",
    )


def checkpoint_row(i: CheckpointInfo) -> dict[str, object]:
    """One checkpoint as `memls checkpoint list --json` (and the MCP checkpoint_list tool) show it."""
    return {
        "name": i.name,
        "path": str(i.path),
        "branch": i.branch,
        "saved": saved_stamp(i.saved) if i.saved else None,
        "age_days": round(i.age_days, 3) if i.age_days is not None else None,
        "stale": i.stale,
        "branch_mismatch": i.branch_mismatch,
        "next_action": i.next_action,
        "summary": i.summary,
    }


@checkpoint.command("list")
@root_option
@click.option("--json", "as_json", is_flag=True, help="Print the checkpoints as JSON.")
def list_(root: Path | None, as_json: bool) -> None:
    """List checkpoints, newest first: name, branch, saved, age, stale, branch mismatch."""
    base = resolve_root(root)
    infos = list_checkpoints(base, git=git_for(base))
    if as_json:
        rows = [checkpoint_row(i) for i in infos]
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    if not infos:
        click.echo("No checkpoints found.")
        return
    for i in infos:
        saved = saved_stamp(i.saved) if i.saved else "unknown"
        age = f"{i.age_days:.1f}d" if i.age_days is not None else "?"
        flags = [f for f, on in (("stale", i.stale), ("branch mismatch", i.branch_mismatch)) if on]
        extra = f"  [{', '.join(flags)}]" if flags else ""
        click.echo(f"{i.name}  ({i.branch or '?'}, saved {saved}, {age} ago){extra}")


# `memls checkpoint import` lives in its own module (issue 16: converting foreign checkpoints).
from memls.cli.importer import import_checkpoints_command  # noqa: E402

checkpoint.add_command(import_checkpoints_command)
