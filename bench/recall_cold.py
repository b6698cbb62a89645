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

Also prints each command's CPU seconds (user + system, from the OS's accounting of the
child) and the load average before and after: on a shared machine wall time moves with the
load, CPU time much less.

Run: ``.venv/bin/python bench/recall_cold.py [--chunks 6000] [--runs 5] [--keep DIR]``
(``--keep DIR`` builds the store there, or reuses the one a previous run left).
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from common import sentence

from memls.core.recall import semantic
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
        semantic.save_index(store)
    return db


def _existing(root: Path, chunks: int) -> Path | None:
    """The database a previous ``--keep`` run left in ``root`` when it holds ``chunks`` chunks."""
    db = db_path_for(root)
    if not db.is_file():
        return None
    with RecallStore(db) as store:
        count = store.db.execute("select count(*) from memls_chunks").fetchone()[0]
        if count != chunks:
            return None
        semantic.save_index(store)  # the saved matrix a backfill leaves (kept if present)
    return db


@dataclass
class Samples:
    """Per-run wall and CPU (user + system of the child) seconds of one command."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
"""The commands run as installed programs do: their bytecode cached after the warm-up (with
PYTHONDONTWRITEBYTECODE set, every run would recompile each module edited since its cache
was last written, ~40 ms for a freshly edited memls)."""


def _run(command: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=_ENV)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def compare(commands: dict[str, list[str]], runs: int) -> dict[str, Samples]:
    """Wall and CPU seconds of each command, run in turn (one warm-up each, not counted)."""
    for command in commands.values():
        _run(command)
    times: dict[str, Samples] = {name: Samples() for name in commands}
    for _ in range(runs):
        for name, command in commands.items():
            wall, cpu = _run(command)
            times[name].wall.append(wall)
            times[name].cpu.append(cpu)
    return times


def _load() -> str:
    return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chunks", type=int, default=6000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--keep", type=Path, help="build the root here and keep it (reused by a later run)"
    )
    args = parser.parse_args()
    try:
        resolve_model_dir()
    except ModelWeightsNotFoundError as exc:
        print(f"cold search benchmark skipped: {exc}")
        return 0
    with tempfile.TemporaryDirectory(prefix="memls-cold-") as tmp:
        root = args.keep or Path(tmp) / "root"
        started = time.perf_counter()
        db = _existing(root, args.chunks) if args.keep else None
        if db is not None:
            print(f"store: {args.chunks:,} chunks, 384-d, memls-minilm (reused) at {db}")
        else:
            if args.keep and db_path_for(root).parent.is_dir():
                shutil.rmtree(db_path_for(root).parent)
            db = build_store(root, args.chunks)
            print(
                f"store: {args.chunks:,} chunks, 384-d, memls-minilm "
                f"({time.perf_counter() - started:.1f} s to build) at {db}"
            )
        memls = str(BIN / "memls")
        search = [memls, "recall", "search", QUERY, "--root", str(root)]
        commands = {
            "memls recall search (hybrid)": search,
            "memls recall search --mode semantic": [*search, "--mode", "semantic"],
            "llm similar": [str(BIN / "llm"), "similar", COLLECTION, "-d", str(db), "-c", QUERY],
        }
        print(f"before: {_load()} ({os.cpu_count()} CPUs)")
        times = compare(commands, args.runs)
        print(f"after:  {_load()}")
    llm = times["llm similar"]
    print(f"whole process, median of {args.runs} runs (min-max); cpu = user + system seconds:")
    for name, samples in times.items():
        wall, cpu = samples.wall, samples.cpu
        target = f"  (target <= {TARGET_SECONDS} s)" if name != "llm similar" else ""
        print(
            f"  {name:36} wall {statistics.median(wall):6.3f} s ({min(wall):.3f}-{max(wall):.3f})"
            f"  cpu {statistics.median(cpu):6.3f} s ({min(cpu):.3f}-{max(cpu):.3f}){target}"
        )
    for name, samples in times.items():
        if name == "llm similar":
            continue
        ratio = statistics.median(b / a for a, b in zip(samples.wall, llm.wall, strict=True))
        cpu_ratio = statistics.median(b / a for a, b in zip(samples.cpu, llm.cpu, strict=True))
        median = statistics.median(samples.wall)
        verdict = "met" if median <= TARGET_SECONDS and ratio >= TARGET_RATIO else "MISSED"
        print(
            f"  {name}: {median:.3f} s median (target <= {TARGET_SECONDS} s), {ratio:.1f}x "
            f"faster than llm similar (cpu {cpu_ratio:.1f}x; target >= {TARGET_RATIO:.0f}x): "
            f"{verdict}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
