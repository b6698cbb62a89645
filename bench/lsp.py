"""Language server latency benchmark (a script, not a test).

Builds a flat memory root with 5,000 checkpoints and a ~20 KB MEMORY.md, starts
``python -m memls.lsp`` over stdio, and reports: initialize-to-ready time (until the
indexing progress ends), p50/p95 from ``didChange`` to the matching ``publishDiagnostics``
over 200 edits of MEMORY.md (target p95 <= 30 ms), the server's CPU time per edit (which,
unlike the latency, does not depend on what else the machine is doing), and the server's RSS
(target <= 200 MB).

    .venv/bin/python bench/lsp.py [--checkpoints 5000] [--edits 200] [--keep DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lspclient import indexing_client
from lsprotocol import types

MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def build_root(root: Path, checkpoints: int, index_bytes: int = 20_000) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    when = dt.datetime.now().replace(second=0, microsecond=0) - dt.timedelta(hours=2)
    stamp = when.strftime("%Y-%m-%d %H:%M")
    short = f"{MONTHS[when.month - 1]} {when.day:02d} {when.hour:02d}:{when.minute:02d}"
    bullets: list[str] = []
    for i in range(checkpoints):
        name = f"task-{i:05d}"
        (root / f"checkpoint-{name}.md").write_text(
            f"# Checkpoint: {name}\n\n- **Branch:** `main`\n- **Saved:** {stamp}\n\n"
            f"## Next Action: Continue task {i}\nEdit `src/mod{i}.py`.\n\n"
            "## Done This Session\n- Wrote the parser\n\n## Failed Approaches\n- None\n\n"
            "## Modified Files\n- src/mod.py\n",
            encoding="utf-8",
        )
        bullets.append(f"- **{name}** (main, {short}) — Continue task {i}\n")
    head = "# Project Memory\n\n## Active Checkpoints\n"
    body = ""
    for bullet in bullets:
        if len(head) + len(body) + len(bullet) > index_bytes - 2_000:
            break
        body += bullet
    text = head + body + "\nResume any: `continue` or `continue {name}`\n\n## Decisions\n"
    while len(text.encode()) < index_bytes:
        text += "- Keep the parser pure and the fronts thin; measure before optimising.\n"
    (root / "MEMORY.md").write_text(text, encoding="utf-8")
    return root / "MEMORY.md"


def _resolve(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used so far (Linux /proc), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> tuple[float, float]:
    """Current and peak resident set size of a process, in MB (Linux /proc)."""
    values: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(rest.split()[0]) / 1024
    return values.get("VmRSS", 0.0), values.get("VmHWM", 0.0)


async def run(checkpoints: int, edits: int, keep: Path | None) -> None:
    base = keep or Path(tempfile.mkdtemp(prefix="memls-bench-lsp-"))
    root = base / "mem"
    started = time.perf_counter()
    index = build_root(root, checkpoints)
    print(
        f"root: {root} ({checkpoints} checkpoints, MEMORY.md {index.stat().st_size:,} bytes) built in {time.perf_counter() - started:.1f}s"
    )

    client, ready = indexing_client("memls-bench")
    published: dict[int, float] = {}
    counts: dict[int, int] = {}
    waiters: dict[int, asyncio.Future[None]] = {}

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)  # type: ignore[untyped-decorator]
    def diagnostics(params: types.PublishDiagnosticsParams) -> None:
        if params.version is not None:
            published[params.version] = time.perf_counter()
            counts[params.version] = len(params.diagnostics)
            for version, fut in list(waiters.items()):
                if version <= params.version and not fut.done():
                    fut.get_loop().call_soon_threadsafe(_resolve, fut)

    await client.start_io(sys.executable, "-m", "memls.lsp")
    assert client._server is not None
    pid = client._server.pid
    t0 = time.perf_counter()
    caps = types.ClientCapabilities(
        window=types.WindowClientCapabilities(work_done_progress=True),
        general=types.GeneralClientCapabilities(
            position_encodings=[types.PositionEncodingKind.Utf16]
        ),
    )
    await client.initialize_async(
        types.InitializeParams(
            capabilities=caps,
            workspace_folders=[types.WorkspaceFolder(uri=base.resolve().as_uri(), name="bench")],
        )
    )
    client.initialized(types.InitializedParams())
    await ready.wait()
    ready_s = time.perf_counter() - t0
    rss_ready, _ = rss_mb(pid)

    uri = index.resolve().as_uri()
    text = index.read_text(encoding="utf-8")
    version = 1
    loop = asyncio.get_running_loop()
    waiters[1] = loop.create_future()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "markdown", version, text))
    )
    await waiters[1]
    waiters.pop(1)
    decisions = text.splitlines().index("## Decisions") + 1
    latencies: list[float] = []
    cpu_before = cpu_seconds(pid)
    for i in range(edits):
        version += 1
        fut = loop.create_future()
        waiters[version] = fut
        pos = types.Position(decisions + (i % 20), 2)
        change = types.TextDocumentContentChangePartial(range=types.Range(pos, pos), text="x")
        sent = time.perf_counter()
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=uri, version=version), [change]
            )
        )
        await fut
        waiters.pop(version, None)
        latencies.append((published.get(version, time.perf_counter()) - sent) * 1000)
    cpu_per_edit = (cpu_seconds(pid) - cpu_before) * 1000 / max(1, edits)
    rss_now, rss_peak = rss_mb(pid)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()  # type: ignore[no-untyped-call]

    latencies.sort()
    p50 = statistics.median(latencies)
    p95 = latencies[int(0.95 * (len(latencies) - 1))]
    print(f"initialize-to-ready: {ready_s * 1000:.0f} ms")
    print(
        f"didChange -> publishDiagnostics over {edits} edits: p50 {p50:.1f} ms, p95 {p95:.1f} ms (target p95 <= 30 ms)"
        f" [{'ok' if p95 <= 30 else 'OVER'}]; diagnostics per publish: {counts.get(version, 0)}"
    )
    print(
        f"server CPU per edit: {cpu_per_edit:.1f} ms (independent of other load on the machine;"
        f" wall-clock latency above is not: load average {os.getloadavg()[0]:.1f} on"
        f" {os.cpu_count()} CPUs)"
    )
    print(
        f"server RSS: {rss_ready:.0f} MB when ready, {rss_now:.0f} MB after edits, peak {rss_peak:.0f} MB (target <= 200 MB)"
        f" [{'ok' if rss_peak <= 200 else 'OVER'}]"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--checkpoints", type=int, default=5000)
    parser.add_argument("--edits", type=int, default=200)
    parser.add_argument("--keep", type=Path, default=None, help="build the root here (kept)")
    args = parser.parse_args()
    asyncio.run(run(args.checkpoints, args.edits, args.keep))


if __name__ == "__main__":
    main()
