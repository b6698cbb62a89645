"""Options shared by every command that works on a memory root."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from memls.core.config import ConfigError, check_configs, load_config
from memls.core.gcpause import no_gc

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
    """The memory root a command works on, refused (exit 2) when its configuration is broken.

    Every command goes through here, so none runs on defaults when memls.toml or
    ``[tool.memls]`` cannot be read: the message names the file and line. Without
    ``--root``, the configuration files discovery consults on the way up are checked too.
    """
    try:
        if root is not None:
            base = root.resolve()
        else:
            from memls.core.roots import discover_root  # not needed with --root

            check_configs(Path.cwd())
            base = discover_root(Path.cwd()) or Path.cwd().resolve()
        load_config(base)
    except ConfigError as exc:
        raise InvalidInput(f"broken configuration: {exc}") from exc
    return base


class InvalidInput(click.ClickException):
    """Bad arguments or configuration: exit 2, like click's own usage errors (1 means findings)."""

    exit_code = 2


def wants_json(argv: list[str]) -> bool:
    """Whether a command line asked for JSON output (``--json``, ``--format json``)."""
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        if arg in {"--json", "--format=json"}:
            return True
        if arg == "--format" and argv[i + 1 : i + 2] == ["json"]:
            return True
    return False


def json_requested() -> bool:
    """Whether the running command was asked for JSON (its ``--json`` / ``--format json``)."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return False
    return bool(ctx.params.get("as_json")) or ctx.params.get("fmt") == "json"


def echo_json_error(message: str, exit_code: int, **extra: object) -> None:
    """A refusal as JSON on stdout (what a --json caller parses), and as text on stderr."""
    payload = {"status": "error", "error": message, "exit_code": exit_code, **extra}
    click.echo(json.dumps(payload, indent=2, ensure_ascii=False, default=str))
    click.echo(f"Error: {message}", err=True)


@contextmanager
def without_cyclic_gc() -> Iterator[None]:
    """Run a short command without the cyclic garbage collector; skip its last pass at exit.

    Used on a command as ``@without_cyclic_gc()`` (a context manager is also a decorator).

    `memls check` and `memls recall search` make many small acyclic objects (parsed
    documents, links, numpy and click objects) that reference counting frees; the
    collector's passes over them only cost time (a search ~12 ms, its final pass at
    interpreter exit ~13 ms more; millions of link objects in a big check). The pause is
    :func:`memls.core.gcpause.no_gc`: the collector is switched back on when the command
    returns or fails, and at exit the heap is only frozen.
    """
    with no_gc(freeze_at_exit=True):
        yield
