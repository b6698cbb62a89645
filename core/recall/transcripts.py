"""Parsers for agent session transcripts (Claude Code and Pi JSONL) into messages and turns.

Recall indexes sessions as user+assistant *turns*, so this module turns a JSONL session file
into an ordered list of :class:`Message` objects (one per content block) and groups them into
:class:`Turn` objects whose rendered text is ready for embedding and full-text search.

Guarantees, because session files are written live by other programs and may be cut off,
hand-edited or corrupted:

* Nothing raises on file *content*: every line is either parsed or listed in ``skipped`` with
  a reason, so ``lines_parsed + len(skipped) == lines_total`` always holds.
* User, assistant and summary text is never shortened, in messages or in turn text. Only tool
  traffic and harness-injected text (tool calls, tool results, meta and system lines) is
  trimmed — head and tail kept with a ``[… N chars trimmed]`` note — and each turn spends at
  most :data:`TURN_TOOL_BUDGET` characters on it.
* Tail parsing: ``end_byte`` stops after the last complete line (a trailing line without
  ``"\\n"`` may still be being written), so parsing again from ``end_byte`` after the file grew
  yields only the new lines. Format detection and the Pi session header come from the start
  of the file even then. Turn ``index`` counts from 0 within one parse; use ``start_byte`` or
  ``start_line`` as a stable anchor.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

__all__ = [
    "TOOL_TEXT_CAP",
    "TURN_TOOL_BUDGET",
    "TURN_TOOL_ITEM_CAP",
    "Message",
    "Transcript",
    "Turn",
    "detect_format",
    "parse_transcript",
    "parse_transcript_bytes",
]

TOOL_TEXT_CAP = 2000
"""Longest tool output / injected text kept in a :class:`Message` (head and tail survive)."""
TURN_TOOL_ITEM_CAP = 800
"""Longest single tool item inside a turn's rendered text."""
TURN_TOOL_BUDGET = 4000
"""Characters of tool traffic a turn may hold; further tool items are counted, not shown."""
TOOL_CALL_CAP = 200
"""Longest argument summary in a ``[tool: name args]`` line."""

_HEAD_LINES = 20
_HEAD_BYTES = 1 << 20
_SUMMARY_KINDS = frozenset({"summary", "compaction", "branch_summary"})
_TURN_OPENING_KINDS = frozenset({"message", "image", "document"})
_CC_METADATA_TYPES = frozenset(
    {"progress", "file-history-snapshot", "queue-operation", "custom-title", "agent-name"}
)
_CC_TYPES = frozenset({"user", "assistant", "system", "summary"}) | _CC_METADATA_TYPES
_CC_ONLY_TYPES = _CC_TYPES - {"system"}
_PI_METADATA_TYPES = frozenset(
    {"model_change", "thinking_level_change", "custom", "label", "session_info"}
)
_PI_TYPES = frozenset({"message", "compaction", "branch_summary", "custom_message"}) | (
    _PI_METADATA_TYPES
)
_ARG_KEYS = (
    "command",
    "cmd",
    "file_path",
    "path",
    "pattern",
    "url",
    "query",
    "description",
    "prompt",
    "skill",
)
_WS = re.compile(r"\s+")


@dataclass(frozen=True)
class Message:
    """One piece of a session: a text block, a tool call or result, a summary, a marker."""

    role: str  # "user" | "assistant" | "system" | "summary" | "tool"
    text: str
    timestamp: str | None
    line: int  # 0-based line in the file
    byte_offset: int  # byte offset of the line start
    entry_id: str | None
    parent_id: str | None
    kind: str  # "message" | "tool_use" | "tool_result" | "thinking" | "compaction" | ...


@dataclass(frozen=True)
class Turn:
    """One user message and the reply (with trimmed tool traffic) that follows it."""

    index: int
    start_line: int
    end_line: int  # last line of the turn, inclusive
    start_byte: int
    end_byte: int  # just past the turn's last line
    timestamp: str | None
    text: str
    line_map: tuple[tuple[int, bool], ...] = ()
    """Per line of ``text`` (``str.splitlines``): the 0-based file line of the message it
    renders, and whether that message is conversation (not tool traffic or injected text)."""


@dataclass(frozen=True)
class Transcript:
    """A parsed session file, or the tail of one from a byte offset."""

    format: str  # "claude-code" | "pi-v3" | "pi-v1" | "unknown"
    path: Path
    session_id: str | None
    branch: str | None
    cwd: str | None
    messages: tuple[Message, ...]
    turns: tuple[Turn, ...]
    lines_total: int  # lines seen from start_byte on, a trailing partial line included
    lines_parsed: int
    skipped: tuple[tuple[int, str], ...]  # (line, reason)
    end_byte: int  # just past the last complete line consumed


