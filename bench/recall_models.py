"""Embedding throughput of memls-minilm (numpy) against sentence-transformers (torch).

Run: ``.venv/bin/python bench/recall_models.py [--chunks N] [--words W]``. Measures
chunks/s on W-word chunks (default 256 chunks of 150 words, the size recall's chunker
aims for). When torch and sentence-transformers are importable, the same weights run
through them too and the ratio is reported (target >= 0.5); otherwise the comparison is
skipped and said so. ``bench/recall.py`` calls ``run()``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable

from memls.core.recall.hashmodel import hash_vector
from memls.core.recall.minilm import ModelWeightsNotFoundError, load_minilm, resolve_model_dir

TARGET_RATIO = 0.5
BATCH_SIZE = 32

# Words of the kind memory files hold; a seeded draw makes every run embed the same text.
_WORDS = (
    "the a to of and in on for with from we it is was not this that when after before "
    "checkpoint memory index branch commit failing tests decided keep move volatile state "
    "named files vector store wheel build offline quick fix inserts missing section code "
    "action language server diagnostics embedding model hybrid search rank fusion transcript "
    "session assistant user tool output handoff next failed approach because error retry "
    "parser frontmatter heading link stale reference migration database schema config "
    "python numpy sqlite editor plugin release version deadline review merge rebase"
)


def make_chunks(count: int, words: int, seed: int = 0) -> list[str]:
    """``count`` deterministic pseudo-sentences of ``words`` words each."""
    rng = random.Random(seed)
    vocabulary = _WORDS.split()
    chunks = []
    for _ in range(count):
        picked = [rng.choice(vocabulary) for _ in range(words)]
        for i in range(0, words, 12):  # sentence breaks so punctuation tokens appear too
            picked[i] = picked[i].capitalize()
            picked[min(i + 11, words - 1)] += "."
        chunks.append(" ".join(picked))
    return chunks


def _rate(encode: Callable[[list[str]], object], chunks: list[str]) -> tuple[float, float]:
    """Chunks per wall second and per CPU second of one pass, after a small warm-up pass.

    The CPU figure stays meaningful on a shared machine, where wall time also counts the
    time other processes held the cores.
    """
    encode(chunks[:BATCH_SIZE])
    wall, cpu = time.perf_counter(), time.process_time()
    encode(chunks)
    return len(chunks) / (time.perf_counter() - wall), len(chunks) / (time.process_time() - cpu)


def _minilm_rate(chunks: int, words: int) -> tuple[float, float]:
    model = load_minilm()
    return _rate(
        lambda batch: model.encode(batch, batch_size=BATCH_SIZE), make_chunks(chunks, words)
    )


def _single_thread_rate(chunks: int, words: int) -> float | None:
    """memls-minilm chunks/s in a child process whose BLAS runs one thread.

    numpy's BLAS thread count is fixed at import, so only a fresh process can show it.
    Skipped on one CPU or when this process is already limited to one thread.
    """
    if (os.cpu_count() or 1) < 2 or os.environ.get("OPENBLAS_NUM_THREADS") == "1":
        return None
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    command = [sys.executable, __file__, "--minilm-rate", f"--chunks={chunks}", f"--words={words}"]
    out = subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout
    wall: float = json.loads(out)[0]
    return wall


def run(
    report: Callable[[str], None] = print, chunks: int = 256, words: int = 150
) -> dict[str, float]:
    """Measure and report; returns the figures (empty when the MiniLM weights are absent)."""
    texts = make_chunks(chunks, words)
    try:
        model_dir = resolve_model_dir()
    except ModelWeightsNotFoundError as exc:
        report(f"memls-minilm: skipped — {exc}")
        return {}
    started = time.perf_counter()
    model = load_minilm(model_dir)
    load_s = time.perf_counter() - started
    tokens = sum(len(ids) for ids in model.token_ids(texts)) / len(texts)
    report(
        f"memls-minilm throughput: {chunks} chunks x {words} words "
        f"(~{tokens:.0f} tokens each), batch {BATCH_SIZE}, weights {model_dir}"
    )
    load = os.getloadavg()[0]
    report(f"  {os.cpu_count()} CPUs, load average {load:.1f} at start")
    ours, ours_cpu = _minilm_rate(chunks, words)
    results = {
        "minilm_chunks_per_s": ours,
        "minilm_chunks_per_cpu_s": ours_cpu,
        "minilm_load_s": load_s,
        "tokens_per_chunk": tokens,
        "load_average": load,
    }
    report(
        f"  memls-minilm (numpy):  {ours:8.1f} chunks/s  {ours_cpu:8.1f} per CPU-second"
        f"  (model load {load_s:.2f} s)"
    )
    single = _single_thread_rate(chunks, words)
    if single is not None:
        results["minilm_chunks_per_s_1_thread"] = single
        report(
            f"  memls-minilm, 1 thread:{single:8.1f} chunks/s"
            "  (child process with OPENBLAS_NUM_THREADS=1)"
        )
    hashed, hashed_cpu = _rate(lambda batch: [hash_vector(t) for t in batch], texts)
    results["hash_chunks_per_s"] = hashed
    report(f"  memls-hash:            {hashed:8.1f} chunks/s  {hashed_cpu:8.1f} per CPU-second")

    missing = [m for m in ("torch", "sentence_transformers") if importlib.util.find_spec(m) is None]
    if missing:
        report(
            f"  sentence-transformers comparison skipped: {', '.join(missing)} not importable "
            f"(absolute figure above; target ratio >= {TARGET_RATIO} not checked)"
        )
        return results
    from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found]

    reference = SentenceTransformer(str(model_dir), device="cpu")
    theirs, theirs_cpu = _rate(
        lambda batch: reference.encode(
            batch, batch_size=BATCH_SIZE, normalize_embeddings=True, show_progress_bar=False
        ),
        texts,
    )
    ratio = ours / theirs
    results |= {"st_chunks_per_s": theirs, "ratio": ratio}
    verdict = "meets" if ratio >= TARGET_RATIO else "MISSES"
    report(f"  sentence-transformers: {theirs:8.1f} chunks/s  {theirs_cpu:8.1f} per CPU-second")
    report(f"  ratio memls/st: {ratio:.2f} ({verdict} the >= {TARGET_RATIO} target)")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=256, help="number of chunks to embed")
    parser.add_argument("--words", type=int, default=150, help="words per chunk")
    parser.add_argument("--minilm-rate", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.minilm_rate:  # the child of _single_thread_rate
        print(json.dumps(_minilm_rate(args.chunks, args.words)))
        return
    run(chunks=args.chunks, words=args.words)


if __name__ == "__main__":
    main()
