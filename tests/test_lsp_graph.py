"""The link graph through a real language client: references, code lens (and its refresh),
prepareRename/rename, willRenameFiles, create-missing, workspace symbols, link completion
and link hover."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp_helpers import (
    NAME,
    WAIT_SECONDS,
    apply_lsp_edits,
    make_project,
    open_params,
    start,
    uri,
)

DEPLOY = (
    "# Deploying\n\n"
    "After the tests in [Testing notes](testing.md#unit-tests), continue feat-login.\n\n"
    "## Staging\nPush to staging; see [[testing]].\n"
)
TESTING = "# Testing\n\nRun `pytest -q`.\n\n## Unit tests\nFast ones first.\n"


def root_of(tmp_path: Path) -> Path:
    return tmp_path / "proj" / "mem"


@pytest_lsp.fixture(  # type: ignore[untyped-decorator]
    params=["visual_studio_code", "neovim"],
    config=ClientServerConfig(server_command=[sys.executable, "-m", "memls.lsp"]),
)
async def client(
    request: pytest.FixtureRequest, lsp_client: LanguageClient, tmp_path: Path
) -> AsyncIterator[None]:
    """make_project's root plus deploy.md (a link with an anchor, a wikilink and a
    ``continue`` line) and a testing.md with a second-level heading."""
    project, root = make_project(tmp_path)
    (root / "deploy.md").write_text(DEPLOY, encoding="utf-8")
    (root / "testing.md").write_text(TESTING, encoding="utf-8")
    index = root / "MEMORY.md"
    index.write_text(index.read_text() + "- [Deploying](deploy.md)\n", encoding="utf-8")
    lsp_client.refreshes = 0  # type: ignore[attr-defined]

    @lsp_client.feature(types.WORKSPACE_CODE_LENS_REFRESH)  # type: ignore[untyped-decorator]
    def refresh(params: None) -> None:
        lsp_client.refreshes += 1  # type: ignore[attr-defined]

    initialize = lsp_client.initialize_session

    async def remember(params: types.InitializeParams) -> types.InitializeResult:
        result: types.InitializeResult = await initialize(params)
        lsp_client.server_capabilities = result.capabilities  # type: ignore[attr-defined]
        return result

    lsp_client.initialize_session = remember  # type: ignore[method-assign]
    await start(lsp_client, request.param, project)
    yield
    await lsp_client.shutdown_session()


def ident(path: Path) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri(path))


def at(path: Path, needle: str, offset: int = 0) -> types.Position:
    """The position of ``needle`` (plus ``offset`` characters) in the file on disk."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        if needle in line:
            return types.Position(number, line.index(needle) + offset)
    raise AssertionError(f"{needle!r} not in {path.name}")


def where(locations: Sequence[types.Location]) -> list[tuple[str, int]]:
    return sorted((Path(loc.uri).name, loc.range.start.line) for loc in locations)


def apply(edit: types.WorkspaceEdit) -> None:
    """Apply a WorkspaceEdit to disk in order, as a client does (ASCII positions)."""
    for change in edit.document_changes or []:
        if isinstance(change, types.TextDocumentEdit):
            path = Path(change.text_document.uri.removeprefix("file://"))
            text = path.read_text(encoding="utf-8")
            edits = [e for e in change.edits if isinstance(e, types.TextEdit)]
            path.write_text(apply_lsp_edits(text, edits), encoding="utf-8")
        elif isinstance(change, types.RenameFile):
            old = Path(change.old_uri.removeprefix("file://"))
            new = Path(change.new_uri.removeprefix("file://"))
            assert not new.exists()
            os.rename(old, new)
        elif isinstance(change, types.CreateFile):
            path = Path(change.uri.removeprefix("file://"))
            assert change.options is not None
            if path.exists() and change.options.ignore_if_exists:
                continue
            path.write_text("", encoding="utf-8")
    for file_uri, plain in (edit.changes or {}).items():
        path = Path(file_uri.removeprefix("file://"))
        path.write_text(apply_lsp_edits(path.read_text(encoding="utf-8"), list(plain)))


async def test_references_from_a_bullet_a_continue_line_and_the_checkpoint_title(
    client: LanguageClient, tmp_path: Path
) -> None:
    root = root_of(tmp_path)
    index = root / "MEMORY.md"
    checkpoint = root / f"checkpoint-{NAME}.md"
    expected = [("MEMORY.md", at(index, f"**{NAME}**").line), ("deploy.md", 2)]
    for path, position in (
        (index, at(index, f"**{NAME}**", 4)),
        (root / "deploy.md", at(root / "deploy.md", "continue feat-login", 10)),
        (checkpoint, at(checkpoint, NAME)),
    ):
        client.text_document_did_open(open_params(path))
        found = await client.text_document_references_async(
            types.ReferenceParams(
                text_document=ident(path),
                position=position,
                context=types.ReferenceContext(include_declaration=False),
            )
        )
        assert found is not None
        assert where(found) == expected, path.name


