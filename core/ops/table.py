"""The table of operations: what every front (CLI, MCP, LSP commands) offers, in one place.

Each :class:`Operation` has a name (``checkpoint.save``: the CLI command ``memls checkpoint
save``, the LSP command ``memls.checkpoint.save``), an argument dataclass with one documented
field per parameter, read-only / destructive flags and the core function (:attr:`run`, which
takes the memory root, the arguments and the git to ask). The fronts are built on it:

- the MCP tools' input schemas are generated from the argument dataclasses
  (``memls.mcpserver.tools``), their enums are core's own lists (recall's ``KINDS`` and ``MODES``);
- the LSP commands parse their JSON argument through it (``memls.lsp.features.commands``);
- the CLI's click options are checked against it by ``tests/test_op_table.py`` (every
  parameter is an option or argument there, with the same choices).

A field's metadata (see :func:`arg`) says how each front spells the parameter: ``cli`` the
flag (``--next``) or argument (``NAME``), ``lsp`` the key of the command's JSON argument
(``next``), ``mcp`` whether the tool takes it. Refusals name parameters by their field name
(:class:`memls.core.ops.OpError` ``param``); :func:`spelling` turns that into the front's words.

Importing this module is cheap: the core functions are imported when an operation runs.
"""

# ruff: noqa: RUF009 -- ``arg`` returns a ``dataclasses.field`` (a documented parameter)

from __future__ import annotations

import dataclasses
import re
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from memls.core.gitfacade import Git

Front = Literal["cli", "mcp", "lsp"]

_MISSING: Any = dataclasses.MISSING


def arg(
    doc: str,
    *,
    default: Any = _MISSING,
    many: bool = False,
    cli: str | None = "",
    lsp: str | None = "",
    mcp: bool = True,
    choices: str = "",
    minimum: int | None = None,
    maximum: int | None = None,
    min_length: int | None = None,
) -> Any:
    """A documented parameter of an operation (a dataclass field).

    ``cli``: the flag or argument name on the command line (``""``: ``--name-with-dashes``;
    None: not on the command line); ``lsp``: the key in the LSP command's argument (``""``:
    the field name; None: not taken); ``mcp``: whether the MCP tool takes it. ``many``: a
    list of strings (default empty). ``choices`` names core's list of the allowed
    values (``"module:NAME"``, imported when a front asks), ``minimum``, ``maximum`` and
    ``min_length`` constrain the value when it is given.
    """
    metadata = {
        "doc": doc,
        "cli": cli,
        "lsp": lsp,
        "mcp": mcp,
        "choices": choices,
        "minimum": minimum,
        "maximum": maximum,
        "min_length": min_length,
    }
    if many:
        return field(default_factory=list, metadata=metadata)
    return field(default=default, metadata=metadata)


@dataclass(frozen=True)
class Param:
    """One parameter of an operation, as the fronts need it."""

    name: str
    doc: str
    kind: Literal["str", "int", "bool", "list"]
    optional: bool  # None is a value (the parameter may be left out and means "default")
    required: bool  # no default: every front must ask for it
    default: Any
    choices: tuple[str, ...]
    cli: str | None
    lsp: str | None
    mcp: bool
    minimum: int | None
    maximum: int | None
    min_length: int | None

    def spell(self, front: Front) -> str | None:
        """The parameter in ``front``'s words (None: that front does not take it)."""
        if front == "mcp":
            return self.name if self.mcp else None
        if front == "lsp":
            return None if self.lsp is None else (self.lsp or self.name)
        if self.cli is None:
            return None
        return self.cli or "--" + self.name.replace("_", "-")


