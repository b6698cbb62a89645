"""LG: LOG.md is append-only history, one dated ``## `` entry per event.

A log grows one way: at the end (oldest first, memls's default) or on top (newest first),
as its own text declares near the top ("Newest entry on top", "reverse chronological") or,
without a declaration, as most of its entries do. LG002 reports only entries against that
order, one finding per misplaced block; LG001 accepts new text on the side the log grows.
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_right
from collections.abc import Iterator
from pathlib import Path

from memls.core.formats.log import (
    LogEntry,
    LogOrder,
    Stamp,
    first_entry_line,
    log_entries,
    log_order,
)
from memls.core.model import Diagnostic, FileKind, Range, Severity
from memls.core.rules import Rule, RuleContext

RULES = (
    Rule(
        "LG001",
        "log-not-append-only",
        Severity.ERROR,
        "LOG.md not append-only: text that existed in the last committed version was changed "
        "or removed (new entries go at the end, or on top in a newest-first log)",
        rationale="error: committed history was changed or removed — memory is being lost",
        doc="""
        LOG.md is a history: entries are added, never rewritten. In a git repository,
        text of the last committed LOG.md that the working copy changed or removed is
        reported (new entries may go at the end, or on top in a newest-first log).

        Wrong: editing last week's entry to say what happened instead.
        Right: a new entry that corrects it.

        Fix: restore the last committed version (`git diff -- LOG.md` shows what changed)
        and add the correction as a new entry.
        """,
    ),
    Rule(
        "LG002",
        "log-entry-date",
        Severity.WARNING,
        "LOG entry heading without a date (in a LOG whose entries are mostly dated), or "
        "entries against the log's own order (declared, else what most entries do; one "
        "finding per misplaced block)",
        rationale="warning: ordering and dates of entries; every entry is still there",
        doc="""
        In a LOG whose entries are mostly dated, an entry heading without a valid date is
        reported, and so is an entry that stands against the log's order (the order the
        log declares, else the one most entries follow; one finding per misplaced block).

        Wrong: `## fixed the login bug` among `## 2026-03-05 — …` headings, or a March
        entry below an April one in an oldest-first log.
        Right: `## 2026-03-06 — fixed the login bug`, in order.

        Fix: date the heading as the other entries are, or move the entry into place.
        """,
    ),
)


def _in_order(entries: list[LogEntry], newest_first: bool) -> set[int]:
    """Indexes of the longest run of entries (not necessarily adjacent) whose days follow
    the order: every other dated entry is out of place. Patience sorting, O(n log n)."""
    keys = [e.stamp.when.toordinal() if e.stamp is not None else 0 for e in entries]
    if newest_first:
        keys = [-k for k in keys]
    tails: list[int] = []  # key of the smallest tail of each length
    tail_at: list[int] = []  # index of that tail
    prev = [-1] * len(entries)
    for i, key in enumerate(keys):
        at = bisect_right(tails, key)
        if at == len(tails):
            tails.append(key)
            tail_at.append(i)
        else:
            tails[at] = key
            tail_at[at] = i
        prev[i] = tail_at[at - 1] if at else -1
    kept: set[int] = set()
    i = tail_at[-1] if tail_at else -1
    while i != -1:
        kept.add(i)
        i = prev[i]
    return kept


def check(ctx: RuleContext) -> Iterator[Diagnostic]:
    doc = ctx.doc
    if doc.kind is not FileKind.LOG:
        return
    diag = _append_only(ctx)
    if diag is not None:
        yield diag
    entries = log_entries(doc)
    dated = [e for e in entries if e.stamp is not None]
    journal = len(dated) * 2 >= len(entries)  # a numbered review document is not a dated journal
    if not entries:
        return
    if journal:
        timed = sum(1 for e in dated if e.stamp is not None and e.stamp.has_time)
        form = "`YYYY-MM-DD HH:MM — title`" if timed * 2 > len(dated) else "`YYYY-MM-DD — title`"
        start = dated[0].line if dated else 0  # undated sections above it: a preamble
        for entry in entries:
            if (
                entry.stamp is None
                and entry.line > start
                and not _TEMPLATE_TITLE.search(entry.title)
            ):
                yield ctx.diag(
                    "LG002",
                    f"LOG entry '{entry.title}' has no valid date: start the heading with "
                    f"{form}, as the other entries do, so the history can be ordered",
                    entry.range,
                )
    yield from _out_of_order(ctx, dated)


_TEMPLATE_TITLE = re.compile(
    r"(?i)\b(?:format|template|example|legend|how to (?:write|add|log))\b|格式|模板|示例|範例"
    r"|フォーマット|テンプレート|\b(?:vorlage|modèle|formato|plantilla|modelo)\b"
)
"""An undated section that shows how entries are written ("Log format", "Entry template",
"日志格式"): the log's legend, no entry."""


def _out_of_order(ctx: RuleContext, dated: list[LogEntry]) -> Iterator[Diagnostic]:
    """LG002: entries against the log's own order, one finding per misplaced block."""
    if len(dated) < 2:
        return
    order = log_order(ctx.doc)
    if not order.clear:
        return  # entries one way and the other in like measure: the log keeps no one order
    kept = _in_order(dated, order.newest_first)
    i = 0
    while i < len(dated):
        if i in kept:
            i += 1
            continue
        j = i
        while j + 1 < len(dated) and j + 1 not in kept:
            j += 1
        yield _misplaced(ctx, dated, i, j, kept, order)
        i = j + 1
    # Within one day, timed entries kept in place must follow the order too.
    timed = [dated[k] for k in sorted(kept) if dated[k].stamp is not None]
    for a, b in itertools.pairwise(timed):
        sa, sb = a.stamp, b.stamp
        assert sa is not None
        assert sb is not None
        if not (sa.has_time and sb.has_time and sa.when.date() == sb.when.date()):
            continue
        if (sb.when > sa.when) if order.newest_first else (sb.when < sa.when):
            yield ctx.diag(
                "LG002",
                f"LOG entry of {_show(sb)} comes after the one of {_show(sa)} (line "
                f"{a.line + 1}), but this log is {order.name} ({order.why}): swap them or "
                "check the times",
                b.range,
            )


