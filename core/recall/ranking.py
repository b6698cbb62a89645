"""From candidate lists to the final order: score fusion, neighbour merging, MMR."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from memls.core.recall.hits import Hit

if TYPE_CHECKING:
    import numpy.typing as npt

FUSION_TEXT_WEIGHT = 0.6
"""Share of the text ranking in hybrid fusion (chosen on the LoCoMo development split)."""
FUSION_DEPTH = 100
"""How many candidates each mode brings to hybrid fusion."""
MERGE_LINES = 4
"""Adjacent hits of one file merge into one result while it spans at most this many lines."""
MMR_LAMBDA = 0.5
"""MMR trade-off: 1.0 is pure relevance, 0.0 pure diversity."""


def fuse(
    text_hits: Sequence[Hit],
    semantic_hits: Sequence[Hit],
    text_weight: float = FUSION_TEXT_WEIGHT,
) -> list[Hit]:
    """Score-normalised fusion: each mode's scores become z-scores over its own candidates,
    and a chunk's fused score is their weighted sum.

    A chunk one mode did not return counts as that mode's lowest candidate (never better
    than one it did return). Unlike rank fusion, a mode whose best hit barely stands out
    from its other candidates (a weak side) moves the fused order little, a blind one (all
    scores equal) not at all, and a mode sure of its top hit keeps it near the top. Ties
    keep the text ranking's order.
    """
    first: dict[int, Hit] = {}
    sides: list[tuple[float, dict[int, float], float]] = []
    for weight, ranking in ((text_weight, text_hits), (1.0 - text_weight, semantic_hits)):
        if not ranking:
            sides.append((weight, {}, 0.0))
            continue
        scores = np.array([h.score for h in ranking], dtype=np.float64)
        spread = float(scores.std())
        normal = (scores - scores.mean()) / spread if spread > 0 else np.zeros_like(scores)
        sides.append(
            (
                weight,
                dict(zip((h.rid for h in ranking), normal.tolist(), strict=True)),
                min(0.0, float(normal.min())),
            )
        )
        for hit in ranking:
            first.setdefault(hit.rid, hit)
    fused = {rid: sum(weight * z.get(rid, floor) for weight, z, floor in sides) for rid in first}
    order = sorted(first, key=lambda rid: -fused[rid])
    return [replace(first[rid], score=fused[rid]) for rid in order]


def merge_adjacent(hits: Sequence[Hit], max_lines: int = MERGE_LINES) -> list[Hit]:
    """Neighbour expansion: a hit right next to a better one of the same file (one turn
    after another) joins it as one result, while the joined range spans at most
    ``max_lines`` lines. The better hit keeps its id, score and snippet; the freed place
    goes to the next distinct hit.
    """
    out: list[Hit] = []
    same_file: dict[str, list[int]] = {}  # positions in ``out`` by path, in order
    for hit in hits:
        for position in same_file.get(hit.path, ()):
            kept = out[position]
            if hit.start_line != kept.end_line + 1 and hit.end_line != kept.start_line - 1:
                continue
            start = min(hit.start_line, kept.start_line)
            end = max(hit.end_line, kept.end_line)
            if end - start + 1 <= max_lines:
                out[position] = replace(kept, start_line=start, end_line=end)
                break
        else:
            same_file.setdefault(hit.path, []).append(len(out))
            out.append(hit)
    return out


def mmr(
    hits: Sequence[Hit],
    vectors: dict[int, npt.NDArray[np.float32]],
    limit: int,
    lam: float = MMR_LAMBDA,
) -> list[Hit]:
    """Maximal marginal relevance: re-rank ``hits`` to trade relevance against redundancy.

    Relevance is the hit's score divided by the best score (min-max scaled when scores go
    negative); similarity is cosine between chunk vectors. Hits without a vector count as
    dissimilar to everything.
    """
    if not hits:
        return []
    top = max(h.score for h in hits)
    low = min(h.score for h in hits)
    if low >= 0 and top > 0:
        relevance = {h.rid: h.score / top for h in hits}
    else:
        span = (top - low) or 1.0
        relevance = {h.rid: (h.score - low) / span for h in hits}
    chosen: list[Hit] = []
    remaining = list(hits)
    while remaining and len(chosen) < limit:
        best: Hit | None = None
        best_value = -np.inf
        for hit in remaining:
            redundancy = 0.0
            vec = vectors.get(hit.rid)
            if vec is not None:
                for picked in chosen:
                    other = vectors.get(picked.rid)
                    if other is not None:
                        redundancy = max(redundancy, float(vec @ other))
            value = lam * relevance[hit.rid] - (1 - lam) * redundancy
            if value > best_value:
                best, best_value = hit, value
        assert best is not None
        chosen.append(best)
        remaining.remove(best)
    return chosen
