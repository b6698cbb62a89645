"""Markdown memory files → ``Document``.

mistune's block parser finds the block structure (ATX headings, fenced code, raw HTML);
mistune records no positions, so a parser subclass stamps each block with the offsets of
its match. A line scan then picks out fields, list and task items and suppression
comments outside code and HTML blocks. Links are the link format's
(:mod:`memls.core.formats.links`), read from the document on demand. Parsing never raises.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import mistune
from mistune.block_parser import BlockParser
from mistune.core import BlockState

from memls.core.model import (
    Document,
    Field,
    FileKind,
    Frontmatter,
    FrontmatterEntry,
    Heading,
    ListItem,
    Position,
    Problem,
    Range,
    Section,
    Suppressions,
)
from memls.core.text import Decoded, LineIndex, also_on, decode

_BLOCK_RULES = ["fenced_code", "atx_heading", "thematic_break", "raw_html", "blank_line"]

_ITEM = re.compile(r"^(?P<indent>[ \t]*)(?P<marker>[-*+]|\d{1,9}[.)])(?:[ \t]+(?P<rest>.*))?$")
_TASK = re.compile(r"^\[(?P<mark>[ xX])\](?:[ \t]+|$)")
_FIELD = re.compile(r"^\*\*(?P<name>[^*:\n]{1,40}):\*\*[ \t]*(?P<value>.*)$")
_SUPPRESS = re.compile(r"<!--\s*memls-disable(?P<next>-next-line)?(?P<codes>[^>]*?)-->")
_FM_KEY = re.compile(r"^(?P<key>[A-Za-z_][\w-]*)\s*:\s?(?P<value>.*)$")

_POSITIONED = frozenset(("heading", "block_code", "block_html"))
MAX_PARSE_CHARS = 2_000_000  # beyond this, structure is read from the first part only


class _PositionedParser(BlockParser):
    """A mistune block parser that records where each block starts and ends."""

    def parse_method(self, m: re.Match[str], state: BlockState) -> int | None:
        before = len(state.tokens)
        end: int | None = super().parse_method(m, state)
        if len(state.tokens) > before:
            token = state.tokens[-1]
            token["_start"] = m.start()
            token["_end"] = end if end is not None else state.cursor
        return end


_PARSER = _PositionedParser(max_nested_level=6)


def kind_for(path: Path) -> FileKind:
    """The file kind from the file name (§2 of the spec)."""
    name = path.name
    if name == "MEMORY.md":
        return FileKind.INDEX
    if name.startswith("checkpoint-") and name.endswith(".md"):
        return FileKind.CHECKPOINT
    if name == ".handoff.md":
        return FileKind.HANDOFF
    if name == "LOG.md":
        return FileKind.LOG
    if name in ("IDENTITY.md", "USER.md"):
        return FileKind.IDENTITY
    if name.endswith(".jsonl"):
        return FileKind.TRANSCRIPT
    if name.endswith(".md"):
        return FileKind.TOPIC
    return FileKind.OTHER


def parse_file(path: Path) -> Document:
    """Read and parse a file; an unreadable file parses as empty with a problem."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        doc = parse_bytes(b"", path)
        problem = Problem("SZ001", f"cannot read file: {exc.strerror or exc}", Range.point(0))
        return _with_problems(doc, (problem,))
    size = len(data)
    decoded = decode(data)
    wide = looks_utf16(data) if "\x00" in decoded.text else False
    del data  # a 20 MB file's bytes need not live on while its text is parsed
    return _parse_decoded(decoded, path, None, size, wide)


def parse_bytes(data: bytes, path: Path, kind: FileKind | None = None) -> Document:
    decoded = decode(data)
    wide = looks_utf16(data) if "\x00" in decoded.text else False
    return _parse_decoded(decoded, path, kind, len(data), wide)


