"""Cold recall search as a whole process: `memls recall search` against `llm similar`.

Builds a memory root whose store holds N chunks (default 6,000) of generated text with
384-d vectors under the ``memls-minilm`` model id, as a MiniLM backfill leaves it (the
vectors are random unit vectors written straight into llm's ``embeddings`` table — search
cost does not depend on their values, and embedding 6,000 chunks would take minutes). Then
times, as separate processes, alternating A B A B so machine drift hits both:

* ``memls recall search QUERY --root R`` (hybrid, the default) and ``--mode semantic``;
* ``llm similar memls -d DB -c QUERY`` on the same database (same model id, so llm loads
  memls's plugin to embed the query, then scans every row in Python).

Both embed the query with the real all-MiniLM-L6-v2 weights. Prints the median wall time of
each, and the ratio llm/memls per pair (median). Targets (issue 13): memls ≤ 0.35 s and
≥ 4x faster than llm similar.

Run: ``.venv/bin/python bench/recall_cold.py [--chunks 6000] [--runs 5] [--keep DIR]``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from common import sentence

from memls.core.recall import search as engine
from memls.core.recall.minilm import ModelWeightsNotFoundError, resolve_model_dir
from memls.core.recall.store import COLLECTION, RecallStore, db_path_for, llm_content_hash

BIN = Path(sys.executable).parent
DIMS = 384
QUERY = "why did the parser checkpoint fail on the recall branch"
TARGET_SECONDS = 0.35
TARGET_RATIO = 4.0


def build_store(root: Path, chunks: int, seed: int = 5) -> Path:
    """A root with ``chunks`` topic-section chunks and MiniLM-shaped vectors; returns the db."""
    rng = random.Random(seed)
    vectors = np.random.default_rng(seed).standard_normal((chunks, DIMS)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    (root / "memory").mkdir(parents=True, exist_ok=True)
    (root / "memory" / "MEMORY.md").write_text("# Project Memory\n", encoding="utf-8")
    (root / "memls.toml").write_text('recall_model = "memls-minilm"\n', encoding="utf-8")
    db = db_path_for(root)
    with RecallStore(db) as store:
        cid = store.ensure_collection("memls-minilm")
        rows = []
        for i in range(chunks):
            text = " ".join(sentence(rng) for _ in range(6))
            rows.append(
                (f"memory/topic-{i // 10}.md#s{i % 10}", f"memory/topic-{i // 10}.md", i, text)
            )
        with store.db.conn:
            store.db.conn.executemany(
                "insert into memls_chunks (id, collection, kind, path, ordinal, start_line, "
                "end_line, heading, timestamp, content_hash, header, text) "
                "values (?,?,?,?,?,?,?,?,?,?,?,?)",
                [
                    (
                        cid_,
                        COLLECTION,
                        "topic",
                        path,
                        i % 10,
                        3 + 4 * (i % 10),
                        5 + 4 * (i % 10),
                        f"Section {i}",
                        "2026-11-01T00:00:00",
                        f"h{i}",
                        f"Topic {i // 10}",
                        text,
                    )
                    for cid_, path, i, text in rows
                ],
            )
            store.db.conn.executemany(
                "insert into embeddings (collection_id, id, embedding, content, content_hash, "
                "metadata, updated) values (?,?,?,?,?,?,?)",
                [
                    (
                        cid,
                        cid_,
                        vectors[i].astype("<f4").tobytes(),
                        text,
                        llm_content_hash(text),
                        "{}",
                        0,
                    )
                    for cid_, _path, i, text in rows
                ],
            )
            store.bump()
        engine.save_index(store)
    return db


def _run(command: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr[-500:]}")
    return elapsed


def compare(commands: dict[str, list[str]], runs: int) -> dict[str, list[float]]:
    """Wall seconds of each command, run in turn (one warm-up each, not counted)."""
    for command in commands.values():
        _run(command)
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, command in commands.items():
            times[name].append(_run(command))
    return times


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chunks", type=int, default=6000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="build the root here and keep it")
    args = parser.parse_args()
    try:
        resolve_model_dir()
    except ModelWeightsNotFoundError as exc:
        print(f"cold search benchmark skipped: {exc}")
        return 0
    with tempfile.TemporaryDirectory(prefix="memls-cold-") as tmp:
        root = args.keep or Path(tmp) / "root"
        started = time.perf_counter()
        db = build_store(root, args.chunks)
        print(
            f"store: {args.chunks:,} chunks, 384-d, memls-minilm ({time.perf_counter() - started:.1f} s to build) at {db}"
        )
        memls = str(BIN / "memls")
        commands = {
            "memls recall search (hybrid)": [memls, "recall", "search", QUERY, "--root", str(root)],
            "memls recall search --mode semantic": [
                memls,
                "recall",
                "search",
                QUERY,
                "--root",
                str(root),
                "--mode",
                "semantic",
            ],
            "llm similar": [str(BIN / "llm"), "similar", COLLECTION, "-d", str(db), "-c", QUERY],
        }
        times = compare(commands, args.runs)
    llm_times = times["llm similar"]
    print(f"whole-process wall time, median of {args.runs} (min-max):")
    for name, samples in times.items():
        print(
            f"  {name:38} {statistics.median(samples):6.3f} s ({min(samples):.3f}-{max(samples):.3f})"
        )
    for name, samples in times.items():
        if name == "llm similar":
            continue
        ratio = statistics.median(b / a for a, b in zip(samples, llm_times, strict=True))
        median = statistics.median(samples)
        verdict = "met" if median <= TARGET_SECONDS and ratio >= TARGET_RATIO else "MISSED"
        print(
            f"  {name}: {ratio:.1f}x faster than llm similar (targets <= {TARGET_SECONDS} s "
            f"and >= {TARGET_RATIO:.0f}x: {verdict})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
