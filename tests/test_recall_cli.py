"""`memls recall` commands end to end, and the store read back by the `llm` command itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from memls.cli import main
from tests.recall_fixtures import RESULT_KEYS, FakePlugin
from tests.recall_fixtures.roots import write_root

BIN = Path(sys.executable).parent


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["recall", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_every_command_has_help() -> None:
    for command in ("status", "backfill", "search", "verify"):
        code, out, _ = _run(command, "--help")
        assert code == 0
        assert "--root" in out
    _, search_help, _ = _run("search", "--help")
    for option in (
        "--mode",
        "--kind",
        "--path",
        "--since",
        "--until",
        "-n",
        "--json",
        "--model",
        "--mmr",
    ):
        assert option in search_help
    _, backfill_help, _ = _run("backfill", "--help")
    assert "--full" in backfill_help
    assert "--model" in backfill_help


def test_cli_round_trip(tmp_path: Path, fake_model: FakePlugin) -> None:
    root = str(write_root(tmp_path))
    code, out, _ = _run("status", "--root", root)
    assert code == 0
    assert "mode:              unavailable" in out
    code, out, err = _run("backfill", "--root", root)
    assert code == 0, err
    assert "embedded" in out
    assert "Embedding chunks" in err  # the progress bar goes to stderr
    code, out, _ = _run("status", "--root", root)
    assert "mode:              semantic" in out
    assert "NOT verified" in out
    code, out, _ = _run("verify", "--root", root)
    assert code == 0
    assert out.startswith("Verified:")
    code, out, _ = _run("search", "--root", root, "drip line", "--json", "-n", "2")
    data = json.loads(out)
    assert data["mode"] == "hybrid"
    assert data["degraded"] is False
    assert len(data["results"]) == 2
    assert data["results"][0]["path"] == "memory/garden.md"
    assert set(data["results"][0]) == RESULT_KEYS
    code, out, err = _run(
        "search", "--root", root, "compost", "--kind", "log", "--since", "2026-11-25"
    )
    assert code == 0
    assert "LOG.md:" in out
    assert "Compost bins" in out
    assert "Hybrid" in err
    code, _, err = _run("search", "--root", root, "x", "--since", "someday")
    assert code == 2
    assert "cannot read" in err


def test_cli_degraded_exit_and_message(tmp_path: Path, fake_model: FakePlugin) -> None:
    root = str(write_root(tmp_path, model="no-such-model"))
    code, out, _ = _run("backfill", "--root", root)
    assert code == 1
    assert "degraded text mode" in out
    assert "no-such-model" in out
    code, out, err = _run("search", "--root", root, "drip line")
    assert code == 0
    assert "Text mode only (degraded)" in err
    assert "memory/garden.md" in out
    code, out, _ = _run("verify", "--root", root)
    assert code == 1
    assert "NOT working" in out


def test_llm_similar_reads_a_memls_hash_store(tmp_path: Path) -> None:
    """The `llm` CLI (a separate process, entry-point plugins) queries the store memls built."""
    root = write_root(tmp_path, model="memls-hash")
    env = {**os.environ, "LLM_USER_PATH": str(tmp_path / "llm-home")}
    env.pop("LLM_LOAD_PLUGINS", None)

    def run(program: str, *args: str) -> subprocess.CompletedProcess[str]:
        """One of the venv's console scripts, as its own process with the test's environment."""
        return subprocess.run(
            [str(BIN / program), *args],
            capture_output=True,
            text=True,
            env=env,
            check=False,
            timeout=120,
        )

    built = run("memls", "recall", "backfill", "--root", str(root))
    assert built.returncode == 0, built.stderr
    assert "memls-hash" in built.stdout
    db = root / ".memls" / "recall.db"
    found = run(
        "llm", "similar", "memls", "-d", str(db), "-c", "drip line every morning at six", "-n", "3"
    )
    assert found.returncode == 0, found.stderr
    rows = [json.loads(line) for line in found.stdout.splitlines() if line.strip()]
    assert "memory/garden.md#schedule" in [r["id"] for r in rows]
    assert rows[0]["metadata"]["path"] == "memory/garden.md"
    assert "drip line" in rows[0]["content"]
    from memls.core.recall import api

    ours = api.search(root, "drip line every morning at six", mode="semantic", limit=3)
    assert [r.id for r in ours.results] == [r["id"] for r in rows]
    assert [round(r.score, 5) for r in ours.results] == [round(r["score"], 5) for r in rows]
