"""LoCoMo retrieval benchmark: does the evidence turn come back in the first 5 / 10 results?

The protocol (issue 13), applied the same way to every conversation given:

* Each conversation becomes one memory root whose ``transcripts/`` holds one Claude Code
  JSONL file per session: speaker_a's turns as ``user`` records, speaker_b's as
  ``assistant`` records (text content), one line per turn, the text ``"{speaker}: {text}"``
  plus ``" [shares a photo: {blip_caption}]"`` where there is one; timestamps from
  ``session_N_date_time``, 30 s apart. Only turns go in — never the dataset's summaries,
  observations or event lists.
* The root is backfilled with ``memls-minilm`` (or ``--model``) and every question of
  categories 1–4 is searched through :func:`memls.core.recall.api.search`, ``limit=10``, in
  each mode.
* A hit: a result from the evidence turn's session file whose line range covers that turn's
  line and spans at most 4 lines. A question is recalled at k when one of its first k results
  hits one of its evidence turns (recall@k, the issue's figures); ``evidence@k`` is the
  stricter share of a question's evidence turns hit. Means over questions, per mode and
  category.

Data: ``../shared/reference/locomo/*.json`` beside the repository (or ``--data``); without it
the benchmark says so and exits 0.

Run: ``.venv/bin/python bench/locomo.py [--data DIR] [--conversation 26 ...] [--model ID]``.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from memls.core.recall import api

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "reference" / "locomo"
MODES = ("text", "semantic", "hybrid")
CATEGORIES = (1, 2, 3, 4)
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
MAX_SPAN = 4
LIMIT = 10
_SESSION = re.compile(r"^session_(\d+)$")
_EVIDENCE = re.compile(r"D(\d+):(\d+)")


@dataclass(frozen=True)
class Question:
    conversation: str
    text: str
    category: int
    evidence: tuple[tuple[str, int], ...]  # (session file, 1-based line)


@dataclass
class Built:
    root: Path
    questions: list[Question]
    turns: int
    sessions: int


@dataclass
class Tally:
    """Sums of per-question recall, per mode and category."""

    sums: dict[tuple[str, int, int], float] = field(default_factory=dict)
    counts: dict[int, int] = field(default_factory=dict)
    seconds: dict[str, list[float]] = field(default_factory=dict)

    def add(self, mode: str, category: int, k: int, value: float) -> None:
        key = (mode, category, k)
        self.sums[key] = self.sums.get(key, 0.0) + value

    def recall(self, mode: str, k: int, category: int | None = None) -> float:
        cats = CATEGORIES if category is None else (category,)
        total = sum(self.sums.get((mode, c, k), 0.0) for c in cats)
        count = sum(self.counts.get(c, 0) for c in cats)
        return total / count if count else 0.0


def session_time(value: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` → a naive UTC datetime."""
    return datetime.strptime(" ".join(value.replace(",", " ").split()), "%I:%M %p on %d %B %Y")


def turn_text(turn: dict[str, Any]) -> str:
    text = f"{turn['speaker']}: {turn['text']}"
    caption = turn.get("blip_caption")
    if caption:
        text += f" [shares a photo: {caption}]"
    return text


