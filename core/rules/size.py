"""SZ: encoding, pointer paths, and size — as the reader of the root meets it.

The snapshot limits (64 items, 65,536 bytes each, 262,144 in all) are what ``memls snapshot
save`` refuses: they apply to a root that uses snapshots (a snapshot ref under the
configured namespace, or an ``instance`` configured). Elsewhere size matters only where
the agent reads a file whole: a topic file, a checkpoint or a handoff over 65,536 bytes
costs the context of every session that reads it, and an agent workspace's bootstrap
files are injected only up to 20,000 characters. What the agent searches but never loads
whole — LOG.md, dated daily logs, archives, transcripts — gets no size finding there;
MEMORY.md's own load limit is IX011's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from memls.core.formats.links import extract_links
from memls.core.fsutil import UnsafePathError, check_relative
from memls.core.gitfacade import has_refs
from memls.core.model import Diagnostic, FileKind, Range, Severity
from memls.core.rules import Rule, RuleContext
from memls.core.workspace import Layout, Workspace, is_dated

MAX_ITEM_BYTES = 65_536
MAX_TOTAL_BYTES = 262_144
MAX_ITEMS = 64

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_ODD_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # not tab or line ends

RULES = (
    Rule(
        "SZ001",
        "invalid-encoding",
        Severity.ERROR,
        "NUL byte or invalid UTF-8 in a memory file (a UTF-16 file too): one finding per "
        "file, at the first bad line, naming the others",
        rationale="error: the file cannot be read as text — its memory is unreadable",
        doc="""
        A memory file holds a NUL byte or bytes that are not UTF-8: an agent reading it
        as text gets garbage or nothing. One finding per file, at the first bad line,
        naming the other lines (`(also on lines 5, 9 and 3 more)`); a file saved as
        UTF-16 (a NUL byte beside each character) is said to be one.

        Fix: re-save the file as UTF-8, removing the binary content.
        """,
    ),
    Rule(
        "SZ002",
        "item-too-large",
        Severity.WARNING,
        "memory file over 65,536 bytes: the snapshot item limit in a root that uses "
        "snapshots; elsewhere a file the agent reads whole (topic, checkpoint, handoff; an "
        "agent workspace's bootstrap file over 20,000 characters), never a log or archive",
        rationale="warning: a snapshot limit, or a file the agent reads whole costs its context; "
        "the file is intact and loads",
        doc="""
        A memory file is over 65,536 bytes. In a root that uses snapshots (an `instance`
        is configured or snapshot refs exist) `memls snapshot save` refuses it. Elsewhere
        it is reported for a file an agent reads whole — a topic file, checkpoint or
        handoff, not a log, dated file or archive — which spends that much of the
        agent's context every time; and for an agent workspace's bootstrap file (AGENTS.md,
        SOUL.md, …) over the 20,000 characters injected at session start.

        Fix: split a topic file; move a checkpoint's or handoff's history to LOG.md or an
        archive.
        """,
    ),
    Rule(
        "SZ003",
        "root-too-large",
        Severity.WARNING,
        "memory root over 262,144 bytes in all (snapshot limit; roots that use snapshots)",
        rationale="warning: a snapshot limit (roots that use snapshots); the files are intact",
        doc="""
        In a root that uses snapshots, the memory files hold more than 262,144 bytes in
        all, more than one snapshot holds. Reported on the index.

        Fix: trim or retire memory files, or save chosen items
        (`memls snapshot save … FILE…`).
        """,
    ),
    Rule(
        "SZ004",
        "too-many-items",
        Severity.WARNING,
        "more than 64 memory files (snapshot limit; roots that use snapshots)",
        rationale="warning: a snapshot limit (roots that use snapshots); the files are intact",
        doc="""
        In a root that uses snapshots, there are more than 64 memory files, more than one
        snapshot holds. Reported on the index.

        Fix: merge or retire some topic files, or save chosen items
        (`memls snapshot save … FILE…`).
        """,
    ),
    Rule(
        "SZ005",
        "non-canonical-pointer",
        Severity.WARNING,
        "pointer path with a backslash or control characters (works on one system only); "
        "`..` and absolute paths are fine when they lead somewhere (IX009 otherwise)",
        rationale="warning: the pointer works on one system only",
        doc="""
        A link target holds a backslash or a control character. `docs\\deploy.md` opens on
        Windows only.

        Wrong: `[deploy](docs\\deploy.md)`.
        Right: `[deploy](docs/deploy.md)`.

        Fix: write the path with `/`.
        """,
    ),
    Rule(
        "SZ006",
        "large-document",
        Severity.INFO,
        "language server only: a document over `large_document_bytes` gets the SZ rules only",
        rationale="info: the editor checks a very large document with the cheap rules only",
        doc="""
        Language server only: a document over `large_document_bytes` (memls.toml) or the
        client's `largeDocumentBytes` setting is checked with the SZ rules (and secrets)
        only while it is open, to keep typing fast. This note says so.

        Fix: none needed; `memls check` runs every rule. Raise the threshold to analyse
        the document fully in the editor.
        """,
    ),
)


WORKSPACE_MAX_CHARS = 20_000
"""An agent workspace (OpenClaw) injects each bootstrap file up to this many characters."""
BOOTSTRAP_DOCS = ("AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "HEARTBEAT.md")
"""Files an agent workspace injects at every session start (MEMORY.md: IX011)."""
_ARCHIVE_PARTS = frozenset(
    {"archive", "archives", "archived", "transcripts", "sessions", "journal"}
)


_LOG_NAME = re.compile(
    r"(?i)(?:^|[-_ .])(?:change)?log$|journal$|changelog|history$|diary$|^dreams$"
)
"""Files appended to and searched, never loaded whole: logs, journals, a diary, OpenClaw's
``DREAMS.md`` (the dream diary its Dreams view shows people; the agent's start reads
AGENTS.md, SOUL.md, USER.md, MEMORY.md and the day's notes)."""


def uses_snapshots(ws: Workspace) -> bool:
    """Whether the root uses memls snapshots: an ``instance`` is configured, or a ref
    lives under the snapshot namespace (one ``git for-each-ref``, cached)."""
    if ws.config.instance:
        return True
    if ws.git.toplevel is None:
        return False
    return has_refs(ws.git, ws.config.snapshot_namespace)


def _read_whole(ws: Workspace, path: Path, kind: FileKind) -> bool:
    """Whether an agent reads this file whole (not a log it appends to or searches)."""
    if kind in (FileKind.LOG, FileKind.INDEX) or is_dated(path):
        return False
    if _LOG_NAME.search(path.stem):
        return False  # AGENT-LOG.md, CHANGELOG.md, DREAMS.md: appended to, searched
    try:
        parts = {p.casefold() for p in path.relative_to(ws.root).parts[:-1]}
    except ValueError:
        parts = set()
    return not parts & _ARCHIVE_PARTS


def _item_size(ctx: RuleContext, first_line: Range) -> Diagnostic | None:
    """SZ002 as the reader of this root meets a big file."""
    doc, ws = ctx.doc, ctx.workspace
    size = doc.byte_size
    if size > MAX_ITEM_BYTES and uses_snapshots(ws):
        return ctx.diag(
            "SZ002",
            f"{doc.name} is {size:,} bytes, over the 65,536-byte item limit of a snapshot "
            f"(this root uses snapshots, and `memls snapshot save` refuses it): "
            f"{_advice(doc.kind)}",
            first_line,
        )
    if (
        ws.layout is Layout.WORKSPACE
        and doc.path.parent == ws.root
        and doc.name in BOOTSTRAP_DOCS
        and len(doc.text) > WORKSPACE_MAX_CHARS
    ):
        return ctx.diag(
            "SZ002",
            f"{doc.name} is {len(doc.text):,} characters; an agent workspace injects the "
            f"first {WORKSPACE_MAX_CHARS:,} at session start, so the rest is not loaded: "
            "move detail into memory/ notes",
            first_line,
        )
    if size > MAX_ITEM_BYTES and _read_whole(ws, doc.path, doc.kind) and not _not_memory(ctx):
        return ctx.diag(
            "SZ002",
            f"{doc.name} is {size:,} bytes (about {size // 4:,} tokens), which an agent that "
            f"reads it whole spends of its context every time: {_advice(doc.kind)}",
            first_line,
        )
    return None


def _not_memory(ctx: RuleContext) -> bool:
    """An Agent Skill or a project document: not memory an agent reads at start."""
    if ctx.doc.kind is not FileKind.TOPIC:
        return False
    from memls.core.rules.memoryfile import not_memory

    return not_memory(ctx.workspace, ctx.doc) is not None


def _advice(kind: FileKind) -> str:
    if kind is FileKind.HANDOFF:
        return (
            "a handoff is read whole by the next agent — keep the current state, open work "
            "and next steps, and move history to LOG.md (`memls log append`) or an archive"
        )
    if kind is FileKind.CHECKPOINT:
        return (
            "resume reads the whole checkpoint — keep the next action and what this session "
            "did, and move older history to LOG.md"
        )
    if kind is FileKind.LOG:
        return "start a new log and move older entries to an archive file"
    return "split it into smaller topic files"


def check(ctx: RuleContext) -> Iterator[Diagnostic]:
    doc = ctx.doc
    for problem in doc.problems:
        if problem.code == "SZ001":
            yield ctx.diag("SZ001", problem.message, problem.range)
    first_line = Range.line(0, len(doc.line_text(0)))
    if doc.byte_size > WORKSPACE_MAX_CHARS:
        diag = _item_size(ctx, first_line)
        if diag is not None:
            yield diag
    if doc.kind is not FileKind.INDEX:
        return
    paths = ctx.workspace.paths()
    total = ctx.workspace.total_bytes()
    if (len(paths) > MAX_ITEMS or total > MAX_TOTAL_BYTES) and uses_snapshots(ctx.workspace):
        if len(paths) > MAX_ITEMS:
            yield ctx.diag(
                "SZ004",
                f"the memory root holds {len(paths)} files, over the 64 items a snapshot "
                "holds (this root uses snapshots): merge or retire some topic files, or save "
                "chosen items (`memls snapshot save … FILE…`)",
                first_line,
            )
        if total > MAX_TOTAL_BYTES:
            yield ctx.diag(
                "SZ003",
                f"the memory root holds {total:,} bytes, over the 262,144 bytes a snapshot "
                "holds (this root uses snapshots): trim or retire memory files, or save "
                "chosen items",
                first_line,
            )
    if "\\" not in doc.text and not _ODD_CONTROL.search(doc.text):
        return  # no target can hold a backslash or control character (and links stay unbuilt)
    for link in extract_links(doc):
        target = link.target
        if "\\" not in target and not _CONTROL.search(target):
            continue  # `..` and absolute paths: IX009 reports them when they lead nowhere
        if link.kind == "wikilink":
            continue  # a note's name, not a path
        try:
            check_relative(target, "pointer")
        except UnsafePathError as exc:
            yield ctx.diag(
                "SZ005",
                f"{exc}: write the pointer with `/` so it works on every system",
                link.range,
            )
