"""Chunking: ## sections with a file header, LOG entries, stable ids, size caps, transcript turns."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from memls.core.recall import chunking
from memls.core.recall.chunking import chunk_markdown, chunk_turn, normalize_timestamp, slugify
from tests.recall_fixtures.roots import CHECKPOINT, LOG, TOPIC


def test_topic_sections_with_frontmatter_header() -> None:
    chunks = chunk_markdown("memory/garden.md", TOPIC, "topic")
    assert [c.id for c in chunks] == [
        "memory/garden.md#top",
        "memory/garden.md#schedule",
        "memory/garden.md#failures",
    ]
    top, schedule, failures = chunks
    assert (top.start_line, top.end_line) == (8, 10)  # title line through the intro paragraph
    assert (schedule.start_line, schedule.end_line) == (12, 13)
    assert (failures.start_line, failures.end_line) == (15, 16)
    assert schedule.heading == "Schedule"
    assert schedule.text.startswith("## Schedule\nBed 3")
    header = schedule.header
    assert "Garden watering" in header
    assert "How and when the tomato beds are watered" in header
    assert "tags: garden, water" in header
    assert schedule.embed_text.startswith(header + "\n\n## Schedule")
    assert schedule.timestamp == "2026-10-01T00:00:00"  # frontmatter `created`


def test_ids_and_hashes_survive_edits_elsewhere() -> None:
    before = {c.id: c.content_hash for c in chunk_markdown("t.md", TOPIC, "topic")}
    edited = TOPIC.replace("seedlings wilted", "seedlings wilted badly")
    after = {c.id: c.content_hash for c in chunk_markdown("t.md", edited, "topic")}
    assert before.keys() == after.keys()
    assert before["t.md#schedule"] == after["t.md#schedule"]
    assert before["t.md#failures"] != after["t.md#failures"]


def test_header_change_rehashes_every_chunk() -> None:
    edited = TOPIC.replace("How and when", "When and how")
    before = {c.id: c.content_hash for c in chunk_markdown("t.md", TOPIC, "topic")}
    after = {c.id: c.content_hash for c in chunk_markdown("t.md", edited, "topic")}
    assert all(before[k] != after[k] for k in before)


def test_log_one_chunk_per_dated_entry() -> None:
    chunks = chunk_markdown("LOG.md", LOG, "log")
    assert [c.heading for c in chunks] == [
        "2026-11-20 10:05 — Recall fallback decision",
        "2026-11-28 09:00 — Compost bins",
    ]
    first = chunks[0]
    assert "## Checkpoint Bundle" in first.text  # the undated heading stays with its entry
    assert first.timestamp == "2026-11-20T10:05:00"
    assert chunks[1].timestamp == "2026-11-28T09:00:00"


def test_checkpoint_branch_and_saved_time() -> None:
    chunks = chunk_markdown("checkpoint-fix-parser.md", CHECKPOINT, "checkpoint")
    assert {c.branch for c in chunks} == {"fix/parser"}
    assert {c.timestamp for c in chunks} == {"2026-11-29T17:40:00"}
    assert chunks[1].id == "checkpoint-fix-parser.md#next-action-handle-tables-in-the-parser"


def test_repeated_headings_get_ordinals_and_empty_sections_are_skipped() -> None:
    text = "# T\n\n## Notes\none\n\n## Notes\ntwo\n\n## Empty\n\n## Notes\nthree\n"
    ids = [c.id for c in chunk_markdown("n.md", text, "topic")]
    assert ids == ["n.md#notes", "n.md#notes-2", "n.md#notes-3"]


def test_heading_inside_code_fence_does_not_split() -> None:
    text = "# T\n\n## Real\n```\n## not a heading\n```\nafter\n"
    chunks = chunk_markdown("f.md", text, "topic")
    assert [c.heading for c in chunks] == ["Real"]
    assert "after" in chunks[0].text


def test_long_sections_are_cut_into_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chunking, "MAX_CHUNK_CHARS", 50)
    body = "\n".join(f"line number {i:02d} of the section" for i in range(10))
    chunks = chunk_markdown("big.md", f"# Big\n\n## Long\n{body}\n", "topic")
    assert [c.id for c in chunks][:3] == ["big.md#long", "big.md#long.2", "big.md#long.3"]
    assert all(len(c.text) <= 50 for c in chunks)
    assert chunks[0].start_line == 3
    assert chunks[-1].end_line == 13
    for a, b in itertools.pairwise(chunks):
        assert b.start_line == a.end_line + 1
    joined = "\n".join(c.text for c in chunks)
    assert joined == f"## Long\n{body}"


def test_turn_chunks() -> None:
    [chunk] = chunk_turn(
        "transcripts/s.jsonl",
        4,
        "User: why?\nAssistant: because.",
        10,
        12,
        header="Session transcript transcripts/s.jsonl",
        timestamp="2026-11-20T09:00:00Z",
        session_id="s",
        branch="main",
    )
    assert chunk.id == "transcripts/s.jsonl#turn-4"
    assert (chunk.start_line, chunk.end_line) == (11, 13)
    assert chunk.kind == "transcript"
    assert chunk.timestamp == "2026-11-20T09:00:00"
    assert chunk.heading == "User: why?"


def test_turn_embeds_its_words_without_header_or_role_labels() -> None:
    text = "User: Ana: we moved the standup to 9:30\n\nAssistant: Noted.\nUser: stays inline"
    [chunk] = chunk_turn(
        "transcripts/s.jsonl",
        1,
        text,
        0,
        1,
        header="Session transcript transcripts/s.jsonl, session 5f0c",
        timestamp=None,
        session_id="5f0c",
        branch=None,
    )
    assert chunk.embed_text == "Ana: we moved the standup to 9:30\n\nNoted.\nUser: stays inline"
    assert chunk.text == text  # shown and searched by text as rendered
    section = chunk_markdown("memory/garden.md", TOPIC, "topic")[0]
    assert section.embed_text.startswith(section.header + "\n\n")  # Markdown keeps its header


def test_slug_and_timestamps() -> None:
    assert slugify("Next Action: Wire `search()` in!") == "next-action-wire-search-in"
    assert slugify("!!!") == "section"
    assert normalize_timestamp("2026-11-30 14:02") == "2026-11-30T14:02:00"
    assert normalize_timestamp("2026-11-30T14:02:00+02:00") == "2026-11-30T12:02:00"
    assert normalize_timestamp("2026-11-30 · title") == "2026-11-30T00:00:00"
    assert normalize_timestamp("soon") is None


def test_every_line_of_a_turn_chunk_maps_to_the_jsonl_line_it_came_from(tmp_path: Path) -> None:
    """A turn cut into parts for size: each part's text line names the message's file line."""
    import json

    from memls.core.recall.chunking import decode_line_map
    from memls.core.recall.transcripts import parse_transcript
    from tests.agent_fixtures import turn

    long_answer = "\n".join(
        f"Step {i}: rebuild module-{i} and rerun its tests." for i in range(150)
    )
    records = [turn("user", "How do we rebuild everything?\nSecond line of the question.", n=0)]
    for n in range(3):
        records.append(
            json.dumps(
                {
                    "type": "assistant",
                    "uuid": f"use-{n}",
                    "sessionId": "sess-1",
                    "message": {
                        "role": "assistant",
                        "content": [
                            {
                                "type": "tool_use",
                                "id": f"t{n}",
                                "name": "Bash",
                                "input": {"command": f"make part{n}"},
                            }
                        ],
                    },
                }
            )
            + "\n"
        )
    records.append(turn("assistant", long_answer, n=1))
    path = tmp_path / "s.jsonl"
    path.write_text("".join(records), encoding="utf-8")
    file_lines = path.read_text(encoding="utf-8").splitlines()
    (only,) = parse_transcript(path).turns
    chunks = chunk_turn(
        "s.jsonl",
        0,
        only.text,
        only.start_line,
        only.end_line,
        header="h",
        timestamp=None,
        session_id=None,
        branch=None,
        line_map=only.line_map,
    )
    assert len(chunks) > 1  # cut for size
    seen: set[int] = set()
    for chunk in chunks:
        mapped = decode_line_map(chunk.line_map)
        assert len(mapped) == len(chunk.text.splitlines())
        for text, (line, conversation) in zip(chunk.text.splitlines(), mapped, strict=True):
            record = file_lines[line - 1]
            words = text.removeprefix("User: ").removeprefix("Assistant: ")
            if conversation:
                assert json.dumps(words)[1:-1] in record, (text, line)
            else:
                assert '"tool_use"' in record
            seen.add(line)
    assert seen == {1, 2, 3, 4, 5}
