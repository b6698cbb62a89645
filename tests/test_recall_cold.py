"""The cold path (issue 13): a fresh process searching with memls's own models loads neither
``llm`` (and its plugins) nor sqlite-utils, and maps the matrix backfill saved instead of
reading every embedding row."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from memls.core.recall import api
from memls.core.recall import search as engine
from memls.core.recall.store import RecallStore, db_path_for
from tests.recall_fixtures.roots import write_root

PROBE = """
import json, sys
from pathlib import Path
from memls.core.recall import api
from memls.core.recall import search as engine
from memls.core.recall.store import open_existing
root = Path(sys.argv[1])
response = api.search(root, "why did the seedlings wilt", mode="hybrid", limit=3)
store = open_existing(root / ".memls" / "recall.db")
index = engine.vector_index(store)
print(json.dumps({
    "mode": response.mode,
    "top": response.results[0].path if response.results else None,
    "llm": "llm" in sys.modules,
    "sqlite_utils": "sqlite_utils" in sys.modules,
    "mapped": isinstance(index.matrix, __import__("numpy").memmap),
}))
"""


def _probe(root: Path) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(root)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_search_with_memls_hash_loads_no_llm_and_maps_the_saved_matrix(tmp_path: Path) -> None:
    root = write_root(tmp_path, model="memls-hash")
    api.backfill(root)
    saved = sorted(p.name for p in (root / ".memls").glob("recall.db.vectors-*"))
    assert len(saved) == 2  # the matrix and its row metadata, for the current generation
    seen = _probe(root)
    assert seen == {
        "mode": "hybrid",
        "top": seen["top"],
        "llm": False,
        "sqlite_utils": False,
        "mapped": True,
    }
    assert seen["top"] is not None


def test_a_changed_store_replaces_the_saved_matrix_and_stale_files_are_ignored(
    tmp_path: Path,
) -> None:
    root = write_root(tmp_path, model="memls-hash")
    api.backfill(root)
    before = sorted((root / ".memls").glob("recall.db.vectors-*.npy"))
    (root / "memory" / "garden.md").write_text(
        "# Garden\n\n## Compost\n\nThe compost bin moved behind the shed.\n", encoding="utf-8"
    )
    api.backfill(root)
    after = sorted((root / ".memls").glob("recall.db.vectors-*.npy"))
    assert len(after) == 1
    assert after != before  # one file per generation; the old one is gone
    with RecallStore(db_path_for(root)) as store:
        engine.forget_cache()
        index = engine.vector_index(store)
        assert index is not None
        rows = store.db.execute("select count(*) from embeddings").fetchone()[0]
        assert index.size == rows
        # a search after a write nobody saved (generation moved) reads SQLite, not the file
        with store.db.conn:
            store.bump()
        engine.forget_cache()
        fresh = engine.vector_index(store)
        assert fresh is not None
        assert not isinstance(fresh.matrix, np.memmap)
        assert fresh.size == rows
