"""Parsing plus every rule never raises, whatever the bytes (hypothesis, ≥ 2,000 examples)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memls.core.config import Config
from memls.core.parse import parse_bytes, parse_text
from memls.core.rules import check_document
from memls.core.workspace import Workspace

NOW = dt.datetime(2026, 11, 30, 12, 0)
NAMES = ["MEMORY.md", "checkpoint-x.md", ".handoff.md", "LOG.md", "topic.md", "memory/m.md"]

_fragments = st.sampled_from(
    [
        "# Checkpoint: x\n",
        "# Project Memory\n",
        "## Active Checkpoints\n",
        "- **x** (main, Nov 30 10:00) — s\n",
        "Resume any: `continue` or `continue {name}`\n",
        "- **Branch:** `main`\n",
        "- **Saved:** 2026-11-30 10:00\n",
        "- **Plan:** `~/.claude/plans/p.md` (step 9 of 2)\n",
        "## Next Action: go\n",
        "## Failed Approaches\n",
        "## Checkpoint Bundle\nApproved: 2026-11-30 10:00\n",
        "- [ ] recall: verify\n",
        "- [x] memory: `memory/a.md`\n",
        "```\n",
        "~~~python\n",
        "---\nname: a\n",
        "---\n",
        "<!-- memls-disable-next-line IX004 -->\n",
        "<!-- memls-disable -->\n",
        "\r\n",
        "\x00",
        "\ufeff",
        "[link](../x.md) `a\\b.md`\n",
        "## 2026-11-30 10:00 — entry\n",
        "    - nested\n" * 3,
        "> quote\n",
        "***\n",
        "#\n",
        "- \n",
    ]
)
_text = st.lists(st.one_of(_fragments, st.text(max_size=40)), max_size=30).map("".join)


def _run(tmp: Path, name: str, doc_text: str | None = None, data: bytes | None = None) -> None:
    ws = Workspace(tmp, Config())
    path = tmp / name
    doc = parse_bytes(data, path) if data is not None else parse_text(doc_text or "", path)
    ws.set_text(path, doc.text)
    check_document(ws, doc, NOW)


@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
@given(name=st.sampled_from(NAMES), text=_text)
def test_text_never_raises(name: str, text: str) -> None:
    _run(Path("/nonexistent-memls-root"), name, doc_text=text)


@settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
@given(name=st.sampled_from(NAMES), data=st.binary(max_size=400))
def test_bytes_never_raise(name: str, data: bytes) -> None:
    _run(Path("/nonexistent-memls-root"), name, data=data)


def test_pathological_inputs() -> None:
    root = Path("/nonexistent-memls-root")
    cases = [
        "x" * 100_000,
        "- " + "a" * 100_000 + "\n",
        "".join("  " * i + "- item\n" for i in range(300)),
        "```\n# not a heading\n",
        "~~~~\n" * 3,
        "# " + "#" * 50_000,
        "\r" * 1000,
        "---\n" + "key: value\n" * 600,
    ]
    for name in NAMES:
        for text in cases:
            _run(root, name, doc_text=text)


def test_heading_inside_fence_is_not_a_heading() -> None:
    doc = parse_text("```\n## Not\n```\n## Yes\n", Path("t.md"))
    assert [h.title for h in doc.headings] == ["Yes"]
    assert doc.fences == ((0, 2),)


def test_crlf_bom_and_invalid_utf8_positions() -> None:
    doc = parse_bytes(
        b"\xef\xbb\xbf# T\r\n- **Branch:** `b`\r\nbad \xff\r\n", Path("checkpoint-t.md")
    )
    assert doc.had_bom
    assert doc.eol == "\r\n"
    assert doc.headings[0].title == "T"
    field = doc.field("Branch")
    assert field is not None
    assert field.value == "b"
    assert [(p.code, p.range.start.line, p.range.start.character) for p in doc.problems] == [
        ("SZ001", 2, 4)
    ]


def test_nul_in_an_editor_buffer_is_reported() -> None:
    doc = parse_text("# T\nok\nnul \x00 here\n", Path("topic.md"))
    assert [(p.code, p.range.start.line, p.range.start.character) for p in doc.problems] == [
        ("SZ001", 2, 4)
    ]


def test_a_file_of_many_bad_lines_is_one_problem_and_utf16_is_named() -> None:
    """One cause, one finding: NUL bytes on three lines are one SZ001 at the first, naming
    the others; a file saved as UTF-16 is said to be UTF-16."""
    doc = parse_text("# T\na \x00\nb \x00\nc \x00\n", Path("topic.md"))
    assert [(p.code, p.range.start.line) for p in doc.problems] == [("SZ001", 1)]
    assert "(also on lines 3 and 4)" in doc.problems[0].message
    wide = parse_bytes("# Заметки\nпрогресс\n".encode("utf-16-le"), Path("progress.md"))
    assert len(wide.problems) == 1
    assert wide.problems[0].message.startswith("UTF-16 text")
