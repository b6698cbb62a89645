"""Small memory roots and Claude Code transcript lines for recall tests."""

from __future__ import annotations

import json
from pathlib import Path

TOPIC = """---
name: garden-watering
description: How and when the tomato beds are watered
type: project
tags: [garden, water]
created: 2026-10-01
---
# Garden watering

The drip line runs on a timer.

## Schedule
Bed 3 is watered by the drip line every morning at six.

## Failures
The timer battery died in August and the seedlings wilted.
"""

CHECKPOINT = """# Checkpoint: fix-parser

- **Branch:** `fix/parser`
- **Saved:** 2026-11-29 17:40

## Next Action: Handle tables in the parser
Edit `core/parse.py` so pipe tables keep their line numbers.

## Done This Session
- Added fence tracking to the section scanner
"""

LOG = """# Log

## 2026-11-20 10:05 — Recall fallback decision
- Decisions made: fall back to FTS5 text search when no embedding model loads

## Checkpoint Bundle
- [x] log: LOG.md entry

## 2026-11-28 09:00 — Compost bins
- What happened: moved the compost bins behind the shed
"""

HANDOFF = """# Handoff

## Current State
The parser rewrite is half done; pipe tables still lose their line numbers.

## Next Steps
Finish the table handling, then run the rule tests.
"""


def write_root(root: Path, model: str | None = "fake-embed") -> Path:
    """An orchestrator-layout root with one file of every indexed kind and a transcript."""
    (root / "memory").mkdir(parents=True, exist_ok=True)
    (root / "transcripts").mkdir(exist_ok=True)
    (root / "LOG.md").write_text(LOG, encoding="utf-8")
    (root / "memory" / "MEMORY.md").write_text("# Project Memory\n\n- [garden](garden.md)\n")
    (root / "memory" / "garden.md").write_text(TOPIC, encoding="utf-8")
    (root / "checkpoint-fix-parser.md").write_text(CHECKPOINT, encoding="utf-8")
    (root / "transcripts" / ".handoff.md").write_text(HANDOFF, encoding="utf-8")
    write_session(
        root / "transcripts" / "s1.jsonl",
        [
            ("Why did the seedlings wilt?", "The timer battery died, so the drip line stopped."),
            ("How do we stop that happening again?", "Put a battery check on the monthly list."),
        ],
    )
    if model is not None:
        (root / "memls.toml").write_text(f'recall_model = "{model}"\n', encoding="utf-8")
    return root


def cc_lines(pairs: list[tuple[str, str]], start: int = 0, day: str = "2026-11-20") -> str:
    """Claude Code JSONL for user/assistant pairs (one line each)."""
    out: list[str] = []
    for number, (user, reply) in enumerate(pairs, start=start):
        base = {
            "sessionId": "sess-1",
            "gitBranch": "main",
            "cwd": "/home/dev/garden",
        }
        stamp = f"{day}T09:{number:02d}:00Z"
        out.append(
            json.dumps(
                {
                    **base,
                    "type": "user",
                    "uuid": f"u{number}",
                    "parentUuid": None,
                    "timestamp": stamp,
                    "message": {"role": "user", "content": user},
                }
            )
        )
        out.append(
            json.dumps(
                {
                    **base,
                    "type": "assistant",
                    "uuid": f"a{number}",
                    "parentUuid": f"u{number}",
                    "timestamp": stamp,
                    "message": {"role": "assistant", "content": [{"type": "text", "text": reply}]},
                }
            )
        )
    return "".join(line + "\n" for line in out)


def write_session(path: Path, pairs: list[tuple[str, str]]) -> None:
    path.write_text(cc_lines(pairs), encoding="utf-8")


def append_session(path: Path, pairs: list[tuple[str, str]], start: int) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(cc_lines(pairs, start=start, day="2026-11-21"))