def build_root(conversation: Path, root: Path) -> Built:
    """Write one conversation as a memory root of Claude Code sessions; map its questions."""
    data = json.loads(conversation.read_text(encoding="utf-8"))
    convo = data.get("conversation", data)
    speaker_a = convo["speaker_a"]
    (root / "transcripts").mkdir(parents=True, exist_ok=True)
    where: dict[str, tuple[str, int]] = {}
    numbers = sorted(int(m.group(1)) for k in convo if (m := _SESSION.match(k)) and convo[k])
    turns = 0
    name = conversation.stem
    for number in numbers:
        rel = f"transcripts/session_{number:02d}.jsonl"
        start = session_time(convo[f"session_{number}_date_time"])
        lines: list[str] = []
        previous: str | None = None
        for index, turn in enumerate(convo[f"session_{number}"]):
            role = "user" if turn["speaker"] == speaker_a else "assistant"
            uuid = f"{name}-s{number}-t{index}"
            stamp = (start + timedelta(seconds=30 * index)).strftime("%Y-%m-%dT%H:%M:%SZ")
            message: dict[str, Any] = {"role": role, "content": turn_text(turn)}
            if role == "assistant":
                message["content"] = [{"type": "text", "text": turn_text(turn)}]
            lines.append(
                json.dumps(
                    {
                        "type": role,
                        "uuid": uuid,
                        "parentUuid": previous,
                        "sessionId": f"locomo-{name}-{number}",
                        "timestamp": stamp,
                        "message": message,
                    }
                )
            )
            previous = uuid
            where[str(turn["dia_id"])] = (rel, index + 1)
            turns += 1
        (root / rel).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    questions: list[Question] = []
    for qa in data["qa"]:
        category = int(qa.get("category", 0))
        if category not in CATEGORIES:
            continue
        evidence: list[tuple[str, int]] = []
        for raw in qa.get("evidence", []):
            for m in _EVIDENCE.finditer(str(raw)):
                spot = where.get(f"D{m.group(1)}:{m.group(2)}")
                if spot is not None and spot not in evidence:
                    evidence.append(spot)
        if evidence:
            questions.append(Question(name, str(qa["question"]), category, tuple(evidence)))
    return Built(root, questions, turns, len(numbers))


def covers(result: api.SearchResult, spot: tuple[str, int]) -> bool:
    """A result hits an evidence turn: same file, its line inside, at most MAX_SPAN lines."""
    rel, line = spot
    return (
        result.path == rel
        and result.start_line <= line <= result.end_line
        and result.end_line - result.start_line + 1 <= MAX_SPAN
    )


def score(
    results: Sequence[api.SearchResult], evidence: Sequence[tuple[str, int]], k: int
) -> float:
    """1.0 when one of the first ``k`` results hits one of the evidence turns."""
    return 1.0 if any(covers(r, spot) for r in results[:k] for spot in evidence) else 0.0


def evidence_share(
    results: Sequence[api.SearchResult], evidence: Sequence[tuple[str, int]], k: int
) -> float:
    """The share of the evidence turns hit by the first ``k`` results."""
    found = sum(1 for spot in evidence if any(covers(r, spot) for r in results[:k]))
    return found / len(evidence)


def conversations(data: Path, names: Sequence[str]) -> list[Path]:
    if names:
        return [data / f"{n.removesuffix('.json')}.json" for n in names]
    return sorted(data.glob("*.json"))


