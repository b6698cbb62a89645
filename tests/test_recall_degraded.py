"""Degraded text mode, unknown models, broken models, and verification — honest in every case."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memls.core.recall import api
from tests.recall_fixtures import FakePlugin
from tests.recall_fixtures.roots import write_root


def test_unknown_model_degrades_to_text_and_says_why(
    tmp_path: Path, fake_model: FakePlugin
) -> None:
    root = write_root(tmp_path, model="sentence-transformers/all-mpnet-base-v2")
    result = api.backfill(root)
    assert result["degraded"] is True
    assert result["mode"] == "text"
    assert "sentence-transformers/all-mpnet-base-v2" in result["message"]
    assert "llm-sentence-transformers" in result["message"]
    assert fake_model.calls == []
    status = api.status(root)
    assert status["mode"] == "text"
    assert status["model_available"] is False
    assert status["message"].startswith("Degraded: text search only.")
    assert status["chunks_total"] > 0
    assert status["embedded"] == 0
    response = api.search(root, "drip line")
    assert response.mode == "text"
    assert response.degraded is True
    assert response.model is None
    assert response.message.startswith("Text mode only (degraded):")
    assert "llm-sentence-transformers" in response.message
    assert response.results[0].path == "memory/garden.md"
    text_only = api.search(root, "drip line", mode="text")
    assert text_only.degraded is False  # text was asked for, text was given


def test_store_whose_model_plugin_is_gone(tmp_path: Path, fake_model: FakePlugin) -> None:
    root = write_root(tmp_path, model=None)
    api.backfill(root, model="fake-embed")
    db = root / ".memls" / "recall.db"
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("update collections set model = 'memls-retired-model'")
    conn.close()
    status = api.status(root)
    assert status["mode"] == "text"
    assert "built with embedding model 'memls-retired-model'" in status["message"]
    assert "llm install -e /path/to/memls" in status["message"]
    assert "Full-text search keeps working" in status["message"]
    response = api.search(root, "drip line")
    assert response.degraded is True
    assert "memls-retired-model" in response.message
    assert response.results
    outcome = api.verify(root)
    assert outcome["ok"] is False
    assert "memls-retired-model" in outcome["message"]


def test_broken_model_keeps_text_index_current(tmp_path: Path, fake_model: FakePlugin) -> None:
    root = write_root(tmp_path, model="fake-broken")
    result = api.backfill(root)
    assert result["degraded"] is True
    assert "fake model is broken" in result["message"]
    assert api.status(root)["mode"] == "text"
    assert api.search(root, "compost").results[0].kind == "log"


def test_switching_model_replaces_vectors(tmp_path: Path, fake_model: FakePlugin) -> None:
    root = write_root(tmp_path)
    api.backfill(root)
    assert api.search(root, "drip", model="fake-other").degraded is True
    # a model that cannot load leaves the stored vectors alone
    api.backfill(root, model="fake-broken")
    conn = sqlite3.connect(root / ".memls" / "recall.db")
    try:
        assert conn.execute("select model from collections").fetchone() == ("fake-embed",)
    finally:
        conn.close()


def test_no_store_yet(tmp_path: Path, fake_model: FakePlugin) -> None:
    root = write_root(tmp_path)
    status = api.status(root)
    assert status["mode"] == "unavailable"
    assert "run `memls recall backfill`" in status["message"]
    response = api.search(root, "anything")
    assert response.results == []
    assert response.degraded is True
    assert api.verify(root)["ok"] is False
    assert not (root / ".memls").exists()  # reading never creates the store


def test_verify_records_outcome(tmp_path: Path, fake_model: FakePlugin) -> None:
    root = write_root(tmp_path)
    api.backfill(root)
    before = api.status(root)
    assert before["mode"] == "semantic"
    assert before["verified"] is False
    assert "NOT verified" in before["message"]
    outcome = api.verify(root)
    assert outcome["ok"] is True
    assert outcome["found_rank"] == 1
    assert outcome["probe"]
    after = api.status(root)
    assert after["verified"] is True
    assert after["last_verification"]["model"] == "fake-embed"
    assert after["last_verification"]["ok"] is True
    assert "verified at" in after["message"]
    assert "verified" in api.search(root, "drip").message
    probes = {api.verify(root)["probe"] for _ in range(4)}
    assert probes == {outcome["probe"]}  # the same probe each run: the outcome is repeatable


def test_verify_fails_when_vectors_do_not_match_the_model(
    tmp_path: Path, fake_model: FakePlugin
) -> None:
    root = write_root(tmp_path)
    api.backfill(root)
    conn = sqlite3.connect(root / ".memls" / "recall.db")
    with conn:  # scramble the stored vectors: the pipeline no longer finds what it embedded
        rows = conn.execute("select id, embedding from embeddings").fetchall()
        for number, (cid, _blob) in enumerate(rows):
            conn.execute(
                "update embeddings set embedding = ? where id = ?",
                [rows[(number + 3) % len(rows)][1], cid],
            )
        conn.execute("update memls_meta set value = value + 1 where key = 'generation'")
    conn.close()
    outcome = api.verify(root)
    assert outcome["ok"] is False
    assert outcome["message"].startswith("Verification FAILED")
    status = api.status(root)
    assert status["verified"] is False
    assert "FAILED" in status["message"]


def test_verify_without_vectors(tmp_path: Path, fake_model: FakePlugin) -> None:
    root = write_root(tmp_path, model="nope-model")
    api.backfill(root)
    outcome = api.verify(root)
    assert outcome["ok"] is False
    assert "NOT working" in outcome["message"]
    assert api.status(root)["last_verification"]["ok"] is False
