"""Applying text edits: the one implementation behind ``memls check --fix`` and LSP quick fixes."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable
from pathlib import Path

from memls.core.model import Fix, TextEdit
from memls.core.parse import MAX_PARSE_CHARS
from memls.core.text import LineIndex, decode_lossless, encode_lossless
from memls.core.workspace import Workspace

MAX_FIX_CHARS = MAX_PARSE_CHARS
"""Files longer than this (in characters) are not fixed: the parser reads structure from the
first ``MAX_PARSE_CHARS`` characters only, and a fix computed on that view (a section
"missing" because it lies past the limit) would damage the rest of the file."""


def too_large_to_fix(path: Path) -> str | None:
    """Why ``path`` is not fixed (its size against :data:`MAX_FIX_CHARS`), or None."""
    try:
        if path.stat().st_size <= MAX_FIX_CHARS:  # a character takes at least one byte
            return None
        data = path.read_bytes()
    except OSError:
        return None
    chars = len(decode_lossless(data)[0])
    if chars <= MAX_FIX_CHARS:
        return None
    return (
        f"{chars:,} characters ({len(data):,} bytes), over the {MAX_FIX_CHARS:,}-character "
        "limit memls parses; fixes computed on part of the file could damage the rest"
    )


def apply_edits(text: str, edits: Iterable[TextEdit]) -> str:
    """Apply non-overlapping edits (overlapping ones after the first are skipped)."""
    index = LineIndex(text)
    spans: list[tuple[int, int, str]] = []
    for edit in edits:
        start = index.offset(edit.range.start.line, edit.range.start.character)
        end = index.offset(edit.range.end.line, edit.range.end.character)
        spans.append((start, max(start, end), edit.new_text))
    spans.sort(key=lambda s: (s[0], s[1]))
    out: list[str] = []
    cursor = 0
    for start, end, new in spans:
        if start < cursor:
            continue  # overlaps an edit already applied; the next pass will retry it
        out.append(text[cursor:start])
        out.append(new)
        cursor = end
    out.append(text[cursor:])
    return "".join(out)


def apply_fixes(text: str, fixes: Iterable[Fix]) -> str:
    """Apply several fixes; a fix whose edits overlap an earlier fix waits for the next pass.

    Insertions at the same point are all applied, in the order of the fixes (so "add all
    missing sections" or several missing bullets land in one pass).
    """
    chosen: list[TextEdit] = []
    taken: list[tuple[tuple[int, int], tuple[int, int]]] = []
    for fix in fixes:
        spans = [
            (
                (e.range.start.line, e.range.start.character),
                (e.range.end.line, e.range.end.character),
            )
            for e in fix.edits
        ]
        if any(_overlaps(a, b) for a in spans for b in taken):
            continue
        taken.extend(spans)
        chosen.extend(fix.edits)
    return apply_edits(text, chosen)


def _overlaps(
    a: tuple[tuple[int, int], tuple[int, int]], b: tuple[tuple[int, int], tuple[int, int]]
) -> bool:
    """Whether two edits conflict. Insertions at one point do not: they apply in fix order."""
    a_empty, b_empty = a[0] == a[1], b[0] == b[1]
    if a_empty and b_empty:
        return False
    if a_empty:
        return b[0] <= a[0] <= b[1]
    if b_empty:
        return a[0] <= b[0] <= a[1]
    return a[0] < b[1] and b[0] < a[1]


def fix_text(workspace: Workspace, path: Path, now: _dt.datetime | None = None) -> tuple[str, int]:
    """The document's text with every safe fix applied, re-checking between passes.

    Returns the new text and how many fixes were applied. The workspace sees the fixed
    text as an overlay while fixing (so cross-file rules agree); afterwards the workspace
    holds exactly what it held before (the editor buffer and its parsed document, or no
    overlay), so asking for a fix never changes what other requests see.
    """
    from memls.core.rules import check_document

    doc = workspace.document(path)
    if doc is None:
        return "", 0
    text = doc.text
    if len(text) > MAX_FIX_CHARS:
        return text, 0  # the parsed view is part of the file: see MAX_FIX_CHARS
    applied = 0
    had_overlay = workspace.has_overlay(path)
    original = workspace.overlay(path)
    touched = False
    if not had_overlay and "\ufffd" in text and any(p.code == "SZ001" for p in doc.problems):
        return text, 0  # read from disk with bytes that are not UTF-8: see fix_file
    try:
        for _ in range(_MAX_PASSES):
            current = workspace.document(path)
            if current is None:
                break
            fixes = [d.fix for d in check_document(workspace, current, now) if d.fix is not None]
            if not fixes:
                break
            new_text = apply_fixes(text, fixes)
            if new_text == text:
                break
            applied += len(fixes)
            text = new_text
            touched = True
            workspace.set_text(path, text)
    finally:
        if touched:
            workspace.set_text(path, original, doc if original is not None else None)
    return text, applied


_MAX_PASSES = 8


def fix_file(
    workspace: Workspace, path: Path, now: _dt.datetime | None = None
) -> tuple[bytes | None, int]:
    """The file's new bytes with every safe fix applied (``memls check --fix``), and how many.

    Every byte a fix did not mean to change is kept: the whole file is read (not the
    workspace's size-capped copy), bytes that are not UTF-8 ride through as
    ``surrogateescape`` and a BOM stays. ``(None, 0)`` when the file cannot be read; a
    file over :data:`MAX_FIX_CHARS` is returned as it is (``memls check --fix`` says why).
    """
    try:
        data = path.read_bytes()
    except OSError:
        return None, 0
    text, bom = decode_lossless(data)
    if len(text) > MAX_FIX_CHARS:
        return data, 0  # see too_large_to_fix
    had_overlay = workspace.has_overlay(path)
    workspace.set_text(path, text)
    try:
        fixed, applied = fix_text(workspace, path, now)
    finally:
        if not had_overlay:
            workspace.set_text(path, None)
    return (encode_lossless(fixed, bom) if applied else data), applied
