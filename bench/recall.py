"""Recall benchmarks (issue 5), one run, figures printed.

(a) Semantic search over N stored 384-d vectors (random, normalised, written straight into
    llm's ``embeddings`` table plus memls's chunk rows): memls's cached numpy search p50
    against ``llm.Collection.similar_by_vector`` on the same database — the speed ratio
    (target ≥ 200×) and whether the top-10 ids are identical; then memls p50 at 100,000
    vectors (target ≤ 15 ms warm).
(b) memls-minilm throughput: ``bench/recall_models.py``'s ``run()``.
(c) With memls-hash: a first backfill of 5,000 files / 10,000 chunks (target ≤ 10 s, issue
    13; wall and CPU seconds and the load average printed beside it), the incremental one
    over the 5,000 unchanged files (target ≤ 2 s), then one after one file changed.

Run: ``.venv/bin/python bench/recall.py [--vectors 50000] [--big 100000] [--files 5000]``
(``--only backfill`` runs part (c) alone).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import struct
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from common import sentence

from memls.core.recall import api, semantic
from memls.core.recall.filters import Filters
from memls.core.recall.store import COLLECTION, RecallStore

DIMS = 384


def _fill(db: Path, count: int, seed: int = 7) -> np.ndarray:
    """Write ``count`` random unit vectors with chunk rows; returns the matrix."""
    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal((count, DIMS)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    with RecallStore(db) as store:
        cid = store.ensure_collection("memls-minilm")
        conn = store.db.conn
        with conn:
            conn.executemany(
                "insert into memls_chunks (id, collection, kind, path, ordinal, start_line, "
                "end_line, heading, timestamp, content_hash, header, text) "
                "values (?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    (
                        f"bench/f{i // 10}.md#s{i % 10}",
                        COLLECTION,
                        "topic",
                        f"bench/f{i // 10}.md",
                        i % 10,
                        1,
                        2,
                        f"Section {i}",
                        "2026-11-01T00:00:00",
                        f"h{i}",
                        "",
                        f"chunk {i}",
                    )
                    for i in range(count)
                ),
            )
            conn.executemany(
                "insert into embeddings (collection_id, id, embedding, content_hash, updated) "
                "values (?,?,?,?,?)",
                (
                    (
                        cid,
                        f"bench/f{i // 10}.md#s{i % 10}",
                        matrix[i].astype("<f4").tobytes(),
                        struct.pack("<I", i),
                        0,
                    )
                    for i in range(count)
                ),
            )
            store.bump()
    return matrix


def _p50(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def bench_vectors(count: int, big: int, llm_runs: int) -> None:
    import llm
    from sqlite_utils import Database

    rng = np.random.default_rng(11)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "recall.db"
        started = time.perf_counter()
        _fill(db, count)
        print(
            f"(a) {count:,} stored {DIMS}-d vectors (written in {time.perf_counter() - started:.1f} s)"
        )
        queries = [rng.standard_normal(DIMS).astype(np.float32) for _ in range(max(llm_runs, 30))]
        queries = [q / np.linalg.norm(q) for q in queries]
        with RecallStore(db) as store:
            semantic.forget_cache()
            started = time.perf_counter()
            semantic.vector_index(store)
            cold = time.perf_counter() - started
            ours: list[float] = []
            ours_top: list[list[str]] = []
            for q in queries:
                t = time.perf_counter()
                hits = semantic.search(store, q.tolist(), limit=10)
                ours.append(time.perf_counter() - t)
                ours_top.append([h.id for h in hits])
        collection = llm.Collection(COLLECTION, Database(db))
        theirs: list[float] = []
        same = 0
        for q, mine in zip(queries[:llm_runs], ours_top, strict=False):
            t = time.perf_counter()
            entries = collection.similar_by_vector(q.tolist(), 10)
            theirs.append(time.perf_counter() - t)
            same += [e.id for e in entries] == mine
        ratio = _p50(theirs) / _p50(ours)
        print(
            f"    memls semantic p50 {_p50(ours):8.2f} ms (warm; cold matrix load {cold * 1000:.0f} ms)"
        )
        print(f"    llm similar_by_vector p50 {_p50(theirs):8.1f} ms over {len(theirs)} queries")
        print(f"    ratio {ratio:,.0f}x (target >= 200x: {'met' if ratio >= 200 else 'MISSED'})")
        print(
            f"    top-10 ids identical: {same}/{len(theirs)} queries ({'yes' if same == len(theirs) else 'NO'})"
        )
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "recall.db"
        _fill(db, big, seed=9)
        with RecallStore(db) as store:
            semantic.vector_index(store)
            samples: list[float] = []
            for _ in range(100):
                q = rng.standard_normal(DIMS).astype(np.float32)
                t = time.perf_counter()
                semantic.search(store, q.tolist(), limit=10)
                samples.append(time.perf_counter() - t)
            filt: list[float] = []
            filters = Filters(kinds=("topic",), path_glob="bench/f1*")
            for _ in range(30):
                q = rng.standard_normal(DIMS).astype(np.float32)
                t = time.perf_counter()
                semantic.search(store, q.tolist(), limit=10, filters=filters)
                filt.append(time.perf_counter() - t)
        p50 = _p50(samples)
        print(
            f"    at {big:,} vectors: p50 {p50:.2f} ms warm (target <= 15 ms: "
            f"{'met' if p50 <= 15 else 'MISSED'}); with kind+path filters p50 {_p50(filt):.2f} ms"
        )


def bench_models() -> None:
    print("(b) memls-minilm throughput (bench/recall_models.py)")
    try:
        import recall_models
    except ImportError as exc:
        print(f"    skipped: bench/recall_models.py not importable ({exc})")
        return
    recall_models.run(report=lambda line: print("    " + line))


def bench_backfill(files: int) -> None:
    rng = random.Random(5)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "root"
        (root / "memory").mkdir(parents=True)
        (root / "memls.toml").write_text('recall_model = "memls-hash"\n')
        (root / "memory" / "MEMORY.md").write_text("# Project Memory\n")
        for i in range(files):
            body = "".join(f"## {sentence(rng, 3)}\n{sentence(rng, 25)}\n\n" for _ in range(2))
            (root / "memory" / f"topic-{i:05d}.md").write_text(
                f"---\nname: t{i}\ndescription: {sentence(rng, 6)}\n---\n# Topic {i}\n\n{body}"
            )
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        started, cpu = time.perf_counter(), time.process_time()
        first = api.backfill(root)
        took, took_cpu = time.perf_counter() - started, time.process_time() - cpu
        print(
            f"(c) first backfill: {first['files']:,} files, {first['embedded']:,} chunks embedded "
            f"with {first['model']} in {took:.1f} s, {took_cpu:.1f} CPU-s, load {load:.1f} "
            f"(target <= 10 s for 5,000 files / 10,000 chunks: {'met' if took <= 10 else 'MISSED'})"
        )
        started = time.perf_counter()
        again = api.backfill(root)
        unchanged = time.perf_counter() - started
        print(
            f"    unchanged: {unchanged:.2f} s for {again['unchanged']:,} files, "
            f"{again['embedded']} embedded (target <= 2 s: {'met' if unchanged <= 2 else 'MISSED'})"
        )
        victim = root / "memory" / f"topic-{files // 2:05d}.md"
        victim.write_text(victim.read_text() + "\n## Added\nOne new section about compost.\n")
        started = time.perf_counter()
        one = api.backfill(root)
        print(
            f"    one file changed: {time.perf_counter() - started:.2f} s, {one['changed']} file "
            f"re-chunked, {one['embedded']} chunk(s) embedded"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--vectors", type=int, default=50_000)
    parser.add_argument("--big", type=int, default=100_000)
    parser.add_argument(
        "--llm-runs", type=int, default=5, help="llm similar_by_vector queries to time"
    )
    parser.add_argument("--files", type=int, default=5_000)
    parser.add_argument("--skip-models", action="store_true")
    parser.add_argument(
        "--only", choices=("vectors", "models", "backfill"), help="run one part alone"
    )
    args = parser.parse_args()
    if args.only in (None, "vectors"):
        bench_vectors(args.vectors, args.big, args.llm_runs)
    if args.only == "models" or (args.only is None and not args.skip_models):
        bench_models()
    if args.only in (None, "backfill"):
        bench_backfill(args.files)


if __name__ == "__main__":
    main()