async def test_references_from_a_link_a_title_and_a_heading(
    client: LanguageClient, tmp_path: Path
) -> None:
    root = root_of(tmp_path)
    index, testing, deploy = root / "MEMORY.md", root / "testing.md", root / "deploy.md"
    client.text_document_did_open(open_params(index))
    from_link = await client.text_document_references_async(
        types.ReferenceParams(
            text_document=ident(index),
            position=at(index, "(testing.md)", 2),
            context=types.ReferenceContext(include_declaration=True),
        )
    )
    assert from_link is not None
    assert where(from_link) == [
        ("MEMORY.md", at(index, "(testing.md)").line),
        ("deploy.md", 2),
        ("deploy.md", 5),  # [[testing]]
        ("testing.md", 0),  # the declaration: its title
    ]
    client.text_document_did_open(open_params(testing))
    from_title = await client.text_document_references_async(
        types.ReferenceParams(
            text_document=ident(testing),
            position=types.Position(0, 3),
            context=types.ReferenceContext(include_declaration=False),
        )
    )
    assert from_title is not None
    assert len(from_title) == 3
    from_heading = await client.text_document_references_async(
        types.ReferenceParams(
            text_document=ident(testing),
            position=at(testing, "## Unit tests", 4),
            context=types.ReferenceContext(include_declaration=False),
        )
    )
    assert from_heading is not None
    assert [(Path(loc.uri).name, loc.range.start.character) for loc in from_heading] == [
        ("deploy.md", at(deploy, "unit-tests").character)
    ]


async def test_code_lens_counts_references_and_refreshes_when_a_link_appears(
    client: LanguageClient, tmp_path: Path
) -> None:
    root = root_of(tmp_path)
    testing = root / "testing.md"
    client.text_document_did_open(open_params(testing))
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(ident(testing)))
    assert lenses is not None
    assert len(lenses) == 1
    lens = lenses[0]
    assert lens.range.start.line == 0
    assert lens.command is not None
    assert lens.command.title == "3 references"
    assert lens.command.command == "memls.showReferences"
    args = lens.command.arguments
    assert args is not None
    assert args[0] == uri(testing)
    listed = args[2]
    assert isinstance(listed, list)
    assert len(listed) == 3
    checkpoint = root / f"checkpoint-{NAME}.md"
    client.text_document_did_open(open_params(checkpoint))
    cp_lenses = await client.text_document_code_lens_async(types.CodeLensParams(ident(checkpoint)))
    assert cp_lenses is not None
    assert cp_lenses[0].command is not None
    assert cp_lenses[0].command.title == "2 references"

    refresh_support = client.capabilities.workspace.code_lens  # type: ignore[union-attr]
    if refresh_support is None or not refresh_support.refresh_support:
        return
    before = client.refreshes  # type: ignore[attr-defined]
    deploy = root / "deploy.md"
    client.text_document_did_open(open_params(deploy))
    text = deploy.read_text() + "\nMore in [the tests](testing.md).\n"
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri(deploy), version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )

    async def refreshed() -> None:
        while client.refreshes == before:  # type: ignore[attr-defined]
            await asyncio.sleep(0.05)

    await asyncio.wait_for(refreshed(), WAIT_SECONDS)
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(ident(testing)))
    assert lenses is not None
    assert lenses[0].command is not None
    assert lenses[0].command.title == "4 references"


