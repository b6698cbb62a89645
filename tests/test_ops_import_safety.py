"""`memls checkpoint import` keeps every line, its ending and the BOM, and a run killed
half-way is completed by the next one."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from memls.core.formats.checkpoint import is_native_checkpoint
from memls.core.formats.index import bullets
from memls.core.ops.importer import INTENT_FILE
from memls.core.parse import parse_file
from tests.cli_helpers import memls_on

BOM = b"\xef\xbb\xbf"
MEMORY = "# Project Memory\n\n- [Notes](notes.md)\n"
MAPPED_TITLES = ("Next Steps", "Completed Work", "Files Changed", "Gotchas", "Summary")
KEPT_TITLES = ("Appendix", "Known Issues", "Design Notes", "Open Questions", "Context")


def _root(tmp_path: Path) -> Path:
    (tmp_path / "MEMORY.md").write_text(MEMORY)
    (tmp_path / "notes.md").write_text("# Notes\n")
    return tmp_path


def _import(root: Path, *args: str) -> dict[str, Any]:
    proc = memls_on(root, "checkpoint", "import", "--json", *args)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert isinstance(data, dict)
    return data


def _lines(data: bytes) -> list[bytes]:
    """Lines with their own endings (``\\r`` kept), the BOM set aside."""
    return data.removeprefix(BOM).split(b"\n")


def test_import_keeps_a_level_one_appendix_and_its_body(tmp_path: Path) -> None:
    root = _root(tmp_path)
    path = root / "checkpoint-appendix.md"
    path.write_text(
        "# Wrap-up\n**Date:** 2026-03-05\n\n## Next Steps\n- ship it\n\n"
        "# Appendix\nraw numbers: 12, 40\n\n### Table\n| a | b |\n\n## Known Issues\n- slow\n"
    )
    data = _import(root)
    (item,) = data["converted"]
    text = path.read_text()
    for line in ("# Appendix", "raw numbers: 12, 40", "### Table", "| a | b |", "- slow"):
        assert line in text.splitlines(), line
    assert "Appendix" in item["kept"]
    # The Notes stay under the checkpoint's title, before the foreign # heading.
    assert text.index("Imported from: Wrap-up") < text.index("# Appendix")
    assert is_native_checkpoint(parse_file(path))


def test_import_keeps_the_bom(tmp_path: Path) -> None:
    root = _root(tmp_path)
    path = root / "checkpoint-bom.md"
    path.write_bytes(BOM + b"# Wrap-up\n**Date:** 2026-03-05\n\n## Next Steps\n- ship it\n")
    _import(root)
    data = path.read_bytes()
    assert data.startswith(BOM + b"# Checkpoint: bom\n")
    assert data.count(BOM) == 1
    assert b"- ship it\n" in data


def test_import_keeps_each_lines_ending_in_a_mixed_file(tmp_path: Path) -> None:
    root = _root(tmp_path)
    path = root / "checkpoint-mixed.md"
    path.write_bytes(
        b"# Wrap-up\r\n**Date:** 2026-03-05\r\n\r\n## Next Steps\r\n- crlf step\r\n"
        b"- lf step\n\r\n## Known Issues\n- lf issue\n- crlf issue\r\n"
    )
    _import(root)
    lines = _lines(path.read_bytes())
    assert b"- crlf step\r" in lines
    assert b"- lf step" in lines
    assert b"- lf issue" in lines
    assert b"- crlf issue\r" in lines
    assert b"## Known Issues" in lines  # its heading had LF: it keeps LF
    assert lines[0] == b"# Checkpoint: mixed\r"  # an added line takes the dominant ending
    assert is_native_checkpoint(parse_file(path))


def _fuzzed(rng: random.Random, n: int) -> tuple[bytes, list[tuple[int, str]]]:
    """A foreign checkpoint: random heading levels, BOM, CRLF/LF/mixed endings."""
    style = rng.choice(["lf", "crlf", "mixed"])

    def eol() -> bytes:
        if style == "mixed":
            return rng.choice([b"\n", b"\r\n"])
        return b"\r\n" if style == "crlf" else b"\n"

    out: list[bytes] = []
    headings: list[tuple[int, str]] = []
    if rng.random() < 0.8:
        out.append(f"# Session {n} wrap-up".encode() + eol())
    if rng.random() < 0.5:
        out.append(b"**Date:** 2026-03-05" + eol())
    out.append(f"Reviewer: person {n}".encode() + eol())
    for s in range(rng.randint(1, 6)):
        level = rng.choice([1, 2, 2, 3, 4])
        title = rng.choice(MAPPED_TITLES + KEPT_TITLES)
        headings.append((level, title))
        out.append(b"\n" if rng.random() < 0.5 else eol())
        out.append(f"{'#' * level} {title}".encode() + eol())
        for b in range(rng.randint(0, 3)):
            out.append(f"- file {n} section {s} line {b}".encode() + eol())
    data = b"".join(out)
    return (BOM + data if rng.random() < 0.3 else data), headings


def test_import_fuzz_over_heading_levels_bom_and_line_endings_keeps_every_line(
    tmp_path: Path,
) -> None:
    root = _root(tmp_path)
    rng = random.Random(21)
    originals: dict[str, bytes] = {}
    for n in range(30):
        data, _headings = _fuzzed(rng, n)
        name = f"checkpoint-fuzz-{n:02d}.md"
        (root / name).write_bytes(data)
        originals[name] = data
    result = _import(root)
    converted = {Path(str(c["path"])).name: c for c in result["converted"]}
    assert set(converted) == set(originals)
    for name, before in originals.items():
        after = (root / name).read_bytes()
        assert after.startswith(BOM) == before.startswith(BOM), name
        mapped = {t for titles in converted[name]["mapped"].values() for t in titles}
        src = _lines(before)
        first_h2 = next((i for i, ln in enumerate(src) if ln.startswith(b"## ")), len(src))
        title_at = next((i for i, ln in enumerate(src[:first_h2]) if ln.startswith(b"# ")), None)
        expected = Counter(
            ln
            for i, ln in enumerate(src)
            if ln.strip()
            and i != title_at
            and not ln.startswith(b"**Date:**")
            # a mapped ## heading becomes memls's own (its title is in the report)
            and not (ln.startswith(b"## ") and ln[3:].strip().decode() in mapped)
        )
        have = Counter(_lines(after))
        lost = {ln: k - have[ln] for ln, k in expected.items() if have[ln] < k}
        assert not lost, (name, lost)
        assert is_native_checkpoint(parse_file(root / name)), name
    again = _import(root)
    assert again["converted"] == []


# --- kill -9 during import ------------------------------------------------------------------------

FOREIGN = "# Wrap-up {n}\n**Date:** 2026-03-0{day}\n**Branch:** `feature/{n}`\n\n## Next Steps\n- step {n}\n"
FILES = 6


def _foreign_root(tmp_path: Path) -> Path:
    root = _root(tmp_path)
    for n in range(FILES):
        (root / f"checkpoint-task-{n}.md").write_text(FOREIGN.format(n=n, day=n + 1))
    return root


def _native(root: Path) -> list[str]:
    return sorted(
        p.name for p in root.glob("checkpoint-*.md") if is_native_checkpoint(parse_file(p))
    )


def _bullet_names(root: Path) -> set[str]:
    return {b.name for b in bullets(parse_file(root / "MEMORY.md"))}


@pytest.mark.parametrize("after", [1, 3])
def test_import_killed_after_some_files_converged_on_the_rerun(tmp_path: Path, after: int) -> None:
    root = _foreign_root(tmp_path)
    env = {**os.environ, "MEMLS_TEST_WRITE_DELAY": "0.25"}  # a pause before each rename
    proc = subprocess.Popen(
        [sys.executable, "-m", "memls", "checkpoint", "import", "--root", str(root)],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        deadline = time.monotonic() + 60
        while len(_native(root)) < after and time.monotonic() < deadline:
            assert proc.poll() is None, "the import finished before it could be killed"
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    done = _native(root)
    assert after <= len(done) < FILES
    assert _bullet_names(root) == set()  # the state the kill leaves: files without bullets
    assert (root / INTENT_FILE).is_file()

    data = _import(root)
    converted = {Path(str(c["path"])).name for c in data["converted"]}
    assert converted == {f"checkpoint-task-{n}.md" for n in range(FILES)} - set(done)
    assert sorted(data["finished"]) == sorted(n.removeprefix("checkpoint-")[:-3] for n in done)
    assert _bullet_names(root) == {f"task-{n}" for n in range(FILES)}
    index = (root / "MEMORY.md").read_text()
    assert "- **task-0** (feature/0, Mar 01 00:00) — step 0" in index
    assert not (root / INTENT_FILE).exists()
    assert _import(root)["converted"] == []
    assert (root / "MEMORY.md").read_text() == index  # converged: nothing more to do


def test_import_of_a_fifo_says_it_is_not_a_regular_file(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    root.mkdir()
    (root / "MEMORY.md").write_text("# Project Memory\n")
    os.mkfifo(root / "checkpoint-pipe.md")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "memls",
            "checkpoint",
            "import",
            "checkpoint-pipe.md",
            "--root",
            str(root),
        ],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 2
    assert "is not a regular file" in done.stderr
    assert (root / "MEMORY.md").read_text() == "# Project Memory\n"
