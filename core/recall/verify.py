"""`memls recall verify`: prove semantic search works by finding a probe's own chunk."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memls.core.config import load_config
from memls.core.recall import semantic
from memls.core.recall.backfill import now
from memls.core.recall.models import ModelChoice, embed, load_model
from memls.core.recall.store import RecallStore, db_path_for, open_existing


def verify(root: Path, *, model: str | None = None) -> dict[str, Any]:
    """Embed a probe drawn from the index and check its own chunk comes back first.

    Deterministic: the probe chunk is the most distinctive one the rules below pick (the
    same on every run while the index is unchanged), and the probe is that chunk's own
    embedded text (header and text), cut to its first ~300 characters. Success means the
    chunk — or one with identical embedded content — is rank 1 with no other content tied
    with it. The outcome is recorded with time, model and store generation in the meta table.
    """
    root = root.resolve()
    config = load_config(root)
    db = db_path_for(root, config)
    store = open_existing(db)
    if store is None:
        return {
            "ok": False,
            "probe": None,
            "found_rank": None,
            "model": None,
            "message": f"Nothing to verify: no recall index at {db}; run `memls recall backfill`.",
        }
    try:
        current = store.collection()
        stored = current[1] if current else None

        def record(
            ok: bool, probe: str | None, rank: int | None, chunk: str | None, message: str
        ) -> dict[str, Any]:
            outcome = {
                "ok": ok,
                "probe": probe,
                "found_rank": rank,
                "chunk": chunk,
                "model": stored,
                "time": now(),
                "generation": store.generation(),
                "message": message,
            }
            store.set_meta("last_verification", outcome)
            return outcome

        if current is None or not store.has_embeddings():
            return record(
                False,
                None,
                None,
                None,
                "Semantic recall is NOT working: the store holds no vectors (text mode). Run `memls recall backfill` with a working model.",
            )
        if model and model != stored:
            return record(
                False,
                None,
                None,
                None,
                f"The stored vectors were made with '{stored}', not '{model}'; run `memls recall backfill --model {model}` first.",
            )
        choice = load_model(ModelChoice(stored or "", "store", model_dir=config.minilm_dir), db)
        if not choice.usable:
            return record(
                False, None, None, None, f"Semantic recall is NOT working: {choice.error}"
            )
        picked = _probe_chunk(store, current[0])
        if picked is None:
            return record(False, None, None, None, "No embedded chunk has text to probe with.")
        chunk_id, probe, content_hash = picked
        try:
            vector = [float(x) for x in embed(choice, [probe])[0]]
        except Exception as exc:
            return record(
                False,
                probe,
                None,
                chunk_id,
                f"Semantic recall is NOT working: embedding the probe failed: {exc}",
            )
        hits = semantic.search(store, vector, query=probe, limit=10)
        same = _same_content(store, current[0], content_hash, [h.id for h in hits])
        rank = next(
            (i for i, h in enumerate(hits, start=1) if h.id == chunk_id or h.id in same), None
        )
        rival = next((h for h in hits if h.id != chunk_id and h.id not in same), None)
        tied = rank == 1 and rival is not None and rival.score >= hits[0].score - _TIE_TOLERANCE
        ok = rank == 1 and not tied
        shown = _shorten(probe)
        if ok:
            message = (
                f"Verified: the probe {shown!r} found its chunk {chunk_id} first with {stored}."
            )
        elif tied:
            assert rival is not None
            message = f"Verification FAILED: the probe {shown!r} scored its chunk {chunk_id} no higher than {rival.id} with {stored}: the vectors do not tell them apart."
        elif rank is None:
            message = f"Verification FAILED: the probe {shown!r} did not find its chunk {chunk_id} in the top 10 with {stored}."
        else:
            message = f"Verification FAILED: the probe {shown!r} found its chunk {chunk_id} at rank {rank}, not first, with {stored}."
        return record(ok, probe, rank, chunk_id, message)
    finally:
        store.close()


PROBE_CHARS = 300
"""How much of a chunk's embedded text (header + text) the verification probe takes."""
_PROBE_CANDIDATES = 64
_TIE_TOLERANCE = 1e-6


