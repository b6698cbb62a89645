"""A LOG's own order: LG002 reads it from the log (declared or by its entries), LG001 and
`memls log append` follow it — a newest-first log grows on top, every old byte kept."""

from __future__ import annotations

import datetime as dt
import os
import shutil
from pathlib import Path

import pytest

from memls.core.config import Config
from memls.core.formats.log import log_order
from memls.core.gitfacade import run_git
from memls.core.model import Diagnostic
from memls.core.ops.log import append_log
from memls.core.parse import parse_text
from memls.core.rules import check_document
from memls.core.workspace import Workspace
from tests.cli_helpers import memls_on

from .conftest import NOW

GIT_ENV = {
    "GIT_AUTHOR_NAME": "memls test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "memls test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}

NEWEST_FIRST = (
    "# Session log\n"
    "\n"
    "Newest entry on top.\n"
    "\n"
    "## 2026-11-20 — rewrite\n"
    "Parser split.\n"
    "\n"
    "## 2026-11-12 — tests\n"
    "Golden files.\n"
)


def _lg(root: Path, text: str | None = None, codes: tuple[str, ...] = ("LG",)) -> list[Diagnostic]:
    if text is not None:
        (root / "LOG.md").write_text(text, encoding="utf-8")
    ws = Workspace(root, Config(select=codes))
    doc = ws.document(root / "LOG.md")
    assert doc is not None
    return check_document(ws, doc, NOW)


@pytest.mark.parametrize(
    ("line", "newest_first"),
    [
        ("Newest entry on top.", True),
        ("_Entries are in reverse chronological order._", True),
        ("<!-- newest first -->", True),
        ("New entries go at the top.", True),
        ("- Latest first, one entry per session", True),
        ("Oldest first; append new entries at the end.", False),
        ("Newest at the bottom.", False),
        ("A chronological record of decisions.", False),
    ],
)
def test_declared_order(line: str, newest_first: bool) -> None:
    # the entries ascend, so only the declaration can make the log newest first
    text = f"# Log\n\n{line}\n\n## 2026-01-01 — a\n\n## 2026-01-02 — b\n\n## 2026-01-03 — c\n"
    order = log_order(parse_text(text, Path("LOG.md")))
    assert order.newest_first is newest_first
    assert order.declared_line == 2


def test_order_without_declaration_is_what_most_entries_do() -> None:
    down = "# Log\n\n## 2026-01-05 — e\n\n## 2026-01-04 — d\n\n## 2026-01-06 — x\n\n## 2026-01-01 — a\n"
    order = log_order(parse_text(down, Path("LOG.md")))
    assert order.newest_first
    assert order.declared_line is None
    assert "2 of 3" in order.why
    prose = "# Log\n\nWe write the newest insights first in our heads.\n"
    assert not log_order(parse_text(prose, Path("LOG.md"))).newest_first  # prose, no rule
    plain = "# Log\n\n## 2026-01-01 — a\n"
    assert not log_order(parse_text(plain, Path("LOG.md"))).newest_first


def test_misplaced_entry_message_says_the_order_and_the_neighbours(tmp_path: Path) -> None:
    text = NEWEST_FIRST.replace("## 2026-11-12", "## 2026-11-02 — stray\n\n## 2026-11-12")
    text += "\n## 2026-11-09 — start\n"
    [diag] = _lg(tmp_path, text)
    assert diag.code == "LG002"
    assert diag.range.start.line == 7
    assert "newest first (line 3 says so" in diag.message
    assert "after the entry of 2026-11-20 (line 5)" in diag.message
    assert "before the one of 2026-11-12 (line 10)" in diag.message
    assert "new entries go on top" in diag.message


def test_a_misplaced_block_is_one_finding(tmp_path: Path) -> None:
    entries = [f"## 2026-09-{d:02d} — e{d}\n" for d in (1, 2, 3, 4, 5)]
    block = [f"## 2026-08-{d:02d} — old{d}\n" for d in (10, 11, 12)]
    text = "# Log\n\n" + "".join(entries[:4] + block + entries[4:])
    [diag] = _lg(tmp_path, text)
    assert "3 LOG entries (lines 7–9, from 2026-08-10) are out of order" in diag.message
    assert "oldest first" in diag.message


def test_undated_entry_asks_for_the_logs_own_granularity(tmp_path: Path) -> None:
    dates = "# Log\n\n## 2026-07-01 — a\n\n## Notes\n\n## 2026-07-04 — b\n"
    [diag] = _lg(tmp_path, dates)
    assert "`YYYY-MM-DD — title`" in diag.message
    assert "HH:MM" not in diag.message
    timed = "# Log\n\n## 2026-07-01 10:00 — a\n\n## Notes\n\n## 2026-07-04 09:30 — b\n"
    [diag] = _lg(tmp_path, timed)
    assert "`YYYY-MM-DD HH:MM — title`" in diag.message


def test_same_day_times_against_the_order(tmp_path: Path) -> None:
    text = "# Log\n\n## 2026-07-01 10:00 — a\n\n## 2026-07-01 09:00 — b\n\n## 2026-07-02 — c\n"
    diags = _lg(tmp_path, text)
    assert [d.range.start.line for d in diags] == [4]
    assert "2026-07-01 09:00 comes after the one of 2026-07-01 10:00" in diags[0].message


