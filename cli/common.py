"""Options shared by every command that works on a memory root."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from memls.core.workspace import discover_root

F = TypeVar("F", bound=Callable[..., Any])


def root_option(func: F) -> F:
    """``--root DIR`` (default: discovered from the current directory, else the current directory)."""
    return click.option(
        "--root",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="Memory root (default: discovered from the current directory, else the current directory).",
    )(func)


def select_options(func: F) -> F:
    func = click.option(
        "--ignore",
        multiple=True,
        help="Rule codes or prefixes to skip (repeatable, comma-separated).",
    )(func)
    return click.option(
        "--select",
        multiple=True,
        help="Only these rule codes or prefixes (repeatable, comma-separated).",
    )(func)


def resolve_root(root: Path | None) -> Path:
    """The memory root a command works on."""
    if root is not None:
        return root.resolve()
    return discover_root(Path.cwd()) or Path.cwd().resolve()


class InvalidInput(click.ClickException):
    """Bad arguments or configuration: exit 2, like click's own usage errors (1 means findings)."""

    exit_code = 2
