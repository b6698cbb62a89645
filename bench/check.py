"""`memls check` throughput against mistune's own full AST parse, and one-file wall time.

Targets (issue 2): check throughput / mistune-parse throughput ≥ 1.0 on 2,000 mixed ~5 KB
memory files, and `memls check` on one file ≤ 0.35 s wall (a fresh process, imports included).
Run: `.venv/bin/python bench/check.py [--files N]`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import mistune
from common import make_root, timed

from memls.core.config import Config
from memls.core.rules import check_document
from memls.core.workspace import Workspace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=2000)
    args = parser.parse_args()
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
        t_memls = timed(memls_check, repeat=3)
        t_nosc = timed(lambda: memls_check(without_sc), repeat=3)
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
            f"memls check on one file: {wall:.3f} s wall, median of 7  (target ≤ 0.35) {'PASS' if wall <= 0.35 else 'MISS'}"
        )


if __name__ == "__main__":
    main()
