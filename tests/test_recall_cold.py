"""The cold path (issue 13): a fresh process searching with memls's own models loads neither
``llm`` (and its plugins) nor sqlite-utils, and maps the matrix backfill saved instead of
reading every embedding row."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from memls.core.recall import api, semantic, vectorindex
from memls.core.recall.filters import Filters
from memls.core.recall.store import RecallStore, db_path_for
from tests.recall_fixtures.roots import write_root

PROBE = """
import json, sys
from pathlib import Path
from memls.core.recall import api, semantic
from memls.core.recall.store import open_existing
root = Path(sys.argv[1])
response = api.search(root, "why did the seedlings wilt", mode="hybrid", limit=3)
store = open_existing(root / ".memls" / "recall.db")
index = semantic.vector_index(store)
print(json.dumps({
    "mode": response.mode,
    "top": response.results[0].path if response.results else None,
    "llm": "llm" in sys.modules,
    "sqlite_utils": "sqlite_utils" in sys.modules,
    "mapped": isinstance(index.matrix, __import__("numpy").memmap),
    "metadata_read": index._meta is not None,
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
    assert len(saved) == 3  # the matrix, its row ids and the rows' metadata, one generation
    seen = _probe(root)
    assert seen == {
        "mode": "hybrid",
        "top": seen["top"],
        "llm": False,
        "sqlite_utils": False,
        "mapped": True,
        "metadata_read": False,  # an unfiltered search needs no kinds, paths or times
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
        semantic.forget_cache()
        index = semantic.vector_index(store)
        assert index is not None
        rows = store.db.execute("select count(*) from embeddings").fetchone()[0]
        assert index.size == rows
        # a search after a write nobody saved (generation moved) reads SQLite, not the file
        with store.db.conn:
            store.bump()
        semantic.forget_cache()
        fresh = semantic.vector_index(store)
        assert fresh is not None
        assert not isinstance(fresh.matrix, np.memmap)
        assert fresh.size == rows


FILTERS = [
    Filters(),
    Filters(kinds=("topic",)),
    Filters(kinds=("transcript", "log")),
    Filters(path_glob="memory"),
    Filters(path_glob="*.jsonl"),
    Filters(since="2026-01-01T00:00:00"),
    Filters(until="2030-01-01T00:00:00", kinds=("topic", "transcript")),
]


def _rankings(index: vectorindex.VectorIndex, probes: np.ndarray) -> list[list[tuple[int, float]]]:
    return [index.top(vector, 8, filters) for vector in probes for filters in FILTERS]


def test_the_saved_index_filters_as_the_database_rows_do(tmp_path: Path) -> None:
    """Lazily read metadata (from the saved file, or from SQLite once that file is gone, or
    eagerly from a store saved before row ids had their own file) masks exactly as the
    index read from the database rows."""
    root = write_root(tmp_path, model="memls-hash")
    api.backfill(root)
    folder = root / ".memls"
    with RecallStore(db_path_for(root)) as store:
        current = store.collection()
        assert current is not None
        reference = semantic._load(store, current[0])
        probes = np.random.default_rng(3).standard_normal((4, reference.dimensions))
        expected = _rankings(reference, probes)
        assert any(expected[i] != expected[0] for i in range(1, len(FILTERS)))

        semantic.forget_cache()
        lazy = semantic.vector_index(store)
        assert lazy is not None
        assert lazy._meta is None
        assert _rankings(lazy, probes) == expected

        semantic.forget_cache()
        gone = semantic.vector_index(store)
        assert gone is not None
        assert gone._meta is None
        for meta in folder.glob("recall.db.vectors-*.meta.npz"):
            meta.unlink()
        assert _rankings(gone, probes) == expected

        semantic.forget_cache()
        semantic.save_index(store)  # all three files again
        for rids in folder.glob("recall.db.vectors-*.rids"):
            rids.unlink()  # as a store saved by an older memls
        semantic.forget_cache()
        old = semantic.vector_index(store)
        assert old is not None
        assert old._meta is not None
        assert isinstance(old.matrix, np.memmap)
        assert _rankings(old, probes) == expected


CLI_PROBE = """
import sys
from memls.cli import main
sys.argv = ["memls", "recall", "search", "why did the seedlings wilt", *sys.argv[1:]]
try:
    main()
finally:
    heavy = ("mistune", "memls.core.workspace", "memls.core.parse", "memls.core.gitfacade",
             "memls.core.recall.backfill", "memls.core.recall.verify", "memls.core.recall.status",
             "sqlite_utils", "llm", "tokenizers", "numpy.polynomial", "concurrent.futures",
             "zipfile", "subprocess")
    print("LOADED", sorted(m for m in heavy if m in sys.modules), file=sys.stderr)
"""


@pytest.mark.parametrize("given_root", [True, False], ids=["--root", "discovered"])
def test_the_search_command_imports_only_what_a_search_needs(
    tmp_path: Path, given_root: bool
) -> None:
    """`memls recall search` (with --root, or finding the root from the current folder)
    loads no Markdown parser, workspace, git, backfill or verify stage, llm, sqlite-utils,
    tokenizers library, thread pool or zip reader."""
    root = write_root(tmp_path, model="memls-hash")
    api.backfill(root)
    done = subprocess.run(
        [sys.executable, "-c", CLI_PROBE, *(["--root", str(root)] if given_root else [])],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        cwd=root,
    )
    assert done.returncode == 0, done.stderr
    assert "seedlings" in done.stdout
    assert "LOADED []" in done.stderr, done.stderr


def test_the_saved_files_are_named_by_the_model_ids_sha1() -> None:
    """The saved matrix's name carries sha1(model id)[:8], computed without OpenSSL: the
    same digest hashlib gives, so files saved by any version are found."""
    import hashlib

    for model in ("memls-minilm", "memls-hash", "sentence-transformers/all-MiniLM-L6-v2", ""):
        data = model.encode("utf-8")
        assert semantic._sha1_hex(data) == hashlib.sha1(data).hexdigest()