def detect_format(first_lines: Sequence[dict[str, object]]) -> str:
    """Name the transcript format from the first parsed lines of a file.

    The first line that is decisive wins: a Pi ``session`` header (``version`` ≥ 2 means the
    tree format with ids, reported as ``pi-v3``), a Claude Code line (``sessionId``/``uuid``
    or a Claude-only entry type), or a headerless Pi entry.
    """
    for obj in first_lines:
        if not isinstance(obj, dict):
            continue
        kind = _str(obj.get("type"))
        if kind == "session":
            version = obj.get("version")
            is_tree = isinstance(version, int) and not isinstance(version, bool) and version >= 2
            return "pi-v3" if is_tree else "pi-v1"
        if "sessionId" in obj or "uuid" in obj or "parentUuid" in obj:
            return "claude-code"
        if kind in _CC_ONLY_TYPES:
            return "claude-code"
        if kind in _PI_TYPES:
            return "pi-v3" if "id" in obj and "parentId" in obj else "pi-v1"
    return "unknown"


def parse_transcript(path: Path, start_byte: int = 0) -> Transcript:
    """Parse a session file from ``start_byte`` (a line start; 0 for the whole file).

    Only reading the file can fail (``OSError``); its content never makes this raise.
    """
    path = Path(path)
    with path.open("rb") as handle:
        size = handle.seek(0, 2)
        start = min(max(start_byte, 0), size)
        head = b""
        base_line = 0
        mid_line = False
        if start > 0:
            handle.seek(0)
            head = handle.read(min(start, _HEAD_BYTES))
            base_line = head.count(b"\n")
            while handle.tell() < start:
                chunk = handle.read(min(start - handle.tell(), _HEAD_BYTES))
                if not chunk:
                    break
                base_line += chunk.count(b"\n")
            handle.seek(start - 1)
            mid_line = handle.read(1) != b"\n"
        handle.seek(start)
        region = handle.read()
    return _parse(
        region, start, base_line, mid_line=mid_line, head=_head_objects(head), path=path, fmt=None
    )


def parse_transcript_bytes(
    data: bytes,
    path: Path = Path("<memory>"),
    start_byte: int = 0,
    fmt: str | None = None,
) -> Transcript:
    """Parse a whole session held in memory, from ``start_byte`` on (see :func:`parse_transcript`).

    ``data`` is the entire file; bytes before ``start_byte`` are read only to detect the format,
    find the Pi session header and number the lines. ``fmt`` skips detection when given.
    """
    data = bytes(data)
    start = min(max(start_byte, 0), len(data))
    head = data[: min(start, _HEAD_BYTES)]
    base_line = data.count(b"\n", 0, start)
    mid_line = start > 0 and data[start - 1 : start] != b"\n"
    region = data[start:]
    return _parse(
        region, start, base_line, mid_line=mid_line, head=_head_objects(head), path=path, fmt=fmt
    )


# --- line splitting and decoding -------------------------------------------------------------


@dataclass(frozen=True)
class _Line:
    number: int
    start: int
    end: int  # just past the "\n"
    obj: dict[str, object] | None
    problem: str | None


def _decode(raw: bytes, first_in_file: bool) -> tuple[dict[str, object] | None, str | None]:
    """Decode one JSONL line; invalid UTF-8 becomes U+FFFD rather than losing the line."""
    text = raw.decode("utf-8", errors="replace")
    if first_in_file:
        text = text.removeprefix("\ufeff")
    if not text.strip():
        return None, "blank line"
    try:
        obj = json.loads(text)
    except RecursionError:
        return None, "malformed JSON: nested too deeply"
    except ValueError as exc:
        return None, f"malformed JSON: {str(exc)[:120]}"
    if not isinstance(obj, dict):
        return None, f"not a JSON object ({type(obj).__name__})"
    return obj, None


def _split(region: bytes, base_byte: int, base_line: int) -> tuple[list[_Line], int, bool]:
    """Split into complete lines; return them, the bytes consumed and whether a partial is left."""
    lines: list[_Line] = []
    pos = 0
    number = base_line
    while pos < len(region):
        newline = region.find(b"\n", pos)
        if newline < 0:
            return lines, pos, True
        obj, problem = _decode(region[pos:newline], base_byte + pos == 0)
        lines.append(_Line(number, base_byte + pos, base_byte + newline + 1, obj, problem))
        pos = newline + 1
        number += 1
    return lines, pos, False


