"""What the operation commands share: the git to ask, and turning results and refusals into output."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

import click

from memls.cli.common import echo_json_error
from memls.core.config import ConfigError
from memls.core.fsutil import UnsafePathError
from memls.core.gitfacade import Git
from memls.core.ops import ConflictError, OpError, OpResult

EXIT_REFUSED = 2
EXIT_CONFLICT = 3


def git_for(root: Path) -> Git:
    """The repository the work happens in: the current directory's, else the root's.

    Claude Code's memory directory lives outside the project, so the branch and status
    come from where the command runs.
    """
    here = Git(Path.cwd())
    return here if here.is_repo else Git(root)


def run_op(
    call: Callable[[], OpResult],
    as_json: bool,
    missing: Callable[[OpResult], bool] | None = None,
) -> None:
    """Run an operation; print its message (or JSON); refusals exit 2, conflicts 3.

    ``missing`` tells which results mean the input named something that is not there
    (a checkpoint to resume or clear): core returns those as results, the shell exits 2
    with the message (which lists what is available) on stderr.
    """
    try:
        result = call()
    except ConflictError as exc:
        _fail(str(exc), EXIT_CONFLICT, as_json, {"current_sha": exc.current_sha})
    except (UnsafePathError, OpError) as exc:
        _fail(str(exc), EXIT_REFUSED, as_json, {})
    except ConfigError as exc:
        _fail(f"broken configuration: {exc}", EXIT_REFUSED, as_json, {})
    except OSError as exc:
        # The file system said no (permissions, a full disk, a name it cannot hold): every
        # write is atomic, so each file is its old or its new version.
        where = f": {exc.filename}" if exc.filename else ""
        _fail(f"{exc.strerror or exc}{where}", EXIT_REFUSED, as_json, {})
    refused = missing is not None and missing(result)
    if as_json:
        payload = {
            "message": result.message,
            "changed": result.changed,
            "paths": [str(p) for p in result.paths],
            **result.data,
        }
        if refused:
            payload |= {"error": result.message, "exit_code": EXIT_REFUSED}
        click.echo(json.dumps(payload, indent=2, ensure_ascii=False, default=str))
    elif refused:
        click.echo(f"Error: {result.message}", err=True)
    else:
        click.echo(result.message)
    if refused:
        sys.exit(EXIT_REFUSED)


def _fail(message: str, code: int, as_json: bool, extra: dict[str, object]) -> NoReturn:
    if as_json:
        echo_json_error(message, code, **extra)
    else:
        click.echo(f"Error: {message}", err=True)
    sys.exit(code)
