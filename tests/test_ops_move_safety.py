"""`memls mv` and the language server's renames keep every byte they do not mean to change,
never rewrite committed LOG.md text, and finish a move a crash interrupted (issue 21)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

import memls.core.ops.move as move_module
from memls.core.fsutil import atomic_delete, atomic_write
from memls.core.ops.move import INTENT_FILE, apply_plan, plan_for
from memls.core.workspace import Workspace
from tests.cli_helpers import memls_on as memls
from tests.lsp_helpers import WAIT_SECONDS, git, make_project, open_params, start, uri

LOG_COMMITTED = "# Log\n\n## 2026-01-01 10:00 — start\nRead [Testing notes](testing.md) first.\n"
LOG_APPENDED = "\n## 2026-01-02 10:00 — more\nAgain [Testing notes](testing.md).\n"


def with_log(tmp_path: Path) -> tuple[Path, Path]:
    """make_project's root with a committed LOG.md naming testing.md, then an entry
    appended after the commit (not committed yet)."""
    project, root = make_project(tmp_path)
    (root / "LOG.md").write_text(LOG_COMMITTED, encoding="utf-8")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "memory")
    with (root / "LOG.md").open("a", encoding="utf-8") as handle:
        handle.write(LOG_APPENDED)
    return project, root


def test_mv_keeps_a_line_with_a_truncated_utf8_sequence(tmp_path: Path) -> None:
    _, root = make_project(tmp_path)
    notes = root / "notes.md"
    notes.write_bytes(
        b"# Notes\n\n- caf\xe2\x80 see [Testing](testing.md) now\n- \xff [x](testing.md)\n"
    )
    done = memls(root, "mv", "testing.md", "memory/testing.md")
    assert done.returncode == 0, done.stderr
    assert notes.read_bytes() == (
        b"# Notes\n\n- caf\xe2\x80 see [Testing](memory/testing.md) now\n"
        b"- \xff [x](memory/testing.md)\n"
    )
    assert "- [Testing notes](memory/testing.md)" in (root / "MEMORY.md").read_text()
    assert not (root / ".memls" / INTENT_FILE).exists()


def test_mv_never_rewrites_committed_log_text(tmp_path: Path) -> None:
    _, root = with_log(tmp_path)
    done = memls(root, "mv", "testing.md", "memory/testing.md")
    assert done.returncode == 0, done.stderr
    assert "LOG.md is append-only" in done.stdout
    assert "left as written" in done.stdout
    log = (root / "LOG.md").read_text(encoding="utf-8")
    assert log.startswith(LOG_COMMITTED)  # committed text untouched
    assert log.endswith("Again [Testing notes](memory/testing.md).\n")  # the new entry follows
    check = memls(root, "check", "--json")
    assert "LG001" not in check.stdout


def test_mv_refuses_to_retitle_a_committed_log_heading(tmp_path: Path) -> None:
    _, root = with_log(tmp_path)
    before = (root / "LOG.md").read_bytes()
    done = memls(root, "mv", "LOG.md#2026-01-01-1000--start", "Beginning")
    assert done.returncode == 2
    assert "append-only" in done.stdout + done.stderr
    assert (root / "LOG.md").read_bytes() == before


def test_mv_rerun_after_a_crash_finishes_the_move(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crash after the intent and the first write (the moved file at its new place):
    the same `memls mv` again finishes the move instead of refusing "already exists"."""
    _, root = make_project(tmp_path)
    (root / "deploy.md").write_text("# Deploy\n\nSee [t](testing.md).\n", encoding="utf-8")
    plan = plan_for(Workspace(root), "testing.md", "memory/testing.md")
    reference = tmp_path / "reference"
    shutil.copytree(root, reference)
    assert memls(reference, "mv", "testing.md", "memory/testing.md").returncode == 0

    # Simulate the crash: stop carrying out the intent right after its first write.
    real = atomic_write
    calls = {"n": 0}

    def crashing(path: Path, data: str | bytes, *, root: Path | None = None) -> bool:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError("simulated crash")
        return real(path, data, root=root)

    monkeypatch.setattr(move_module, "atomic_write", crashing)
    with pytest.raises(OSError, match="simulated crash"):
        apply_plan(
            root.resolve(),
            plan,
            request=("testing.md", "memory/testing.md", str(root)),
            summary="moved",
        )
    monkeypatch.undo()
    assert (root / "testing.md").exists()
    assert (root / "memory" / "testing.md").exists()
    assert (root / ".memls" / INTENT_FILE).exists()

    done = memls(root, "mv", "testing.md", "memory/testing.md")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Finished the interrupted move" in done.stdout
    assert not (root / ".memls" / INTENT_FILE).exists()
    for path in reference.rglob("*.md"):
        assert (root / path.relative_to(reference)).read_bytes() == path.read_bytes()
    assert not (root / "testing.md").exists()