async def test_rename_a_checkpoint_moves_its_file_and_rewrites_bullet_and_continue_lines(
    client: LanguageClient, tmp_path: Path
) -> None:
    root = root_of(tmp_path)
    index = root / "MEMORY.md"
    client.text_document_did_open(open_params(index))
    position = at(index, f"**{NAME}**", 3)
    prepared = await client.text_document_prepare_rename_async(
        types.PrepareRenameParams(text_document=ident(index), position=position)
    )
    assert isinstance(prepared, types.PrepareRenamePlaceholder)
    assert prepared.placeholder == NAME
    assert prepared.range.start == at(index, NAME)
    edit = await client.text_document_rename_async(
        types.RenameParams(text_document=ident(index), position=position, new_name="auth-login")
    )
    assert edit is not None
    assert edit.document_changes is not None
    kinds = [type(c).__name__ for c in edit.document_changes]
    assert kinds[-1] == "RenameFile"  # every text edit first, on the current URIs
    assert sorted(
        Path(c.text_document.uri).name
        for c in edit.document_changes
        if isinstance(c, types.TextDocumentEdit)
    ) == ["MEMORY.md", f"checkpoint-{NAME}.md", "deploy.md"]
    index_edit = next(
        c
        for c in edit.document_changes
        if isinstance(c, types.TextDocumentEdit) and c.text_document.uri == uri(index)
    )
    assert index_edit.text_document.version == 1  # the open buffer's version
    apply(edit)
    assert not (root / f"checkpoint-{NAME}.md").exists()
    moved = (root / "checkpoint-auth-login.md").read_text()
    assert moved.startswith("# Checkpoint: auth-login\n")
    assert "- **auth-login** (feat/login," in index.read_text()
    assert "continue auth-login." in (root / "deploy.md").read_text()


async def test_rename_refuses_an_unsafe_name_with_a_clear_error(
    client: LanguageClient, tmp_path: Path
) -> None:
    root = root_of(tmp_path)
    index = root / "MEMORY.md"
    client.text_document_did_open(open_params(index))
    for bad, reason in (("../escape", "'..'"), ("bad*name", "breaks the index bullet")):
        with pytest.raises(JsonRpcException) as caught:
            await client.text_document_rename_async(
                types.RenameParams(
                    text_document=ident(index), position=at(index, NAME, 1), new_name=bad
                )
            )
        assert reason in str(caught.value)
    assert (root / f"checkpoint-{NAME}.md").exists()
    errors = [m for m in client.log_messages if m.type == types.MessageType.Error]
    assert errors == []


async def test_rename_a_topic_file_from_a_link_and_a_heading_from_an_anchor(
    client: LanguageClient, tmp_path: Path
) -> None:
    root = root_of(tmp_path)
    deploy = root / "deploy.md"
    client.text_document_did_open(open_params(deploy))
    anchor = at(deploy, "unit-tests", 2)
    prepared = await client.text_document_prepare_rename_async(
        types.PrepareRenameParams(text_document=ident(deploy), position=anchor)
    )
    assert isinstance(prepared, types.PrepareRenamePlaceholder)
    assert prepared.placeholder == "Unit tests"
    edit = await client.text_document_rename_async(
        types.RenameParams(text_document=ident(deploy), position=anchor, new_name="Fast tests")
    )
    assert edit is not None
    apply(edit)
    assert "## Fast tests\n" in (root / "testing.md").read_text()
    assert "(testing.md#fast-tests)" in deploy.read_text()

    client.text_document_did_close(types.DidCloseTextDocumentParams(ident(deploy)))
    client.text_document_did_open(open_params(deploy, version=2))
    link = at(deploy, "(testing.md", 3)
    edit = await client.text_document_rename_async(
        types.RenameParams(text_document=ident(deploy), position=link, new_name="guide.md")
    )
    assert edit is not None
    apply(edit)
    assert not (root / "testing.md").exists()
    assert (root / "guide.md").read_text().startswith("# Testing")
    assert "(guide.md#fast-tests)" in deploy.read_text()
    assert "[[guide]]" in deploy.read_text()
    assert "- [Testing notes](guide.md)" in (root / "MEMORY.md").read_text()


async def test_will_rename_files_rewrites_links_in_the_index_and_other_topic_files(
    client: LanguageClient, tmp_path: Path
) -> None:
    root = root_of(tmp_path)
    old, new = root / "testing.md", root / "memory" / "testing-guide.md"
    edit = await client.workspace_will_rename_files_async(
        types.RenameFilesParams(files=[types.FileRename(old_uri=uri(old), new_uri=new.as_uri())])
    )
    assert edit is not None
    apply(edit)
    os.makedirs(new.parent, exist_ok=True)
    os.rename(old, new)
    client.workspace_did_rename_files(
        types.RenameFilesParams(files=[types.FileRename(old_uri=uri(old), new_uri=new.as_uri())])
    )
    assert "- [Testing notes](memory/testing-guide.md)" in (root / "MEMORY.md").read_text()
    deploy = (root / "deploy.md").read_text()
    assert "[Testing notes](memory/testing-guide.md#unit-tests)" in deploy
    assert "[[testing-guide]]" in deploy
    # after didRenameFiles the graph knows the new place
    client.text_document_did_open(open_params(new))
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(ident(new)))
    assert lenses is not None
    assert lenses[0].command is not None
    assert lenses[0].command.title == "3 references"


