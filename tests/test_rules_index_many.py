"""IX003 on a root whose index lists none of many checkpoints: listed, then summarised."""

from __future__ import annotations

from pathlib import Path

from memls.core.config import Config
from memls.core.fixes import fix_text
from memls.core.rules import check_document
from memls.core.rules.index import MAX_LISTED_MISSING
from memls.core.workspace import Workspace

from .conftest import NOW


def _root(tmp_path: Path, count: int) -> Workspace:
    for i in range(count):
        (tmp_path / f"checkpoint-task-{i:03d}.md").write_text(
            f"# Checkpoint: task-{i:03d}\n\n- **Branch:** `main`\n- **Saved:** 2026-11-29 10:00\n\n"
            f"## Next Action: Task {i}\nGo.\n\n## Done This Session\n- a\n\n"
            "## Failed Approaches\n- None\n\n## Modified Files\n- x\n"
        )
    (tmp_path / "MEMORY.md").write_text(
        "# Project Memory\n\n## Active Checkpoints\n\nResume any: `continue` or `continue {name}`\n"
    )
    return Workspace(tmp_path, Config(select=("IX003",)))


def test_many_missing_bullets_are_summarised_and_fixed_at_once(tmp_path: Path) -> None:
    count = MAX_LISTED_MISSING + 40
    ws = _root(tmp_path, count)
    index = ws.index()
    assert index is not None
    diags = check_document(ws, index, NOW)
    assert len(diags) == MAX_LISTED_MISSING + 1
    summary = diags[-1]
    assert summary.message.startswith("40 more checkpoint files have no bullet")
    assert summary.fix is not None

    text, _ = fix_text(ws, index.path, NOW)
    index.path.write_text(text)
    ws.invalidate(index.path)
    fixed = ws.index()
    assert fixed is not None
    assert check_document(ws, fixed, NOW) == []
    assert sum(1 for line in text.splitlines() if line.startswith("- **task-")) == count