def _head_objects(head: bytes) -> list[dict[str, object]]:
    """The first parseable objects of a file, for format detection and header metadata."""
    objects: list[dict[str, object]] = []
    for index, raw in enumerate(head.split(b"\n")[:-1]):
        obj, _problem = _decode(raw, index == 0)
        if obj is not None:
            objects.append(obj)
            if len(objects) >= _HEAD_LINES:
                break
    return objects


# --- text helpers ----------------------------------------------------------------------------


def _clean(text: str) -> str:
    """Make text encodable as UTF-8 (JSON may carry lone surrogates that SQLite rejects)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def _trim(text: str, cap: int) -> str:
    """Keep the head and tail of long tool output, saying how much was cut."""
    if len(text) <= cap:
        return text
    head = cap * 2 // 3
    tail = cap - head
    cut = len(text) - head - tail
    return f"{text[:head]}\n[… {cut} chars trimmed]\n{text[-tail:] if tail else ''}"


def _one_line(text: str, cap: int) -> str:
    text = _WS.sub(" ", text).strip()
    return text if len(text) <= cap else text[: cap - 1] + "…"


def _str(value: object) -> str | None:
    return _clean(value) if isinstance(value, str) else None


def _flatten(content: object) -> str:
    """Text of a content value: a string, or a list of blocks (text kept, media named)."""
    if isinstance(content, str):
        return _clean(content)
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(_clean(block))
        elif isinstance(block, dict):
            text = block.get("text")
            if isinstance(text, str):
                parts.append(_clean(text))
            elif block.get("type") in ("image", "document"):
                parts.append(f"[{block['type']}]")
    return "\n".join(part for part in parts if part)


def _json_text(value: object) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (ValueError, TypeError, RecursionError):
        return repr(type(value).__name__)


def _tool_call(name: object, args: object) -> str:
    """A short ``[tool: name args]`` line: the most telling argument, or the arguments as JSON."""
    label = _one_line(name, 80) if isinstance(name, str) and name.strip() else "?"
    summary = ""
    if isinstance(args, dict):
        for key in _ARG_KEYS:
            value = args.get(key)
            if isinstance(value, str) and value.strip():
                summary = value
                break
        else:
            summary = _json_text(args) if args else ""
    elif isinstance(args, str):
        summary = args
    elif args is not None:
        summary = _json_text(args)
    summary = _one_line(_clean(summary), TOOL_CALL_CAP)
    return f"[tool: {label} {summary}]" if summary else f"[tool: {label}]"


def _iso_from_millis(value: object) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return datetime.fromtimestamp(value / 1000, tz=UTC).isoformat().replace("+00:00", "Z")
    except (OverflowError, ValueError, OSError):
        return None


# --- entry handlers --------------------------------------------------------------------------


class _Collector:
    """Gathers messages and session metadata while the format's handler walks the lines."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.ends: list[int] = []
        self.session_id: str | None = None
        self.branch: str | None = None
        self.cwd: str | None = None
        self.line: _Line = _Line(0, 0, 0, None, None)
        self.timestamp: str | None = None
        self.entry_id: str | None = None
        self.parent_id: str | None = None

    def stamp(self, timestamp: str | None, entry_id: str | None, parent_id: str | None) -> None:
        """Set what every message of the current line carries."""
        self.timestamp, self.entry_id, self.parent_id = timestamp, entry_id, parent_id

    def add(self, role: str, text: str, kind: str) -> None:
        line = self.line
        self.messages.append(
            Message(
                role=role,
                text=text,
                timestamp=self.timestamp,
                line=line.number,
                byte_offset=line.start,
                entry_id=self.entry_id,
                parent_id=self.parent_id,
                kind=kind,
            )
        )
        self.ends.append(line.end)

    def add_blocks(self, role: str, content: object) -> None:
        """Add a user or assistant content value: string, or list of typed blocks."""
        if isinstance(content, str | dict):
            content = [content]
        if not isinstance(content, list):
            return
        for block in content:
            if isinstance(block, str):
                if block.strip():
                    self.add(role, _clean(block), "message")
                continue
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype in ("thinking", "redacted_thinking"):
                self.add(role, _str(block.get("thinking")) or "", "thinking")
            elif btype in ("tool_use", "toolCall", "server_tool_use"):
                args = block.get("input") if "input" in block else block.get("arguments")
                self.add("tool", _tool_call(block.get("name"), args), "tool_use")
            elif btype == "tool_result":
                text = _flatten(block.get("content"))
                if block.get("is_error") is True:
                    text = f"[error] {text}"
                self.add("tool", _trim(text, TOOL_TEXT_CAP), "tool_result")
            elif btype in ("image", "document"):
                self.add(role, f"[{btype}]", btype)
            else:
                plain = _str(block.get("text"))
                if plain is not None and plain.strip():
                    self.add(role, plain, "message")


