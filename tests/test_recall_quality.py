"""bench/quality.py on the shipped BEIR-format set: the metrics are computed and sane."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "quality.py"


def _quality() -> ModuleType:
    spec = importlib.util.spec_from_file_location("memls_bench_quality", BENCH)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_metrics() -> None:
    q = _quality()
    assert q.ndcg_at(["a", "b"], {"a": 1}) == 1.0
    assert q.ndcg_at(["b", "a"], {"a": 1}) == pytest.approx(1 / 1.5849625)
    assert q.ndcg_at(["x"], {"a": 1}) == 0.0
    assert q.recall_at(["a", "x", "b"], {"a": 2, "b": 1}, 2) == 0.5


def test_shipped_set_with_memls_hash() -> None:
    q = _quality()
    corpus, queries, qrels = q.load_beir(q.DEFAULT_SET)
    assert len(corpus) >= 20
    assert set(qrels) <= set(queries)
    assert all(doc in corpus for rel in qrels.values() for doc in rel)
    results = q.run(model="memls-hash", ks=(5, 10))
    assert set(results) == {"text", "semantic", "hybrid"}
    for figures in results.values():
        assert "degraded" not in figures
        assert 0.0 <= figures["ndcg@10"] <= 1.0
        assert figures["recall@5"] <= figures["recall@10"]
    assert results["hybrid"]["ndcg@10"] > 0.3
    assert results["semantic"]["ndcg@10"] > 0.3
    assert results["text"]["recall@10"] > 0.5
