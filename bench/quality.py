"""Retrieval quality of memls recall: nDCG@10 and recall@k for text, semantic and hybrid.

Reads any labelled set in BEIR format — ``corpus.jsonl`` (``_id``, ``title``, ``text``),
``queries.jsonl`` (``_id``, ``text``) and ``qrels/test.tsv`` (``query-id``, ``corpus-id``,
``score``) — from a directory, by default the small set shipped in ``tests/data/quality``.
Each corpus document becomes one topic file in a temporary memory root, which is backfilled
with the chosen model and searched through :func:`memls.core.recall.api.search`; a result
counts for the document its file holds (the first chunk of a file ranks it).

Run: ``.venv/bin/python bench/quality.py [DIR] [--model memls-hash] [--k 5 --k 10]``.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path

from memls.core.recall import api

DEFAULT_SET = Path(__file__).resolve().parents[1] / "tests" / "data" / "quality"
MODES = ("text", "semantic", "hybrid")
_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def load_beir(
    directory: Path,
) -> tuple[dict[str, tuple[str, str]], dict[str, str], dict[str, dict[str, int]]]:
    """``(corpus {id: (title, text)}, queries {id: text}, qrels {query: {doc: grade}})``."""
    corpus: dict[str, tuple[str, str]] = {}
    for line in (directory / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            corpus[str(row["_id"])] = (str(row.get("title") or ""), str(row.get("text") or ""))
    queries: dict[str, str] = {}
    for line in (directory / "queries.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            queries[str(row["_id"])] = str(row["text"])
    qrels: dict[str, dict[str, int]] = {}
    for number, line in enumerate(
        (directory / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()
    ):
        parts = line.split("\t")
        if len(parts) < 3 or (number == 0 and not parts[2].strip().lstrip("-").isdigit()):
            continue  # the header row
        grade = int(parts[2])
        if grade > 0:
            qrels.setdefault(parts[0], {})[parts[1]] = grade
    return corpus, queries, qrels


def ndcg_at(ranked: Sequence[str], relevant: dict[str, int], k: int = 10) -> float:
    """Normalised discounted cumulative gain with graded relevance (BEIR/trec_eval gain)."""
    dcg = sum(relevant.get(doc, 0) / math.log2(i + 2) for i, doc in enumerate(ranked[:k]))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranked: Sequence[str], relevant: dict[str, int], k: int) -> float:
    return len(set(ranked[:k]) & set(relevant)) / len(relevant) if relevant else 0.0


def _build_root(root: Path, corpus: dict[str, tuple[str, str]], model: str) -> dict[str, str]:
    """One topic file per document; returns ``{relative path: doc id}``."""
    (root / "memory").mkdir(parents=True)
    (root / "memory" / "MEMORY.md").write_text("# Project Memory\n", encoding="utf-8")
    (root / "memls.toml").write_text(f"recall_model = {json.dumps(model)}\n", encoding="utf-8")
    paths: dict[str, str] = {}
    used: set[str] = set()
    for number, (doc_id, (title, text)) in enumerate(corpus.items()):
        name = _SAFE.sub("-", doc_id).strip("-.") or f"doc-{number}"
        if name in used or name.upper() == "MEMORY":
            name = f"{name}-{number}"
        used.add(name)
        rel = f"memory/{name}.md"
        heading = title.strip() or doc_id
        (root / rel).write_text(f"# {heading}\n\n{text.strip()}\n", encoding="utf-8")
        paths[rel] = doc_id
    return paths


def run(
    directory: Path = DEFAULT_SET,
    *,
    model: str = "memls-hash",
    ks: Sequence[int] = (5, 10),
    report: bool = False,
) -> dict[str, dict[str, float]]:
    """``{mode: {"ndcg@10": …, "recall@k": …}}`` averaged over the labelled queries."""
    corpus, queries, qrels = load_beir(directory)
    depth = max(10, *ks)
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "root"
        paths = _build_root(root, corpus, model)
        built = api.backfill(root)
        if report:
            print(f"{len(corpus)} documents, {len(qrels)} labelled queries; {built['message']}")
        for mode in MODES:
            sums = {"ndcg@10": 0.0, **{f"recall@{k}": 0.0 for k in ks}}
            degraded = False
            for query_id, relevant in qrels.items():
                response = api.search(root, queries[query_id], mode=mode, limit=depth * 3)
                degraded = degraded or response.degraded
                ranked: list[str] = []
                for hit in response.results:
                    doc = paths.get(hit.path)
                    if doc is not None and doc not in ranked:
                        ranked.append(doc)
                sums["ndcg@10"] += ndcg_at(ranked, relevant, 10)
                for k in ks:
                    sums[f"recall@{k}"] += recall_at(ranked, relevant, k)
            count = max(1, len(qrels))
            results[mode] = {name: total / count for name, total in sums.items()}
            if degraded:
                results[mode]["degraded"] = 1.0
    if report:
        names = list(next(iter(results.values())))
        print(f"{'mode':10}" + "".join(f"{n:>12}" for n in names))
        for mode, figures in results.items():
            print(f"{mode:10}" + "".join(f"{figures[n]:12.3f}" for n in names))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("directory", nargs="?", type=Path, default=DEFAULT_SET)
    parser.add_argument("--model", default="memls-hash", help="llm embedding model id")
    parser.add_argument("--k", type=int, action="append", help="recall@k cut-offs (repeatable)")
    args = parser.parse_args()
    run(args.directory, model=args.model, ks=tuple(args.k or (5, 10)), report=True)


if __name__ == "__main__":
    main()