def looks_utf16(data: bytes) -> bool:
    """Bytes of UTF-16 text: its byte-order mark, or, in the first kilobyte, one of the two
    byte lanes holding NULs and almost nothing else but one value (the high byte of each
    character: 0 for ASCII, 4 for Cyrillic)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return True
    head = data[:1024]
    for lane in (head[0::2], head[1::2]):
        if len(lane) < 8 or 0 not in lane:
            continue
        common = sorted((lane.count(b) for b in set(lane)), reverse=True)[:2]
        if sum(common) * 10 >= len(lane) * 9:
            return True
    return False


def _parse_decoded(
    decoded: Decoded, path: Path, kind: FileKind | None, size: int, utf16: bool = False
) -> Document:
    return parse_text(
        decoded.text,
        path,
        kind,
        byte_size=size,
        had_bom=decoded.had_bom,
        invalid_offsets=decoded.bad_offsets,
        utf16=utf16,
    )


def _encoding_problems(
    index: LineIndex, invalid_offsets: Sequence[int], utf16: bool = False
) -> tuple[Problem, ...]:
    """The SZ001 problem of a text: invalid UTF-8 (from decoding) or NUL characters — one
    for the file, at the first bad line, naming the others (one cause, one finding)."""
    text = index.text
    nuls: list[int] = []
    if "\x00" in text:
        at = text.find("\x00")
        while at != -1 and len(nuls) < 200:
            nuls.append(at)
            at = text.find("\x00", at + 1)
    found = sorted(
        [(o, "invalid UTF-8") for o in invalid_offsets] + [(o, "NUL byte") for o in nuls]
    )
    if not found:
        return ()
    lines: list[int] = []
    kinds: list[str] = []
    for offset, kind in found:
        line, _ = index.position(offset)
        if line not in lines:
            lines.append(line)
        word = "NUL bytes" if kind == "NUL byte" and len(nuls) > 1 else kind
        if word not in kinds:
            kinds.append(word)
    first, char = index.position(found[0][0])
    what = " and ".join(kinds)
    if utf16:
        what = "UTF-16 text (two bytes per character)"
    also = also_on(sorted(set(lines) - {first}))
    return (
        Problem(
            "SZ001",
            f"{what} in a memory file{also}: save it as UTF-8 text without NUL bytes",
            Range.of(first, char, first, char + 1),
        ),
    )


def _with_problems(doc: Document, problems: tuple[Problem, ...]) -> Document:
    return replace(doc, problems=doc.problems + problems)


def parse_text(
    text: str,
    path: Path,
    kind: FileKind | None = None,
    *,
    byte_size: int | None = None,
    had_bom: bool = False,
    invalid_offsets: Sequence[int] = (),
    utf16: bool = False,
) -> Document:
    """Parse decoded text. Never raises.

    ``invalid_offsets`` are where decoding substituted U+FFFD (see :func:`parse_bytes`);
    NUL characters are found here, so an editor buffer reports them too.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
        had_bom = True
    index = LineIndex(text)
    lines = index.lines
    n = len(lines)
    frontmatter = _frontmatter(lines)
    skip_until = frontmatter.end_line + 1 if frontmatter else 0

    # mistune sees the body only (front matter blanked so line numbers stay put).
    # Only the lines mistune reads are joined: a 20 MB file is not copied whole again.
    body_end, budget = skip_until, MAX_PARSE_CHARS
    while body_end < n and budget >= 0:
        budget -= len(lines[body_end]) + 1
        body_end += 1
    src = "\n".join([""] * skip_until + lines[skip_until:body_end]).replace("\x00", "\ufffd")
    if len(src) > MAX_PARSE_CHARS:
        src = src[:MAX_PARSE_CHARS]
    if not src.endswith("\n"):
        src += "\n"
    src_index = LineIndex(src)

    headings: list[Heading] = []
    fences: list[tuple[int, int]] = []
    html_blocks: list[tuple[int, int]] = []
    opaque: list[tuple[int, int]] = []  # line spans the line scan skips (code, HTML)
    for token in _block_tokens(src):
        ttype = token["type"]
        start = token.get("_start")
        if start is None or ttype not in _POSITIONED:
            continue
        first = src_index.position(start)[0]
        last = src_index.position(max(start, int(token.get("_end", start)) - 1))[0]
        if ttype == "heading":
            level = int(token.get("attrs", {}).get("level", 1))
            headings.append(_heading(lines[first], first, level))
        elif ttype == "block_code":
            fences.append((first, last))
            opaque.append((first, last))
        elif ttype == "block_html":
            html_blocks.append((first, last))
            opaque.append((first, last))
    del src, src_index  # not needed by the line scan below
    flags = _line_flags(opaque, n)
    nested = _nested_fences(lines, skip_until, body_end, flags)
    if nested:
        fences = sorted(fences + nested)
        opaque += nested
        for a, b in nested:
            flags[a : b + 1] = [True] * (b + 1 - a)
    indented = _indented_code(lines, skip_until, body_end, flags, headings)
    if indented:
        fences = sorted(fences + indented)
        opaque += indented

    sections = _sections(headings, n)
    fields: list[Field] = []
    items: list[ListItem] = []
    file_codes: set[str] = set()
    file_all = False
    next_line: list[tuple[int, frozenset[str]]] = []

    opaque_lines = _line_flags(opaque, n)
    for ln in range(skip_until, n):
        line = lines[ln]
        if "memls-disable" in line:
            for m in _SUPPRESS.finditer(line):
                codes = frozenset(c for c in re.split(r"[\s,]+", m.group("codes").strip()) if c)
                if m.group("next"):
                    next_line.append((ln + 1, codes))
                elif codes:
                    file_codes |= codes
                else:
                    file_all = True
        if opaque_lines[ln] or not line or len(line) > 20_000:
            continue
        first_char = line.lstrip()[:1]
        if first_char in ("-", "*", "+") or first_char.isdigit():
            item = _list_item(line, ln)
            if item is not None:
                items.append(item)
                fm = _FIELD.match(item.text) if line.startswith("**", item.text_start) else None
                if fm:
                    fields.append(_field(fm, item, ln, len(line)))

    all_lines = tuple(lines)
    return Document(
        path=path,
        kind=kind if kind is not None else kind_for(path),
        text=text,
        lines=all_lines,
        headings=tuple(headings),
        sections=tuple(sections),
        fields=tuple(fields),
        items=tuple(items),
        fences=tuple(fences),
        html_blocks=tuple(html_blocks),
        frontmatter=frontmatter,
        suppressions=Suppressions(frozenset(file_codes), file_all, tuple(next_line)),
        problems=_encoding_problems(index, invalid_offsets, utf16)
        if (invalid_offsets or "\x00" in text)
        else (),
        byte_size=byte_size
        if byte_size is not None
        else len(text.encode("utf-8", "surrogatepass")),
        had_bom=had_bom,
        eol=index.eol,
    )