async def test_create_missing_file_and_checkpoint_never_overwrite(
    client: LanguageClient, tmp_path: Path
) -> None:
    root = root_of(tmp_path)
    index = root / "MEMORY.md"
    text = (
        index.read_text().replace(
            f"- **{NAME}**", "- **spike-cache** (main, Nov 30 10:00) — Try a cache\n- **" + NAME, 1
        )
        + "- [Release steps](release.md)\n- [Taken](taken.md)\n"
    )
    client.text_document_did_open(open_params(index, text))
    lines = text.splitlines()
    last = len(lines) - 1

    async def actions(line: int) -> list[types.CodeAction]:
        result = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=ident(index),
                range=types.Range(types.Position(line, 0), types.Position(line, 1)),
                context=types.CodeActionContext(diagnostics=[]),
            )
        )
        return [a for a in result or [] if isinstance(a, types.CodeAction)]

    release_line = next(i for i, ln in enumerate(lines) if "release.md" in ln)
    create = [a for a in await actions(release_line) if a.title.startswith("Create")]
    assert [a.title for a in create] == ["Create memory file release.md"]
    assert create[0].diagnostics is not None
    assert [d.code for d in create[0].diagnostics] == ["IX009"]  # the broken pointer
    assert create[0].edit is not None
    assert create[0].edit.document_changes is not None
    created, content = create[0].edit.document_changes
    assert isinstance(created, types.CreateFile)
    assert created.options is not None
    assert created.options.ignore_if_exists is True
    assert not created.options.overwrite
    assert isinstance(content, types.TextDocumentEdit)
    first_edit = content.edits[0]
    assert isinstance(first_edit, types.TextEdit)
    template = first_edit.new_text
    assert template.startswith("---\nname: release\ndescription: Release steps\ntype: project\n")
    assert "# Release steps\n" in template

    bullet_line = next(i for i, ln in enumerate(lines) if "spike-cache" in ln)
    bullet_actions = await actions(bullet_line)
    create = [a for a in bullet_actions if a.title.startswith("Create")]
    assert [a.title for a in create] == ["Create checkpoint checkpoint-spike-cache.md"]
    assert create[0].diagnostics is not None
    assert [d.code for d in create[0].diagnostics] == ["IX002"]
    assert create[0].edit is not None
    apply(create[0].edit)
    new_cp = (root / "checkpoint-spike-cache.md").read_text()
    for section in ("## Next Action: ", "## Done This Session", "## Failed Approaches"):
        assert section in new_cp

    # a file that appeared on disk since is never offered for creation (nor overwritten)
    (root / "taken.md").write_text("# Mine\n", encoding="utf-8")
    assert not [a for a in await actions(last) if a.title.startswith("Create")]
    assert (root / "taken.md").read_text() == "# Mine\n"


async def test_workspace_symbols_are_fuzzy_across_the_root(
    client: LanguageClient, tmp_path: Path
) -> None:
    found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="ftlgn"))
    assert found is not None
    names = [s.name for s in found]
    assert names[0] == f"checkpoint {NAME}"
    staged = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="stagng"))
    assert staged is not None
    first = staged[0]
    assert first.name == "Staging"
    assert isinstance(first, types.SymbolInformation)
    assert Path(first.location.uri).name == "deploy.md"
    everything = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=""))
    assert everything is not None
    assert {"Testing", "Deploying", "Unit tests"} <= {s.name for s in everything}


async def test_completion_of_links_after_a_bracket_and_of_anchors_after_a_hash(
    client: LanguageClient, tmp_path: Path
) -> None:
    root = root_of(tmp_path)
    notes = root / "notes.md"
    text = "# Notes\n\nSee [\nAnd [x](testing.md#\n"
    client.text_document_did_open(open_params(notes, text))
    result = await client.text_document_completion_async(
        types.CompletionParams(text_document=ident(notes), position=types.Position(2, 5))
    )
    assert isinstance(result, types.CompletionList)
    by_label = {i.label: i for i in result.items}
    assert "Testing" in by_label
    item_edit = by_label["Testing"].text_edit
    assert isinstance(item_edit, types.TextEdit)
    assert item_edit.new_text == "[Testing](testing.md)"
    assert item_edit.range.start == types.Position(2, 4)
    result = await client.text_document_completion_async(
        types.CompletionParams(text_document=ident(notes), position=types.Position(3, 20))
    )
    assert isinstance(result, types.CompletionList)
    anchors = {
        i.label: i.text_edit.new_text
        for i in result.items
        if isinstance(i.text_edit, types.TextEdit)
    }
    assert anchors == {"Testing": "testing", "Unit tests": "unit-tests"}


