"""SZ002–SZ004, the snapshot limits: generated roots just under and just over each limit."""

from __future__ import annotations

from pathlib import Path

from memls.core.config import Config
from memls.core.rules import check_document
from memls.core.rules.size import MAX_ITEM_BYTES, MAX_ITEMS, MAX_TOTAL_BYTES
from memls.core.workspace import Workspace

from .conftest import NOW


def _findings(root: Path, code: str) -> list[tuple[str, int]]:
    ws = Workspace(root, Config(select=(code,)))
    out = []
    for path in ws.paths():
        doc = ws.document(path)
        assert doc is not None
        out += [(path.name, d.range.start.line) for d in check_document(ws, doc, NOW)]
    return out


def _topic(path: Path, size: int) -> None:
    head = f"# {path.stem}\n\n"
    path.write_text(head + "x" * (size - len(head) - 1) + "\n")


def test_sz002_item_over_the_limit(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("# Project Memory\n")
    _topic(tmp_path / "big.md", MAX_ITEM_BYTES + 1)
    _topic(tmp_path / "edge.md", MAX_ITEM_BYTES)
    assert _findings(tmp_path, "SZ002") == [("big.md", 0)]


def test_sz003_root_over_the_total(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("# Project Memory\n")
    index_size = (tmp_path / "MEMORY.md").stat().st_size
    per_file = (MAX_TOTAL_BYTES - index_size) // 4
    for i in range(4):
        _topic(tmp_path / f"t{i}.md", per_file)
    assert _findings(tmp_path, "SZ003") == []
    _topic(tmp_path / "one-more.md", 200)
    assert _findings(tmp_path, "SZ003") == [("MEMORY.md", 0)]


def test_sz004_too_many_items(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("# Project Memory\n")
    for i in range(MAX_ITEMS - 1):
        _topic(tmp_path / f"t{i:02d}.md", 40)
    assert _findings(tmp_path, "SZ004") == []
    _topic(tmp_path / "extra.md", 40)
    assert _findings(tmp_path, "SZ004") == [("MEMORY.md", 0)]
