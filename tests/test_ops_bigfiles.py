"""Issue 21, point 1: writers never act on the parser's view of part of a file.

The parser reads structure from the first ``MAX_PARSE_CHARS`` characters only. Every
writer that edits a file by its structure refuses a file over that limit (exit 2, a
message naming the file, its size and the limit, every byte left as it was); LOG.md's
append edits no structure and keeps working; ``check --fix`` skips such a file.
The big files are generated here, through the command line as a user runs it.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from memls.core.ops import OpError
from memls.core.ops._text import MAX_EDIT_CHARS
from memls.core.parse import MAX_PARSE_CHARS
from tests.cli_helpers import memls_on

LIMIT = f"{MAX_PARSE_CHARS:,}"


def filler(chars: int = MAX_PARSE_CHARS + 100_000) -> str:
    """Plain lines (no headings, no list items) of about ``chars`` characters."""
    line = "filler text that only makes the file long, nothing structural in it at all\n"
    return line * (chars // len(line) + 1)


def files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def save_small(root: Path, name: str = "big") -> None:
    result = memls_on(
        root, "checkpoint", "save", name, "--next", "start", "--failed", "approach A",
        "--done", "step 1",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr


def assert_refused(result: object, path: Path, before: dict[str, bytes], root: Path) -> None:
    import subprocess

    assert isinstance(result, subprocess.CompletedProcess)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert str(path) in result.stderr
    assert "characters" in result.stderr
    assert "bytes" in result.stderr
    assert LIMIT in result.stderr
    assert "Nothing was changed" in result.stderr
    assert files(root) == before


def test_limits_agree() -> None:
    assert MAX_EDIT_CHARS == MAX_PARSE_CHARS


# -- checkpoint save / resume ----------------------------------------------------------
def test_save_over_a_2mb_checkpoint_is_refused_instead_of_leaving_238_bytes(
    tmp_path: Path,
) -> None:
    """Reproduced: `save big --next "go on" --done summary` on a 2.09 MB checkpoint exited 0
    and left a 238-byte file (its Failed Approaches and Notes gone)."""
    save_small(tmp_path)
    cp = tmp_path / "checkpoint-big.md"
    text = cp.read_text()
    text = text.replace(
        "## Failed Approaches", "## Context\n" + filler() + "\n## Failed Approaches"
    )
    cp.write_text(text + "\n## Notes\n- keep me\n")
    before = files(tmp_path)
    result = memls_on(tmp_path, "checkpoint", "save", "big", "--next", "go on", "--done", "summary")
    assert_refused(result, cp, before, tmp_path)
    assert "refusing to save" in result.stderr


def test_resume_with_a_done_line_over_the_limit_is_refused_not_reported_as_done(
    tmp_path: Path,
) -> None:
    """Reproduced: a Done line over the limit made `resume` report the failed approach as
    done, and the next save duplicated sections."""
    save_small(tmp_path)
    cp = tmp_path / "checkpoint-big.md"
    cp.write_text(cp.read_text().replace("- step 1", "- step 1 " + "x" * (MAX_PARSE_CHARS + 10)))
    index = tmp_path / "MEMORY.md"  # an orphan bullet: a refused resume must not drop it
    index.write_text(
        index.read_text().replace(
            "\nResume any", "- **gone** (main, Jan 01 10:00) — g\n\nResume any"
        )
    )
    before = files(tmp_path)
    resumed = memls_on(tmp_path, "checkpoint", "resume", "big")
    assert_refused(resumed, cp, before, tmp_path)
    assert "approach A" not in resumed.stdout
    saved = memls_on(tmp_path, "checkpoint", "save", "big", "--next", "go on")
    assert_refused(saved, cp, before, tmp_path)


def test_save_whose_done_text_would_pass_the_limit_is_refused(tmp_path: Path) -> None:
    """A Done line this long cannot ride in argv (128 KiB per argument): the core is asked."""
    from memls.core.ops.checkpoint import save_checkpoint

    save_small(tmp_path)
    before = files(tmp_path)
    with pytest.raises(OpError, match=rf"would be .*{LIMIT}-character limit"):
        save_checkpoint(
            tmp_path, "big", next_action="go on", done=["x" * (MAX_PARSE_CHARS + 1)],
            now=dt.datetime(2026, 1, 1, 10, 0),
        )  # fmt: skip
    assert files(tmp_path) == before


# -- MEMORY.md whose Active Checkpoints lie past the limit ------------------------------
def big_index(root: Path) -> Path:
    """A saved checkpoint whose MEMORY.md has its Active Checkpoints past the limit."""
    save_small(root)
    index = root / "MEMORY.md"
    text = index.read_text()
    index.write_text(text.replace("## Active", "## Notes\n" + filler() + "\n## Active", 1))
    assert index.read_text().count("## Active Checkpoints") == 1
    return index


def test_check_fix_skips_an_index_whose_active_checkpoints_lie_past_the_limit(
    tmp_path: Path,
) -> None:
    """Reproduced: `check --fix` added a second `## Active Checkpoints`."""
    index = big_index(tmp_path)
    (tmp_path / "checkpoint-other.md").write_bytes((tmp_path / "checkpoint-big.md").read_bytes())
    before = files(tmp_path)
    result = memls_on(tmp_path, "check", "--fix", "--exit-zero")
    assert result.returncode == 0, result.stderr
    assert f"not fixed {index.name}" in result.stderr or f"not fixed {index}" in result.stderr
    assert LIMIT in result.stderr
    assert files(tmp_path)["MEMORY.md"] == before["MEMORY.md"]


def test_save_refuses_an_index_whose_active_checkpoints_lie_past_the_limit(
    tmp_path: Path,
) -> None:
    """Reproduced: `save` added a second `## Active Checkpoints`."""
    index = big_index(tmp_path)
    before = files(tmp_path)
    result = memls_on(tmp_path, "checkpoint", "save", "new", "--next", "go on")
    assert_refused(result, index, before, tmp_path)
    assert not (tmp_path / "checkpoint-new.md").exists()


def test_clear_refuses_an_index_whose_bullet_lies_past_the_limit(tmp_path: Path) -> None:
    """Reproduced: `clear` deleted the file and missed the hidden bullet."""
    index = big_index(tmp_path)
    before = files(tmp_path)
    result = memls_on(tmp_path, "checkpoint", "clear", "big")
    assert_refused(result, index, before, tmp_path)
    assert (tmp_path / "checkpoint-big.md").exists()


def test_resume_reads_the_checkpoint_but_leaves_an_index_over_the_limit(tmp_path: Path) -> None:
    index = big_index(tmp_path)
    before = files(tmp_path)
    result = memls_on(tmp_path, "checkpoint", "resume", "big")
    assert result.returncode == 0, result.stderr
    assert "Previously failed: approach A" in result.stdout
    assert "orphaned index bullets were not looked for" in result.stdout
    assert str(index) in result.stdout
    assert files(tmp_path) == before


def test_migrate_refuses_an_index_over_the_limit(tmp_path: Path) -> None:
    index = tmp_path / "MEMORY.md"
    index.write_text("# Project Memory\n\n## Notes\n" + filler() + "\n## Current State\n- x\n")
    before = files(tmp_path)
    result = memls_on(tmp_path, "index", "migrate", "--name", "moved")
    assert_refused(result, index, before, tmp_path)


def test_save_just_under_the_limit_edits_only_the_active_checkpoints_section(
    tmp_path: Path,
) -> None:
    save_small(tmp_path)
    index = tmp_path / "MEMORY.md"
    text = index.read_text()
    head = "# Project Memory\n\n## Notes\n" + filler(MAX_PARSE_CHARS - 200_000) + "\n"
    index.write_text(head + text[text.index("## Active") :])
    assert len(index.read_text()) < MAX_PARSE_CHARS
    result = memls_on(tmp_path, "checkpoint", "save", "new", "--next", "go on")
    assert result.returncode == 0, result.stderr
    after = index.read_text()
    assert after.startswith(head)
    assert after.count("## Active Checkpoints") == 1
    assert "- **new**" in after
    assert "- **big**" in after


# -- handoff, bundle, log ----------------------------------------------------------------
def test_handoff_refresh_over_the_limit_is_refused_every_time(tmp_path: Path) -> None:
    """Reproduced: every refresh appended another set of sections (5 `## Next Steps`
    after 4 refreshes)."""
    assert memls_on(tmp_path, "handoff", "new").returncode == 0
    handoff = tmp_path / ".handoff.md"
    text = handoff.read_text()
    handoff.write_text(
        text.replace("## Current State", "## Context\n" + filler() + "\n## Current State")
    )
    before = files(tmp_path)
    for _ in range(4):
        result = memls_on(tmp_path, "handoff", "refresh")
        assert_refused(result, handoff, before, tmp_path)
    assert handoff.read_text().count("## Next Steps") == 1
    forced = memls_on(tmp_path, "handoff", "new", "--force")
    assert_refused(forced, handoff, before, tmp_path)


def test_handoff_does_not_report_from_part_of_a_log_over_the_limit(tmp_path: Path) -> None:
    log = tmp_path / "LOG.md"
    log.write_text(
        "# Log\n\n## 2026-01-01 10:00 — old\n\n" + filler() + "\n## 2026-01-02 10:00 — newest\n"
    )
    result = memls_on(tmp_path, "handoff", "new")
    assert result.returncode == 0, result.stderr
    text = (tmp_path / ".handoff.md").read_text()
    assert "LOG.md not read" in text
    assert LIMIT in text
    assert "Latest LOG.md entry: 2026-01-01" not in text


def test_bundle_approve_in_a_file_over_the_limit_is_refused(tmp_path: Path) -> None:
    save_small(tmp_path)
    cp = tmp_path / "checkpoint-big.md"
    bundle = "\n## Checkpoint Bundle\n\n### 1. Plan\n- [ ] write it\n"
    cp.write_text(cp.read_text() + "\n## Context\n" + filler() + bundle)
    before = files(tmp_path)
    for args in (("bundle", "approve"), ("bundle", "approve", str(cp))):
        result = memls_on(tmp_path, *args)
        assert_refused(result, cp, before, tmp_path)


def test_log_append_to_a_log_over_the_limit_keeps_every_old_byte(tmp_path: Path) -> None:
    """Append edits no structure: it works at any size and keeps the old bytes."""
    log = tmp_path / "LOG.md"
    log.write_text("# Log\n\n## 2026-01-01 10:00 — old\n\n" + filler())
    old = log.read_bytes()
    result = memls_on(tmp_path, "log", "append", "--title", "newer")
    assert result.returncode == 0, result.stderr
    new = log.read_bytes()
    assert new.startswith(old)
    assert b"newer" in new[len(old) :]
