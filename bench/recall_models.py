"""Embedding throughput of memls-minilm (numpy) against sentence-transformers (torch).

Run: ``.venv/bin/python bench/recall_models.py [--chunks N] [--words W] [--st-python PATH]``.
Measures chunks/s on W-word chunks (default 256 chunks of 150 words, the size recall's
chunker aims for) and compares with sentence-transformers running the same weights on the
same texts with the same batch size, in the same run: passes alternate between the two so
a change in machine load hits both. Reported: chunks/s of each (best of the rounds, per
wall second and per CPU second), the ratio memls/st (target >= 1.0) and the cosine between
the two models' vectors (a fidelity cross-check on these texts).

sentence-transformers is used in-process when importable. The project's ``.venv`` has no
torch on purpose, so instead point ``--st-python`` (or ``MEMLS_BENCH_ST_PYTHON``) at the
interpreter of a throwaway venv outside the repository; a child process there embeds the
texts (passed in a temporary JSON file) and reports its timings line by line. Make it with
the CPU-only torch wheel (a plain ``pip install torch`` may pull a multi-GB CUDA build)::

    python3 -m venv /tmp/st-venv
    /tmp/st-venv/bin/pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
    /tmp/st-venv/bin/pip install sentence-transformers
    MEMLS_BENCH_ST_PYTHON=/tmp/st-venv/bin/python .venv/bin/python bench/recall_models.py

(where a local ``torch-*+cpu`` wheel exists, install that file instead of the index URL).
The child loads the model from memls's own weights directory with ``HF_HUB_OFFLINE=1`` and
``TRANSFORMERS_OFFLINE=1``: it never downloads. Both sides keep their default thread
settings: torch runs one thread per core; memls-minilm runs one Python thread per BLAS
thread (one per core by default), each with a single-threaded BLAS, so
``OPENBLAS_NUM_THREADS=1`` makes it serial. The child reports torch's count. Without sentence-transformers the absolute figure is printed and the
comparison is reported as skipped, with the reason. ``bench/recall.py`` calls ``run()``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np

from memls.core.recall.blasthreads import blas_threads as minilm_workers
from memls.core.recall.hashmodel import hash_matrix
from memls.core.recall.minilm import ModelWeightsNotFoundError, load_minilm, resolve_model_dir

TARGET_RATIO = 1.0
HASH_TARGET = 10_000  # memls-hash chunks/s (issue 13)
BATCH_SIZE = 32
ROUNDS = 3  # timed passes per model, alternating; the best of each is reported
ST_PYTHON_ENV = "MEMLS_BENCH_ST_PYTHON"
_MARK = "@@memls-bench "  # prefixes the child's protocol lines; anything else is its chatter

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

# Runs inside the sentence-transformers interpreter, which need not have memls or even the
# same numpy: it only reads the job file, then answers "time" lines on stdin with timings.
_ST_CHILD = r"""
import json, os, sys, time
MARK = "@@memls-bench "
job = json.load(open(sys.argv[1], encoding="utf-8"))
import numpy as np
import torch
from sentence_transformers import SentenceTransformer
import sentence_transformers
model = SentenceTransformer(job["model_dir"], device="cpu")
texts, batch = job["texts"], job["batch_size"]
def encode(items):
    return model.encode(items, batch_size=batch, normalize_embeddings=True,
                        show_progress_bar=False, convert_to_numpy=True)
np.save(job["vectors"], encode(texts[:batch]).astype(np.float32)[:0])
print(MARK + json.dumps({"ready": True, "torch": torch.__version__,
      "sentence_transformers": sentence_transformers.__version__,
      "threads": torch.get_num_threads(), "max_seq_length": model.max_seq_length}), flush=True)
saved = False
for line in sys.stdin:
    if line.strip() != "time":
        break
    wall, cpu = time.perf_counter(), time.process_time()
    vectors = encode(texts)
    out = {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu}
    if not saved:
        np.save(job["vectors"], vectors.astype(np.float32))
        saved = True
    print(MARK + json.dumps(out), flush=True)
