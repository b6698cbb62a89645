"""`memls mv OLD NEW` — rename a checkpoint, a memory file or a heading, keeping every link."""

from __future__ import annotations

from pathlib import Path

import click

from memls.cli.common import root_option
from memls.cli.opsutil import run_op
from memls.core.ops.move import move
from memls.core.workspace import discover_root


@click.command("mv")
@click.argument("old")
@click.argument("new")
@root_option
@click.option("--dry-run", is_flag=True, help="Show what would move and change; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def mv(old: str, new: str, root: Path | None, dry_run: bool, as_json: bool) -> None:
    """Rename OLD to NEW and rewrite every link, bullet and `continue` line that leads to it.

    \b
    OLD is one of
      a checkpoint name      memls mv feat-login auth-login
      a memory file path     memls mv testing.md memory/testing.md
      a heading              memls mv deploy.md#staging "Staging and canary"

    A checkpoint's new name is checked like `checkpoint save` checks one; a file stays in
    the root or its memory/ folder and never overwrites another. Everything happens under
    the root lock; exit 2 when the rename is refused (nothing is written then).
    Committed LOG.md text is never rewritten (it is append-only): a reference there keeps
    the old name and the output says so. The writes are recorded in .memls/ first, so a
    move a crash interrupted is finished by the next `memls mv` (rerun the same one).
    """
    cwd = Path.cwd()
    if root is not None:
        memory_root = root.resolve()
    else:
        start = cwd / old.split("#", 1)[0] if old.endswith(".md") or ".md#" in old else cwd
        memory_root = discover_root(start if start.exists() else cwd) or cwd.resolve()
    run_op(lambda: move(memory_root, old, new, dry_run=dry_run, base=cwd), as_json)
