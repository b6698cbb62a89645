"""SZ: encoding and the snapshot limits (64 items, 65,536 bytes each, 262,144 in all)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from memls.core.fsutil import UnsafePathError, check_relative
from memls.core.model import Diagnostic, FileKind, Range, Severity
from memls.core.rules import Rule, RuleContext
from memls.core.workspace import is_dated

MAX_ITEM_BYTES = 65_536
MAX_TOTAL_BYTES = 262_144
MAX_ITEMS = 64

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_ODD_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # not tab or line ends

RULES = (
    Rule("SZ001", "invalid-encoding", Severity.ERROR, "NUL byte or invalid UTF-8 in a memory file"),
    Rule(
        "SZ002",
        "item-too-large",
        Severity.WARNING,
        "memory file over 65,536 bytes (snapshot item limit)",
    ),
    Rule(
        "SZ003",
        "root-too-large",
        Severity.WARNING,
        "memory root over 262,144 bytes in all (snapshot limit)",
    ),
    Rule("SZ004", "too-many-items", Severity.WARNING, "more than 64 memory files (snapshot limit)"),
    Rule(
        "SZ005",
        "non-canonical-pointer",
        Severity.WARNING,
        "pointer path with a backslash or control characters (works on one system only); "
        "`..` and absolute paths are fine when they lead somewhere (IX009 otherwise)",
    ),
    Rule(
        "SZ006",
        "large-document",
        Severity.INFO,
        "language server only: a document over `large_document_bytes` gets the SZ rules only",
    ),
)


def check(ctx: RuleContext) -> Iterator[Diagnostic]:
    doc = ctx.doc
    for problem in doc.problems:
        if problem.code == "SZ001":
            yield ctx.diag("SZ001", problem.message, problem.range)
    first_line = Range.line(0, len(doc.line_text(0)))
    if doc.byte_size > MAX_ITEM_BYTES and not is_dated(doc.path):  # nobody splits a day's log
        yield ctx.diag(
            "SZ002",
            f"{doc.name} is {doc.byte_size:,} bytes, over the 65,536-byte item limit: "
            "split it into smaller topic files",
            first_line,
        )
    if doc.kind is not FileKind.INDEX:
        return
    paths = ctx.workspace.paths()
    if len(paths) > MAX_ITEMS:
        yield ctx.diag(
            "SZ004",
            f"the memory root holds {len(paths)} files, over the 64-item snapshot limit: "
            "merge or retire some topic files",
            first_line,
        )
    total = ctx.workspace.total_bytes()
    if total > MAX_TOTAL_BYTES:
        yield ctx.diag(
            "SZ003",
            f"the memory root holds {total:,} bytes, over the 262,144-byte snapshot limit: "
            "trim or retire memory files",
            first_line,
        )
    if "\\" not in doc.text and not _ODD_CONTROL.search(doc.text):
        return  # no target can hold a backslash or control character (and links stay unbuilt)
    for link in doc.links:
        target = link.target
        if "\\" not in target and not _CONTROL.search(target):
            continue  # `..` and absolute paths: IX009 reports them when they lead nowhere
        try:
            check_relative(target, "pointer")
        except UnsafePathError as exc:
            yield ctx.diag(
                "SZ005",
                f"{exc}: write the pointer with `/` so it works on every system",
                link.target_range,
            )