def _claude_code(c: _Collector, obj: dict[str, object]) -> str | None:
    """Handle one Claude Code line; return a skip reason, or None when understood."""
    c.session_id = c.session_id or _str(obj.get("sessionId"))
    c.branch = _str(obj.get("gitBranch")) or c.branch
    c.cwd = _str(obj.get("cwd")) or c.cwd
    kind = _str(obj.get("type"))
    if kind == "summary":
        c.stamp(_str(obj.get("timestamp")), None, _str(obj.get("leafUuid")))
        summary = _str(obj.get("summary"))
        if not summary or not summary.strip():
            return "summary line without text"
        c.add("summary", summary, "summary")
        return None
    c.stamp(_str(obj.get("timestamp")), _str(obj.get("uuid")), _str(obj.get("parentUuid")))
    if kind in ("user", "assistant"):
        message = obj.get("message")
        if not isinstance(message, dict):
            return f"{kind} line without a message object"
        role = message.get("role")
        role = role if role in ("user", "assistant") else kind
        content = message.get("content")
        if obj.get("isCompactSummary") is True:
            c.add("summary", _flatten(content), "compaction")
        elif obj.get("isMeta") is True:
            text = _flatten(content)
            if text.strip():
                c.add("system", _trim(text, TOOL_TEXT_CAP), "meta")
        else:
            c.add_blocks(str(role), content)
        return None
    if kind == "system":
        content = _flatten(obj.get("content"))
        if obj.get("subtype") == "compact_boundary":
            c.add("system", content or "compacted", "compact_boundary")
        elif content.strip():
            c.add("system", _trim(content, TOOL_TEXT_CAP), "system")
        return None
    if kind in _CC_METADATA_TYPES:
        return None
    return _generic(c, obj)


def _pi(c: _Collector, obj: dict[str, object]) -> str | None:
    """Handle one Pi line (v1 or v3); return a skip reason, or None when understood."""
    kind = _str(obj.get("type"))
    message = obj.get("message")
    timestamp = _str(obj.get("timestamp"))
    if timestamp is None and isinstance(message, dict):
        timestamp = _iso_from_millis(message.get("timestamp"))
    c.stamp(timestamp, _str(obj.get("id")), _str(obj.get("parentId")))
    if kind == "session":
        c.session_id = _str(obj.get("id")) or c.session_id
        c.cwd = _str(obj.get("cwd")) or c.cwd
        return None
    if kind == "message":
        if not isinstance(message, dict):
            return "message entry without a message object"
        return _pi_message(c, message)
    if kind in ("compaction", "branch_summary"):
        summary = _str(obj.get("summary"))
        if not summary or not summary.strip():
            return f"{kind} entry without summary text"
        c.add("summary", summary, str(kind))
        return None
    if kind == "custom_message":
        text = _flatten(obj.get("content"))
        if text.strip():
            c.add("system", _trim(text, TOOL_TEXT_CAP), "custom_message")
        return None
    if kind in _PI_METADATA_TYPES:
        return None
    return _generic(c, obj)


def _pi_message(c: _Collector, message: dict[str, object]) -> str | None:
    role = message.get("role")
    content = message.get("content")
    if role in ("user", "assistant"):
        c.add_blocks(str(role), content)
        error = _str(message.get("errorMessage"))
        if error and error.strip():
            c.add("system", _trim(f"[error] {error}", TOOL_TEXT_CAP), "error")
        return None
    if role == "toolResult":
        text = _flatten(content)
        if message.get("isError") is True:
            text = f"[error] {text}"
        c.add("tool", _trim(text, TOOL_TEXT_CAP), "tool_result")
        return None
    if role == "bashExecution":
        command = _str(message.get("command")) or ""
        output = _str(message.get("output")) or ""
        c.add("tool", _tool_call("bash", command), "tool_use")
        c.add("tool", _trim(output, TOOL_TEXT_CAP), "tool_result")
        return None
    if role in ("branchSummary", "compactionSummary"):
        summary = _str(message.get("summary")) or _flatten(content)
        if not summary.strip():
            return f"{role} message without summary text"
        c.add("summary", summary, "branch_summary" if role == "branchSummary" else "compaction")
        return None
    text = _flatten(content)
    if text.strip():
        c.add("system", _trim(text, TOOL_TEXT_CAP), str(role) if isinstance(role, str) else "other")
        return None
    return f"message with role {_one_line(repr(role), 40)} and no text"