"""


def hash_vector_r1(text: str) -> list[float]:
    """memls-hash revision 1, kept here as the speed baseline: per-feature counts and one
    blake2b per feature occurrence, in pure Python."""
    import hashlib
    import math
    import re
    from collections import Counter
    from itertools import pairwise

    dims, counts, weights = 512, Counter[str](), {}
    words = re.findall(r"\w+", text.lower())
    for word in words:
        counts["w:" + word] += 1
        weights["w:" + word] = 1.0
        marked = f"<{word}>"
        for n in (3, 4, 5):
            for i in range(len(marked) - n + 1):
                counts["c:" + marked[i : i + n]] += 1
                weights["c:" + marked[i : i + n]] = 0.5
    for first, second in pairwise(words):
        counts[f"b:{first} {second}"] += 1
        weights[f"b:{first} {second}"] = 1.0
    vector = [0.0] * dims
    for feature, tf in counts.items():
        value = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")
        sign = 1.0 if value >> 63 else -1.0
        vector[value % dims] += sign * weights[feature] * (1.0 + math.log(tf))
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


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


def _timed(encode: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU seconds of one call.

    The CPU figure stays meaningful on a shared machine, where wall time also counts the
    time other processes held the cores.
    """
    wall, cpu = time.perf_counter(), time.process_time()
    encode()
    return time.perf_counter() - wall, time.process_time() - cpu


def _rate(encode: Callable[[list[str]], object], chunks: list[str]) -> tuple[float, float]:
    """Chunks per wall second and per CPU second of one pass, after a small warm-up pass."""
    encode(chunks[:BATCH_SIZE])
    wall, cpu = _timed(lambda: encode(chunks))
    return len(chunks) / wall, len(chunks) / cpu


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


class ComparisonUnavailableError(RuntimeError):
    """sentence-transformers cannot run here; the message says why."""


class _InProcessST:
    """sentence-transformers imported into this process."""

    def __init__(self, model_dir: Path, texts: list[str]) -> None:
        from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found]

        self._model = SentenceTransformer(str(model_dir), device="cpu")
        self._texts = texts
        self.vectors: np.ndarray[Any, np.dtype[np.float32]] | None = None
        self._encode(texts[:BATCH_SIZE])  # warm-up
        import sentence_transformers
        import torch  # type: ignore[import-not-found]

        self.description = (
            f"in-process, torch {torch.__version__}, sentence-transformers "
            f"{sentence_transformers.__version__}, {torch.get_num_threads()} torch threads"
        )

    def _encode(self, texts: Sequence[str]) -> np.ndarray[Any, np.dtype[np.float32]]:
        vectors = self._model.encode(
            list(texts), batch_size=BATCH_SIZE, normalize_embeddings=True, show_progress_bar=False
        )
        return np.asarray(vectors, dtype=np.float32)

    def time_pass(self) -> tuple[float, float]:
        def encode() -> None:
            vectors = self._encode(self._texts)
            if self.vectors is None:
                self.vectors = vectors

        return _timed(encode)

    def close(self) -> None:
        """Nothing to release in-process."""


