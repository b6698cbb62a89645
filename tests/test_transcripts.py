"""Transcript parsers: real Claude Code and Pi v1 sessions, hand-written fixtures, tail parsing.

"No user or assistant text lost" is checked with a separate minimal reader below: every
non-empty user/assistant text block must appear *whole* in the text of the turn covering its
line, because the size cap applies only to tool traffic and harness-injected text (Claude Code
``isMeta`` lines, which keep their first characters, so a 200-character prefix is checked).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memls.core.recall.transcripts import (
    TOOL_TEXT_CAP,
    TURN_TOOL_BUDGET,
    Message,
    Transcript,
    detect_format,
    parse_transcript,
    parse_transcript_bytes,
)

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "transcripts"
SHARED = Path(__file__).resolve().parents[2] / "shared"
REAL_DIR = SHARED / "reference" / "transcripts"
REAL_FILES = sorted(REAL_DIR.glob("*/*.jsonl")) if REAL_DIR.is_dir() else []


def _real_params() -> list[object]:
    if not REAL_FILES:
        reason = f"real transcripts not available at {REAL_DIR}"
        print(reason)
        return [pytest.param(None, marks=pytest.mark.skip(reason=reason), id="absent")]
    return [pytest.param(path, id=f"{path.parent.name}/{path.name}") for path in REAL_FILES]


def _independent_texts(data: bytes) -> list[tuple[int, str, bool]]:
    """(line, text, whole) for each user/assistant text block, read without the parser."""
    found: list[tuple[int, str, bool]] = []
    for number, raw in enumerate(data.split(b"\n")[:-1]):
        entry = json.loads(raw)
        message = entry.get("message")
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            continue
        if entry.get("type") not in ("user", "assistant", "message"):
            continue
        content = message.get("content")
        blocks = [content] if isinstance(content, str) else content
        for block in blocks or []:
            text = block if isinstance(block, str) else block.get("text")
            if isinstance(block, dict) and block.get("type") != "text":
                continue
            if isinstance(text, str) and text.strip():
                found.append((number, text, entry.get("isMeta") is not True))
    return found


def _check_invariants(transcript: Transcript, data: bytes, start_byte: int = 0) -> None:
    assert transcript.lines_parsed + len(transcript.skipped) == transcript.lines_total
    end = transcript.end_byte
    assert start_byte <= end <= len(data)
    assert end == start_byte or data[end - 1 : end] == b"\n"
    for message in transcript.messages:
        assert data.count(b"\n", 0, message.byte_offset) == message.line
        message.text.encode("utf-8")
    for turn in transcript.turns:
        assert data.count(b"\n", 0, turn.start_byte) == turn.start_line
        assert data.count(b"\n", 0, turn.end_byte) == turn.end_line + 1
        assert data[turn.end_byte - 1 : turn.end_byte] == b"\n"
        turn.text.encode("utf-8")
    starts = [turn.start_byte for turn in transcript.turns]
    assert starts == sorted(starts)
    assert [turn.index for turn in transcript.turns] == list(range(len(transcript.turns)))


# --- real sessions -----------------------------------------------------------------------


@pytest.mark.parametrize("path", _real_params())
def test_real_session_every_line_accounted_and_no_text_lost(path: Path) -> None:
    data = path.read_bytes()
    transcript = parse_transcript(path)
    expected = "pi-v1" if path.parent.name == "pi" else "claude-code"
    assert transcript.format == expected
    assert transcript.lines_total == data.count(b"\n")
    assert transcript.lines_parsed + len(transcript.skipped) == transcript.lines_total
    assert transcript.end_byte == len(data)
    assert transcript.session_id
    assert transcript.cwd
    _check_invariants(transcript, data)

    texts = _independent_texts(data)
    assert texts, "the reference session should hold conversation text"
    for line, text, whole in texts:
        covering = [t for t in transcript.turns if t.start_line <= line <= t.end_line]
        assert len(covering) == 1, f"line {line} is in {len(covering)} turns"
        needle = text if whole else text[:200]
        assert needle in covering[0].text, f"text from line {line} missing from its turn"


@pytest.mark.parametrize("path", _real_params())
def test_real_session_tail_parse_from_a_turn_start_gives_the_same_turns(path: Path) -> None:
    data = path.read_bytes()
    full = parse_transcript(path)
    assert len(full.turns) >= 2
    cut = full.turns[len(full.turns) // 2]
    tail = parse_transcript(path, start_byte=cut.start_byte)
    assert tail.format == full.format
    assert tail.session_id == full.session_id
    assert tail.cwd == full.cwd
    later = full.turns[cut.index :]
    assert [t.text for t in tail.turns] == [t.text for t in later]
    assert [(t.start_line, t.end_byte) for t in tail.turns] == [
        (t.start_line, t.end_byte) for t in later
    ]
    _check_invariants(tail, data, cut.start_byte)
    same = parse_transcript_bytes(data, path, start_byte=cut.start_byte)
    assert same == tail


# --- fixtures ----------------------------------------------------------------------------


def test_pi_v3_ids_compaction_and_branch_summary() -> None:
    path = FIXTURES / "pi-v3-compaction.jsonl"
    transcript = parse_transcript(path)
    _check_invariants(transcript, path.read_bytes())
    assert transcript.format == "pi-v3"
    assert transcript.skipped == ()
    assert transcript.lines_parsed == transcript.lines_total == 16
    assert transcript.session_id == "5e55a0a1-0000-4000-8000-00000000f1x3"
    assert transcript.cwd == "/home/dev/garden"
    assert transcript.branch is None

    by_kind: dict[str, Message] = {}
    for message in transcript.messages:
        by_kind.setdefault(message.kind, message)
    compaction = by_kind["compaction"]
    assert (compaction.role, compaction.entry_id, compaction.parent_id) == (
        "summary",
        "a0000006",
        "a0000005",
    )
    assert by_kind["branch_summary"].parent_id == "a0000002"
    assert by_kind["thinking"].text == "private musing about irrigation"
    assert by_kind["tool_use"].text == "[tool: bash cat schedule.txt]"

    texts = [t.text for t in transcript.turns]
    assert texts[0] == (
        "User: Where do the tomato seedlings get watered?\n\n"
        "Assistant: Let me look at the watering schedule.\n"
        "[tool: bash cat schedule.txt]\n"
        "[result] bed 3: drip line, 06:00 daily\n"
        "Bed 3 is on the drip line every morning at six."
    )
    assert texts[1].startswith("Compaction summary: Earlier the user asked")
    assert texts[3] == "Branch summary: An abandoned branch tried moving the schedule to noon."
    assert all("private musing" not in text for text in texts)
    assert "frost expected tonight" in texts[4]
    assert texts[4].endswith("Assistant: Yes, cover them with fleece before sunset.")
    assert transcript.turns[1].start_line == transcript.turns[1].end_line == 6


def test_claude_code_summary_line_and_compact_boundary() -> None:
    path = FIXTURES / "claude-code-summary.jsonl"
    transcript = parse_transcript(path)
    _check_invariants(transcript, path.read_bytes())
    assert transcript.format == "claude-code"
    assert transcript.skipped == ()
    assert transcript.session_id == "cc000000-1111-4222-8333-444444444444"
    assert transcript.branch == "feature/seed-mix"  # the latest branch seen
    kinds = [m.kind for m in transcript.messages]
    assert kinds.count("compact_boundary") == 1
    assert [t.text.split(":", 1)[0] for t in transcript.turns] == [
        "Summary",
        "User",
        "Compaction summary",
        "User",
    ]
    summary = transcript.turns[0]
    assert summary.text == "Summary: Bird feeder inventory script"
    assert transcript.messages[0].parent_id == "c0000000-0000-4000-8000-000000000004"
    first = transcript.turns[1]
    assert "quiet deliberation" not in first.text
    assert "[tool: Bash wc -l feeders.csv]\n[result] 13 feeders.csv" in first.text
    assert first.text.endswith("There are 12 feeders (13 lines including the header).")
    assert (first.start_line, first.end_line, first.timestamp) == (2, 7, "2025-04-02T08:00:00.000Z")
    assert all("Conversation compacted" not in t.text for t in transcript.turns)


def test_malformed_and_truncated_lines_are_counted_not_fatal() -> None:
    path = FIXTURES / "malformed-truncated.jsonl"
    data = path.read_bytes()
    transcript = parse_transcript(path)
    _check_invariants(transcript, data)
    assert transcript.format == "claude-code"
    assert transcript.lines_total == 10
    assert transcript.lines_parsed == 4
    reasons = dict(transcript.skipped)
    assert reasons[1].startswith("malformed JSON")
    assert reasons[3] == "blank line"
    assert reasons[4] == "not a JSON object (list)"
    assert reasons[5] == "unknown entry type 'telemetry-ping' without text"
    assert reasons[6].startswith("malformed JSON")
    assert reasons[9].startswith("incomplete last line")
    assert transcript.end_byte == data.rindex(b"\n") + 1
    joined = "\n".join(t.text for t in transcript.turns)
    assert "A stray note with text that must be kept." in joined
    assert "Roughly 1285" not in joined


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    path = FIXTURES / "pi-v1-invalid-utf8.jsonl"
    transcript = parse_transcript(path)
    _check_invariants(transcript, path.read_bytes())
    assert transcript.format == "pi-v1"
    assert transcript.session_id == "9f000000-0000-4000-8000-00000000abcd"
    assert transcript.skipped[0][0] == 2
    assert transcript.lines_parsed == 3
    user, assistant = transcript.messages
    assert user.text == "Hive weight: 41 kg \ufffd\ufffd heavy enough?"
    assert (user.entry_id, user.parent_id) == (None, None)
    assert (
        assistant.text == "Yes, that colony has enough stores \ufffd for winter."
    )  # lone surrogate


# --- tail parsing ------------------------------------------------------------------------


def _pi_line(entry_id: str, parent: str, role: str, text: str) -> bytes:
    content = [{"type": "text", "text": text}]
    entry = {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2025-03-02T08:00:00.000Z",
        "message": {"role": role, "content": content},
    }
    return json.dumps(entry).encode() + b"\n"


def test_appended_session_yields_only_new_turns(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    shutil.copy(FIXTURES / "pi-v3-compaction.jsonl", path)
    first = parse_transcript(path)
    with path.open("ab") as handle:
        handle.write(_pi_line("b0000001", "a0000015", "user", "Which fleece weight?"))
        handle.write(_pi_line("b0000002", "b0000001", "assistant", "Use 30 gsm fleece."))
        handle.write(_pi_line("b0000003", "b0000002", "user", "Thanks"))
    second = parse_transcript(path, start_byte=first.end_byte)
    _check_invariants(second, path.read_bytes(), first.end_byte)
    assert second.format == "pi-v3"
    assert second.session_id == first.session_id
    assert second.cwd == "/home/dev/garden"
    assert second.lines_total == second.lines_parsed == 3
    assert [t.text for t in second.turns] == [
        "User: Which fleece weight?\n\nAssistant: Use 30 gsm fleece.",
        "User: Thanks",
    ]
    assert second.turns[0].start_line == first.lines_total
    assert second.messages[0].parent_id == "a0000015"
    third = parse_transcript(path, start_byte=second.end_byte)
    assert (third.lines_total, third.turns, third.end_byte) == (0, (), second.end_byte)


def test_partial_last_line_is_picked_up_once_complete(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    line = _pi_line("c1", "", "assistant", "half written")
    header = b'{"type":"session","version":3,"id":"s-1","cwd":"/w"}\n'
    path.write_bytes(header + _pi_line("c0", "", "user", "hello") + line[:20])
    before = parse_transcript(path)
    assert before.end_byte == path.stat().st_size - 20
    assert before.skipped == ((2, "incomplete last line (no newline yet); not consumed"),)
    with path.open("ab") as handle:
        handle.write(line[20:])
    after = parse_transcript(path, start_byte=before.end_byte)
    assert after.skipped == ()
    assert [m.text for m in after.messages] == ["half written"]
    assert after.messages[0].line == 2


def test_start_byte_mid_line_and_beyond_end() -> None:
    data = (FIXTURES / "claude-code-summary.jsonl").read_bytes()
    middle = parse_transcript_bytes(data, start_byte=5)
    assert middle.skipped[0] == (0, "start_byte is not at a line start")
    assert middle.lines_parsed + len(middle.skipped) == middle.lines_total
    assert middle.format == "claude-code"
    beyond = parse_transcript_bytes(data, start_byte=len(data) + 100)
    assert (beyond.lines_total, beyond.end_byte, beyond.messages) == (0, len(data), ())


# --- trimming and budgets ----------------------------------------------------------------


def _cc_line(content: object, role: str = "assistant") -> bytes:
    entry = {"type": role, "sessionId": "s", "message": {"role": role, "content": content}}
    return json.dumps(entry).encode() + b"\n"


def test_tool_output_trimmed_head_and_tail_with_note() -> None:
    output = "HEAD" + "x" * 10_000 + "TAIL"
    data = _cc_line("run it", "user") + _cc_line(
        [{"type": "tool_result", "tool_use_id": "t", "content": output}], "user"
    )
    transcript = parse_transcript_bytes(data)
    result = transcript.messages[-1]
    assert result.kind == "tool_result"
    assert len(result.text) < TOOL_TEXT_CAP + 40
    assert result.text.startswith("HEAD")
    assert result.text.endswith("TAIL")
    assert f"[… {len(output) - TOOL_TEXT_CAP} chars trimmed]" in result.text


def test_long_conversation_text_is_never_cut_but_tool_traffic_is_budgeted() -> None:
    question = "why " * 3000
    lines = [_cc_line(question, "user")]
    for n in range(60):
        lines.append(
            _cc_line(
                [{"type": "tool_use", "id": f"t{n}", "name": "Read", "input": {"path": f"/f{n}"}}]
            )
        )
        lines.append(
            _cc_line(
                [{"type": "tool_result", "tool_use_id": f"t{n}", "content": "y" * 3000}], "user"
            )
        )
    answer = "because " * 2000
    lines.append(_cc_line([{"type": "text", "text": answer}]))
    transcript = parse_transcript_bytes(b"".join(lines))
    assert len(transcript.turns) == 1
    text = transcript.turns[0].text
    assert question in text
    assert answer in text
    assert len(text) <= len(question) + len(answer) + TURN_TOOL_BUDGET + 200
    assert "tool items omitted]" in text


# --- detection -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        ([{"type": "session", "version": 3, "id": "x"}], "pi-v3"),
        ([{"type": "session", "version": 2, "id": "x"}], "pi-v3"),
        ([{"type": "session", "id": "x", "cwd": "/"}], "pi-v1"),
        ([{"type": "message", "id": "a", "parentId": None, "message": {}}], "pi-v3"),
        ([{"type": "message", "message": {"role": "user"}}], "pi-v1"),
        ([{"type": "summary", "summary": "s", "leafUuid": "u"}], "claude-code"),
        ([{"type": "system", "subtype": "x"}, {"type": "user", "uuid": "u"}], "claude-code"),
        ([{"type": "file-history-snapshot", "snapshot": {}}], "claude-code"),
        ([{"hello": 1}, {"type": "weird"}], "unknown"),
        ([], "unknown"),
    ],
)
def test_detect_format(lines: list[dict[str, object]], expected: str) -> None:
    assert detect_format(lines) == expected


def test_unknown_format_lines_are_skipped_with_reason() -> None:
    transcript = parse_transcript_bytes(b'{"a": 1}\n{"b": 2}\n')
    assert transcript.format == "unknown"
    assert transcript.skipped == (
        (0, "unknown transcript format"),
        (1, "unknown transcript format"),
    )


# --- properties --------------------------------------------------------------------------

_scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=20)
_json = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
_keys = st.sampled_from(
    [
        "type",
        "message",
        "role",
        "content",
        "text",
        "summary",
        "isCompactSummary",
        "isMeta",
        "subtype",
        "id",
        "parentId",
        "uuid",
        "sessionId",
        "timestamp",
        "name",
        "input",
        "arguments",
        "thinking",
        "version",
        "cwd",
        "gitBranch",
    ]
)
_values = _json | st.sampled_from(
    [
        "user",
        "assistant",
        "system",
        "summary",
        "session",
        "message",
        "compaction",
        "tool_use",
        "tool_result",
        "toolCall",
        "toolResult",
        "thinking",
        "text",
        "compact_boundary",
    ]
)
_entry = st.recursive(
    st.dictionaries(_keys, _values, max_size=6),
    lambda inner: st.dictionaries(_keys, inner | st.lists(inner, max_size=3) | _values, max_size=6),
    max_leaves=10,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(max_size=400), start=st.integers(min_value=-5, max_value=450))
def test_arbitrary_bytes_never_raise(data: bytes, start: int) -> None:
    transcript = parse_transcript_bytes(data, start_byte=start)
    assert transcript.lines_parsed + len(transcript.skipped) == transcript.lines_total
    assert transcript.end_byte <= len(data)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    entries=st.lists(_entry, max_size=8),
    fmt=st.sampled_from([None, "claude-code", "pi-v3", "pi-v1"]),
)
def test_arbitrary_entry_shapes_never_raise(
    entries: list[dict[str, object]], fmt: str | None
) -> None:
    data = b"".join(json.dumps(entry).encode() + b"\n" for entry in entries)
    transcript = parse_transcript_bytes(data, fmt=fmt)
    _check_invariants(transcript, data)
    assert transcript.lines_total == len(entries)


def test_deep_nesting_and_crlf_lines() -> None:
    user = _cc_line("first question", "user").replace(b"\n", b"\r\n")
    data = b"[" * 100_000 + b"\n" + user + b'{"type": ' + b'{"a": ' * 50_000 + b"\n"
    transcript = parse_transcript_bytes(data)
    assert transcript.format == "claude-code"
    assert [reason for _line, reason in transcript.skipped] == [
        "malformed JSON: nested too deeply",
        "malformed JSON: nested too deeply",
    ]
    assert [t.text for t in transcript.turns] == ["User: first question"]
