"""Link graph latency benchmark (a script, not a test): code lens and references.

Builds a flat memory root with 5,000 checkpoints (all indexed by bullets in a ~400 KB
MEMORY.md, so the graph has 5,000 bullet edges), 200 topic files that link each other with
``#anchors`` and ``continue`` lines, starts ``python -m memls.lsp`` over stdio and reports
p50/p95 of

- ``textDocument/codeLens`` on a topic file and on a checkpoint,
- ``textDocument/references`` from a bullet and from a link,
- the same code lens right after an edit of a topic file (the graph is patched first),

each with the ratio to ``textDocument/documentSymbol`` on the same file measured in the same
run (a request that does not touch the graph). Target: code lens / references p95 <= 20 ms.

    .venv/bin/python bench/lsp_graph.py [--checkpoints 5000] [--topics 200] [--requests 200]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

TARGET_MS = 20.0


def build_root(root: Path, checkpoints: int, topics: int) -> None:
    root.mkdir(parents=True, exist_ok=True)
    bullets = []
    for i in range(checkpoints):
        name = f"task-{i:05d}"
        (root / f"checkpoint-{name}.md").write_text(
            f"# Checkpoint: {name}\n\n- **Branch:** `main`\n- **Saved:** 2026-11-30 10:00\n\n"
            f"## Next Action: Continue task {i}\nSee [notes](topic-{i % topics:03d}.md#usage).\n\n"
            "## Done This Session\n- Wrote the parser\n\n## Failed Approaches\n- None\n\n"
            "## Modified Files\n- src/mod.py\n",
            encoding="utf-8",
        )
        bullets.append(f"- **{name}** (main, Nov 30 10:00) — Continue task {i}\n")
    links = "".join(f"- [Topic {t}](topic-{t:03d}.md)\n" for t in range(topics))
    (root / "MEMORY.md").write_text(
        "# Project Memory\n\n## Active Checkpoints\n"
        + "".join(bullets)
        + "\nResume any: `continue` or `continue {name}`\n\n## Memory Files\n"
        + links,
        encoding="utf-8",
    )
    for t in range(topics):
        others = "".join(
            f"- [Topic {(t + k) % topics}](topic-{(t + k) % topics:03d}.md#usage)\n"
            for k in (1, 2, 3)
        )
        (root / f"topic-{t:03d}.md").write_text(
            f"---\nname: topic-{t:03d}\ndescription: topic {t}\ntype: project\n---\n"
            f"# Topic {t}\n\n## Usage\nThen continue task-{t:05d}.\n\n## Related\n{others}",
            encoding="utf-8",
        )


def summary(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[int(0.95 * (len(ordered) - 1))]


WARMUP = 20
"""Unrecorded calls before each measured series (caches, the first-publish diagnostics)."""


async def timed(call: Callable[[], Awaitable[Any]], n: int) -> list[float]:
    for _ in range(WARMUP):
        await call()
    out = []
    for _ in range(n):
        start = time.perf_counter()
        await call()
        out.append((time.perf_counter() - start) * 1000)
    return out


async def run(checkpoints: int, topics: int, requests: int, keep: Path | None) -> None:
    base = keep or Path(tempfile.mkdtemp(prefix="memls-bench-graph-"))
    root = base / "mem"
    started = time.perf_counter()
    build_root(root, checkpoints, topics)
    print(
        f"root: {root} ({checkpoints} checkpoints, {topics} topic files) built in "
        f"{time.perf_counter() - started:.1f}s"
    )
    client = LanguageClient("memls-bench-graph", "1")
    ready = asyncio.Event()

    @client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)  # type: ignore[untyped-decorator]
    def create(params: types.WorkDoneProgressCreateParams) -> None:
        return None

    @client.feature(types.WINDOW_LOG_MESSAGE)  # type: ignore[untyped-decorator]
    def log(params: types.LogMessageParams) -> None:
        if "indexed" in params.message:
            ready.set()
        if params.type == types.MessageType.Error:
            print("server error:", params.message, file=sys.stderr)

    await client.start_io(sys.executable, "-m", "memls.lsp")
    caps = types.ClientCapabilities(
        window=types.WindowClientCapabilities(work_done_progress=True),
        general=types.GeneralClientCapabilities(
            position_encodings=[types.PositionEncodingKind.Utf16]
        ),
    )
    t0 = time.perf_counter()
    await client.initialize_async(
        types.InitializeParams(
            capabilities=caps,
            workspace_folders=[types.WorkspaceFolder(uri=base.resolve().as_uri(), name="bench")],
        )
    )
    client.initialized(types.InitializedParams())
    await ready.wait()
    print(f"initialize-to-ready: {(time.perf_counter() - t0) * 1000:.0f} ms")

    topic = root / "topic-007.md"
    checkpoint = root / "checkpoint-task-00007.md"
    index = root / "MEMORY.md"
    docs = {}
    for path in (topic, checkpoint, index):
        text = path.read_text(encoding="utf-8")
        docs[path] = text
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(path.resolve().as_uri(), "markdown", 1, text)
            )
        )

    def ident(path: Path) -> types.TextDocumentIdentifier:
        return types.TextDocumentIdentifier(uri=path.resolve().as_uri())

    def lens(path: Path) -> Callable[[], Awaitable[Any]]:
        return lambda: client.text_document_code_lens_async(types.CodeLensParams(ident(path)))

    def symbols(path: Path) -> Callable[[], Awaitable[Any]]:
        return lambda: client.text_document_document_symbol_async(
            types.DocumentSymbolParams(ident(path))
        )

    def refs(path: Path, line: int, character: int) -> Callable[[], Awaitable[Any]]:
        return lambda: client.text_document_references_async(
            types.ReferenceParams(
                text_document=ident(path),
                position=types.Position(line, character),
                context=types.ReferenceContext(include_declaration=False),
            )
        )

    index_lines = docs[index].splitlines()
    bullet_line = next(i for i, ln in enumerate(index_lines) if "**task-00007**" in ln)
    link_line = next(i for i, ln in enumerate(index_lines) if "(topic-007.md)" in ln)
    await lens(topic)()  # warm: the first request builds the graph
    await asyncio.sleep(2.0)  # let the diagnostics of the opened files go out first
    rows: list[tuple[str, list[float], list[float]]] = []
    base_topic = await timed(symbols(topic), requests)
    rows.append(("codeLens on a topic file", await timed(lens(topic), requests), base_topic))
    base_cp = await timed(symbols(checkpoint), requests)
    rows.append(("codeLens on a checkpoint", await timed(lens(checkpoint), requests), base_cp))
    base_index = await timed(symbols(index), requests)
    rows.append(
        (
            "references from a bullet",
            await timed(refs(index, bullet_line, 5), requests),
            base_index,
        )
    )
    rows.append(
        (
            "references from a link",
            await timed(refs(index, link_line, index_lines[link_line].index("(") + 2), requests),
            base_index,
        )
    )

    version = 1
    lines = docs[topic].splitlines()
    usage = lines.index("## Usage") + 1

    def edit(path: Path) -> None:
        nonlocal version
        version += 1
        pos = types.Position(usage, 0)
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=ident(path).uri, version=version),
                [types.TextDocumentContentChangePartial(range=types.Range(pos, pos), text="x")],
            )
        )

    async def edit_then(call: Callable[[], Awaitable[Any]]) -> None:
        edit(topic)
        await call()

    after_edit = await timed(lambda: edit_then(lens(topic)), requests)
    base_edit = await timed(lambda: edit_then(symbols(topic)), requests)
    after_row = ("edit + codeLens *", after_edit, base_edit)

    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()  # type: ignore[no-untyped-call]

    print(f"{requests} requests each; baseline = documentSymbol on the same file, same run")
    worst = 0.0
    for label, samples, baseline in rows:
        p50, p95 = summary(samples)
        b50, b95 = summary(baseline)
        worst = max(worst, p95)
        print(
            f"  {label:34s} p50 {p50:6.1f} ms  p95 {p95:6.1f} ms   "
            f"(baseline p50 {b50:5.1f} / p95 {b95:5.1f} ms; ratio p95 {p95 / b95:4.2f}x)"
        )
    p50, p95 = summary(after_row[1])
    b50, b95 = summary(after_row[2])
    print(
        f"  {after_row[0]:34s} p50 {p50:6.1f} ms  p95 {p95:6.1f} ms   "
        f"(baseline edit + documentSymbol p50 {b50:5.1f} / p95 {b95:5.1f} ms; ratio p95 "
        f"{p95 / b95:4.2f}x)"
    )
    print("  * both wait behind the diagnostics the edit queues on the worker thread")
    patch = core_patch_cost(root, topic, requests)
    print(
        f"  graph patch after one edit (core)  p50 {patch[0]:6.2f} ms  p95 {patch[1]:6.2f} ms   "
        f"(baseline: parsing that file, p50 {patch[2]:5.2f} / p95 {patch[3]:5.2f} ms)"
    )
    verdict = "ok" if worst <= TARGET_MS else "OVER"
    print(f"code lens / references p95 <= {TARGET_MS:.0f} ms: [{verdict}]")


def core_patch_cost(root: Path, topic: Path, n: int) -> tuple[float, float, float, float]:
    """In process: what bringing the graph up to date costs after one edited buffer, next
    to parsing that buffer (which every edit pays anyway)."""
    from memls.core.parse import parse_text
    from memls.core.workspace import Workspace

    ws = Workspace(root)
    ws.graph()
    text = topic.read_text(encoding="utf-8")
    path = topic.resolve()
    patch: list[float] = []
    parse: list[float] = []
    for i in range(n):
        edited = text + "x" * (i + 1)
        ws.set_text(path, edited)
        start = time.perf_counter()
        ws.graph()
        patch.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        parse_text(edited, path)
        parse.append((time.perf_counter() - start) * 1000)
    return (*summary(patch), *summary(parse))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--checkpoints", type=int, default=5000)
    parser.add_argument("--topics", type=int, default=200)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--keep", type=Path, default=None, help="build the root here (kept)")
    args = parser.parse_args()
    asyncio.run(run(args.checkpoints, args.topics, args.requests, args.keep))


if __name__ == "__main__":
    main()
