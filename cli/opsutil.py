"""What the operation commands share: the git to ask, and turning results and refusals into output."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import NoReturn

import click

from memls.cli.common import echo_json_error
from memls.core.ops import EXIT_CONFLICT, EXIT_REFUSED, OpError, OpResult, as_refusal, result_json
from memls.core.ops.table import git_for, spelling

__all__ = ["EXIT_CONFLICT", "EXIT_REFUSED", "fail", "git_for", "run_op"]


def run_op(
    call: Callable[[], OpResult],
    as_json: bool,
    missing: Callable[[OpResult], bool] | None = None,
    *,
    op: str | None = None,
) -> None:
    """Run an operation; print its message (or JSON); refusals exit 2, conflicts 3.

    ``missing`` tells which results mean the input named something that is not there
    (a checkpoint to resume or clear): core returns those as results, the shell exits 2
    with the message (which lists what is available) on stderr. ``op`` (the operation's
    name in the table) spells the parameters a refusal names as this command's flags.
    """
    try:
        result = call()
    except Exception as exc:
        refusal = as_refusal(exc)
        if refusal is None:
            raise
        fail(refusal, as_json, op=op)
    refused = missing is not None and missing(result)
    if as_json:
        payload = result_json(result)
        if refused:
            payload |= {"error": result.message, "exit_code": EXIT_REFUSED}
        click.echo(json.dumps(payload, indent=2, ensure_ascii=False, default=str))
    elif refused:
        click.echo(f"Error: {result.message}", err=True)
    else:
        click.echo(result.message)
    if refused:
        sys.exit(EXIT_REFUSED)


def fail(
    refusal: OpError, as_json: bool, *, op: str | None = None, prefix: str = "Error: "
) -> NoReturn:
    """Report a refusal (JSON on stdout with ``--json``, the message on stderr) and exit
    with its status."""
    body = refusal.to_json(spelling(op, "cli"))
    message = body.pop("error")
    code = body.pop("exit_code")
    if as_json:
        echo_json_error(message, code, **body)
    else:
        click.echo(f"{prefix}{message}", err=True)
    sys.exit(code)