def _generic(c: _Collector, obj: dict[str, object]) -> str | None:
    """An entry type this parser does not know: keep its text if it has any."""
    kind = _one_line(repr(obj.get("type")), 40)
    message = obj.get("message")
    text = ""
    if isinstance(message, dict):
        text = _flatten(message.get("content"))
    for key in ("summary", "content", "text"):
        if not text.strip():
            text = _flatten(obj.get(key))
    if not text.strip():
        return f"unknown entry type {kind} without text"
    c.add("system", _trim(text, TOOL_TEXT_CAP), "other")
    return None


_HANDLERS: dict[str, Callable[[_Collector, dict[str, object]], str | None]] = {
    "claude-code": _claude_code,
    "pi-v3": _pi,
    "pi-v1": _pi,
}


# --- turns -----------------------------------------------------------------------------------


_LABELS = {
    "summary": "Summary",
    "compaction": "Compaction summary",
    "branch_summary": "Branch summary",
}


def _render(messages: Sequence[Message]) -> tuple[str, tuple[tuple[int, bool], ...]]:
    """Render a turn: conversation text whole, injected text trimmed, tool traffic budgeted.

    Harness-injected lines (meta, system, extension messages) are rare and may carry what the
    user typed, so each is shown trimmed; only tool calls and results share the budget.
    Returns the text and, for each of its lines (``str.splitlines``), the 0-based file line
    of the message it came from and whether that message is conversation (the user's or the
    assistant's words, a summary) rather than tool traffic or injected text.
    """
    # (label, [(text, file line, conversation)])
    paragraphs: list[tuple[str, list[tuple[str, int, bool]]]] = []
    budget = TURN_TOOL_BUDGET
    omitted = 0
    omitted_line = 0

    def put(label: str, text: str, line: int, spoken: bool) -> None:
        if paragraphs and paragraphs[-1][0] == label:
            paragraphs[-1][1].append((text, line, spoken))
        else:
            paragraphs.append((label, [(text, line, spoken)]))

    def flush_omitted() -> None:
        nonlocal omitted
        if omitted:
            label = paragraphs[-1][0] if paragraphs else "Assistant"
            put(label, f"[… {omitted} tool items omitted]", omitted_line, False)
            omitted = 0

    for message in messages:
        if message.kind in ("thinking", "compact_boundary"):
            continue
        if message.kind in _SUMMARY_KINDS:
            flush_omitted()
            put(_LABELS[message.kind], message.text, message.line, True)
        elif message.role in ("user", "assistant"):
            flush_omitted()
            label = "User" if message.role == "user" else "Assistant"
            put(label, message.text, message.line, True)
        elif message.role != "tool":
            flush_omitted()
            text = f"[{message.kind}] " + _trim(message.text, TURN_TOOL_ITEM_CAP)
            put("System", text, message.line, False)
        else:
            text = message.text
            if message.kind == "tool_result":
                text = "[result] " + _trim(message.text, TURN_TOOL_ITEM_CAP)
            if len(text) > budget:
                if not omitted:
                    omitted_line = message.line
                omitted += 1
                continue
            budget -= len(text)
            put("Assistant", text, message.line, False)
    flush_omitted()
    pieces: list[str] = []
    spans: list[tuple[int, int, bool]] = []  # (end offset, file line, conversation)
    offset = 0
    for number, (label, parts) in enumerate(paragraphs):
        lead = ("\n\n" if number else "") + f"{label}: "
        pieces.append(lead)
        offset += len(lead)
        for index, (text, line, spoken) in enumerate(parts):
            if index:
                pieces.append("\n")
                offset += 1
            pieces.append(text)
            offset += len(text)
            spans.append((offset, line, spoken))
    rendered = "".join(pieces)
    return rendered, _line_map(rendered, spans)


