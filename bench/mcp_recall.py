"""MCP recall_search after a burst of new memory (issue 21), one run, figures printed.

Starts ``memls mcp`` over stdio on a fresh root (memls-hash model), asks one recall_search
so the store exists, then writes N MB (default 30) of generated ~50 KB topic files, the last
holding a marker word. Then times:

* the first recall_search after the burst (target ≤ 2 s: the refresh gets
  ``RECALL_REFRESH_BUDGET`` seconds, then the search answers from the index as it is) and
  the ``freshness`` it reports;
* the time until a recall_search reports ``fresh`` (the background refresh done) and finds
  the marker, polling every 0.5 s;
* a fresh answer after that (nothing changed: no refresh work);
* for comparison, a plain ``recall backfill`` of the same burst on a copy of the root
  before it (what the first answer used to wait for).

Run: ``.venv/bin/python bench/mcp_recall.py [--mb 30] [--file-kb 50] [--keep DIR]``
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import anyio
from common import topic_text

TARGET_FIRST = 2.0
MARKER = "quokkafjord"


def write_burst(root: Path, megabytes: int, file_kb: int, seed: int = 21) -> int:
    rng = random.Random(seed)
    count = max(1, megabytes * 1000 // file_kb)
    for i in range(count):
        text = topic_text(rng, file_kb * 1000)
        if i == count - 1:
            text += f"\n## Marker\n\nThe {MARKER} decision was made here.\n"
        (root / f"topic-burst-{i:04d}.md").write_text(text, encoding="utf-8")
    return count


def make_root(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "memls.toml").write_text('recall_model = "memls-hash"\n', encoding="utf-8")
    (root / "MEMORY.md").write_text("# Project Memory\n\n- [notes](notes.md)\n", encoding="utf-8")
    (root / "notes.md").write_text("# Notes\n\nThe parser keeps a cache.\n", encoding="utf-8")


async def run(root: Path, megabytes: int, file_kb: int) -> None:
    import mcp_types as types
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memls", "mcp", "--root", str(root)], cwd=str(root)
    )

    def body(result: types.CallToolResult) -> dict[str, Any]:
        block = result.content[0]
        assert isinstance(block, types.TextContent)
        data = json.loads(block.text)
        assert isinstance(data, dict)
        return data

    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        await session.call_tool("recall_search", {"query": "parser"})
        t = time.perf_counter()
        files = write_burst(root, megabytes, file_kb)
        written = time.perf_counter() - t
        size = sum(p.stat().st_size for p in root.glob("topic-burst-*.md")) / 1e6
        print(f"burst: {files} files, {size:.1f} MB written in {written:.1f} s")

        started = time.perf_counter()
        first = await session.call_tool("recall_search", {"query": MARKER})
        first_s = time.perf_counter() - started
        data = body(first)
        lines = [b.text for b in first.content[1:] if isinstance(b, types.TextContent)]
        verdict = "met" if first_s <= TARGET_FIRST else "MISSED"
        print(f"first answer     {first_s:6.2f} s (target <= {TARGET_FIRST:.0f} s: {verdict})")
        print(f"    freshness    {json.dumps(data['freshness'])}")
        print(f"    text line    {lines[0] if lines else '(none)'}")
        print(
            f"    results      {len(data['results'])} (marker found: "
            f"{any(MARKER in r['snippet'] for r in data['results'])})"
        )

        polls = 0
        while True:
            polls += 1
            data = body(await session.call_tool("recall_search", {"query": MARKER}))
            if data["freshness"]["fresh"] or time.perf_counter() - started > 600:
                break
            await anyio.sleep(0.5)
        fresh_s = time.perf_counter() - started
        found = any(MARKER in r["snippet"] for r in data["results"])
        print(f"until fresh      {fresh_s:6.2f} s ({polls} calls; marker found: {found})")

        t = time.perf_counter()
        again = body(await session.call_tool("recall_search", {"query": MARKER}))
        print(f"fresh answer     {time.perf_counter() - t:6.2f} s (index: {again['index']!r})")


def baseline(megabytes: int, file_kb: int) -> float:
    """A blocking backfill of the same burst: what the first answer used to wait for."""
    from memls.core.recall import api

    with tempfile.TemporaryDirectory(prefix="memls-mcp-base-") as tmp:
        root = Path(tmp) / "root"
        make_root(root)
        api.backfill(root)
        write_burst(root, megabytes, file_kb)
        t = time.perf_counter()
        api.backfill(root)
        return time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=int, default=30)
    parser.add_argument("--file-kb", type=int, default=50)
    parser.add_argument("--keep", type=Path, default=None, help="build the root here")
    parser.add_argument("--no-baseline", action="store_true")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}; cores {os.cpu_count()}")
    tmp = None
    if args.keep is None:
        tmp = tempfile.mkdtemp(prefix="memls-mcp-recall-")
        root = Path(tmp) / "root"
    else:
        root = args.keep
        shutil.rmtree(root, ignore_errors=True)
    try:
        make_root(root)
        anyio.run(run, root, args.mb, args.file_kb)
        if not args.no_baseline:
            seconds = baseline(args.mb, args.file_kb)
            print(f"blocking backfill of the same burst (the old first answer) {seconds:6.2f} s")
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
