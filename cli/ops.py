"""`memls index`, `memls bundle`, `memls log` and `memls handoff`: the other memory operations."""

from __future__ import annotations

from pathlib import Path

import click

from memls.cli.common import resolve_root, root_option
from memls.cli.opsutil import git_for, run_op
from memls.core.ops.bundle import approve_bundle, bundle_status
from memls.core.ops.handoff import write_handoff
from memls.core.ops.index import migrate_index
from memls.core.ops.log import append_log

_JSON = click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")


@click.group()
def index() -> None:
    """Maintain the MEMORY.md index."""


@index.command()
@root_option
@click.option("--name", help="Checkpoint to move the sections into (default: the branch name).")
@_JSON
def migrate(root: Path | None, name: str | None, as_json: bool) -> None:
    """Move legacy volatile sections (Current State, Next Action, Session …) into a checkpoint.

    Every other section of MEMORY.md is kept byte for byte.
    """
    base = resolve_root(root)
    run_op(lambda: migrate_index(base, name, git=git_for(base)), as_json, op="index.migrate")


@click.group()
def bundle() -> None:
    """Approve a checkpoint bundle or show which of its five steps are open."""


def _file(file: Path | None) -> Path | None:
    return file.resolve() if file is not None else None


@bundle.command()
@click.argument("file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@root_option
@_JSON
def approve(file: Path | None, root: Path | None, as_json: bool) -> None:
    """Tick every item of the bundle in FILE and stamp `Approved: YYYY-MM-DD HH:MM`.

    One approval covers the whole bundle. Without FILE: the one open bundle of the root.
    """
    base = resolve_root(root)
    run_op(lambda: approve_bundle(base, _file(file)), as_json, op="bundle.approve")


@bundle.command()
@click.argument("file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@root_option
@_JSON
def status(file: Path | None, root: Path | None, as_json: bool) -> None:
    """Show which of the five steps (memory, index, log, transcript, recall) are open."""
    base = resolve_root(root)
    run_op(lambda: bundle_status(base, _file(file)), as_json, op="bundle.status")


@click.group()
def log() -> None:
    """Append to the append-only LOG.md."""


@log.command()
@root_option
@click.option("--title", required=True, help="Entry title (one line).")
@click.option(
    "--body-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Read the entry body from this file ('-' is not supported; use --body).",
)
@click.option("--body", help="The entry body as text.")
@_JSON
def append(
    root: Path | None, title: str, body_file: Path | None, body: str | None, as_json: bool
) -> None:
    """Append `## YYYY-MM-DD HH:MM — TITLE` and the body; existing bytes are never rewritten."""
    if body_file is not None and body is not None:
        raise click.UsageError("give --body-file or --body, not both")
    text = body_file.read_text(encoding="utf-8") if body_file is not None else (body or "")
    base = resolve_root(root)
    run_op(lambda: append_log(base, title, text), as_json, op="log.append")


@click.group()
def handoff() -> None:
    """Write or refresh the .handoff.md continuity prompt."""


@handoff.command()
@root_option
@click.option("--force", is_flag=True, help="Replace an existing handoff.")
@_JSON
def new(root: Path | None, force: bool, as_json: bool) -> None:
    """Write .handoff.md with all seven sections filled from the current state.

    Non-claims and risk flags are left to you with a prompt line. Refuses to replace an
    existing handoff without --force.
    """
    base = resolve_root(root)
    run_op(lambda: write_handoff(base, force=force, git=git_for(base)), as_json, op="handoff.new")


@handoff.command()
@root_option
@_JSON
def refresh(root: Path | None, as_json: bool) -> None:
    """Update the memls-generated blocks of .handoff.md and add missing sections; your text stays."""
    base = resolve_root(root)
    run_op(
        lambda: write_handoff(base, refresh=True, git=git_for(base)),
        as_json,
        op="handoff.refresh",
    )