def run(
    data: Path = DEFAULT_DATA,
    *,
    names: Sequence[str] = (),
    model: str = "memls-minilm",
    modes: Sequence[str] = MODES,
    report: bool = True,
    work: Path | None = None,
    merge: bool = True,
) -> dict[str, Any]:
    """Build, backfill and search every conversation; returns the figures."""
    files = conversations(data, names)
    tally = Tally()
    backfill_seconds: list[float] = []
    totals = {"turns": 0, "sessions": 0, "questions": 0}
    degraded: set[str] = set()
    with tempfile.TemporaryDirectory(prefix="memls-locomo-") as tmp:
        for file in files:
            built = build_root(file, (work or Path(tmp)) / file.stem)
            started = time.perf_counter()
            done = api.backfill(built.root, model=model)
            backfill_seconds.append(time.perf_counter() - started)
            if done["degraded"]:
                raise SystemExit(f"backfill of {file.name} ran without {model}: {done['message']}")
            totals["turns"] += built.turns
            totals["sessions"] += built.sessions
            totals["questions"] += len(built.questions)
            for question in built.questions:
                tally.counts[question.category] = tally.counts.get(question.category, 0) + 1
                for mode in modes:
                    started = time.perf_counter()
                    response = api.search(
                        built.root, question.text, mode=mode, limit=LIMIT, model=model, merge=merge
                    )
                    tally.seconds.setdefault(mode, []).append(time.perf_counter() - started)
                    if response.degraded:
                        degraded.add(mode)
                    for k in (5, 10):
                        hit = score(response.results, question.evidence, k)
                        tally.add(mode, question.category, k, hit)
                    share = evidence_share(response.results, question.evidence, 5)
                    tally.add(mode, question.category, -5, share)
    figures: dict[str, Any] = {
        "conversations": [f.stem for f in files],
        "model": model,
        "merge_adjacent": merge,
        **totals,
        "backfill_seconds": round(sum(backfill_seconds), 2),
        "modes": {},
    }
    for mode in modes:
        figures["modes"][mode] = {
            "recall@5": round(tally.recall(mode, 5), 4),
            "recall@10": round(tally.recall(mode, 10), 4),
            "evidence@5": round(tally.recall(mode, -5), 4),
            "ms_per_query": round(1000 * statistics.mean(tally.seconds.get(mode, [0.0])), 2),
            "degraded": mode in degraded,
            "by_category": {
                CATEGORY_NAMES[c]: {
                    "questions": tally.counts.get(c, 0),
                    "recall@5": round(tally.recall(mode, 5, c), 4),
                    "recall@10": round(tally.recall(mode, 10, c), 4),
                }
                for c in CATEGORIES
                if tally.counts.get(c)
            },
        }
    if report:
        print_report(figures)
    return figures


def print_report(figures: dict[str, Any]) -> None:
    print(
        f"LoCoMo conversations {', '.join(figures['conversations'])}: {figures['sessions']} "
        f"sessions, {figures['turns']} turns, {figures['questions']} questions (categories 1-4); "
        f"model {figures['model']}; backfill {figures['backfill_seconds']:.2f} s"
        + ("" if figures["merge_adjacent"] else "; adjacent hits NOT merged")
    )
    cats = [CATEGORY_NAMES[c] for c in CATEGORIES]
    head = f"{'mode':9}{'r@5':>7}{'r@10':>7}{'ev@5':>7}{'ms/q':>8}  " + "  ".join(
        f"{c + ' r@5/r@10':>24}" for c in cats
    )
    print(head)
    for mode, row in figures["modes"].items():
        parts = []
        for c in cats:
            cell = row["by_category"].get(c)
            parts.append(
                f"{cell['recall@5']:.3f}/{cell['recall@10']:.3f} (n={cell['questions']})"
                if cell
                else "-"
            )
        flag = "  DEGRADED" if row["degraded"] else ""
        print(
            f"{mode:9}{row['recall@5']:7.3f}{row['recall@10']:7.3f}{row['evidence@5']:7.3f}"
            f"{row['ms_per_query']:8.1f}  " + "  ".join(f"{p:>24}" for p in parts) + flag
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder of LoCoMo json")
    parser.add_argument(
        "--conversation", action="append", default=[], help="conversation file stem (repeatable)"
    )
    parser.add_argument("--model", default="memls-minilm", help="embedding model id")
    parser.add_argument("--mode", action="append", choices=MODES, help="mode (repeatable)")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument(
        "--no-merge", action="store_true", help="search with merge=False (adjacent hits apart)"
    )
    parser.add_argument(
        "--work",
        type=Path,
        help="keep the roots here; a later run re-embeds only what changed (for tuning)",
    )
    args = parser.parse_args(argv)
    if not args.data.is_dir() or not any(args.data.glob("*.json")):
        print(f"LoCoMo benchmark skipped: no conversations at {args.data} (see bench/locomo.py).")
        return 0
    figures = run(
        args.data,
        names=args.conversation,
        model=args.model,
        modes=tuple(args.mode or MODES),
        work=args.work,
        merge=not args.no_merge,
    )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
