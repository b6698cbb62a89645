"""`memls snapshot`: commit memory to a git ref, read it back, compare, restore, share."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import NoReturn

import click

from memls.cli.common import resolve_root, root_option
from memls.cli.opsutil import fail
from memls.core.config import ConfigError
from memls.core.gitfacade import GitError
from memls.core.ops import OpError, as_refusal
from memls.core.snapshot import (
    EXIT_CODES,
    RestoreRefusedError,
    SnapshotError,
    diff_snapshots,
    load_snapshot,
    read_item,
    restore_snapshot,
    save_snapshot,
    snapshot_log,
)

EXIT_INVALID = EXIT_CODES["invalid"]
EXIT_CONFLICT = EXIT_CODES["conflict"]

_SHARING = """\b
Sharing is plain git; saving never pushes:
  git push <remote> 'refs/memls/*:refs/memls/*'
  git fetch <remote> 'refs/memls/*:refs/memls/*'
"""


_ERRORS = (SnapshotError, GitError, ConfigError, OSError)
"""What a snapshot command reports as a refusal (exit 2) instead of a traceback."""


def _fail(error: BaseException, code: int = EXIT_INVALID, as_json: bool = False) -> NoReturn:
    """A refusal (one of :data:`_ERRORS`): its message, exit ``code``."""
    refusal = as_refusal(error) if isinstance(error, OSError) else None
    message = refusal.render() if refusal is not None else str(error)
    fail(OpError(message, exit_code=code), as_json, op="snapshot.save", prefix="")


@click.group(epilog=_SHARING)
def snapshot() -> None:
    """Commit memory items to a git ref (default refs/memls/<instance>) and read them back.

    Snapshots are commits made with git plumbing only: the work tree, the index and HEAD
    are never touched. The instance is `instance` from memls.toml / [tool.memls], else the
    memory root's folder name.
    """


@snapshot.command(epilog=_SHARING)
@root_option
@click.option(
    "--ref",
    default=None,
    help="Ref to save to (default refs/memls/<instance>; a bare name goes under refs/memls/).",
)
@click.option("--expect", metavar="COMMIT", default=None, help="The commit the ref must hold now.")
@click.option("--initial", is_flag=True, help="First save: the ref must not exist yet.")
@click.option(
    "-m",
    "--message",
    default=None,
    help="One line saying why (the commit's subject; `snapshot log` lists it).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the outcome as one JSON object.")
@click.argument("paths", nargs=-1)
def save(
    root: Path | None,
    ref: str | None,
    expect: str | None,
    initial: bool,
    message: str | None,
    as_json: bool,
    paths: tuple[str, ...],
) -> None:
    """Commit memory items (default: every memory file of the root) to the ref.

    PATHS are canonical relative POSIX paths under the root. Limits: 64 items, 65,536
    bytes per item, 262,144 bytes in all; NUL bytes and non-UTF-8 content are rejected.
    The save is a compare-and-swap: --initial needs the ref absent, otherwise --expect
    must name the commit the ref holds now.

    \b
    Exit codes:
      0  saved      a new commit; the ref moved to it
      0  unchanged  the ref already holds this content; no commit made
      3  conflict   the ref is not where --expect/--initial said (the message
                    names the commit it is at); nothing changed
      2  invalid    bad request, item or root (the message names the item)

    --json prints {"status", "changed", "commit", "ref", "previous", "items", "message",
    "exit_code"}, plus "error" (the reason) for a conflict or refusal.
    """
    try:
        result = save_snapshot(
            resolve_root(root),
            ref=ref,
            expect=expect,
            initial=initial,
            paths=paths,
            message=message,
        )
    except _ERRORS as exc:
        _fail(exc, as_json=as_json)
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2))
        if result.status in ("conflict", "invalid"):
            click.echo(result.message, err=True)
    else:
        click.echo(result.message, err=result.status in ("conflict", "invalid"))
    sys.exit(result.exit_code)


@snapshot.command()
@root_option
@click.option("--json", "as_json", is_flag=True, help="Print the manifest as JSON.")
@click.argument("commit")
@click.argument("path", required=False)
def read(root: Path | None, as_json: bool, commit: str, path: str | None) -> None:
    """Print the manifest of snapshot COMMIT, or the exact bytes of item PATH in it.

    COMMIT is read as given, so a full commit id keeps working after the ref moves on.
    Exit 2 when the commit or item does not exist.
    """
    base = resolve_root(root)
    try:
        if path is not None:
            data = read_item(base, commit, path)
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
            return
        snap = load_snapshot(base, commit)
    except _ERRORS as exc:
        _fail(exc, as_json=as_json)
    if as_json:
        body = {
            "commit": snap.commit,
            "instance": snap.instance,
            "items": [i.to_dict() for i in snap.items],
        }
        click.echo(json.dumps(body, indent=2))
        return
    click.echo(f"snapshot {snap.commit} ({snap.instance or 'unknown instance'})")
    for item in snap.items:
        click.echo(f"{item.bytes:>8}  {item.sha256[:12]}  {item.path}")


@snapshot.command()
@root_option
@click.option("--ref", default=None, help="Ref to list (default refs/memls/<instance>).")
@click.option("-n", "--limit", type=click.IntRange(min=1), default=None, help="At most N.")
@click.option("--json", "as_json", is_flag=True, help="Print the entries as JSON.")
def log(root: Path | None, ref: str | None, limit: int | None, as_json: bool) -> None:
    """List the snapshots on the ref, newest first (nothing when the ref is absent)."""
    try:
        entries = snapshot_log(resolve_root(root), ref, limit)
    except _ERRORS as exc:
        _fail(exc, as_json=as_json)
    if as_json:
        rows = [{"commit": e.commit, "time": e.time, "subject": e.subject} for e in entries]
        click.echo(json.dumps(rows, indent=2))
        return
    for e in entries:
        click.echo(f"{e.commit}  {e.time}  {e.subject}")


@snapshot.command()
@root_option
@click.argument("a")
@click.argument("b")
def diff(root: Path | None, a: str, b: str) -> None:
    """Show items added, removed and changed from snapshot A to snapshot B.

    Each item gets a header line and a unified diff of its text. Exit 0 either way;
    2 when a commit is not a snapshot.
    """
    try:
        changes = diff_snapshots(resolve_root(root), a, b)
    except _ERRORS as exc:
        _fail(exc)
    if not changes:
        click.echo("no differences")
        return
    for change in changes:
        click.echo(f"{change.change}: {change.path}")
        click.echo(change.diff, nl=False)


@snapshot.command()
@root_option
@click.option(
    "--to",
    "to",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Write into this folder instead of the memory root.",
)
@click.option("--force", is_flag=True, help="Overwrite locally changed files too.")
@click.option(
    "--ref",
    default=None,
    help="Ref whose latest snapshot counts as saved state (default refs/memls/<instance>).",
)
@click.argument("commit")
def restore(root: Path | None, to: Path | None, force: bool, ref: str | None, commit: str) -> None:
    """Write the items of snapshot COMMIT back into the root (or --to DIR), atomically.

    A file whose bytes match neither COMMIT nor the ref's latest snapshot holds unsaved
    local changes: the restore then stops before writing anything and names those files
    (exit 3) unless --force. Files not in the snapshot are left alone. Exit 2 on a bad
    commit or path.
    """
    try:
        result = restore_snapshot(resolve_root(root), commit, to=to, force=force, ref=ref)
    except RestoreRefusedError as exc:
        _fail(exc, EXIT_CONFLICT)
    except _ERRORS as exc:
        _fail(exc)
    click.echo(result.message)
    for rel in result.written:
        click.echo(f"  wrote {rel}")
