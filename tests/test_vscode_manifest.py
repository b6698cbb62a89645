"""The VS Code extension's manifest agrees with the server and with the built .vsix.

The .vsix is built by ``bash scripts/vscode.sh`` (run by ``make test`` before pytest); the
vsix checks skip when it has not been built. The server-command checks need
``memls.lsp.commands.SERVER_COMMANDS`` and skip until that module exists.
"""

from __future__ import annotations

import importlib
import json
import re
import zipfile
from pathlib import Path
from typing import Any

import pytest

PROJECT = Path(__file__).resolve().parents[1]
VSCODE = PROJECT / "editors" / "vscode"
VSIX = VSCODE / "memls.vsix"
EXTENSION_TS = VSCODE / "src" / "extension.ts"
SETTINGS_TS = VSCODE / "src" / "settings.ts"
REBUILD = "rebuild it with `bash scripts/vscode.sh`"


def _manifest() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((VSCODE / "package.json").read_text(encoding="utf-8"))
    return data


def _command_ids(manifest: dict[str, Any]) -> list[str]:
    return [c["command"] for c in manifest["contributes"]["commands"]]


def _client_commands() -> set[str]:
    """Ids the extension registers itself (``registerCommand('<id>'``)."""
    source = EXTENSION_TS.read_text(encoding="utf-8")
    return set(re.findall(r"registerCommand\('([^']+)'", source))


def _server_commands() -> tuple[str, ...]:
    try:
        module = importlib.import_module("memls.lsp.commands")
    except ModuleNotFoundError as exc:
        if exc.name not in {"memls.lsp.commands", "memls.lsp"}:
            raise
        pytest.skip("memls.lsp.commands does not exist yet (no SERVER_COMMANDS to check against)")
    commands: tuple[str, ...] = tuple(module.SERVER_COMMANDS)
    return commands


def _vsix() -> zipfile.ZipFile:
    if not VSIX.is_file():
        pytest.skip(
            f"{VSIX.relative_to(PROJECT)} is not built; build it with `bash scripts/vscode.sh`"
        )
    return zipfile.ZipFile(VSIX)


def test_manifest_identity_and_packaging_fields() -> None:
    """vsce stops at an interactive prompt without a repository or a LICENSE: CI would hang."""
    manifest = _manifest()
    assert manifest["name"] == "memls"
    assert manifest["publisher"] == "memls"
    assert manifest["repository"]
    assert manifest["license"] == "MIT"
    assert (VSCODE / "LICENSE").is_file()
    assert manifest["engines"]["vscode"] == "^1.90.0"
    assert manifest["dependencies"]["vscode-languageclient"].startswith("^9")
    assert "--no-dependencies" in (PROJECT / "scripts" / "vscode.sh").read_text(encoding="utf-8")
    assert manifest["main"] == "./dist/extension.js"  # the esbuild bundle: no node_modules needed
    events = set(manifest["activationEvents"])
    for glob in ("**/MEMORY.md", "**/checkpoint-*.md", "**/LOG.md", "**/.handoff.md"):
        assert f"workspaceContains:{glob}" in events
    assert "onLanguage:markdown" in events


def test_commands_are_unique_and_in_the_memls_category() -> None:
    commands = _manifest()["contributes"]["commands"]
    ids = [c["command"] for c in commands]
    assert len(ids) == len(set(ids))
    for c in commands:
        assert c["category"] == "memls", c
        assert c["title"].strip(), c


def test_palette_menu_entries_refer_to_contributed_commands() -> None:
    manifest = _manifest()
    ids = set(_command_ids(manifest))
    for entry in manifest["contributes"].get("menus", {}).get("commandPalette", []):
        assert entry["command"] in ids, entry


def test_client_commands_are_contributed() -> None:
    client = _client_commands()
    assert {
        "memls.restartServer",
        "memls.showOutput",
        "memls.recallSearchPick",
        "memls.backfillWithProgress",
        "memls.checkpointSavePrompt",
    } <= client
    assert client <= set(_command_ids(_manifest()))


def test_every_setting_is_read_by_the_client() -> None:
    """Each contributed ``memls.X`` property is read in settings.ts (``get('X')``), and back."""
    properties = _manifest()["contributes"]["configuration"]["properties"]
    contributed = {key.removeprefix("memls.") for key in properties}
    read = set(re.findall(r"get\('([^']+)'\)", SETTINGS_TS.read_text(encoding="utf-8")))
    assert contributed == read
    assert properties["memls.staleDays"]["default"] == 14
    assert properties["memls.interpreter"]["type"] == "array"


def test_every_server_command_is_contributed() -> None:
    server = _server_commands()
    assert server, "SERVER_COMMANDS is empty"
    missing = sorted(set(server) - set(_command_ids(_manifest())))
    assert missing == [], f"server commands missing from package.json: {missing}"


def test_every_contributed_command_exists_on_server_or_client() -> None:
    server = set(_server_commands())
    client = _client_commands()
    assert not server & client, "a client command shadows a server command"
    unknown = sorted(set(_command_ids(_manifest())) - server - client)
    assert unknown == [], f"contributed commands nobody registers: {unknown}"


def test_server_command_ids_used_by_the_client_exist() -> None:
    """A renamed server command must not leave the client calling a dead id."""
    server = set(_server_commands())
    config_keys = set(_manifest()["contributes"]["configuration"]["properties"])
    quoted = set(re.findall(r"'(memls\.[A-Za-z.]+)'", EXTENSION_TS.read_text(encoding="utf-8")))
    called = quoted - _client_commands() - config_keys
    assert called, "expected the client to call server commands by id"
    assert called <= server, f"client calls unknown server commands: {sorted(called - server)}"


def test_vsix_manifest_matches_source() -> None:
    with _vsix() as vsix:
        names = set(vsix.namelist())
        packaged: dict[str, Any] = json.loads(vsix.read("extension/package.json"))
        vsixmanifest = vsix.read("extension.vsixmanifest").decode("utf-8")
    source = _manifest()
    assert packaged["name"] == "memls"
    assert packaged["publisher"] == "memls"
    assert 'Id="memls"' in vsixmanifest
    assert 'Publisher="memls"' in vsixmanifest
    main = "extension/" + packaged["main"].removeprefix("./")
    assert main in names, f"main {main} not in the vsix"
    assert _command_ids(packaged) == _command_ids(source), f"the vsix is stale; {REBUILD}"
    assert packaged["contributes"]["configuration"] == source["contributes"]["configuration"], (
        f"the vsix is stale; {REBUILD}"
    )
    assert "extension/LICENSE.txt" in names or "extension/LICENSE" in names
    assert any(n.lower() == "extension/readme.md" for n in names)


def test_vsix_ships_the_bundle_only() -> None:
    """Sources, tests, tsc output and node_modules stay out; the bundle holds the client."""
    with _vsix() as vsix:
        names = vsix.namelist()
        bundle = vsix.read("extension/dist/extension.js").decode("utf-8")
    for prefix in ("extension/src/", "extension/out/", "extension/node_modules/"):
        assert not [n for n in names if n.startswith(prefix)], prefix
    assert "memls.lsp" in bundle
    assert 'require("vscode")' in bundle  # vscode stays external, everything else is bundled
    assert 'require("vscode-languageclient' not in bundle
