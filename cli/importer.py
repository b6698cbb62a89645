"""`memls checkpoint import` — convert another tool's checkpoint files to memls's format."""

from __future__ import annotations

from pathlib import Path

import click

from memls.cli.common import resolve_root, root_option
from memls.cli.opsutil import run_op
from memls.core.ops.importer import import_checkpoints


@click.command("import")
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@root_option
@click.option("--dry-run", is_flag=True, help="Say what would be converted; write nothing.")
@click.option("--no-index", is_flag=True, help="Leave MEMORY.md alone (default: add each bullet).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def import_checkpoints_command(
    files: tuple[Path, ...], root: Path | None, dry_run: bool, no_index: bool, as_json: bool
) -> None:
    """Convert checkpoint-*.md files written in another format (CP050) into memls's.

    Each file is rewritten in place, atomically: `# Checkpoint: {name}`, Branch and Saved
    from its `**Branch:**` / `**Date:**` lines, its sections mapped onto Next Action, Done
    This Session, Failed Approaches and Modified Files; every other line (sections, header
    lines, a `# Appendix`) is kept as it is, with its line ending and the file's BOM. Files
    already in memls's format are left alone; a run that was interrupted before MEMORY.md
    got its bullets is finished by the next one.
    """
    base = resolve_root(root)
    run_op(lambda: import_checkpoints(base, files, dry_run=dry_run, index=not no_index), as_json)
