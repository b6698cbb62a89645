"""`memls checkpoint import`: another tool's checkpoints become memls's, nothing lost."""

from __future__ import annotations

import json
from pathlib import Path

from memls.core.config import Config
from memls.core.formats.checkpoint import is_native_checkpoint
from memls.core.parse import parse_file
from memls.core.rules import check_document
from memls.core.workspace import Workspace
from tests.cli_helpers import memls_on

from .conftest import NOW

FOREIGN = """# Checkpoint: Phase Two Wrap-up
**Date:** 2026-03-05
**Branch:** `feature/phase-two`
Reviewer: Sam

## Session Summary
Streaming reader landed.

## What Shipped
- Streaming CSV reader
- Schema guess

## Files Modified/Created
- importer/csv.py
- importer/schema.py

## Known Issues
- Quoted newlines are slow.

## Next Steps
1. Wire the schema guess into the CLI.
2. Write error messages.
"""


def _root(tmp_path: Path) -> Path:
    (tmp_path / "checkpoint-2026-03-05-phase-two.md").write_text(FOREIGN)
    (tmp_path / "MEMORY.md").write_text("# Project Memory\n\n- [Notes](notes.md)\n")
    (tmp_path / "notes.md").write_text("# Notes\n")
    return tmp_path


def test_import_converts_keeps_every_line_and_indexes(tmp_path: Path) -> None:
    root = _root(tmp_path)
    path = root / "checkpoint-2026-03-05-phase-two.md"
    assert not is_native_checkpoint(parse_file(path))
    proc = memls_on(root, "checkpoint", "import", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    (item,) = data["converted"]
    assert item["branch"] == "feature/phase-two"
    assert item["saved"] == "2026-03-05 00:00"
    assert item["mapped"]["Done This Session"] == ["Session Summary"]
    assert item["kept"] == ["What Shipped", "Known Issues"]
    assert item["mapped"]["Modified Files"] == ["Files Modified/Created"]
    assert item["mapped"]["Next Action"] == ["Next Steps"]
    text = path.read_text()
    assert text.startswith(
        "# Checkpoint: 2026-03-05-phase-two\n\n- **Branch:** `feature/phase-two`"
    )
    assert "## Next Action: Wire the schema guess into the CLI." in text
    # Nothing lost: every line of the original is in the new file (the title and the
    # Date/Branch lines are carried as Notes and fields; mapped headings become memls's).
    mapped = ("## Session Summary", "## Files Modified/Created", "## Next Steps")
    for line in FOREIGN.splitlines():
        if line.strip() and not line.startswith(("**Date:**", "**Branch:**", "# ", *mapped)):
            assert line in text, line
    assert "Imported from: Checkpoint: Phase Two Wrap-up" in text
    doc = parse_file(path)
    assert is_native_checkpoint(doc)
    ws = Workspace(root, Config(select=("CP001", "CP002", "CP003", "CP01", "IX003")))
    assert [d.code for d in check_document(ws, doc, NOW)] == []
    index = (root / "MEMORY.md").read_text()
    assert "- **2026-03-05-phase-two** (feature/phase-two, Mar 05 00:00) — Wire the schema" in index


def test_import_dry_run_writes_nothing_and_a_second_run_has_nothing_to_do(tmp_path: Path) -> None:
    root = _root(tmp_path)
    before = {p.name: p.read_bytes() for p in root.iterdir()}
    proc = memls_on(root, "checkpoint", "import", "--dry-run")
    assert proc.returncode == 0
    assert proc.stdout.startswith("Would convert 1 checkpoint file(s)")
    assert {p.name: p.read_bytes() for p in root.iterdir()} == before
    assert memls_on(root, "checkpoint", "import").returncode == 0
    again = memls_on(root, "checkpoint", "import", "--json")
    assert json.loads(again.stdout)["converted"] == []
    assert json.loads(again.stdout)["skipped"] == ["checkpoint-2026-03-05-phase-two.md"]


def test_cp050_names_the_import_command(tmp_path: Path) -> None:
    root = _root(tmp_path)
    proc = memls_on(root, "check", "--select", "CP")
    assert "CP050 1 checkpoint file in another format" in proc.stdout
    assert "`memls checkpoint import`" in proc.stdout
