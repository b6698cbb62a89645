"""Where recall stands for a root: mode, model, counts, last backfill and verification.

Status reports ``semantic`` only when a working model and stored vectors exist, and says
whether that was *verified*; a store made with a model no installed plugin provides gets a
message naming the model and the plugin, and full-text search keeps working.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memls.core.config import load_config
from memls.core.recall.models import load_model, pick_model
from memls.core.recall.store import db_path_for, open_existing


def status(root: Path, *, model: str | None = None) -> dict[str, Any]:
    """Where recall stands: mode (semantic|text|unavailable), model, counts, db, last runs."""
    root = root.resolve()
    config = load_config(root)
    db = db_path_for(root, config)
    store = open_existing(db)
    base: dict[str, Any] = {
        "db": str(db),
        "db_bytes": db.stat().st_size if db.is_file() else 0,
        "chunks": {},
        "chunks_total": 0,
        "embedded": 0,
        "pending": 0,
        "last_backfill": None,
        "last_verification": None,
        "verified": False,
    }
    if store is None:
        choice = load_model(pick_model(config, model, None), db)
        return {
            **base,
            "mode": "unavailable",
            "model": choice.id,
            "model_source": choice.source,
            "model_available": choice.usable,
            "message": (
                f"No recall index at {db} yet: run `memls recall backfill`"
                + (
                    f" (it would use {choice.id}, {choice.reason or choice.source})."
                    if choice.usable
                    else f". {choice.error}"
                )
            ),
        }
    try:
        counts = store.chunk_counts()
        current = store.collection()
        choice = load_model(pick_model(config, model, current[1] if current else None), db)
        embedded = store.embedded_count()
        total = sum(counts.values())
        last_backfill = store.meta("last_backfill")
        verification = store.meta("last_verification")
        stored_model = current[1] if current else None
        verified = bool(
            isinstance(verification, dict)
            and verification.get("ok")
            and verification.get("model") == stored_model
        )
        out = {
            **base,
            "chunks": counts,
            "chunks_total": total,
            "embedded": embedded,
            "pending": total - embedded,
            "last_backfill": last_backfill,
            "last_verification": verification,
            "verified": verified,
            "model": choice.id,
            "model_source": choice.source,
            "model_available": choice.usable,
            "stored_model": stored_model,
        }
        notes: list[str] = []
        if stored_model and choice.id != stored_model:
            notes.append(
                f"The stored vectors were made with {stored_model}; {choice.id} is selected "
                f"({choice.source}): run `memls recall backfill` to re-embed."
            )
        if total == 0:
            mode = "unavailable"
            message = "The recall index is empty: run `memls recall backfill`."
        elif not choice.usable:
            mode = "text"
            message = f"Degraded: text search only. {choice.error}"
        elif embedded == 0 or stored_model != choice.id:
            mode = "text"
            message = (
                f"Degraded: text search only — no {choice.id} vectors are stored yet; "
                "run `memls recall backfill`."
            )
        else:
            mode = "semantic"
            state = "verified" if verified else "NOT verified yet — run `memls recall verify`"
            when = (
                f" at {verification.get('time')}"
                if verified and isinstance(verification, dict)
                else ""
            )
            source = f"{choice.source}: {choice.reason}" if choice.reason else choice.source
            message = (
                f"Semantic recall with {choice.id} ({source}), {embedded}/{total} chunks embedded; "
                f"{state}{when}."
            )
            if (
                isinstance(verification, dict)
                and verified
                and verification.get("generation") != store.generation()
            ):
                message += " The index changed since that verification."
            if embedded < total:
                notes.append(
                    f"{total - embedded} chunks await embedding: run `memls recall backfill`."
                )
        if (
            isinstance(verification, dict)
            and not verification.get("ok")
            and verification.get("model") == stored_model
        ):
            notes.append(
                f"The last verification FAILED ({verification.get('time')}): {verification.get('message')}"
            )
        out["mode"] = mode
        out["message"] = " ".join([message, *notes])
        return out
    finally:
        store.close()