def _misplaced(
    ctx: RuleContext,
    dated: list[LogEntry],
    i: int,
    j: int,
    kept: set[int],
    order: LogOrder,
) -> Diagnostic:
    entry = dated[i]
    assert entry.stamp is not None
    before = next((dated[k] for k in range(i - 1, -1, -1) if k in kept), None)
    after = next((dated[k] for k in range(j + 1, len(dated)) if k in kept), None)
    around = []
    if before is not None and before.stamp is not None:
        around.append(f"after the entry of {_show(before.stamp)} (line {before.line + 1})")
    if after is not None and after.stamp is not None:
        around.append(f"before the one of {_show(after.stamp)} (line {after.line + 1})")
    where = " and ".join(around) or "against the others"
    if j > i:
        last = dated[j]
        what = (
            f"{j - i + 1} LOG entries (lines {entry.line + 1}–{last.line + 1}, from "
            f"{_show(entry.stamp)}) are out of order"
        )
        fix = "move the block to where its dates belong, or check the dates"
    else:
        what = f"LOG entry dated {_show(entry.stamp)} is out of order"
        fix = "move it to where its date belongs, or check the date"
    grows = "new entries go on top" if order.newest_first else "new entries go at the end"
    return ctx.diag(
        "LG002",
        f"{what}: it stands {where}, but this log is {order.name} ({order.why}; {grows}) — {fix}",
        entry.range,
    )


def _show(stamp: Stamp) -> str:
    return stamp.when.strftime("%Y-%m-%d %H:%M" if stamp.has_time else "%Y-%m-%d")


def _normalize(text: str) -> str:
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


_PLACEHOLDER = re.compile(
    r"<[^<>\n]{1,80}: keep it in \.env or a secret manager, not in memory>"
    r"|\n\(private key removed: keep it in ~/\.ssh or your secret manager, not in memory\)\n"
)


def _without_secrets(text: str) -> str:
    """The text with each secret, and each placeholder SC's fix wrote, as one mark."""
    from memls.core.secrets import find_secrets

    parts: list[str] = []
    last = 0
    for secret in find_secrets(text):
        parts.append(text[last : secret.start])
        parts.append("\x00secret\x00")
        last = secret.end
    parts.append(text[last:])
    return _PLACEHOLDER.sub("\x00secret\x00", "".join(parts))


def _grows_on_top(before: str) -> bool:
    """Whether the committed log is newest first (its order, not the edited text's, decides)."""
    from memls.core.parse import parse_text

    return log_order(parse_text(before, Path("LOG.md"), FileKind.LOG)).newest_first


def _added_on_top(before: str, now: str) -> bool:
    """Whether ``now`` is ``before`` with text inserted just above its first entry (the
    committed text compared as it is, then with secrets marked, as for an append)."""
    from memls.core.parse import parse_text

    for variant in (0, 1):
        old, new = (
            (before, now) if variant == 0 else (_without_secrets(before), _without_secrets(now))
        )
        first = first_entry_line(parse_text(old, Path("LOG.md"), FileKind.LOG))
        if first is None:
            return False
        split = sum(len(line) + 1 for line in old.split("\n")[:first])
        head, body = old[:split], old[split:].rstrip()
        if len(new) >= len(old) and new.startswith(head) and new.rstrip().endswith(body):
            return True
    return False


def _append_only(ctx: RuleContext) -> Diagnostic | None:
    """LG001: the committed LOG must be a prefix of the current one."""
    doc = ctx.doc
    committed = ctx.workspace.git.committed_text(doc.path)
    if committed is None:
        return None
    before = _normalize(committed).rstrip()
    now = _normalize(doc.text)
    if now.startswith(before):
        return None
    if _without_secrets(now).startswith(_without_secrets(before).rstrip()):
        return None  # only secrets were replaced (SC's fix): the history is otherwise intact
    newest_first = _grows_on_top(before)
    if newest_first and _added_on_top(before, now):
        return None  # a newest-first log grows above its newest entry
    old_lines = before.split("\n")
    new_lines = now.split("\n")
    line = len(old_lines)
    for i, old in enumerate(old_lines):
        new = new_lines[i] if i < len(new_lines) else None
        last = i == len(old_lines) - 1
        if new is None or (new.rstrip() != old.rstrip() if last else new != old):
            line = i
            break
    removed = line >= len(new_lines) or (line == len(new_lines) - 1 and not new_lines[line])
    if newest_first and line == first_entry_line(doc):
        # Entries were added on top: the change is where the old entries, read from the
        # end, stop matching.
        tail = now.rstrip().split("\n")
        k = 0
        while k < min(len(old_lines), len(tail)) and old_lines[-1 - k] == tail[-1 - k]:
            k += 1
        removed = len(tail) - k <= line
        line = max(line, len(tail) - 1 - k)
    line = max(0, min(line, len(doc.lines) - 1))
    what = "removed" if removed else "changed"
    return ctx.diag(
        "LG001",
        f"LOG.md is append-only, but committed text was {what} at line {line + 1}: "
        f"restore the last committed version (`git diff -- {doc.name}` shows what changed) "
        + (
            "and record corrections as a new entry on top"
            if newest_first
            else "and record corrections as a new entry at the end"
        ),
        Range.line(line, len(doc.line_text(line))),
    )
