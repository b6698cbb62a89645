"""Known-item search on real agent sessions: the adapted space against plain cosine.

The real Claude Code and Pi sessions in ``../shared/reference/transcripts`` carry no
relevance labels, so this asks the one question they can answer: given ten consecutive
words from a turn, does semantic search bring that turn back? Each session file is copied
into a temporary root, backfilled with memls-minilm, and for ``--probes`` turn chunks of at
least 25 words (a seeded draw, with replacement) the probe is embedded and every chunk ranked by cosine —
once over the stored vectors as they are (plain) and once in the store's adapted space
(:mod:`memls.core.recall.space`, what semantic search uses for memls-minilm). Reported:
MRR@10 and hit@5 of each; the adapted space must not lose to plain cosine (issue 13: no
regression on real transcripts).

Run: ``.venv/bin/python bench/recall_real.py [--transcripts DIR] [--probes 400] [--seed 11]``. Without
the folder or the MiniLM weights it says so and exits 0.
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from memls.core.recall import api, space
from memls.core.recall.minilm import ModelWeightsNotFoundError, resolve_model_dir
from memls.core.recall.models import ModelChoice, embed, load_model
from memls.core.recall.store import db_path_for, open_existing

DEFAULT_DIR = Path(__file__).resolve().parents[2] / "shared" / "reference" / "transcripts"
_WORDS = re.compile(r"[A-Za-z][A-Za-z']+")


def _ranks(
    matrix: npt.NDArray[np.float32],
    queries: npt.NDArray[np.float32],
    turns: npt.NDArray[np.int64],
    targets: Sequence[int],
) -> list[int]:
    """1-based rank of each query's turn: its best part against every other turn's rows
    (the parts of one long turn are one result to a reader; ties count against it)."""
    scores = queries @ matrix.T
    ranks: list[int] = []
    for row, target in zip(scores, targets, strict=True):
        mine = turns == turns[target]
        ranks.append(1 + int((row[~mine] >= row[mine].max()).sum()))
    return ranks


def _figures(ranks: Sequence[int]) -> tuple[float, float]:
    mrr = sum(1.0 / r for r in ranks if r <= 10) / len(ranks)
    return mrr, sum(r <= 5 for r in ranks) / len(ranks)


def run(folder: Path, probes: int, seed: int = 11) -> int:
    with tempfile.TemporaryDirectory(prefix="memls-real-") as tmp:
        root = Path(tmp)
        (root / "transcripts").mkdir()
        for number, file in enumerate(sorted(folder.rglob("*.jsonl"))):
            shutil.copy(file, root / "transcripts" / f"{number:02d}-{file.name}")
        (root / "memls.toml").write_text('recall_model = "memls-minilm"\n', encoding="utf-8")
        api.backfill(root, model="memls-minilm")
        store = open_existing(db_path_for(root))
        assert store is not None
        try:
            rows = store.db.execute(
                "select c.text, e.embedding, c.path, c.start_line "
                "from memls_chunks c join embeddings e on e.id = c.id "
                "where c.kind = 'transcript' order by c.rid"
            ).fetchall()
        finally:
            store.close()
        texts = [str(r[0]) for r in rows]
        turn_ids: dict[tuple[str, int], int] = {}
        turns = np.array(
            [turn_ids.setdefault((str(r[2]), int(r[3])), len(turn_ids)) for r in rows],
            dtype=np.int64,
        )
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), -1)
        matrix = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
        rng = random.Random(seed)
        words_of = [_WORDS.findall(text) for text in texts]
        eligible = [i for i, words in enumerate(words_of) if len(words) >= 25]
        picked: list[int] = []
        probe_texts: list[str] = []
        for _ in range(probes if eligible else 0):  # windows drawn with replacement
            i = rng.choice(eligible)
            start = rng.randrange(0, len(words_of[i]) - 10)
            picked.append(i)
            probe_texts.append(" ".join(words_of[i][start : start + 10]))
        if not picked:
            print("no turn of 25+ words in these sessions: nothing to probe")
            return 0
        choice = load_model(ModelChoice("memls-minilm", "bench"))
        queries = embed(choice, probe_texts).astype(np.float32)
        queries /= np.linalg.norm(queries, axis=1, keepdims=True)
        plain = matrix.astype(np.float32)
        fitted = space.fit(plain)
        assert fitted is not None
        adapted = fitted.rows(plain)
        adapted_queries = fitted.rows(queries)
        print(
            f"{len(texts)} turn chunks from {len(list(folder.rglob('*.jsonl')))} sessions ("
            f"{len(turn_ids)} turns), {len(picked)} probes of 10 words (seed {seed})"
        )
        print(f"{'scoring':10}{'MRR@10':>9}{'hit@5':>8}")
        for label, rows_, qs in (
            ("plain", plain, queries),
            ("adapted", adapted, adapted_queries),
        ):
            mrr, hit = _figures(_ranks(rows_, qs, turns, picked))
            print(f"{label:10}{mrr:9.3f}{hit:8.3f}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--transcripts", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--probes", type=int, default=400)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args(argv)
    if not args.transcripts.is_dir() or not any(args.transcripts.rglob("*.jsonl")):
        print(f"skipped: no session files at {args.transcripts} (see bench/recall_real.py)")
        return 0
    try:
        resolve_model_dir()
    except ModelWeightsNotFoundError as exc:
        print(f"skipped: {exc}")
        return 0
    return run(args.transcripts, args.probes, args.seed)


if __name__ == "__main__":
    sys.exit(main())