class _ChildST:
    """sentence-transformers in another interpreter, driven over stdin/stdout.

    The child stays up across rounds so model loading is paid once and each timed pass
    can alternate with one of ours.
    """

    def __init__(self, python: str, model_dir: Path, texts: list[str]) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="memls-bench-st-")
        work = Path(self._dir.name)
        self._vectors_path = work / "vectors.npy"
        job = {
            "model_dir": str(model_dir),
            "texts": texts,
            "batch_size": BATCH_SIZE,
            "vectors": str(self._vectors_path),
        }
        (work / "job.json").write_text(json.dumps(job), encoding="utf-8")
        self._stderr: IO[str] = open(work / "stderr.txt", "w+", encoding="utf-8")  # noqa: SIM115
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        env.pop("PYTHONPATH", None)  # the child's own site-packages, not ours
        python = os.path.abspath(python) if os.sep in python else python  # cwd changes below
        try:
            self._process = subprocess.Popen(
                [python, "-c", _ST_CHILD, str(work / "job.json")],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                text=True,
                env=env,
                cwd=work,
            )
        except OSError as exc:
            self.close()
            raise ComparisonUnavailableError(f"cannot start {python}: {exc}") from exc
        hello = self._read()
        self.description = (
            f"{python}: torch {hello['torch']}, sentence-transformers "
            f"{hello['sentence_transformers']}, {hello['threads']} torch threads, "
            f"max_seq_length {hello['max_seq_length']}"
        )
        self.vectors: np.ndarray[Any, np.dtype[np.float32]] | None = None

    def _read(self) -> dict[str, Any]:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            if line.startswith(_MARK):
                message: dict[str, Any] = json.loads(line[len(_MARK) :])
                return message
        self._process.wait()
        self._stderr.seek(0)
        tail = self._stderr.read().strip().splitlines()[-3:]
        self.close()
        raise ComparisonUnavailableError(
            f"the sentence-transformers child exited with {self._process.returncode}: "
            + " | ".join(tail)
        )

    def time_pass(self) -> tuple[float, float]:
        assert self._process.stdin is not None
        self._process.stdin.write("time\n")
        self._process.stdin.flush()
        timing = self._read()
        if self.vectors is None:
            self.vectors = np.load(self._vectors_path).astype(np.float32)
        return float(timing["wall"]), float(timing["cpu"])

    def close(self) -> None:
        process = getattr(self, "_process", None)
        if process is not None and process.poll() is None:
            assert process.stdin is not None
            process.stdin.close()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self._stderr.close()
        self._dir.cleanup()


def _sentence_transformers(
    model_dir: Path, texts: list[str], st_python: str | None
) -> _InProcessST | _ChildST:
    """The comparison runner, or ComparisonUnavailableError saying why there is none."""
    missing = [m for m in ("torch", "sentence_transformers") if importlib.util.find_spec(m) is None]
    if not missing:
        return _InProcessST(model_dir, texts)
    python = st_python or os.environ.get(ST_PYTHON_ENV)
    if not python:
        raise ComparisonUnavailableError(
            f"{', '.join(missing)} not importable here and no interpreter given "
            f"(--st-python or {ST_PYTHON_ENV}; see this script's docstring)"
        )
    return _ChildST(python, model_dir, texts)