@pytest.mark.parametrize("step", range(1, 7))  # this move has six file operations
def test_mv_crash_at_every_step_then_rerun_converges(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: int
) -> None:
    """kill -9 between any two of the move's file operations — each write, the old file's
    removal, the intent's own removal — and the same `memls mv` again ends where an
    uninterrupted move ends, byte for byte."""
    _, root = make_project(tmp_path)
    (root / "deploy.md").write_text("# Deploy\n\nSee [t](testing.md).\n", encoding="utf-8")
    (root / "notes.md").write_text("# Notes\n\n[[testing]] and [x](testing.md)\n", "utf-8")
    plan = plan_for(Workspace(root), "testing.md", "memory/testing.md")
    reference = tmp_path / "reference"
    shutil.copytree(root, reference)
    assert memls(reference, "mv", "testing.md", "memory/testing.md").returncode == 0
    calls = {"n": 0}

    def crash_at_step(real: Any) -> Any:
        def call(path: Path, *args: Any, **kwargs: Any) -> Any:
            calls["n"] += 1
            if calls["n"] == step:
                raise OSError("simulated crash")
            return real(path, *args, **kwargs)

        return call

    monkeypatch.setattr(move_module, "atomic_write", crash_at_step(atomic_write))
    monkeypatch.setattr(move_module, "atomic_delete", crash_at_step(atomic_delete))
    with pytest.raises(OSError, match="simulated crash"):
        apply_plan(
            root.resolve(),
            plan,
            request=("testing.md", "memory/testing.md", str(root)),
            summary="moved",
        )
    monkeypatch.undo()

    done = memls(root, "mv", "testing.md", "memory/testing.md")
    if (root / ".memls" / INTENT_FILE).exists() or done.returncode != 0:
        raise AssertionError(done.stdout + done.stderr)
    for path in reference.rglob("*.md"):
        assert (root / path.relative_to(reference)).read_bytes() == path.read_bytes(), path
    assert sorted(p.relative_to(root) for p in root.rglob("*.md")) == sorted(
        p.relative_to(reference) for p in reference.rglob("*.md")
    )


def test_mv_leaves_indented_code_as_written(tmp_path: Path) -> None:
    """A link in an indented (4-space) code block is an example, not a pointer: `mv`
    leaves it; one in an indented list continuation is a pointer and follows."""
    _, root = make_project(tmp_path)
    notes = root / "notes.md"
    text = (
        "# Notes\n\n- see [t](testing.md)\n\n    continued [t](testing.md)\n"
        "- x\n    - nested [t](testing.md)\n\nExample:\n\n    see [t](testing.md)\n"
    )
    notes.write_text(text, encoding="utf-8")
    assert memls(root, "mv", "testing.md", "memory/testing.md").returncode == 0
    after = notes.read_text(encoding="utf-8")
    assert after == text.replace("](testing.md)", "](memory/testing.md)", 3)
    assert after.endswith("    see [t](testing.md)\n")


def test_mv_refuses_to_rename_the_index_away(tmp_path: Path) -> None:
    """`memls mv MEMORY.md notes.md` would leave the root without its index: refused,
    with the reason inside the JSON, and nothing moved; the same for LOG.md."""
    _, root = make_project(tmp_path)
    before = {p: p.read_bytes() for p in root.rglob("*.md")}
    done = memls(root, "mv", "MEMORY.md", "notes.md", "--json")
    assert done.returncode == 2
    answer = json.loads(done.stdout)
    assert "root's index" in answer["error"]
    assert "nothing was moved" in answer["error"]
    assert {p: p.read_bytes() for p in root.rglob("*.md")} == before
    for name in ("LOG.md",):
        (root / name).write_text("# Log\n", encoding="utf-8")
        assert memls(root, "mv", name, "old-log.md").returncode == 2
        assert (root / name).exists()