async def test_hover_on_a_link_shows_the_target_and_its_reference_count(
    client: LanguageClient, tmp_path: Path
) -> None:
    root = root_of(tmp_path)
    deploy = root / "deploy.md"
    client.text_document_did_open(open_params(deploy))
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=ident(deploy), position=at(deploy, "testing.md#", 2))
    )
    assert hover is not None
    assert isinstance(hover.contents, types.MarkupContent)
    value = hover.contents.value
    assert "**Testing** — `testing.md`" in value
    assert "§ **Unit tests**" in value
    assert "Fast ones first." in value
    assert "Referenced from 1 place in 1 file." in value
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=ident(deploy), position=at(deploy, "[[testing", 3))
    )
    assert hover is not None
    assert isinstance(hover.contents, types.MarkupContent)
    assert "Run `pytest -q`." in hover.contents.value
    assert "Referenced from 3 places in 2 files." in hover.contents.value


async def test_hover_on_a_link_to_a_subfolder_file_shows_it_not_missing(
    client: LanguageClient, tmp_path: Path
) -> None:
    root = root_of(tmp_path)
    (root / "topics").mkdir()
    (root / "topics" / "a.md").write_text("# Alpha\n\nThe subfolder topic's body.\n")
    deploy = root / "deploy.md"
    text = deploy.read_text() + "\nSee [Alpha](topics/a.md).\n"
    client.text_document_did_open(open_params(deploy, text))
    line = text.split("\n").index("See [Alpha](topics/a.md).")
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=ident(deploy), position=types.Position(line, 14))
    )
    assert hover is not None
    assert isinstance(hover.contents, types.MarkupContent)
    assert "does not exist" not in hover.contents.value
    assert "The subfolder topic's body." in hover.contents.value


async def test_capabilities_and_the_editors_handle_the_code_lens_command(
    client: LanguageClient, tmp_path: Path
) -> None:
    caps: types.ServerCapabilities = client.server_capabilities  # type: ignore[attr-defined]
    assert caps.references_provider
    assert caps.code_lens_provider is not None
    assert isinstance(caps.rename_provider, types.RenameOptions)
    assert caps.rename_provider.prepare_provider is True
    assert caps.workspace_symbol_provider
    asked = client.capabilities.workspace  # type: ignore[union-attr]
    if asked is not None and asked.file_operations is not None:  # announced to VS Code
        assert caps.workspace is not None
        ops = caps.workspace.file_operations
        assert ops is not None
        for registration in (ops.will_rename, ops.did_rename):
            assert registration is not None
            globs = {f.pattern.glob for f in registration.filters}
            assert "**/*.md" in globs
    project = Path(__file__).resolve().parents[1]
    extension = (project / "editors" / "vscode" / "src" / "extension.ts").read_text()
    assert "registerCommand('memls.showReferences'" in extension
    assert "editor.action.showReferences" in extension
    nvim = (project / "editors" / "nvim" / "plugin" / "memls.lua").read_text()
    assert "vim.lsp.commands['memls.showReferences']" in nvim


async def test_workspace_symbols_span_every_memory_root(
    client: LanguageClient, tmp_path: Path
) -> None:
    second = tmp_path / "proj" / "second"
    second.mkdir()
    (second / "checkpoint-zeta-sync.md").write_text(
        "# Checkpoint: zeta-sync\n\n## Next Action: Sync\n", encoding="utf-8"
    )
    (second / "MEMORY.md").write_text(
        "# Other memory\n\n## Active Checkpoints\n- **zeta-sync** (main, Nov 30 10:00) — Sync\n",
        encoding="utf-8",
    )
    client.text_document_did_open(open_params(second / "MEMORY.md"))  # a root seen on open
    found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="checkpoint"))
    assert found is not None
    names = {s.name for s in found}
    assert {f"checkpoint {NAME}", "checkpoint zeta-sync"} <= names


async def test_definition_of_a_link_goes_to_the_anchored_heading(
    client: LanguageClient, tmp_path: Path
) -> None:
    root = root_of(tmp_path)
    deploy, testing = root / "deploy.md", root / "testing.md"
    client.text_document_did_open(open_params(deploy))
    for needle, line in (("unit-tests", at(testing, "## Unit tests").line), ("[[testing", 0)):
        found = await client.text_document_definition_async(
            types.DefinitionParams(text_document=ident(deploy), position=at(deploy, needle, 3))
        )
        assert isinstance(found, list)
        assert [(Path(loc.uri).name, loc.range.start.line) for loc in found] == [
            ("testing.md", line)
        ], needle
