"""Pointer resolution at scale (issue 15, item 5): `memls check` on a 20 MB MEMORY.md of
400,000 pointer bullets against the same size of MEMORY.md without links.

Target: time with links / time without links ≤ 1.5, and peak memory (RSS) ≤ 300 MB.
The baseline is the same index with the link syntax taken out: the same 400,000 bullets,
line for line the same length (``- [Topic 7](topic-7.md) — pointer number 12`` against
``- Topic 7, topic-7 note — pointer number 12``), so both files have the same size, lines
and list items, and the difference is the links alone.
Each side runs `memls check --exit-zero MEMORY.md` in a fresh process (imports included);
the baseline is measured in the same run. The verdict uses CPU time (the process is
single-threaded, so it equals wall time on an idle machine and is not skewed by other
load); wall time is printed too. The pointers lead to 1,000 existing topic files,
so nothing is reported: what is timed is extraction, resolution and reachability.

Run: `.venv/bin/python bench/links.py [--bullets 400000] [--topics 1000] [--repeat 3]`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, resource, sys, time
start, cpu = time.perf_counter(), time.process_time()
from memls.cli import main
try:
    main(["check", "--exit-zero", "--format", "json", sys.argv[1]], standalone_mode=False)
except SystemExit:
    pass
secs, cpu = time.perf_counter() - start, time.process_time() - cpu
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"secs": secs, "cpu": cpu, "rss_mb": rss}), file=sys.stderr)
"""


def build(root: Path, bullets: int, topics: int, links: bool, size: int) -> Path:
    root.mkdir(parents=True)
    for i in range(topics):
        (root / f"topic-{i}.md").write_text(f"# Topic {i}\n\nA note.\n")
    lines = ["# Project Memory", "", "## Memory Files"]
    for i in range(bullets):
        t = i % topics
        if links:
            lines.append(f"- [Topic {t}](topic-{t}.md) — pointer number {i}")
        else:
            lines.append(f"- Topic {t}, topic-{t} note — pointer number {i}")
    text = "\n".join(lines) + "\n"
    pad = size - len(text.encode())
    if pad > 0:  # both files the same size (the lines already are; this is a safeguard)
        text += "\n" + "".join("- padding line for an equal size\n" for _ in range(pad // 34))
    index = root / "MEMORY.md"
    index.write_text(text)
    return index


def run(index: Path, repeat: int) -> tuple[float, float, float]:
    secs: list[float] = []
    cpus: list[float] = []
    rss: list[float] = []
    for _ in range(repeat):
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, str(index)],
            capture_output=True,
            text=True,
            cwd=index.parent,
            check=False,
        )
        last = proc.stderr.strip().splitlines()[-1]
        data = json.loads(last)
        secs.append(float(data["secs"]))
        cpus.append(float(data["cpu"]))
        rss.append(float(data["rss_mb"]))
    return statistics.median(secs), statistics.median(cpus), max(rss)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bullets", type=int, default=400_000)
    parser.add_argument("--topics", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        linked = build(Path(tmp) / "links", args.bullets, args.topics, True, 0)
        size = linked.stat().st_size
        plain = build(Path(tmp) / "plain", args.bullets, args.topics, False, size)
        print(
            f"MEMORY.md: {args.bullets:,} bullets, {size / 1e6:.1f} MB with links, "
            f"{plain.stat().st_size / 1e6:.1f} MB without; {args.topics} topic files"
        )
        t_plain, c_plain, m_plain = run(plain, args.repeat)
        t_links, c_links, m_links = run(linked, args.repeat)
        ratio = c_links / c_plain
        print(f"without links: {t_plain:.2f} s wall, {c_plain:.2f} s CPU, peak {m_plain:.0f} MB")
        print(f"with links   : {t_links:.2f} s wall, {c_links:.2f} s CPU, peak {m_links:.0f} MB")
        print(f"wall ratio links/plain = {t_links / t_plain:.2f} (on a shared machine, noisy)")
        print(
            f"CPU ratio links/plain = {ratio:.2f}  (target ≤ 1.5) "
            f"{'PASS' if ratio <= 1.5 else 'MISS'}"
        )
        print(
            f"peak memory with links = {m_links:.0f} MB  (target ≤ 300) "
            f"{'PASS' if m_links <= 300 else 'MISS'}; without links {m_plain:.0f} MB"
        )


if __name__ == "__main__":
    main()
