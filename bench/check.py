"""`memls check` throughput against mistune's own full AST parse, and one-file wall time.

Targets (issue 2): check throughput / mistune-parse throughput ≥ 1.0 on 2,000 mixed ~5 KB
memory files, and `memls check` on one file ≤ 0.35 s wall (a fresh process, imports included).
Issue 20: `memls check` with the SC (secret) rules ≤ 1.25× the time without them on the same
corpus — the generated one, and with `--corpus DIR` a folder of real repositories' memory
(one folder per repository; every root `memls check` finds there, with the files it scans
for secrets only) — and the one-file cold check still ≤ 0.4 s.
Run: `.venv/bin/python bench/check.py [--files N] [--corpus DIR]`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import mistune
from common import make_root, timed

from memls.core.config import Config
from memls.core.rules import check_document
from memls.core.rules.secrets import check_file, scan_paths
from memls.core.workspace import Workspace, find_roots


def alternating(fns: list[Callable[[], object]], repeat: int) -> list[float]:
    """Best-of-``repeat`` wall time of each function, run in turn (one after the other, round
    after round) so that a load change on a shared machine hits them alike."""
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - start)
    return best


def corpus_ratio(corpus: Path, now: dt.datetime) -> None:
    """`memls check` with and without the SC rules over every root of a real corpus: on the
    same memory files, and with the files `memls check` reads for secrets only (memory
    subfolders, archived transcripts), which the check without SC does not read at all."""
    roots = [
        r for repo in sorted(p for p in corpus.iterdir() if p.is_dir()) for r in find_roots(repo)
    ]

    def run(config: Config, secret_only_files: bool) -> int:
        count = 0
        for root in roots:
            ws = Workspace(root, config)
            for p in ws.paths():
                doc = ws.document(p)
                if doc is not None:
                    count += len(check_document(ws, doc, now))
            if secret_only_files:
                for p in scan_paths(ws):
                    count += len(check_file(ws, p))
        return count

    without_sc = Config(ignore=("SC",))
    run(Config(), True)
    t_same, t_all, t_without = alternating(
        [lambda: run(Config(), False), lambda: run(Config(), True), lambda: run(without_sc, False)],
        repeat=7,
    )
    same, every = t_same / t_without, t_all / t_without
    print(f"real corpus: {len(roots)} roots in {corpus}")
    print(f"  memls check without SC: {t_without:.3f} s")
    print(
        f"  with SC, same files: {t_same:.3f} s = {same:.2f}x  (target ≤ 1.25) "
        f"{'PASS' if same <= 1.25 else 'MISS'}"
    )
    print(f"  with SC and the files scanned for secrets only: {t_all:.3f} s = {every:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--corpus", type=Path, help="a folder of repositories' memory")
    args = parser.parse_args()
    if args.corpus:
        corpus_ratio(args.corpus, dt.datetime(2026, 11, 30, 12, 0))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "root"
        paths = make_root(root, args.files)
        total_bytes = sum(p.stat().st_size for p in paths)
        texts = [p.read_text() for p in paths]
        print(f"corpus: {len(paths)} files, {total_bytes / 1e6:.1f} MB")

        markdown = mistune.create_markdown(renderer=None)

        def mistune_parse() -> None:
            for text in texts:
                markdown(text)

        now = dt.datetime(2026, 11, 30, 12, 0)

        def memls_check(config: Config | None = None) -> int:
            ws = Workspace(root, config or Config())
            count = 0
            for p in ws.paths():
                doc = ws.document(p)
                if doc is not None:
                    count += len(check_document(ws, doc, now))
            return count

        without_sc = Config(ignore=("SC",))
        memls_check()  # warm imports and caches of the rule modules
        t_mistune = timed(mistune_parse, repeat=3)
        t_memls, t_nosc = alternating([memls_check, lambda: memls_check(without_sc)], repeat=5)
        print(
            f"mistune full AST parse : {t_mistune:.3f} s  ({len(texts) / t_mistune:,.0f} files/s)"
        )
        print(f"memls check (all rules): {t_memls:.3f} s  ({len(texts) / t_memls:,.0f} files/s)")
        ratio = t_mistune / t_memls
        print(
            f"throughput ratio memls/mistune = {ratio:.2f}  (target ≥ 1.0) {'PASS' if ratio >= 1.0 else 'MISS'}"
        )

        sc_ratio = t_memls / t_nosc
        print(f"memls check without SC : {t_nosc:.3f} s")
        print(
            f"secret detection cost: with/without SC = {sc_ratio:.2f}  (target ≤ 1.25) "
            f"{'PASS' if sc_ratio <= 1.25 else 'MISS'}"
        )

        one = paths[0]
        walls = []
        for _ in range(7):
            start = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "memls", "check", "--exit-zero", str(one)],
                capture_output=True,
                check=False,
                cwd=root,
            )
            walls.append(time.perf_counter() - start)
        wall = statistics.median(walls)
        print(
            f"memls check on one file: {wall:.3f} s wall, median of 7  (target ≤ 0.35; issue 20: "
            f"≤ 0.4) {'PASS' if wall <= 0.35 else 'MISS'}"
        )


if __name__ == "__main__":
    main()