def _shorten(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _probe_of(content: str) -> str:
    """The first ~PROBE_CHARS characters of the embedded text, cut at a word boundary."""
    if len(content) <= PROBE_CHARS:
        return content
    cut = content[:PROBE_CHARS]
    space = cut.rfind(" ")
    return cut[:space] if space > PROBE_CHARS // 2 else cut


def _same_content(
    store: RecallStore, collection_id: int, content_hash: bytes, ids: Sequence[str]
) -> set[str]:
    """Which of ``ids`` hold exactly the embedded content of the probe's chunk."""
    if not ids:
        return set()
    marks = ",".join("?" for _ in ids)
    rows = store.db.execute(
        f"select id from embeddings where collection_id = ? and content_hash = ? and id in ({marks})",
        [collection_id, content_hash, *ids],
    ).fetchall()
    return {str(r[0]) for r in rows}


def _probe_chunk(store: RecallStore, collection_id: int) -> tuple[str, str, bytes] | None:
    """``(chunk id, probe, content hash)`` for the most distinctive fair chunk, deterministically.

    Fair, in order of preference: a Markdown chunk whose whole embedded text fits in the
    probe (so the probe is exactly what was embedded), then any Markdown chunk, then any
    chunk (transcript turns only when nothing else is indexed). Among up to 64 candidates
    spread evenly over the tier (ordered by chunk id), the pick is the one whose stored
    vector is farthest from every chunk with other content: the widest margin, so the
    outcome does not hinge on which chunk happened to be drawn. Ties go to the smallest id.
    """
    joined = "from memls_chunks c join embeddings e on e.collection_id = ? and e.id = c.id "
    tiers = (
        f"where c.kind != 'transcript' and length(e.content) between 20 and {PROBE_CHARS}",
        "where c.kind != 'transcript' and length(e.content) >= 20",
        "where length(e.content) >= 20",
    )
    for where in tiers:
        rows = store.db.execute(
            f"select c.rid, c.id {joined}{where} order by c.id", [collection_id]
        ).fetchall()
        if not rows:
            continue
        if len(rows) > _PROBE_CANDIDATES:
            step = len(rows) / _PROBE_CANDIDATES
            rows = [rows[int(i * step)] for i in range(_PROBE_CANDIDATES)]
        chunk_id = str(_most_distinctive(store, collection_id, rows))
        content, content_hash = store.db.execute(
            "select content, content_hash from embeddings where collection_id = ? and id = ?",
            [collection_id, chunk_id],
        ).fetchone()
        return chunk_id, _probe_of(str(content)), bytes(content_hash)
    return None


def _most_distinctive(
    store: RecallStore, collection_id: int, candidates: Sequence[tuple[int, str]]
) -> str:
    """The id of the ``(rid, id)`` candidate least similar to any chunk with other content."""
    index = semantic.vector_index(store)
    if index is None or index.size == 0:
        return candidates[0][1]
    hashes = dict(
        store.db.execute(
            "select c.rid, e.content_hash from embeddings e join memls_chunks c on c.id = e.id "
            "where e.collection_id = ?",
            [collection_id],
        ).fetchall()
    )
    codes: dict[bytes | None, int] = {}
    row_codes = np.array(
        [codes.setdefault(hashes.get(int(r)), len(codes)) for r in index.rids], dtype=np.int64
    )
    positions = {int(r): i for i, r in enumerate(index.rids)}
    usable = [(rid, cid) for rid, cid in candidates if int(rid) in positions]
    if not usable:  # vectors of another width: not part of the searchable matrix
        return candidates[0][1]
    at = np.array([positions[int(rid)] for rid, _ in usable], dtype=np.int64)
    sims = index.matrix[at] @ index.matrix.T
    sims[row_codes[None, :] == row_codes[at][:, None]] = -np.inf  # same content is no rival
    nearest = sims.max(axis=1) if sims.shape[1] else np.full(len(usable), -np.inf)
    best = min(range(len(usable)), key=lambda i: (float(nearest[i]), str(usable[i][1])))
    return str(usable[best][1])
