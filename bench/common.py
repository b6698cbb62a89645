"""Helpers shared by the benchmarks: synthetic memory roots and timing."""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path

WORDS = [
    "recall",
    "checkpoint",
    "branch",
    "index",
    "memory",
    "session",
    "handoff",
    "verify",
    "bundle",
    "approve",
    "parser",
    "fixture",
    "server",
    "client",
    "token",
    "commit",
    "snapshot",
    "fallback",
    "embedding",
    "search",
    "decision",
    "failed",
    "approach",
    "module",
    "cache",
    "latency",
    "review",
    "migrate",
    "pointer",
    "topic",
]


def sentence(rng: random.Random, n: int = 12) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def checkpoint_text(rng: random.Random, name: str, size: int = 5000) -> str:
    parts = [
        f"# Checkpoint: {name}\n\n- **Branch:** `feature/{name}`\n- **Saved:** 2026-11-{rng.randint(1, 29):02d} 10:00\n\n",
        f"## Next Action: {sentence(rng, 5)}\nEdit `core/{name}.py`: {sentence(rng)}\n\n## Done This Session\n",
    ]
    body = "".join(f"- {sentence(rng)}\n" for _ in range(8))
    parts.append(
        body
        + "\n## Failed Approaches\n- "
        + sentence(rng)
        + "\n\n## Modified Files\n- core/x.py\n\n## Notes\n"
    )
    text = "".join(parts)
    while len(text) < size:
        text += sentence(rng, 20) + " `code` and *emphasis* and [a link](topic.md)\n"
    return text


def topic_text(rng: random.Random, size: int = 5000) -> str:
    text = "---\nname: t\ndescription: d\ntype: feedback\n---\n# Topic\n\n"
    while len(text) < size:
        text += (
            f"## {sentence(rng, 3)}\n\n" + "".join(f"- {sentence(rng)}\n" for _ in range(5)) + "\n"
        )
        text += "```python\nprint('hello')\n```\n\n" + sentence(rng, 30) + "\n\n"
    return text


def log_text(rng: random.Random, size: int = 5000) -> str:
    text = "# Log\n\n"
    day = 1
    while len(text) < size:
        text += f"## 2026-11-{day:02d} 10:00 — {sentence(rng, 4)}\n- Scope: {sentence(rng)}\n- Decisions made: {sentence(rng)}\n\n"
        day = min(day + 1, 28)
    return text


def make_root(root: Path, files: int, seed: int = 7) -> list[Path]:
    """A flat root with checkpoints, topic files and logs of ~5 KB each, plus an index."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    bullets = []
    for i in range(files):
        kind = i % 3
        if kind == 0:
            name = f"task-{i}"
            p = root / f"checkpoint-{name}.md"
            p.write_text(checkpoint_text(rng, name))
            bullets.append(f"- **{name}** (feature/{name}, Nov 10 10:00) — {sentence(rng, 4)}")
        elif kind == 1:
            p = root / f"topic-{i}.md"
            p.write_text(topic_text(rng))
        else:
            p = root / f"notes-{i}.md"
            p.write_text(log_text(rng))
        paths.append(p)
    index = root / "MEMORY.md"
    index.write_text(
        "# Project Memory\n\n## Active Checkpoints\n"
        + "\n".join(bullets)
        + "\n\nResume any: `continue` or `continue {name}`\n"
    )
    paths.append(index)
    return paths


def timed(fn: Callable[[], object], repeat: int = 1) -> float:
    """Best-of-``repeat`` wall time in seconds."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p50 = statistics.median(ordered)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return p50, p95
