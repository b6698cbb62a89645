"""MF003's recall part: near-duplicate topic files from precomputed file-level vectors.

Backfill stores one normalised mean vector per topic file (``memls_files.vector``); this
provider reads them, computes all pairwise cosines once per store generation and answers
every later call from that cache. It never embeds and never writes, so a check stays cheap;
without a store (or without vectors) it reports nothing.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memls.core.workspace import Workspace

FLOOR = 0.5
"""Pairs below this cosine are never kept (the rule applies its own, higher threshold)."""

_CACHE: dict[str, tuple[int, str, list[tuple[str, str, float]]]] = {}
_LOCK = threading.Lock()


def _generation(conn: sqlite3.Connection) -> int:
    row = conn.execute("select value from memls_meta where key = 'generation'").fetchone()
    return int(row[0]) if row else 0


def _pairs(conn: sqlite3.Connection) -> tuple[str, list[tuple[str, str, float]]]:
    import numpy as np

    current = conn.execute("select model from collections where name = 'memls'").fetchone()
    if current is None:
        return "", []
    rows = conn.execute(
        "select path, vector from memls_files where kind = 'topic' and vector is not null "
        "and vector_model = ? order by path",
        [current[0]],
    ).fetchall()
    rows = [r for r in rows if len(r[1]) == len(rows[0][1])] if rows else []
    if len(rows) < 2:
        return str(current[0]), []
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), -1)
    sims = matrix @ matrix.T
    upper = np.triu(sims >= FLOOR, k=1)
    first, second = np.nonzero(upper)
    pairs = [
        (str(rows[i][0]), str(rows[j][0]), float(sims[i, j]))
        for i, j in zip(first.tolist(), second.tolist(), strict=True)
    ]
    return str(current[0]), pairs


def similar_pairs(db: Path) -> list[tuple[str, str, float]]:
    """``(rel path, rel path, cosine)`` for topic-file pairs ≥ FLOOR, cached per generation."""
    if not db.is_file():
        return []
    key = str(db)
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1.0)
    except sqlite3.Error:
        return []
    try:
        generation = _generation(conn)
        with _LOCK:
            cached = _CACHE.get(key)
        if cached is not None and cached[0] == generation:
            return cached[2]
        model, pairs = _pairs(conn)
    except sqlite3.Error:  # no memls tables yet, or a store being migrated
        return []
    finally:
        conn.close()
    with _LOCK:
        _CACHE[key] = (generation, model, pairs)
    return pairs


def recall_similarity(ws: Workspace) -> Iterable[tuple[Path, Path, float]]:
    """The MF003 provider: topic-file pairs at or above ``duplicate_threshold`` that still exist."""
    from memls.core.recall.store import db_path_for

    threshold = ws.config.duplicate_threshold
    out: list[tuple[Path, Path, float]] = []
    for a, b, score in similar_pairs(db_path_for(ws.root, ws.config)):
        if score < threshold:
            continue
        first, second = ws.root / a, ws.root / b
        if first.is_file() and second.is_file():
            out.append((first, second, score))
    return out
