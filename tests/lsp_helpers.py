"""Shared setup for the language server tests: a real memory root in a real git repository."""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

from lsprotocol import types

SERVER = [sys.executable, "-m", "memls.lsp"]
BRANCH = "feat/login"
NAME = "feat-login"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}

DEPLOY = (
    "# Deploying\n\n"
    "## Staging\n"
    "Push to the staging branch and wait for the smoke tests.\n\n"
    "## Zebra crossing rollout\n"
    "The zebra crossing rollout needs the ferris wheel flag switched off first.\n"
)
"""A topic file with one distinctive section, for the recall commands (deploy.md)."""


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    ).stdout


def saved(now: dt.datetime | None = None) -> str:
    return (now or dt.datetime.now()).strftime("%Y-%m-%d %H:%M")


def bullet_stamp(when: dt.datetime) -> str:
    return when.strftime("%b %d %H:%M")


def checkpoint_text(
    name: str, branch: str, when: dt.datetime, next_title: str = "Wire the login form"
) -> str:
    return (
        f"# Checkpoint: {name}\n\n"
        f"- **Branch:** `{branch}`\n"
        f"- **Saved:** {saved(when)}\n\n"
        f"## Next Action: {next_title}\n"
        "Edit `src/login.py` to post the form.\n\n"
        "## Done This Session\n- Added the form template\n\n"
        "## Failed Approaches\n- None\n\n"
        "## Modified Files\n- src/login.py\n"
    )


def index_text(entries: list[tuple[str, str, dt.datetime, str]], extra: str = "") -> str:
    bullets = "".join(f"- **{n}** ({b}, {bullet_stamp(w)}) — {s}\n" for n, b, w, s in entries)
    return (
        "# Project Memory\n\n"
        "## Active Checkpoints\n"
        f"{bullets}\n"
        "Resume any: `continue` or `continue {name}`\n\n"
        "## Memory Files\n"
        "- [Testing notes](testing.md)\n"
        f"{extra}"
    )


def make_project(base: Path, branch: str = BRANCH, switch: bool = True) -> tuple[Path, Path]:
    """A git repository with a healthy flat memory root in ``mem/`` holding one checkpoint
    saved on ``branch``; the repository is on that branch, or on ``main`` with ``switch=False``."""
    name = branch.replace("/", "-")
    project = base / "proj"
    root = project / "mem"
    root.mkdir(parents=True)
    git(project, "init", "-q", "-b", "main")
    (project / "README.md").write_text("# A project\n", encoding="utf-8")
    git(project, "add", "README.md")
    git(project, "commit", "-q", "-m", "init")
    git(project, "checkout", "-q", "-b", branch) if switch else git(project, "branch", branch)
    when = dt.datetime.now().replace(second=0, microsecond=0) - dt.timedelta(hours=1)
    (root / f"checkpoint-{name}.md").write_text(
        checkpoint_text(name, branch, when), encoding="utf-8"
    )
    (root / "testing.md").write_text("# Testing\n\nRun `pytest -q`.\n", encoding="utf-8")
    (root / "MEMORY.md").write_text(
        index_text([(name, branch, when, "Wire the login form")]), encoding="utf-8"
    )
    return project, root


def root_of(tmp_path: Path) -> Path:
    """The memory root inside a project made by :func:`make_project`."""
    return tmp_path / "proj" / "mem"


def uri(path: Path) -> str:
    return path.resolve().as_uri()


def open_params(
    path: Path, text: str | None = None, version: int = 1
) -> types.DidOpenTextDocumentParams:
    return types.DidOpenTextDocumentParams(
        types.TextDocumentItem(
            uri=uri(path),
            language_id="markdown",
            version=version,
            text=path.read_text(encoding="utf-8") if text is None else text,
        )
    )


