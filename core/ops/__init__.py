"""Operations that change memory files: checkpoints, the index, bundles, the log, the handoff.

One implementation shared by the CLI, the language server's commands, the MCP server and
the notebook widgets. Every write goes through :mod:`memls.core.fsutil` (atomic, inside the
root), and every read-modify-write of a shared file happens under the root's inter-process
lock. Operations return an :class:`OpResult` whose ``message`` is user-facing text, and
refuse with an :class:`OpError`; :mod:`memls.core.ops.table` lists them for the fronts.

What every front shares, so none adapts an operation by hand:

- :func:`result_json`: an :class:`OpResult` as JSON (the CLI's ``--json``, an MCP tool's
  structured result, an LSP command's result);
- :class:`OpError`: the one refusal type, with its exit status, its JSON payload and the
  parameters its message names (each front spells those its own way: ``--title`` on the
  command line, ``title`` for an MCP tool or an LSP command);
- :func:`as_refusal`: which exceptions from core are refusals (and how they read).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

EXIT_REFUSED = 2
"""Exit status of a refusal: bad input, an unsafe name, a file system that said no."""
EXIT_CONFLICT = 3
"""Exit status of a compare-and-swap conflict: someone else changed the file first."""


@dataclass(frozen=True)
class OpResult:
    """What an operation did: a message for people, whether anything changed, and details."""

    message: str
    changed: bool
    paths: tuple[Path, ...] = ()
    data: dict[str, Any] = field(default_factory=dict)


def result_json(result: OpResult) -> dict[str, Any]:
    """An operation's result as every front gives it to programs: ``message``, ``changed``,
    ``paths`` (strings) and the operation's own ``data`` fields."""
    return {
        "message": result.message,
        "changed": result.changed,
        "paths": [str(p) for p in result.paths],
        **result.data,
    }


Spelling = Callable[[str], str]
"""How a front writes a parameter's name in a message (``"title"`` → ``"--title"``)."""

_PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]*)\}")


def _plain(name: str) -> str:
    return name


class OpError(Exception):
    """An operation refused to run; the message says why and what to do instead.

    The one refusal type of every front: ``exit_code`` is the CLI's exit status (and the
    MCP result's ``exit_code``), ``payload`` are extra JSON fields, and ``param`` names the
    parameter(s) the message is about. A message names a parameter as ``{name}`` (the
    operation's parameter, as :mod:`memls.core.ops.table` lists it); :meth:`render` lets each
    front spell it (``--step`` on the command line), ``str()`` writes the bare name.
    """

    def __init__(
        self,
        message: str,
        /,
        *,
        param: str | tuple[str, ...] | None = None,
        exit_code: int = EXIT_REFUSED,
        **payload: Any,
    ) -> None:
        super().__init__(message)
        self.template = message
        self.params: tuple[str, ...] = (param,) if isinstance(param, str) else (param or ())
        self.exit_code = exit_code
        self.payload: dict[str, Any] = payload

    @property
    def param(self) -> str | None:
        """The parameter the refusal is about (the first its message names), if any."""
        return self.params[0] if self.params else None

    def render(self, spell: Spelling = _plain) -> str:
        """The message with each named parameter written as ``spell`` writes it."""
        if not self.params:
            return self.template
        known = set(self.params)
        return _PLACEHOLDER.sub(lambda m: spell(m[1]) if m[1] in known else m[0], self.template)

    def __str__(self) -> str:
        return self.render()

    def to_json(self, spell: Spelling = _plain) -> dict[str, Any]:
        """The refusal as JSON: the payload, ``error`` (the message), ``exit_code``, and
        ``param`` when the message is about one (the operation's name for it)."""
        body: dict[str, Any] = {**self.payload, "error": self.render(spell)}
        body["exit_code"] = self.exit_code
        if self.param is not None:
            body["param"] = self.param
        return body


class ConflictError(OpError):
    """A compare-and-swap save found other content than the caller expected."""

    def __init__(self, message: str, current_sha: str | None) -> None:
        super().__init__(message, exit_code=EXIT_CONFLICT, current_sha=current_sha)
        self.current_sha = current_sha


def as_refusal(exc: BaseException) -> OpError | None:
    """The refusal an exception from core stands for, or None when it is a bug.

    Refusals are :class:`OpError`; a broken configuration, an unsafe path or any other
    ``ValueError`` core raises about its input; and an ``OSError`` (the file system said no:
    permissions, a full disk, a name it cannot hold — every write is atomic, so each file is
    its old or its new version).
    """
    from memls.core.config import ConfigError

    if isinstance(exc, OpError):
        return exc
    if isinstance(exc, ConfigError):
        return OpError(f"broken configuration: {exc}")
    if isinstance(exc, OSError):
        where = f": {exc.filename}" if exc.filename else ""
        return OpError(f"{exc.strerror or exc}{where}")
    if isinstance(exc, ValueError):
        return OpError(str(exc))
    return None


__all__ = [
    "EXIT_CONFLICT",
    "EXIT_REFUSED",
    "ConflictError",
    "OpError",
    "OpResult",
    "as_refusal",
    "result_json",
]