def run(
    report: Callable[[str], None] = print,
    chunks: int = 256,
    words: int = 150,
    *,
    st_python: str | None = None,
) -> dict[str, float]:
    """Measure and report; returns the figures (empty when the MiniLM weights are absent).

    ``st_python`` (else ``MEMLS_BENCH_ST_PYTHON``) names an interpreter with
    sentence-transformers, used when it is not importable in this process.
    """
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
    blas_threads = os.environ.get("OPENBLAS_NUM_THREADS", "default")
    workers = minilm_workers()
    report(
        f"  {os.cpu_count()} CPUs, load average {load:.1f} at start, "
        f"OPENBLAS_NUM_THREADS={blas_threads}, best of {ROUNDS} alternating passes; "
        f"memls-minilm batches on {workers} thread{'s' if workers > 1 else ''}"
        + (" with a single-threaded BLAS each" if workers > 1 else "")
    )

    reference: _InProcessST | _ChildST | None = None
    skipped = ""
    try:
        reference = _sentence_transformers(model_dir, texts, st_python)
    except ComparisonUnavailableError as exc:
        skipped = str(exc)

    ours_vectors: np.ndarray[Any, np.dtype[np.float32]] | None = None

    def encode_ours() -> None:
        nonlocal ours_vectors
        ours_vectors = model.encode(texts, batch_size=BATCH_SIZE)

    model.encode(texts[:BATCH_SIZE])  # warm-up
    our_passes: list[tuple[float, float]] = []
    their_passes: list[tuple[float, float]] = []
    try:
        for _ in range(ROUNDS):
            our_passes.append(_timed(encode_ours))
            if reference is not None:
                their_passes.append(reference.time_pass())
    except ComparisonUnavailableError as exc:
        reference, skipped = None, str(exc)
    finally:
        if reference is not None:
            reference.close()

    ours = chunks / min(wall for wall, _ in our_passes)
    ours_cpu = chunks / min(cpu for _, cpu in our_passes)
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
    if reference is not None and their_passes:
        theirs = chunks / min(wall for wall, _ in their_passes)
        theirs_cpu = chunks / min(cpu for _, cpu in their_passes)
        ratio, ratio_cpu = ours / theirs, ours_cpu / theirs_cpu
        results |= {
            "st_chunks_per_s": theirs,
            "st_chunks_per_cpu_s": theirs_cpu,
            "ratio": ratio,
            "ratio_cpu": ratio_cpu,
        }
        report(f"  sentence-transformers: {theirs:8.1f} chunks/s  {theirs_cpu:8.1f} per CPU-second")
        report(f"    ({reference.description})")
        verdict = "meets" if ratio >= TARGET_RATIO else "MISSES"
        report(
            f"  ratio memls/st: {ratio:.2f} per wall second, {ratio_cpu:.2f} per CPU-second "
            f"({verdict} the >= {TARGET_RATIO} target)"
        )
        if reference.vectors is not None and ours_vectors is not None:
            cosines = np.sum(
                ours_vectors.astype(np.float64) * reference.vectors.astype(np.float64), axis=1
            )
            results |= {"cosine_mean": float(cosines.mean()), "cosine_min": float(cosines.min())}
            report(
                f"  cosine memls vs st on these texts: mean {cosines.mean():.7f}, "
                f"min {cosines.min():.7f}"
            )
    else:
        report(
            f"  sentence-transformers comparison skipped: {skipped} "
            f"(absolute figure above; target ratio >= {TARGET_RATIO} not checked)"
        )

    single = _single_thread_rate(chunks, words)
    if single is not None:
        results["minilm_chunks_per_s_1_thread"] = single
        report(
            f"  memls-minilm, 1 thread:{single:8.1f} chunks/s"
            "  (child process with OPENBLAS_NUM_THREADS=1)"
        )
    hashed, hashed_cpu = _rate(
        lambda batch: [hash_matrix(batch[i : i + 64]) for i in range(0, len(batch), 64)], texts
    )
    results["hash_chunks_per_s"] = hashed
    verdict = "met" if hashed >= HASH_TARGET else "MISSED"
    report(
        f"  memls-hash:            {hashed:8.1f} chunks/s  {hashed_cpu:8.1f} per CPU-second"
        f"  (batches of 64, as backfill embeds; target >= {HASH_TARGET:,}: {verdict})"
    )
    old, old_cpu = _rate(lambda batch: [hash_vector_r1(t) for t in batch], texts[:64])
    results["hash_r1_chunks_per_s"] = old
    report(
        f"  memls-hash r1 (the pure-Python scheme it replaced): {old:8.1f} chunks/s "
        f"{old_cpu:8.1f} per CPU-second; r2 is {hashed / old:.0f}x faster"
    )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=256, help="number of chunks to embed")
    parser.add_argument("--words", type=int, default=150, help="words per chunk")
    parser.add_argument(
        "--st-python",
        help=f"interpreter with sentence-transformers (default: ${ST_PYTHON_ENV})",
    )
    parser.add_argument("--minilm-rate", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.minilm_rate:  # the child of _single_thread_rate
        print(json.dumps(_minilm_rate(args.chunks, args.words)))
        return
    run(chunks=args.chunks, words=args.words, st_python=args.st_python)


if __name__ == "__main__":
    main()