def test_mv_after_a_crash_refuses_when_a_file_changed_since(tmp_path: Path) -> None:
    _, root = make_project(tmp_path)
    plan = plan_for(Workspace(root), "testing.md", "memory/testing.md")
    state = root / ".memls"
    state.mkdir(mode=0o700)
    index = root / "MEMORY.md"
    intent = {
        "version": 1,
        "request": ["testing.md", "memory/testing.md", ""],
        "summary": "moved",
        "writes": [
            {
                "path": "MEMORY.md",
                "before": "0" * 64,  # not what MEMORY.md holds: it changed since
                "after": base64.b64encode(b"# other\n").decode(),
            }
        ],
        "deletes": [],
    }
    (state / INTENT_FILE).write_text(json.dumps(intent), encoding="utf-8")
    os.chmod(state / INTENT_FILE, 0o600)
    before = index.read_bytes()
    done = memls(root, "mv", "testing.md", "memory/testing.md")
    assert done.returncode == 2
    assert "cannot be finished" in done.stdout + done.stderr
    assert index.read_bytes() == before
    assert plan.moves
    assert (root / "testing.md").exists()


# -- the language server -------------------------------------------------------------
@pytest_lsp.fixture(  # type: ignore[untyped-decorator]
    config=ClientServerConfig(server_command=[sys.executable, "-m", "memls.lsp"]),
)
async def client(lsp_client: LanguageClient, tmp_path: Path) -> AsyncIterator[None]:
    project, _ = with_log(tmp_path)
    await start(lsp_client, "visual_studio_code", project)
    yield
    await lsp_client.shutdown_session()


async def _shown(client: LanguageClient, needle: str) -> str:
    async def wait() -> str:
        while True:
            for message in client.messages:
                if needle in message.message:
                    return message.message
            await asyncio.sleep(0.05)

    return await asyncio.wait_for(wait(), WAIT_SECONDS)


def _edited_lines(edit: types.WorkspaceEdit, path: Path) -> list[int]:
    lines: list[int] = []
    for change in edit.document_changes or []:
        if isinstance(change, types.TextDocumentEdit) and change.text_document.uri == uri(path):
            lines += [e.range.start.line for e in change.edits]
    for file_uri, plain in (edit.changes or {}).items():
        if file_uri == uri(path):
            lines += [e.range.start.line for e in plain]
    return lines


async def test_lsp_rename_never_rewrites_committed_log_text(
    client: LanguageClient, tmp_path: Path
) -> None:
    root = tmp_path / "proj" / "mem"
    index, log = root / "MEMORY.md", root / "LOG.md"
    client.text_document_did_open(open_params(index))
    line = next(n for n, t in enumerate(index.read_text().splitlines()) if "(testing.md)" in t)
    position = types.Position(line, index.read_text().splitlines()[line].index("(testing") + 3)
    edit = await client.text_document_rename_async(
        types.RenameParams(
            text_document=types.TextDocumentIdentifier(uri(index)),
            position=position,
            new_name="memory/testing.md",
        )
    )
    assert edit is not None
    committed_lines = LOG_COMMITTED.count("\n")
    assert _edited_lines(edit, log)  # the uncommitted entry is still rewritten
    assert all(n >= committed_lines for n in _edited_lines(edit, log))
    shown = await _shown(client, "append-only")
    assert "LOG.md" in shown
    assert "left as written" in shown


async def test_lsp_will_rename_files_never_rewrites_committed_log_text(
    client: LanguageClient, tmp_path: Path
) -> None:
    root = tmp_path / "proj" / "mem"
    old, new = root / "testing.md", root / "memory" / "testing.md"
    edit = await client.workspace_will_rename_files_async(
        types.RenameFilesParams(files=[types.FileRename(old_uri=uri(old), new_uri=new.as_uri())])
    )
    assert edit is not None
    committed_lines = LOG_COMMITTED.count("\n")
    lines = _edited_lines(edit, root / "LOG.md")
    assert lines
    assert all(n >= committed_lines for n in lines)
    await _shown(client, "append-only")
