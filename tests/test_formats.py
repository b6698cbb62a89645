"""One home per file format: the rules and the operations read MEMORY.md and checkpoints the
same way (issue 25, item 1), and the two disagreements that reproduced are gone."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from memls.core.config import Config
from memls.core.formats.checkpoint import (
    checkpoint_facts,
    plan_exists,
    sanitize_name,
    sanitized_name,
)
from memls.core.formats.index import BULLET_STRICT, bullets, is_legacy, legacy_sections
from memls.core.fsutil import UnsafePathError
from memls.core.gitfacade import Git
from memls.core.ops.checkpoint import list_checkpoints, save_checkpoint
from memls.core.ops.index import migrate_index
from memls.core.parse import parse_text
from memls.core.rules import check_document
from memls.core.workspace import Workspace

from .cli_helpers import memls_on
from .conftest import NOW

RESUME = "Resume any: `continue` or `continue {name}`"


def _git(root: Path) -> Git:
    return Git(root)


def _ix007(root: Path) -> list[str]:
    ws = Workspace(root, Config(select=("IX007",)))
    index = ws.index()
    assert index is not None
    return [d.message for d in check_document(ws, index, NOW)]


# -- IX007 and `memls index migrate` use one legacy-section test -------------
def test_next_action_plan_is_reported_and_migrated(tmp_path: Path) -> None:
    """The reproduced bug: IX007 said "run `memls index migrate`", and migrate answered
    "Nothing to migrate". Now the section the rule reports is the one migrate moves."""
    (tmp_path / "MEMORY.md").write_text(
        "# Project Memory\n\n## Next Action plan\n- wire the parser into the CLI\n\n"
        "## Conventions\n- tabs, never spaces\n"
    )
    found = _ix007(tmp_path)
    assert len(found) == 1
    assert "`## Next Action plan`" in found[0]
    assert "memls index migrate" in found[0]

    proc = memls_on(tmp_path, "index", "migrate", "--name", "moved")
    assert proc.returncode == 0, proc.stderr
    assert "Nothing to migrate" not in proc.stdout
    index = (tmp_path / "MEMORY.md").read_text()
    assert "## Next Action plan" not in index
    assert "## Conventions\n- tabs, never spaces\n" in index  # stable sections stay
    assert "- **moved** (" in index
    checkpoint = (tmp_path / "checkpoint-moved.md").read_text()
    assert "## Next Action: wire the parser into the CLI\n" in checkpoint
    assert _ix007(tmp_path) == []  # nothing left for the rule to report


@pytest.mark.parametrize(
    ("title", "legacy"),
    [
        ("Next Action", True),
        ("Next Action: fix the parser", True),
        ("Next Action plan", True),
        ("next action — tomorrow", True),
        ("Current State", True),
        ("Session Checkpoint", True),
        ("Session 3 Summary", True),
        ("Next Actions", False),
        ("Conventions", False),
        ("Sessions", False),
    ],
)
def test_rule_and_migrate_agree_on_every_title(tmp_path: Path, title: str, legacy: bool) -> None:
    (tmp_path / "MEMORY.md").write_text(f"# Project Memory\n\n## {title}\n- something\n")
    doc = parse_text((tmp_path / "MEMORY.md").read_text(), tmp_path / "MEMORY.md")
    assert [is_legacy(s) for s in doc.sections if s.level == 2] == [legacy]
    assert bool(_ix007(tmp_path)) is legacy
    result = migrate_index(tmp_path, "moved", now=NOW, git=_git(tmp_path))
    assert result.changed is legacy
    assert result.message.startswith("Nothing to migrate") is not legacy
    assert _ix007(tmp_path) == []
    assert legacy_sections(parse_text((tmp_path / "MEMORY.md").read_text(), tmp_path)) == []


# -- one bullet pattern: a one-digit day is canonical for both ----------------
ONE_DIGIT = "- **a** (main, Nov 3 09:05) — keep this summary"


def _root_with_one_digit_bullet(root: Path) -> None:
    (root / "checkpoint-a.md").write_text(
        "# Checkpoint: a\n\n- **Branch:** `main`\n- **Saved:** 2026-11-03 09:05\n\n"
        "## Next Action: the next action\nGo.\n\n## Done This Session\n- a\n\n"
        "## Failed Approaches\n- None\n\n## Modified Files\n- x\n"
    )
    (root / "MEMORY.md").write_text(
        f"# Project Memory\n\n## Active Checkpoints\n{ONE_DIGIT}\n\n{RESUME}\n"
    )


def test_one_digit_day_bullet_is_canonical_for_rule_and_ops(tmp_path: Path) -> None:
    _root_with_one_digit_bullet(tmp_path)
    assert BULLET_STRICT.match(ONE_DIGIT[2:]) is not None
    ws = Workspace(tmp_path, Config(select=("IX004", "IX005")))
    index = ws.index()
    assert index is not None
    assert check_document(ws, index, NOW) == []  # the rule: canonical, not stale

    (found,) = bullets(index)
    assert found.strict
    assert found.canonical_summary == "keep this summary"
    (info,) = list_checkpoints(tmp_path, now=NOW, git=_git(tmp_path))
    assert info.summary == "keep this summary"  # the operation reads the same summary


def test_save_keeps_the_summary_of_a_one_digit_day_bullet(tmp_path: Path) -> None:
    _root_with_one_digit_bullet(tmp_path)
    later = dt.datetime(2026, 11, 30, 12, 0)
    save_checkpoint(tmp_path, "a", now=later, git=_git(tmp_path))
    index = (tmp_path / "MEMORY.md").read_text()
    assert "- **a** (no-branch, Nov 30 12:00) — keep this summary\n" in index


# -- one name policy ----------------------------------------------------------
@pytest.mark.parametrize(
    "file_name",
    ["Feature", "feat\\x", "-lead", "two  words", "a/b", "  spaced ", "UPPER-Case", "a*b", "x`y"],
)
def test_the_name_cp040_suggests_is_the_name_an_operation_takes(file_name: str) -> None:
    suggested = sanitized_name(file_name)
    assert sanitize_name(suggested) == suggested
    assert sanitized_name(suggested) == suggested


@pytest.mark.parametrize("typed", ["My Feature/Login", "two   words", "-x", "a/b"])
def test_a_name_an_operation_takes_passes_cp040(typed: str) -> None:
    taken = sanitize_name(typed)
    assert sanitized_name(taken) == taken
    assert taken == sanitized_name(typed)


@pytest.mark.parametrize(
    ("file_name", "suggested"), [("Feat*X", "feat-x"), ("Two  Words", "two-words")]
)
def test_cp040_suggests_a_name_resume_finds(tmp_path: Path, file_name: str, suggested: str) -> None:
    path = tmp_path / f"checkpoint-{file_name}.md"
    path.write_text(
        f"# Checkpoint: {file_name}\n\n- **Branch:** `main`\n- **Saved:** 2026-11-29 10:00\n\n"
        "## Next Action: go\nGo.\n\n## Done This Session\n- a\n\n"
        "## Failed Approaches\n- None\n\n## Modified Files\n- x\n"
    )
    ws = Workspace(tmp_path, Config(select=("CP040",)))
    doc = ws.document(path)
    assert doc is not None
    (found,) = check_document(ws, doc, NOW)
    assert f"rename it to checkpoint-{suggested}.md" in found.message
    assert sanitize_name(suggested) == suggested  # `continue {suggested}` is accepted


def test_a_typed_backslash_is_refused_but_sanitised_in_a_file_name() -> None:
    with pytest.raises(UnsafePathError, match="backslash"):
        sanitize_name("a\\b")
    assert sanitized_name("a\\b") == "a-b"


# -- one plan lookup, one next-action reader ----------------------------------
def test_plan_lookup_is_from_the_root(tmp_path: Path) -> None:
    (tmp_path / "plans").mkdir()
    (tmp_path / "plans" / "p.md").write_text("# Plan\n")
    assert plan_exists(tmp_path, "plans/p.md")
    assert not plan_exists(tmp_path, "plans/missing.md")
    assert plan_exists(tmp_path, str(tmp_path / "plans" / "p.md"))


def test_next_action_without_title_reads_the_same_for_rule_and_listing(tmp_path: Path) -> None:
    (tmp_path / "checkpoint-b.md").write_text(
        "# Checkpoint: b\n\n- **Branch:** `main`\n- **Saved:** 2026-11-29 10:00\n\n"
        "## Next Action\n- finish the migration\n\n## Done This Session\n- a\n"
    )
    doc = parse_text((tmp_path / "checkpoint-b.md").read_text(), tmp_path / "checkpoint-b.md")
    assert checkpoint_facts(doc).next_action == "finish the migration"
    (info,) = list_checkpoints(tmp_path, now=NOW, git=_git(tmp_path))
    assert info.next_action == "finish the migration"


def test_save_keeps_the_next_action_the_rules_read(tmp_path: Path) -> None:
    """A save finds the checkpoint's next action as the CP rules do (by prefix), so it does
    not add a second one beside ``## Next Action plan``."""
    path = tmp_path / "checkpoint-c.md"
    path.write_text(
        "# Checkpoint: c\n\n- **Branch:** `main`\n- **Saved:** 2026-11-29 10:00\n\n"
        "## Next Action plan\n- port the reader\n\n## Done This Session\n- a\n"
    )
    doc = parse_text(path.read_text(), path)
    assert checkpoint_facts(doc).next_action == "plan"
    save_checkpoint(tmp_path, "c", now=NOW, git=_git(tmp_path))
    saved = path.read_text()
    assert saved.count("## Next Action") == 1
    assert "## Next Action plan\n- port the reader\n" in saved
