"""Completions, hover, definition, document symbols, links and folding end to end."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp_helpers import BRANCH, NAME, open_params, root_of, uri


def ident(path: Path) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri(path))


async def complete(
    client: LanguageClient, path: Path, text: str, line: int, character: int
) -> list[types.CompletionItem]:
    client.text_document_did_open(open_params(path, text))
    result = await client.text_document_completion_async(
        types.CompletionParams(text_document=ident(path), position=types.Position(line, character))
    )
    assert isinstance(result, types.CompletionList)
    return list(result.items)


async def test_completes_missing_checkpoint_sections(
    client: LanguageClient, tmp_path: Path
) -> None:
    path = root_of(tmp_path) / f"checkpoint-{NAME}.md"
    text = path.read_text().replace("## Failed Approaches\n- None\n\n", "") + "## \n"
    line = text.count("\n") - 1
    items = await complete(client, path, text, line, 3)
    labels = [i.label for i in items]
    assert "Failed Approaches" in labels
    assert "Done This Session" not in labels  # present already


async def test_completes_branch_names_and_saved_now(client: LanguageClient, tmp_path: Path) -> None:
    path = root_of(tmp_path) / "checkpoint-new.md"
    text = "# Checkpoint: new\n\n- **Branch:** \n- **Saved:** \n"
    items = await complete(client, path, text, 2, len("- **Branch:** "))
    assert [i.label for i in items][:1] == [BRANCH]
    assert {"main", BRANCH} <= {i.label for i in items}
    assert items[0].text_edit is not None
    assert items[0].text_edit.new_text == f"`{BRANCH}`"
    client.text_document_did_close(types.DidCloseTextDocumentParams(ident(path)))
    items = await complete(client, path, text, 3, len("- **Saved:** "))
    assert len(items) == 1
    assert len(items[0].label) == len("2026-11-30 14:02")


async def test_completes_checkpoint_names_after_continue(
    client: LanguageClient, tmp_path: Path
) -> None:
    path = root_of(tmp_path) / "notes.md"
    text = "# Notes\n\nTo resume: continue fe\n"
    items = await complete(client, path, text, 2, len("To resume: continue fe"))
    assert [i.label for i in items] == [NAME]


async def test_completes_bundle_item_kinds(client: LanguageClient, tmp_path: Path) -> None:
    path = root_of(tmp_path) / f"checkpoint-{NAME}.md"
    text = path.read_text() + "\n## Checkpoint Bundle\n- [ ] \n"
    line = text.count("\n") - 1
    items = await complete(client, path, text, line, len("- [ ] "))
    assert [i.label for i in items] == ["memory", "index", "log", "transcript", "recall"]


async def test_completes_pointer_paths(client: LanguageClient, tmp_path: Path) -> None:
    path = root_of(tmp_path) / "MEMORY.md"
    text = path.read_text() + "- [More](te\n"
    line = text.count("\n") - 1
    items = await complete(client, path, text, line, len("- [More](te"))
    assert "testing.md" in [i.label for i in items]


async def test_hover_on_a_bullet_shows_the_checkpoint(
    client: LanguageClient, tmp_path: Path
) -> None:
    path = root_of(tmp_path) / "MEMORY.md"
    client.text_document_did_open(open_params(path))
    line = (
        path.read_text()
        .splitlines()
        .index(next(ln for ln in path.read_text().splitlines() if ln.startswith("- **")))
    )
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=ident(path), position=types.Position(line, 5))
    )
    assert hover is not None
    assert isinstance(hover.contents, types.MarkupContent)
    text = hover.contents.value
    assert f"`{BRANCH}`" in text
    assert "Wire the login form" in text
    assert "fresh" in text
    assert "is the current branch" in text


async def test_hover_on_a_branch_line(client: LanguageClient, tmp_path: Path) -> None:
    path = root_of(tmp_path) / f"checkpoint-{NAME}.md"
    text = path.read_text().replace(f"`{BRANCH}`", "`gone-branch`")
    client.text_document_did_open(open_params(path, text))
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=ident(path), position=types.Position(2, 16))
    )
    assert hover is not None
    assert isinstance(hover.contents, types.MarkupContent)
    assert "does not exist" in hover.contents.value
    assert f"you are on `{BRANCH}`" in hover.contents.value


async def test_definition_from_bullet_and_continue(client: LanguageClient, tmp_path: Path) -> None:
    root = root_of(tmp_path)
    path = root / "MEMORY.md"
    lines = path.read_text().splitlines()
    client.text_document_did_open(open_params(path))
    bullet = next(i for i, ln in enumerate(lines) if ln.startswith("- **"))
    result = await client.text_document_definition_async(
        types.DefinitionParams(text_document=ident(path), position=types.Position(bullet, 6))
    )
    assert isinstance(result, list)
    assert result[0].uri == uri(root / f"checkpoint-{NAME}.md")
    notes = root / "notes.md"
    client.text_document_did_open(open_params(notes, f"# Notes\n\nTo go on, continue {NAME}.\n"))
    result = await client.text_document_definition_async(
        types.DefinitionParams(text_document=ident(notes), position=types.Position(2, 22))
    )
    assert isinstance(result, list)
    assert result[0].uri == uri(root / f"checkpoint-{NAME}.md")  # the period is not the name's


async def test_document_symbols_are_the_sections(client: LanguageClient, tmp_path: Path) -> None:
    path = root_of(tmp_path) / "MEMORY.md"
    client.text_document_did_open(open_params(path))
    symbols = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=ident(path))
    )
    assert symbols is not None
    (top,) = symbols
    assert isinstance(top, types.DocumentSymbol)
    assert top.name == "Project Memory"
    assert [c.name for c in top.children or []] == ["Active Checkpoints", "Memory Files"]


async def test_document_links_for_pointers_and_bullets(
    client: LanguageClient, tmp_path: Path
) -> None:
    root = root_of(tmp_path)
    path = root / "MEMORY.md"
    client.text_document_did_open(open_params(path))
    links = await client.text_document_document_link_async(
        types.DocumentLinkParams(text_document=ident(path))
    )
    assert links is not None
    targets = {link.target for link in links}
    assert uri(root / "testing.md") in targets
    assert uri(root / f"checkpoint-{NAME}.md") in targets


async def test_folding_ranges_cover_sections(client: LanguageClient, tmp_path: Path) -> None:
    path = root_of(tmp_path) / f"checkpoint-{NAME}.md"
    client.text_document_did_open(open_params(path))
    ranges = await client.text_document_folding_range_async(
        types.FoldingRangeParams(text_document=ident(path))
    )
    assert ranges is not None
    assert len(ranges) >= 5
    assert ranges[0].start_line == 0