@dataclass(frozen=True)
class Operation:
    """One operation: name, arguments, flags and the core function."""

    name: str
    args: type
    run: Callable[[Path, Any, Any], Any]
    """The core function: ``run(root, args, git)`` (git None: the root's repository)."""
    read_only: bool = False
    destructive: bool = False
    cli: str | None = ""
    """The CLI command (``""``: the name with spaces, ``memls checkpoint save``; None: none);
    its options and arguments follow :meth:`params`."""
    lsp: bool = False
    """Whether ``memls.<name>`` is an LSP command (its argument is parsed by :meth:`params`)."""

    @property
    def summary(self) -> str:
        """What the operation does: the first paragraph of its argument type's docstring."""
        return (self.args.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")

    @property
    def cli_path(self) -> tuple[str, ...] | None:
        """The CLI command's words after ``memls`` (None: not on the command line)."""
        if self.cli is None:
            return None
        return tuple((self.cli or self.name.replace(".", " ")).split())

    @property
    def lsp_command(self) -> str:
        return "memls." + self.name

    def params(self) -> list[Param]:
        return _params(self.args)

    def param(self, name: str) -> Param:
        return next(p for p in self.params() if p.name == name)


def _params(cls: type) -> list[Param]:
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        optional = False
        if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
            members = [a for a in typing.get_args(hint) if a is not type(None)]
            optional = len(members) < len(typing.get_args(hint))
            hint = members[0]
        origin = typing.get_origin(hint) or hint
        kind: Literal["str", "int", "bool", "list"] = (
            "list"
            if origin is list
            else "bool"
            if hint is bool
            else "int"
            if hint is int
            else "str"
        )
        has_default = f.default is not _MISSING or f.default_factory is not _MISSING
        default = [] if f.default_factory is not _MISSING else f.default
        m = f.metadata
        out.append(
            Param(
                name=f.name,
                doc=m["doc"],
                kind=kind,
                optional=optional,
                required=not has_default,
                default=None if not has_default else default,
                choices=_choices(m["choices"]),
                cli=m["cli"],
                lsp=m["lsp"],
                mcp=m["mcp"],
                minimum=m["minimum"],
                maximum=m["maximum"],
                min_length=m["min_length"],
            )
        )
    return out


def _choices(where: str) -> tuple[str, ...]:
    """Core's own list of allowed values (``"memls.core.recall.search:MODES"``)."""
    if not where:
        return ()
    import importlib

    module, _, name = where.partition(":")
    return tuple(getattr(importlib.import_module(module), name))


def spelling(op: str | None, front: Front) -> Callable[[str], str]:
    """How ``front`` writes a parameter of operation ``op`` in a message (``next_action`` is
    ``--next`` on the command line, ``next`` for the LSP command, ``next_action`` for MCP)."""
    found = OPERATIONS.get(op) if op is not None else None
    names = {p.name: p.spell(front) for p in found.params()} if found is not None else {}

    def spell(name: str) -> str:
        spelled = names.get(name)
        if spelled is not None:
            return spelled
        return "--" + name.replace("_", "-") if front == "cli" else name

    return spell


_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def respell(op: str | None, front: Front, message: str, words: dict[str, str] | None = None) -> str:
    """A message that quotes CLI flags of operation ``op`` (core's snapshot messages, and
    refusals not yet worded by parameter), each written as ``front`` names that parameter;
    ``words``: flags the front expresses otherwise (``--initial`` → ``no expect``)."""
    found = OPERATIONS.get(op) if op is not None else None
    if front == "cli" or found is None or "--" not in message:
        return message
    names = dict(words or {})
    for p in found.params():
        flag, spelled = p.spell("cli"), p.spell(front)
        if flag is not None and flag.startswith("--") and spelled is not None:
            names.setdefault(flag, spelled)
    return _FLAG.sub(lambda m: names.get(m[0], m[0]), message)


# --- the argument types ------------------------------------------------------------------------


@dataclass(frozen=True)
class CheckpointSave:
    """Save a named checkpoint (checkpoint-NAME.md and its MEMORY.md bullet), atomically."""

    name: str | None = arg(
        "Checkpoint name (default: the current git branch, lowercased, / → -).",
        default=None,
        cli="NAME",
    )
    next_action: str | None = arg(
        "The Next Action: a one-line title; further lines (after a newline) become its body "
        "— say what to do first, with file paths.",
        default=None,
        cli="--next",
        lsp="next",
    )
    done: list[str] = arg("What this session achieved.", many=True)
    failed: list[str] = arg("Approaches that failed: what was tried and why it failed.", many=True)
    summary: str | None = arg(
        "One-line summary for the MEMORY.md bullet (default: next action).", default=None
    )
    plan: str | None = arg("The plan file driving the work.", default=None, lsp=None)
    step: str | None = arg("Progress in the plan, N/M (needs plan).", default=None, lsp=None)
    expect_sha: str | None = arg(
        "Save only if the checkpoint's sha256 is still this (from an earlier save or resume); "
        "a conflict is reported, nothing is written.",
        default=None,
        lsp=None,
    )


@dataclass(frozen=True)
class CheckpointResume:
    """Present a checkpoint: branch warning, previously failed approaches, the next action."""

    name: str | None = arg(
        "Checkpoint to resume (default: the only one, else a list).", default=None, cli="NAME"
    )
    consume: bool = arg("Delete the checkpoint after presenting it.", default=False, lsp=None)


@dataclass(frozen=True)
class CheckpointClear:
    """Delete a checkpoint file and its MEMORY.md bullet (the section goes with the last one)."""

    name: str | None = arg(
        "Checkpoint to delete (its file and its index bullet).",
        default=None,
        cli="NAME",
        min_length=1,
    )
    all: bool = arg("Clear every checkpoint.", default=False, mcp=False)


@dataclass(frozen=True)
class NoArgs:
    """An operation without parameters."""


@dataclass(frozen=True)
class CheckpointImport:
    """Convert checkpoint files written in another format (CP050) into memls's, in place."""

    files: list[str] = arg(
        "The files to convert (default: every checkpoint-*.md of the root in another format).",
        many=True,
        cli="FILES",
        lsp=None,
        mcp=False,
    )
    dry_run: bool = arg("Say what would be converted; write nothing.", default=False, lsp=None)
    no_index: bool = arg(
        "Leave MEMORY.md alone (default: add each checkpoint's bullet).", default=False, lsp=None
    )


@dataclass(frozen=True)
class Move:
    """Rename a checkpoint, a memory file or a heading, and every link that leads to it."""

    old: str = arg(
        "What to rename: a checkpoint name, a memory file path, or file.md#heading.",
        cli="OLD",
        lsp=None,
    )
    new: str = arg("The new name, path or heading.", cli="NEW", lsp=None)
    dry_run: bool = arg("Show what would move and change; write nothing.", default=False, lsp=None)


@dataclass(frozen=True)
class IndexMigrate:
    """Move legacy volatile sections of MEMORY.md (Current State, Next Action …) into a checkpoint."""

    name: str | None = arg(
        "Checkpoint to move the sections into (default: the branch name).", default=None
    )


@dataclass(frozen=True)
class BundleFile:
    """A checkpoint bundle: approve it, or show which of its five steps are open."""

    path: str | None = arg(
        "The file holding the bundle (default: the one open bundle of the root).",
        default=None,
        cli="FILE",
        mcp=False,
    )


@dataclass(frozen=True)
class LogAppend:
    """Append an entry (## YYYY-MM-DD HH:MM — title) to the append-only LOG.md."""

    title: str = arg("Entry title, one line.")
    body: str = arg("Entry body (Markdown; use ### for headings).", default="")


@dataclass(frozen=True)
class HandoffNew:
    """Write .handoff.md with all seven sections filled from the current state."""

    force: bool = arg("Replace an existing handoff.", default=False, lsp=None)


@dataclass(frozen=True)
class RecallSearch:
    """Search memory files and past session transcripts (hybrid semantic + full-text)."""

    query: str = arg(
        "What to look for: words, a question, a name (not empty).", cli="QUERY", min_length=1
    )
    mode: str = arg(
        "hybrid fuses semantic and BM25 full-text rankings; text needs no model.",
        default="hybrid",
        choices="memls.core.recall.search:MODES",
    )
    limit: int = arg(
        "Number of results.",
        default=8,
        minimum=1,
        maximum=50,
    )
    kind: str | None = arg(
        "Only chunks of this kind (MEMORY.md itself is an index of pointers and is not searched).",
        default=None,
        choices="memls.core.recall.chunking:KINDS",
    )
    since: str | None = arg(
        "Only chunks dated at or after this: YYYY-MM-DD, ISO time, 7d, 12h.", default=None, lsp=None
    )


@dataclass(frozen=True)
class RecallBackfill:
    """Index changed memory files and transcripts for recall (embeddings and full text)."""

    full: bool = arg("Forget the index and rebuild it from scratch.", default=False)


@dataclass(frozen=True)
class MemoryCheck:
    """Check the memory files against memls's rules."""

    path: str | None = arg(
        "One file to check, relative to the memory root (default: all).",
        default=None,
        cli="PATHS",
        lsp=None,
    )


@dataclass(frozen=True)
class SnapshotSave:
    """Commit memory files to a git ref (default refs/memls/<instance>); the work tree stays."""

    paths: list[str] = arg(
        "Files to commit, relative to the root (default: every memory file).",
        many=True,
        cli="PATHS",
        lsp=None,
    )
    expect: str | None = arg(
        "The commit the snapshot ref must hold now (default: whatever it holds; a concurrent "
        "save is still detected).",
        default=None,
    )
    message: str | None = arg(
        "One line saying why you snapshot now (the commit's subject; `memls snapshot log` "
        "lists it).",
        default=None,
        lsp=None,
    )
    ref: str | None = arg(
        "Ref to save to (default refs/memls/<instance>; a bare name goes under refs/memls/).",
        default=None,
        mcp=False,
    )
    initial: bool = arg("First save: the ref must not exist yet.", default=False, mcp=False)


# --- the core functions ------------------------------------------------------------------------


def _path(root: Path, value: str | None) -> Path | None:
    if value is None:
        return None
    path = Path(value).expanduser()
    return (path if path.is_absolute() else root / path).resolve()


def _checkpoint_save(root: Path, a: CheckpointSave, git: Any) -> Any:
    from memls.core.ops.checkpoint import save_checkpoint

    return save_checkpoint(
        root,
        a.name,
        next_action=a.next_action,
        summary=a.summary,
        done=a.done,
        failed=a.failed,
        plan=a.plan,
        step=a.step,
        expect_sha=a.expect_sha,
        git=git,
    )


def _checkpoint_resume(root: Path, a: CheckpointResume, git: Any) -> Any:
    from memls.core.ops.checkpoint import resume_checkpoint

    return resume_checkpoint(root, a.name, consume=a.consume, git=git)


def _checkpoint_clear(root: Path, a: CheckpointClear, git: Any) -> Any:
    from memls.core.ops.checkpoint import clear_checkpoint

    return clear_checkpoint(root, a.name, all=a.all)


def _checkpoint_list(root: Path, a: NoArgs, git: Any) -> Any:
    from memls.core.ops.checkpoint import list_checkpoints

    return list_checkpoints(root, git=git)


def _checkpoint_import(root: Path, a: CheckpointImport, git: Any) -> Any:
    from memls.core.ops.importer import import_checkpoints

    files = [p for f in a.files if (p := _path(root, f)) is not None]
    return import_checkpoints(root, files, dry_run=a.dry_run, index=not a.no_index)


def _move(root: Path, a: Move, git: Any) -> Any:
    from memls.core.ops.move import move

    return move(root, a.old, a.new, dry_run=a.dry_run, base=Path.cwd())


def _index_migrate(root: Path, a: IndexMigrate, git: Any) -> Any:
    from memls.core.ops.index import migrate_index

    return migrate_index(root, a.name, git=git)


def _bundle_approve(root: Path, a: BundleFile, git: Any) -> Any:
    from memls.core.ops.bundle import approve_bundle

    return approve_bundle(root, _path(root, a.path))


def _bundle_status(root: Path, a: BundleFile, git: Any) -> Any:
    from memls.core.ops.bundle import bundle_status

    return bundle_status(root, _path(root, a.path))


def _log_append(root: Path, a: LogAppend, git: Any) -> Any:
    from memls.core.ops.log import append_log

    return append_log(root, a.title, a.body)


def _handoff_new(root: Path, a: HandoffNew, git: Any) -> Any:
    from memls.core.ops.handoff import write_handoff

    return write_handoff(root, force=a.force, git=git)


def _handoff_refresh(root: Path, a: NoArgs, git: Any) -> Any:
    from memls.core.ops.handoff import write_handoff

    return write_handoff(root, refresh=True, git=git)


def _recall_search(root: Path, a: RecallSearch, git: Any) -> Any:
    from memls.core.recall import api

    kinds = (a.kind,) if a.kind else ()
    return api.search(root, a.query, mode=a.mode, kinds=kinds, since=a.since, limit=a.limit)


def _recall_status(root: Path, a: NoArgs, git: Any) -> Any:
    from memls.core.recall import api

    return api.status(root)


def _recall_backfill(root: Path, a: RecallBackfill, git: Any) -> Any:
    from memls.core.recall import api

    return api.backfill(root, full=a.full)


def _recall_verify(root: Path, a: NoArgs, git: Any) -> Any:
    from memls.core.recall import api

    return api.verify(root)


def _memory_check(root: Path, a: MemoryCheck, git: Any) -> Any:
    from memls.core.agent.health import check_root

    target = _path(root, a.path)
    return check_root(root, [target] if target is not None else None)


def _snapshot_save(root: Path, a: SnapshotSave, git: Any) -> Any:
    from memls.core.snapshot import save_snapshot

    return save_snapshot(
        root,
        ref=a.ref,
        expect=a.expect,
        initial=a.initial,
        paths=tuple(a.paths),
        message=a.message,
    )


_ALL = (
    Operation("checkpoint.save", CheckpointSave, _checkpoint_save, lsp=True),
    Operation("checkpoint.resume", CheckpointResume, _checkpoint_resume, lsp=True),
    Operation("checkpoint.list", NoArgs, _checkpoint_list, read_only=True, lsp=True),
    Operation("checkpoint.clear", CheckpointClear, _checkpoint_clear, destructive=True, lsp=True),
    Operation("checkpoint.import", CheckpointImport, _checkpoint_import),
    Operation("mv", Move, _move),
    Operation("index.migrate", IndexMigrate, _index_migrate, lsp=True),
    Operation("bundle.approve", BundleFile, _bundle_approve, lsp=True),
    Operation("bundle.status", BundleFile, _bundle_status, read_only=True),
    Operation("log.append", LogAppend, _log_append, lsp=True),
    Operation("handoff.new", HandoffNew, _handoff_new, lsp=True),
    Operation("handoff.refresh", NoArgs, _handoff_refresh),
    Operation("recall.search", RecallSearch, _recall_search, read_only=True, lsp=True),
    Operation("recall.status", NoArgs, _recall_status, read_only=True, lsp=True),
    Operation("recall.backfill", RecallBackfill, _recall_backfill, lsp=True),
    Operation("recall.verify", NoArgs, _recall_verify, lsp=True),
    Operation("memory.check", MemoryCheck, _memory_check, read_only=True, cli="check"),
    Operation("snapshot.save", SnapshotSave, _snapshot_save, lsp=True),
)

OPERATIONS: dict[str, Operation] = {op.name: op for op in _ALL}
"""Every operation by name."""


def operation(name: str) -> Operation:
    """The operation ``name`` (a KeyError names a typo at import time of a front)."""
    return OPERATIONS[name]


def git_for(root: Path) -> Git:
    """The repository an operation asks for branch and status: the current directory's,
    else the root's (Claude Code's memory directory lives outside the project, so the
    branch and status come from where the command runs)."""
    from memls.core.gitfacade import Git

    here = Git(Path.cwd())
    return here if here.is_repo else Git(root)