def _block_tokens(src: str) -> list[dict[str, Any]]:
    state = BlockState()
    state.process(src)
    try:
        _PARSER.parse(state, _BLOCK_RULES)
    except (RecursionError, ValueError, IndexError):  # pragma: no cover - mistune edge cases
        return [t for t in state.tokens if isinstance(t, dict)]
    return state.tokens


def _indent_width(line: str) -> int:
    width = 0
    for ch in line:
        if ch == " ":
            width += 1
        elif ch == "\t":
            width += 4 - width % 4
        else:
            break
    return width


_DEEP_FENCE = re.compile(r"^(?P<indent>[ \t]{4,})(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")


def _nested_fences(
    lines: list[str], start: int, end: int, opaque: list[bool]
) -> list[tuple[int, int]]:
    """Fenced code indented four columns or more — a fence inside a list item's
    continuation (``   2. Replace it:`` then ``     ```bash``), which the block parser
    (reading no lists) leaves as text: from the opening fence to the closing one of the
    same character and at least its length. An opening fence with no closing one is text."""
    spans: list[tuple[int, int]] = []
    ln = start
    while ln < end:
        m = _DEEP_FENCE.match(lines[ln]) if not opaque[ln] else None
        if m is None:
            ln += 1
            continue
        fence = m["fence"]
        close = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        last = next((k for k in range(ln + 1, end) if close.match(lines[k])), None)
        if last is None:
            ln += 1
            continue
        spans.append((ln, last))
        ln = last + 1
    return spans


def _indented_code(
    lines: list[str], start: int, end: int, opaque: list[bool], headings: list[Heading]
) -> list[tuple[int, int]]:
    """CommonMark's indented code blocks, as (first, last) line spans: lines indented four
    columns or more after a blank line, a heading or a fence, outside a list (an indented
    line inside a list item continues the item). mistune's own rule is left off because
    it would read every indented list continuation as code."""
    heading_lines = {h.line for h in headings}
    spans: list[tuple[int, int]] = []
    can_open = True  # after a blank line, a heading or a block: a paragraph is not open
    in_list = False
    first = last = -1
    for ln in range(start, min(end, len(lines))):
        line = lines[ln]
        if opaque[ln]:
            if first >= 0:
                spans.append((first, last))
                first = -1
            can_open, in_list = True, False
            continue
        if not line.strip():
            can_open = True
            continue
        indent = _indent_width(line)
        if indent >= 4 and (first >= 0 or (can_open and not in_list)):
            if first < 0:
                first = ln
            last = ln
            continue
        if first >= 0:
            spans.append((first, last))
            first = -1
        if ln in heading_lines:
            can_open, in_list = True, False
            continue
        if _ITEM.match(line):
            in_list = True
        elif indent == 0 and can_open:
            in_list = False  # a paragraph after a blank line ends the list
        can_open = False
    if first >= 0:
        spans.append((first, last))
    return spans


