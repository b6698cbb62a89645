"""Issue 21, point 6: a refused resume writes nothing.

`resume` removes index bullets whose checkpoint file is gone; it did so before it looked
at the name it was given, so a name it then refused (exit 2 / isError) had already
rewritten MEMORY.md. The name is now validated before anything is written.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.cli_helpers import memls_on

ORPHAN = "- **gone** (main, Jan 01 10:00) — its file was deleted"


def files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.fixture
def root_with_orphan(tmp_path: Path) -> Path:
    saved = memls_on(tmp_path, "checkpoint", "save", "kept", "--next", "go on")
    assert saved.returncode == 0, saved.stderr
    index = tmp_path / "MEMORY.md"
    text = index.read_text()
    index.write_text(text.replace("\n\nResume any", f"\n{ORPHAN}\n\nResume any", 1))
    assert ORPHAN in index.read_text()
    return tmp_path


@pytest.mark.parametrize("name", ["../../etc/passwd", "../x", "/etc/passwd", "a\\b", "bad`name"])
def test_refused_resume_name_leaves_the_orphan_bullet_and_every_byte(
    root_with_orphan: Path, name: str
) -> None:
    before = files(root_with_orphan)
    result = memls_on(root_with_orphan, "checkpoint", "resume", name)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "checkpoint name" in result.stderr
    assert files(root_with_orphan) == before


def test_refused_resume_with_consume_writes_nothing(root_with_orphan: Path) -> None:
    before = files(root_with_orphan)
    result = memls_on(root_with_orphan, "checkpoint", "resume", "../x", "--consume")
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert files(root_with_orphan) == before


def test_accepted_resume_still_removes_the_orphan(root_with_orphan: Path) -> None:
    result = memls_on(root_with_orphan, "checkpoint", "resume", "kept")
    assert result.returncode == 0, result.stderr
    assert 'orphaned index bullet for "gone"' in result.stdout
    assert ORPHAN not in (root_with_orphan / "MEMORY.md").read_text()


async def test_mcp_refused_resume_leaves_the_orphan_bullet(root_with_orphan: Path) -> None:
    pytest.importorskip("mcp", reason="the mcp extra is not installed")
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    before = files(root_with_orphan)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memls", "mcp", "--root", str(root_with_orphan)],
        cwd=str(root_with_orphan),
    )
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write) as session,
    ):
        with anyio.fail_after(60):
            await session.initialize()
            result = await session.call_tool("checkpoint_resume", {"name": "../x"})
    assert result.is_error
    assert files(root_with_orphan) == before
