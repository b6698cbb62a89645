"""Heading-like text in every free-text argument of the CLI writers (issue 21).

``memls checkpoint save`` and ``memls log append`` are given titles, items and bodies that
look like Markdown headings (``## Done This Session``, ``# Title``, ``## Next Action: x``).
Afterwards the checkpoint still has exactly one of each section and ``checkpoint resume``
presents the real next action; the log has exactly one new entry, or the append is
refused and LOG.md is left byte for byte as it was.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memls.core.parse import parse_file
from tests.cli_helpers import memls_on as memls

SECTIONS = ["Done This Session", "Failed Approaches", "Modified Files"]


def _headings(path: Path) -> list[tuple[int, str]]:
    return [(h.level, h.title) for h in parse_file(path).headings]


def _next_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("Next Action:")]


def assert_one_of_each_section(path: Path, next_title: str) -> None:
    heads = _headings(path)
    assert [h for h in heads if h[0] == 1] == [(1, "Checkpoint: t")], heads
    nexts = [text for level, text in heads if level == 2 and text.startswith("Next Action")]
    assert nexts == [f"Next Action: {next_title}"], heads
    for title in SECTIONS:
        assert [h for h in heads if h == (2, title)] == [(2, title)], heads
    assert len(heads) == 1 + 1 + len(SECTIONS), heads


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")
    return tmp_path


def test_checkpoint_save_with_heading_like_arguments(root: Path) -> None:
    saved = memls(
        root,
        "checkpoint",
        "save",
        "t",
        "--next",
        "## Done This Session\n- fake",
        "--done",
        "# Title",
        "--done",
        "ok\n## Next Action: evil",
        "--failed",
        "## Next Action: x",
        "--failed",
        "f1\n## Done This Session",
        "--summary",
        "sum\n## Active Checkpoints",
    )
    assert saved.returncode == 0, saved.stderr
    path = root / "checkpoint-t.md"
    assert_one_of_each_section(path, "## Done This Session")
    resumed = memls(root, "checkpoint", "resume", "t")
    assert resumed.returncode == 0, resumed.stderr
    out = resumed.stdout
    assert _next_lines(out) == ["Next Action: ## Done This Session"], out
    assert "Next Action: ## Done This Session\n- fake" in out
    assert "⚠ Previously failed: ## Next Action: x" in out
    assert "⚠ Previously failed: f1 ## Done This Session" in out
    index = _headings(root / "MEMORY.md")
    assert index == [(1, "Memory"), (2, "Active Checkpoints")], index

    # A second save giving only the next action keeps one of each section, and the items.
    again = memls(root, "checkpoint", "save", "t", "--next", "# Real next")
    assert again.returncode == 0, again.stderr
    assert_one_of_each_section(path, "# Real next")
    text = path.read_text(encoding="utf-8")
    assert "- # Title\n" in text
    assert "- ## Next Action: x\n" in text
    resumed = memls(root, "checkpoint", "resume", "t")
    assert _next_lines(resumed.stdout) == ["Next Action: # Real next"], resumed.stdout


@pytest.mark.parametrize(
    "body", ["## Failed Approaches\n- body fake\n# Top", "```"], ids=["headings", "fence"]
)
def test_checkpoint_save_with_structure_in_the_next_action_body(root: Path, body: str) -> None:
    saved = memls(root, "checkpoint", "save", "t", "--next", f"Real next\n{body}", "--failed", "f1")
    assert saved.returncode == 0, saved.stderr
    assert_one_of_each_section(root / "checkpoint-t.md", "Real next")
    resumed = memls(root, "checkpoint", "resume", "t")
    assert "⚠ Previously failed: f1" in resumed.stdout
    assert "body fake" not in resumed.stdout.partition("Next Action:")[0]


def test_log_append_with_heading_like_title_and_body(root: Path) -> None:
    log = root / "LOG.md"
    log.write_bytes(b"# Log\n\n## 2026-01-01 10:00 \xe2\x80\x94 start\nFirst.\n")
    before = log.read_bytes()
    entries = len([h for h in _headings(log) if h[0] == 2])

    # `#`/`##` lines in the body would split the entry: refused, nothing written.
    refused = memls(root, "log", "append", "--title", "## x", "--body", "# y\n## z")
    assert refused.returncode == 2, refused.stderr
    assert "heading" in refused.stderr
    assert log.read_bytes() == before

    # A heading-like title and `###` in the body: exactly one new entry, old bytes kept.
    done = memls(root, "log", "append", "--title", "## x", "--body", "y is text\n### z")
    assert done.returncode == 0, done.stderr
    after = log.read_bytes()
    assert after.startswith(before)
    heads = _headings(log)
    assert len([h for h in heads if h[0] == 2]) == entries + 1, heads
    assert heads[-2][0] == 2
    assert heads[-2][1].endswith("— ## x"), heads
    assert heads[-1] == (3, "z"), heads
    assert [h for h in heads if h[0] == 1] == [(1, "Log")], heads