def test_append_to_a_newest_first_log_goes_on_top(tmp_path: Path) -> None:
    log = tmp_path / "LOG.md"
    log.write_bytes(NEWEST_FIRST.encode())
    result = append_log(tmp_path, "Cache layer", "Stat cache.", now=dt.datetime(2026, 11, 30, 9, 5))
    assert result.data["top"] is True
    text = log.read_text()
    head = "# Session log\n\nNewest entry on top.\n\n"
    assert (
        text
        == head + "## 2026-11-30 09:05 — Cache layer\n\nStat cache.\n\n" + NEWEST_FIRST[len(head) :]
    )
    assert "Added on top of LOG.md" in result.message
    assert _lg(tmp_path) == []


def test_append_through_the_cli_keeps_crlf_and_every_old_byte(tmp_path: Path) -> None:
    log = tmp_path / "LOG.md"
    old = NEWEST_FIRST.replace("\n", "\r\n").encode()
    log.write_bytes(old)
    proc = memls_on(tmp_path, "log", "append", "--title", "Hot fix")
    assert proc.returncode == 0, proc.stderr
    new = log.read_bytes()
    at = old.index(b"## 2026-11-20")
    assert new.startswith(old[:at])
    assert new.endswith(old[at:])
    added = new[at : len(new) - len(old[at:])]
    assert added.startswith(b"## ")
    assert added.endswith(b" \xe2\x80\x94 Hot fix\r\n\r\n")


def test_append_to_an_oldest_first_log_stays_at_the_end(tmp_path: Path) -> None:
    log = tmp_path / "LOG.md"
    old = "# Log\n\n## 2026-11-01 — a\n\n## 2026-11-02 — b\n"
    log.write_text(old)
    result = append_log(tmp_path, "c", now=NOW)
    assert log.read_text() == old + "\n## 2026-11-30 12:00 — c\n"
    assert "top" not in result.data


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_lg001_accepts_entries_on_top_of_a_newest_first_log(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    root.mkdir()
    run_git(root, "init", "-q", "-b", "main", env=GIT_ENV)
    (root / "LOG.md").write_text(NEWEST_FIRST)
    run_git(root, "add", "LOG.md", env=GIT_ENV)
    run_git(root, "commit", "-q", "-m", "log", env=GIT_ENV)
    append_log(root, "Cache layer", now=dt.datetime(2026, 11, 30, 9, 5))
    assert _lg(root, codes=("LG001",)) == []
    # changing a committed entry below the new one is still reported, at that line
    text = (root / "LOG.md").read_text().replace("Golden files.", "Golden files, rewritten.")
    [diag] = _lg(root, text, codes=("LG001",))
    assert diag.range.start.line == text.splitlines().index("Golden files, rewritten.")
    assert "as a new entry on top" in diag.message
    # in an oldest-first log, text inserted above the first entry is a change
    plain = "# Log\n\n## 2026-11-01 — a\nA.\n"
    (root / "LOG.md").write_text(plain)
    run_git(root, "commit", "-q", "-am", "plain", env=GIT_ENV)
    [diag] = _lg(root, "# Log\n\n## 2026-11-30 — new\n\n## 2026-11-01 — a\nA.\n", codes=("LG001",))
    assert diag.code == "LG001"


def test_a_declaration_in_an_undated_preamble_section(tmp_path: Path) -> None:
    text = (
        "# Log\n\n## How to use this log\nNewest entries first.\n\n"
        "## 2026-11-20 — b\n\n## 2026-11-18 — a\n"
    )
    order = log_order(parse_text(text, Path("LOG.md")))
    assert order.newest_first
    assert order.declared_line == 3
    log = tmp_path / "LOG.md"
    log.write_text(text)
    append_log(tmp_path, "c", now=NOW)
    lines = log.read_text().splitlines()
    assert lines.index("## 2026-11-30 12:00 — c") == lines.index("## 2026-11-20 — b") - 2
    assert lines.index("## How to use this log") == 2  # the preamble stays on top
    assert _lg(tmp_path) == []  # "How to use this log" above the entries is no entry


def test_a_log_that_keeps_no_one_order_has_no_entry_out_of_it(tmp_path: Path) -> None:
    """Entries one way and the other in like measure (a wiki's log written both ways over
    time): no order to be out of, so no LG002 — while a clear majority still finds the one
    entry out of place."""
    days = ["05", "06", "07", "08", "01", "02", "03", "04", "12", "11", "10", "09"]
    text = "# Log\n\n" + "".join(f"## 2026-03-{d}\nwork\n\n" for d in days)
    assert [d for d in _lg(tmp_path, text) if d.code == "LG002"] == []
    clear = ["01", "02", "03", "04", "05", "09", "06", "07", "08", "10", "11"]
    text = "# Log\n\n" + "".join(f"## 2026-03-{d}\nwork\n\n" for d in clear)
    assert [d.code for d in _lg(tmp_path, text)].count("LG002") == 1
