"""Configuration files and inline suppressions, seen through `memls check`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memls.core.config import load_config
from tests.cli_helpers import run_memls

STALE = """# Checkpoint: old

- **Branch:** `main`
- **Saved:** 2026-10-01 10:00

## Next Action: Finish it
Edit `a.py`.

## Done This Session
- started

## Failed Approaches
- None

## Modified Files
- a.py
"""


def _codes(root: Path, *args: str) -> list[tuple[str, str]]:
    proc = run_memls("check", "--format", "json", "--exit-zero", *args, cwd=root)
    assert proc.returncode == 0, proc.stderr
    return sorted((d["code"], d["severity"]) for d in json.loads(proc.stdout)["diagnostics"])


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "checkpoint-old.md").write_text(STALE)
    (tmp_path / "MEMORY.md").write_text(
        "# Project Memory\n\n## Active Checkpoints\n"
        "- **old** (main, Oct 01 10:00) — Finish it\n\n"
        "Resume any: `continue` or `continue {name}`\n"
    )
    return tmp_path


def test_defaults_report_the_stale_checkpoint(root: Path) -> None:
    assert ("CP022", "warning") in _codes(root)


def test_memls_toml_threshold_select_and_severity(root: Path) -> None:
    (root / "memls.toml").write_text("stale_days = 365\n")
    assert "CP022" not in {c for c, _ in _codes(root)}
    (root / "memls.toml").write_text('select = ["CP02"]\nseverity = { CP022 = "error" }\n')
    assert _codes(root) == [("CP022", "error")]
    proc = run_memls("check", cwd=root)
    assert proc.returncode == 1  # the override made it an error


def test_ignore_wins_over_select(root: Path) -> None:
    (root / "memls.toml").write_text('select = ["CP"]\nignore = ["CP022"]\n')
    assert "CP022" not in {c for c, _ in _codes(root)}


def test_pyproject_tool_table_and_precedence(root: Path) -> None:
    (root / ".git").mkdir()  # stop the upward search here
    (root / "pyproject.toml").write_text('[tool.memls]\nignore = ["CP022"]\n')
    assert load_config(root).ignore == ("CP022",)
    assert "CP022" not in {c for c, _ in _codes(root)}
    (root / "memls.toml").write_text("stale_days = 14\n")  # memls.toml wins: no ignore
    assert "CP022" in {c for c, _ in _codes(root)}


def test_file_level_suppression(root: Path) -> None:
    path = root / "checkpoint-old.md"
    path.write_text(STALE + "\n<!-- memls-disable CP022 -->\n")
    assert "CP022" not in {c for c, _ in _codes(root)}
    path.write_text(STALE + "\n<!-- memls-disable -->\n")
    assert _codes(root, str(path)) == []


def test_next_line_suppression_is_per_code(root: Path) -> None:
    saved = "- **Saved:** 2026-10-01 10:00\n"
    path = root / "checkpoint-old.md"
    path.write_text(STALE.replace(saved, "<!-- memls-disable-next-line CP022 -->\n" + saved))
    assert "CP022" not in {c for c, _ in _codes(root)}
    path.write_text(STALE.replace(saved, "<!-- memls-disable-next-line CP003 -->\n" + saved))
    assert "CP022" in {c for c, _ in _codes(root)}
