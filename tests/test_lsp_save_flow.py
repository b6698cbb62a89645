"""The editors' "Save checkpoint" flow through a real LSP client: the quick fix in the
Ctrl+. menu (and the source action only when asked for), ``memls.checkpoint.suggest``'s
prefill, a save that needs the next action and never writes a placeholder, and the
MEMORY.md change the result carries; plus item 3 of issue 24 (the migrate quick fix only
where IX007 is)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp_helpers import NAME, git, open_params, root_of, uri, wait_for_diagnostics

NEW = "new-topic"


async def actions(
    client: LanguageClient, path: Path, line: int, only: list[str] | None = None
) -> list[types.CodeAction]:
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri(path)),
            range=types.Range(types.Position(line, 0), types.Position(line, 0)),
            context=types.CodeActionContext(
                diagnostics=[],
                only=[types.CodeActionKind(k) for k in only] if only else None,
            ),
        )
    )
    return [a for a in result or [] if isinstance(a, types.CodeAction)]


async def command(client: LanguageClient, name: str, arg: dict[str, Any]) -> Any:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=name, arguments=[arg])
    )


async def test_save_checkpoint_is_a_quick_fix_and_a_source_action_when_asked(
    client: LanguageClient, tmp_path: Path
) -> None:
    index = root_of(tmp_path) / "MEMORY.md"
    client.text_document_did_open(open_params(index))
    await wait_for_diagnostics(client, index, lambda codes: True)
    menu = [a for a in await actions(client, index, 3) if a.title.startswith("Save checkpoint")]
    assert [(a.title, a.kind) for a in menu] == [
        (f'Save checkpoint "{NAME}"…', types.CodeActionKind.QuickFix)
    ]
    source = await actions(client, index, 3, only=["source"])
    assert [(a.title, a.kind) for a in source] == [
        (f'Save checkpoint "{NAME}"…', "source.memls.saveCheckpoint")
    ]


async def test_suggest_then_save_writes_no_placeholder_and_reports_the_index_change(
    client: LanguageClient, tmp_path: Path
) -> None:
    project = tmp_path / "proj"
    root = root_of(tmp_path)
    git(project, "checkout", "-q", "-b", NEW)
    (project / "src").mkdir()
    (project / "src" / "login.py").write_text("print('login')\n", encoding="utf-8")
    git(project, "add", "src/login.py")
    git(project, "commit", "-q", "-m", "Add the login module")
    (project / "src" / "login.py").write_text("print('login form')\n", encoding="utf-8")
    index = root / "MEMORY.md"
    before = index.read_text(encoding="utf-8")
    client.text_document_did_open(open_params(index))
    await wait_for_diagnostics(client, index, lambda codes: True)

    suggestion = await command(
        client,
        "memls.checkpoint.suggest",
        {"uri": uri(index), "files": [uri(project / "README.md")]},
    )
    assert suggestion["name"] == NEW
    assert suggestion["branch"] == NEW
    assert suggestion["exists"] is False
    assert suggestion["files"] == ["README.md", "src/login.py"]
    assert suggestion["next"] == f"Continue on `{NEW}`: `README.md`, `src/login.py`"
    assert suggestion["done"] == ["Add the login module"]
    assert not (root / f"checkpoint-{NEW}.md").exists()  # suggesting writes nothing

    # Without the next action a new checkpoint is refused, not written with a placeholder.
    with pytest.raises(Exception, match="needs its next action"):
        await command(client, "memls.checkpoint.save", {"uri": uri(index)})
    assert not (root / f"checkpoint-{NEW}.md").exists()
    assert index.read_text(encoding="utf-8") == before

    result = await command(
        client,
        "memls.checkpoint.save",
        {
            "uri": uri(index),
            "next": "Post the login form",
            "done": suggestion["done"],
            "files": [uri(project / "README.md")],
        },
    )
    checkpoint = root / f"checkpoint-{NEW}.md"
    text = checkpoint.read_text(encoding="utf-8")
    assert "## Next Action: Post the login form\nFiles: `README.md`, `src/login.py`\n" in text
    assert "## Done This Session\n- Add the login module\n" in text
    assert "(author:" not in text
    assert "None recorded" not in text
    after = index.read_text(encoding="utf-8")
    assert f"- **{NEW}** (" in after
    assert result["index"] == str(index)
    assert result["index_before"] == before
    assert f"+- **{NEW}** (" in result["index_diff"]
    assert uri(checkpoint) in [d.uri for d in client.shown_documents]

    # Saving it again: suggest offers its own next action, and a save without one keeps it.
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri(index)))
    )
    again = await command(client, "memls.checkpoint.suggest", {"uri": uri(checkpoint)})
    assert again["exists"] is True
    assert again["next"] == "Post the login form"
    await command(client, "memls.checkpoint.save", {"uri": uri(checkpoint)})
    assert "## Next Action: Post the login form\n" in checkpoint.read_text(encoding="utf-8")


async def test_one_line_next_action_without_known_files_is_its_own_step(
    client: LanguageClient, tmp_path: Path
) -> None:
    root = root_of(tmp_path)
    await command(
        client,
        "memls.checkpoint.save",
        {"uri": uri(root / "MEMORY.md"), "name": "bare", "next": "Ask for the API review"},
    )
    text = (root / "checkpoint-bare.md").read_text(encoding="utf-8")
    assert "## Next Action: Ask for the API review\n- Ask for the API review\n" in text
    assert "(author:" not in text


async def test_migrate_is_offered_only_where_ix007_is(
    client: LanguageClient, tmp_path: Path
) -> None:
    index = root_of(tmp_path) / "MEMORY.md"
    text = index.read_text(encoding="utf-8") + "\n## Current State\nHalf done.\n"
    index.write_text(text, encoding="utf-8")
    client.text_document_did_open(open_params(index))
    diags = await wait_for_diagnostics(client, index, lambda codes: "IX007" in codes)
    line = next(d for d in diags if d.code == "IX007").range.start.line
    title = "Migrate legacy sections into a checkpoint"
    assert title in [a.title for a in await actions(client, index, line)]
    assert title not in [a.title for a in await actions(client, index, 0)]