def _line_map(text: str, spans: Sequence[tuple[int, int, bool]]) -> tuple[tuple[int, bool], ...]:
    """For each line of ``text``, the message of the first span ending after the line starts."""
    import bisect

    ends = [end for end, _, _ in spans]
    out: list[tuple[int, bool]] = []
    start = 0
    for line in text.splitlines(keepends=True):
        at = bisect.bisect_right(ends, start)
        _, number, spoken = spans[min(at, len(spans) - 1)]
        out.append((number, spoken))
        start += len(line)
    return tuple(out)


def _group(messages: Sequence[Message]) -> Iterator[list[int]]:
    """Indices of the messages of each turn, in order.

    A turn opens at a user message unless the current one has no reply or tool traffic yet
    (consecutive user and meta lines stay together); summaries and compaction summaries stand alone; compact boundaries close a turn.
    """
    current: list[int] = []
    for index, message in enumerate(messages):
        if message.kind in _SUMMARY_KINDS or message.kind == "compact_boundary":
            if current:
                yield current
            current = []
            if message.kind != "compact_boundary":
                yield [index]
            continue
        opens = message.role == "user" and message.kind in _TURN_OPENING_KINDS
        if opens and any(messages[i].role in ("assistant", "tool") for i in current):
            yield current
            current = []
        current.append(index)
    if current:
        yield current


def _turns(messages: Sequence[Message], ends: Sequence[int]) -> tuple[Turn, ...]:
    turns: list[Turn] = []
    for indices in _group(messages):
        members = [messages[i] for i in indices]
        text, line_map = _render(members)
        if not text.strip():
            continue
        timestamps = [m.timestamp for m in members if m.timestamp]
        turns.append(
            Turn(
                index=len(turns),
                start_line=members[0].line,
                end_line=members[-1].line,
                start_byte=members[0].byte_offset,
                end_byte=ends[indices[-1]],
                timestamp=timestamps[0] if timestamps else None,
                text=text,
                line_map=line_map,
            )
        )
    return tuple(turns)


# --- driver ----------------------------------------------------------------------------------


def _head_metadata(c: _Collector, fmt: str, head: Sequence[dict[str, object]]) -> None:
    """Session id, cwd and branch from the start of the file, for a tail parse."""
    for obj in head:
        if fmt == "claude-code":
            c.session_id = c.session_id or _str(obj.get("sessionId"))
            c.branch = _str(obj.get("gitBranch")) or c.branch
            c.cwd = _str(obj.get("cwd")) or c.cwd
        elif obj.get("type") == "session":
            c.session_id = _str(obj.get("id"))
            c.cwd = _str(obj.get("cwd"))
            return


def _parse(
    region: bytes,
    base_byte: int,
    base_line: int,
    *,
    mid_line: bool,
    head: list[dict[str, object]],
    path: Path,
    fmt: str | None,
) -> Transcript:
    lines, consumed, partial = _split(region, base_byte, base_line)
    total = len(lines) + (1 if partial else 0)
    skipped: list[tuple[int, str]] = []
    if mid_line and lines:
        skipped.append((lines[0].number, "start_byte is not at a line start"))
        lines = lines[1:]
    if fmt is None:
        objects = head + [line.obj for line in lines[:_HEAD_LINES] if line.obj is not None]
        fmt = detect_format(objects)
    handler = _HANDLERS.get(fmt)
    collector = _Collector()
    if base_byte > 0:
        _head_metadata(collector, fmt, head)
    parsed = 0
    for line in lines:
        if line.obj is None:
            skipped.append((line.number, line.problem or "unreadable line"))
            continue
        if handler is None:
            skipped.append((line.number, "unknown transcript format"))
            continue
        collector.line = line
        count = len(collector.messages)
        try:
            problem = handler(collector, line.obj)
        except Exception as exc:  # a content shape nobody foresaw must not stop the parse
            del collector.messages[count:]
            del collector.ends[count:]
            problem = f"unexpected entry shape: {type(exc).__name__}"
        if problem is None:
            parsed += 1
        else:
            skipped.append((line.number, problem))
    if partial:
        reason = "incomplete last line (no newline yet); not consumed"
        if mid_line and consumed == 0:
            reason = "start_byte is not at a line start; " + reason
        skipped.append((base_line + total - 1, reason))
    return Transcript(
        format=fmt,
        path=path,
        session_id=collector.session_id,
        branch=collector.branch,
        cwd=collector.cwd,
        messages=tuple(collector.messages),
        turns=_turns(collector.messages, collector.ends),
        lines_total=total,
        lines_parsed=parsed,
        skipped=tuple(skipped),
        end_byte=base_byte + consumed,
    )