def _line_flags(spans: list[tuple[int, int]], n: int) -> list[bool]:
    flags = [False] * n
    for a, b in spans:
        for i in range(max(0, a), min(n, b + 1)):
            flags[i] = True
    return flags


def _heading(line: str, ln: int, level: int) -> Heading:
    stripped = line.lstrip(" ")
    start = len(line) - len(stripped) + level
    rest = line[start:]
    title = rest.strip()
    if title.endswith("#"):
        trimmed = title.rstrip("#")
        if not trimmed or trimmed.endswith((" ", "\t")):
            title = trimmed.strip()
    tstart = line.find(title, start) if title else len(line)
    return Heading(level, title, ln, Range.of(ln, tstart, ln, tstart + len(title)))


def _sections(headings: list[Heading], n: int) -> list[Section]:
    out: list[Section] = []
    for i, h in enumerate(headings):
        end = n
        for later in headings[i + 1 :]:
            if later.level <= h.level:
                end = later.line
                break
        out.append(Section(h, h.line, end))
    return out


def _list_item(line: str, ln: int) -> ListItem | None:
    m = _ITEM.match(line)
    if m is None:
        return None
    marker = m.group("marker")
    rest = m.group("rest") or ""
    if marker in ("-", "*") and rest[:1] == marker and set(line.strip()) <= {marker, " ", "\t"}:
        return None  # a thematic break such as "- - -"
    start = m.start("rest") if m.group("rest") is not None else len(line)
    checked: bool | None = None
    task = _TASK.match(rest)
    if task:
        checked = task.group("mark") != " "
        start += task.end()
        rest = rest[task.end() :]
    end = start + len(rest.rstrip())
    indent = len(m.group("indent").expandtabs(4))
    return ListItem(ln, indent, marker, line, start, end, checked)


def _field(m: re.Match[str], item: ListItem, ln: int, length: int) -> Field:
    raw = m.group("value").rstrip()
    value = raw.strip()
    if len(value) >= 2 and value.startswith("`") and value.count("`") >= 2:
        value = value[1 : value.index("`", 1)] + value[value.index("`", 1) + 1 :]
        value = value.strip()
    vstart = item.text_range.start.character + m.start("value")
    return Field(
        name=m.group("name").strip(),
        value=value,
        raw_value=raw,
        line=ln,
        range=Range.line(ln, length),
        value_range=Range.of(ln, vstart, ln, vstart + len(raw)),
    )


def _frontmatter(lines: list[str]) -> Frontmatter | None:
    if not lines or lines[0].strip() != "---":
        return None
    end = None
    for i in range(1, min(len(lines), 500)):
        if lines[i].strip() in ("---", "..."):
            end = i
            break
    terminated = end is not None
    last = end if end is not None else min(len(lines), 500) - 1
    entries: list[FrontmatterEntry] = []
    i = 1
    stop = end if end is not None else last + 1
    while i < stop:
        m = _FM_KEY.match(lines[i])
        if m is None:
            i += 1
            continue
        key, raw = m.group("key"), m.group("value").strip()
        value: str | list[str]
        j = i + 1
        if raw.startswith("[") and raw.endswith("]"):
            value = [_unquote(v) for v in raw[1:-1].split(",") if v.strip()]
        elif not raw:
            block: list[str] = []
            while j < stop and lines[j].lstrip().startswith("- "):
                block.append(_unquote(lines[j].lstrip()[2:]))
                j += 1
            value = block if block else ""
        else:
            value = _unquote(raw)
        entries.append(FrontmatterEntry(key, value, i, Range.line(i, len(lines[i]))))
        i = j
    return Frontmatter(tuple(entries), 0, last, terminated)


def _unquote(value: str) -> str:
    value = value.strip()
    if "#" in value and not value.startswith(("'", '"')):
        value = value.split(" #", 1)[0].strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in ("'", '"'):
        return value[1:-1]
    return value


def position_in(doc: Document, line: int, character: int) -> Position:
    """A position clamped into the document (for fronts that receive arbitrary positions)."""
    line = max(0, min(line, len(doc.lines) - 1))
    return Position(line, max(0, min(character, len(doc.lines[line]))))


__all__ = ["kind_for", "mistune", "parse_bytes", "parse_file", "parse_text", "position_in"]
