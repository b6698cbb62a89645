"""Issue 25, item 2: one link model. The editor's document links and go-to-definition show
exactly what the rules resolve (IX009): the same links, leading to the same files.

Reproduced before the fix: in a repository, ``[deploy](docs/deploy.md)`` in
``.claude/memory/MEMORY.md`` passed IX009 (the resolver finds it relative to the
repository), yet the editor showed no link for it; ``[[deploy]]`` was no link at all."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from memls.core.config import Config
from memls.core.formats.links import extract_links
from memls.core.rules import check_document
from memls.core.workspace import Workspace
from tests.lsp_helpers import git, start, uri

INDEX = (
    "# Project Memory\n\n"
    "## Memory Files\n"
    "- [deploy](docs/deploy.md) — how we ship\n"
    "- [[deploy]] — the same note, as a wikilink\n"
    "- `docs/deploy.md` — the same note, in backticks\n"
    "- auth.md — token refresh\n"
    "- [auth, the heading](auth.md#token-refresh) — with an anchor\n"
    "- See `src/app.py:2` for the entry point\n"
)
AUTH = "# Auth notes\n\n## Token refresh\nRotate on every use.\n"


def _project(tmp_path: Path) -> tuple[Path, Path]:
    project = tmp_path / "repo"
    memory = project / ".claude" / "memory"
    memory.mkdir(parents=True)
    git(project, "init", "-q", "-b", "main")
    (project / "README.md").write_text("# A project\n", encoding="utf-8")
    git(project, "add", "README.md")
    git(project, "commit", "-q", "-m", "init")
    (project / "docs").mkdir()
    (project / "docs" / "deploy.md").write_text("# Deploy\n\nShip it.\n", encoding="utf-8")
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("# app\nprint('hi')\n", encoding="utf-8")
    (memory / "MEMORY.md").write_text(INDEX, encoding="utf-8")
    (memory / "auth.md").write_text(AUTH, encoding="utf-8")
    return project, memory


def _resolved(memory: Path) -> list[tuple[int, int, int, Path]]:
    """(line, start, end, target) of every link of the index the core resolver resolves."""
    ws = Workspace(memory, Config())
    doc = ws.document(memory / "MEMORY.md")
    assert doc is not None
    out = []
    for link in extract_links(doc):
        target = ws.links.resolve(link)
        if target is not None:
            out.append((link.line, link.start, link.end, target.resolve()))
    return out


def test_rules_resolve_every_pointer_of_the_index(tmp_path: Path) -> None:
    """The core half: IX009 is silent because each pointer resolves, and to the repository's
    ``docs/deploy.md`` for the markdown link, the wikilink and the code span alike."""
    project, memory = _project(tmp_path)
    ws = Workspace(memory, Config())
    doc = ws.document(memory / "MEMORY.md")
    assert doc is not None
    assert not [d for d in check_document(ws, doc) if d.code == "IX009"]
    deploy = (project / "docs" / "deploy.md").resolve()
    by_line = {line: target for line, _, _, target in _resolved(memory)}
    assert by_line[3] == by_line[4] == by_line[5] == deploy
    assert by_line[6] == by_line[7] == (memory / "auth.md").resolve()
    assert by_line[8] == (project / "src" / "app.py").resolve()


@pytest_lsp.fixture(  # type: ignore[untyped-decorator]
    params=["visual_studio_code", "neovim"],
    config=ClientServerConfig(server_command=[sys.executable, "-m", "memls.lsp"]),
)
async def client(
    request: pytest.FixtureRequest, lsp_client: LanguageClient, tmp_path: Path
) -> AsyncIterator[None]:
    project, _ = _project(tmp_path)
    await start(lsp_client, request.param, project)
    yield
    await lsp_client.shutdown_session()


def _ident(path: Path) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri(path))


async def test_document_links_are_what_the_rules_resolve(
    client: LanguageClient, tmp_path: Path
) -> None:
    memory = tmp_path / "repo" / ".claude" / "memory"
    index = memory / "MEMORY.md"
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri(index), "markdown", 1, INDEX))
    )
    links = await client.text_document_document_link_async(
        types.DocumentLinkParams(text_document=_ident(index))
    )
    assert links is not None
    shown = sorted(
        (
            link.range.start.line,
            link.range.start.character,
            link.range.end.character,
            link.target or "",
        )
        for link in links
    )
    expected = sorted((ln, a, b, uri(target)) for ln, a, b, target in _resolved(memory))
    assert shown == expected
    deploy = uri(tmp_path / "repo" / "docs" / "deploy.md")
    assert [t for ln, _, _, t in shown if ln in (3, 4, 5)] == [deploy] * 3


async def test_definition_goes_where_the_rules_resolve(
    client: LanguageClient, tmp_path: Path
) -> None:
    memory = tmp_path / "repo" / ".claude" / "memory"
    index = memory / "MEMORY.md"
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri(index), "markdown", 1, INDEX))
    )
    for line, first, end, target in _resolved(memory):
        for character in (first, (first + end) // 2):
            result = await client.text_document_definition_async(
                types.DefinitionParams(
                    text_document=_ident(index), position=types.Position(line, character)
                )
            )
            assert isinstance(result, list), (line, character)
            assert [loc.uri for loc in result] == [uri(target)], (line, character)