async def start(
    client: object,
    profile: str,
    folder: Path,
    options: dict[str, object] | None = None,
    capabilities: types.ClientCapabilities | None = None,
) -> None:
    """Initialize a session with a client profile and wait until the server has indexed."""
    from pytest_lsp import LanguageClient, client_capabilities

    assert isinstance(client, LanguageClient)
    edits: list[types.ApplyWorkspaceEditParams] = []
    client.applied_edits = edits  # type: ignore[attr-defined]

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)  # type: ignore[untyped-decorator]
    def register(params: types.RegistrationParams) -> None:
        client.registrations = params.registrations  # type: ignore[attr-defined]

    @client.feature(types.WORKSPACE_APPLY_EDIT)  # type: ignore[untyped-decorator]
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        edits.append(params)
        return types.ApplyWorkspaceEditResult(applied=True)

    if types.WORKSPACE_CODE_LENS_REFRESH not in client.protocol.fm.features:
        # Profiles that support code lens refresh get asked for one after edits.
        @client.feature(types.WORKSPACE_CODE_LENS_REFRESH)  # type: ignore[untyped-decorator]
        def code_lens_refresh(params: None) -> None:
            return None

    _fix_code_action_union(client)
    await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities or client_capabilities(profile),
            workspace_folders=[types.WorkspaceFolder(uri=uri(folder), name=folder.name)],
            initialization_options=options,
        )
    )
    await wait_for_log(client, "indexed")


WAIT_SECONDS = 60.0
"""How long a test waits for a notification before failing (instead of hanging CI)."""


async def wait_for_log(client: object, needle: str) -> None:
    from pytest_lsp import LanguageClient

    assert isinstance(client, LanguageClient)

    async def wait() -> None:
        while not any(needle in m.message for m in client.log_messages):
            await client.wait_for_notification(types.WINDOW_LOG_MESSAGE)

    try:
        await asyncio.wait_for(wait(), WAIT_SECONDS)
    except TimeoutError:
        seen = [m.message[:200] for m in client.log_messages]
        raise AssertionError(f"no log message containing {needle!r}; saw {seen}") from None


async def wait_for_diagnostics(
    client: object, path: Path, predicate: object
) -> list[types.Diagnostic]:
    """Wait until the diagnostics published for ``path`` satisfy ``predicate(codes)``."""
    from pytest_lsp import LanguageClient

    assert isinstance(client, LanguageClient)
    assert callable(predicate)
    key = uri(path)

    async def wait() -> list[types.Diagnostic]:
        while True:
            diags = client.diagnostics.get(key)
            if diags is not None and predicate(sorted(str(d.code) for d in diags)):
                return list(diags)
            await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

    try:
        return await asyncio.wait_for(wait(), WAIT_SECONDS)
    except TimeoutError:
        last = sorted(str(d.code) for d in client.diagnostics.get(key, []))
        raise AssertionError(f"diagnostics for {path.name} never matched; last: {last}") from None


def apply_lsp_edits(text: str, edits: list[types.TextEdit]) -> str:
    """Apply edits with ASCII-only positions (what these tests use) to ``text``."""
    from memls.core.fixes import apply_edits
    from memls.core.model import Range, TextEdit

    core = [
        TextEdit(
            Range.of(
                e.range.start.line, e.range.start.character, e.range.end.line, e.range.end.character
            ),
            e.new_text,
        )
        for e in edits
    ]
    return apply_edits(text, core)


def change_all(path: Path, text: str, version: int) -> types.DidChangeTextDocumentParams:
    return types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri(path), version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
    )


def _fix_code_action_union(client: object) -> None:
    """lsprotocol reads any ``Command | CodeAction`` with a ``command`` key as a Command, so a
    CodeAction that runs a command comes back mangled; decide by the key's type instead."""
    from typing import Any, Union

    converter = client.protocol._converter  # type: ignore[attr-defined]

    def hook(obj: Any, _: type) -> types.Command | types.CodeAction:
        if isinstance(obj.get("command"), str):
            return converter.structure(obj, types.Command)  # type: ignore[no-any-return]
        return converter.structure(obj, types.CodeAction)  # type: ignore[no-any-return]

    converter.register_structure_hook(Union[types.Command, types.CodeAction], hook)  # noqa: UP007
