"""The LSP feature table: each row a feature class, its methods (with options) and commands;
one generic loop registers them (lsp/features/setup.py)."""

from __future__ import annotations

import inspect
from pathlib import Path

from lsprotocol import types

from memls.lsp.commands import SERVER_COMMANDS
from memls.lsp.features import LanguageFeature
from memls.lsp.features.setup import FEATURES, Feature, Route, register
from memls.lsp.server import MemlsServer, create_server


def test_every_route_names_a_coroutine_of_its_feature() -> None:
    for row in FEATURES:
        assert issubclass(row.cls, LanguageFeature)
        for route in row.routes:
            handler = getattr(row.cls, route.handler, None)
            assert inspect.iscoroutinefunction(handler), (row.cls.__name__, route.handler)


def test_each_method_is_answered_by_one_feature() -> None:
    methods = [route.method for row in FEATURES for route in row.routes]
    assert len(methods) == len(set(methods))
    assert len({row.cls for row in FEATURES}) == len(FEATURES)


def test_the_server_registers_the_table() -> None:
    server = create_server()
    features = server.protocol.fm.features
    for row in FEATURES:
        for route in row.routes:
            if route.when is None:
                assert route.method in features, route.method
    assert set(SERVER_COMMANDS) <= set(server.protocol.fm.commands)
    assert [type(f) for f in server.features] == [row.cls for row in FEATURES]
    assert server.protocol.fm.feature_options[types.TEXT_DOCUMENT_CODE_LENS] == (
        types.CodeLensOptions(resolve_provider=False)
    )


def test_adding_a_feature_is_one_row() -> None:
    class Signature(LanguageFeature):
        async def signature_help(self, params: types.SignatureHelpParams) -> None:
            return None

    server = MemlsServer()
    register(
        server,
        (
            *FEATURES,
            Feature(Signature, Route(types.TEXT_DOCUMENT_SIGNATURE_HELP, "signature_help")),
        ),
    )
    assert types.TEXT_DOCUMENT_SIGNATURE_HELP in server.protocol.fm.features
    assert isinstance(server.features[-1], Signature)


def test_code_actions_name_no_rule_code() -> None:
    """What a finding offers besides its fix is the rule's data (``Rule.fix_group``,
    ``known_fake``, ``operation``), not a list of codes in the front."""
    import re

    import memls.lsp.features.code_actions as module

    source = inspect.getsource(module)
    assert not re.findall(r"\b(?:BN|CP|HO|IX|LG|MB|MF|SC|SZ)\d{3}\b", source)


def test_a_fix_group_is_offered_as_one_action(tmp_path: Path) -> None:
    """Rules that share ``Rule.fix_group`` (CP010's "Add all missing sections")
    get one action that applies all their fixes of the document together."""
    from memls.core.config import Config
    from memls.core.rules import check_document, registry
    from memls.core.workspace import Workspace
    from memls.lsp.features.code_actions import CodeActions

    path = tmp_path / "checkpoint-x.md"
    path.write_text(
        "# Checkpoint: x\n\n- **Branch:** `main`\n- **Saved:** 2026-11-29 10:00\n\n"
        "## Next Action: Finish x\nEdit `a.py`.\n",
        encoding="utf-8",
    )
    ws = Workspace(tmp_path, Config(select=("CP010",)))
    doc = ws.document(path)
    assert doc is not None
    diags = check_document(ws, doc)
    assert len(diags) == 3
    group = registry()["CP010"].fix_group
    assert group
    server = MemlsServer()
    params = types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=path.as_uri()),
        range=types.Range(types.Position(0, 0), types.Position(0, 0)),
        context=types.CodeActionContext(diagnostics=[]),
    )
    actions = CodeActions(server)._actions(path.as_uri(), ws, doc, diags, params)
    [together] = [a for a in actions if a.title == group]
    assert together.diagnostics is not None
    assert len(together.diagnostics) == 3
    assert together.edit is not None
    assert together.edit.changes is not None
    [edit] = together.edit.changes[path.as_uri()]
    for section in ("Done This Session", "Failed Approaches", "Modified Files"):
        assert f"## {section}" in edit.new_text
