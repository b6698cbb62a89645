"""The rule registry and the engine that runs rule families over a document.

Each family lives in its own module (``checkpoint``, ``index``, ``handoff``, ``log``,
``bundle``, ``memoryfile``, ``size``) and exports ``RULES`` (its :class:`Rule` entries) and
``check(ctx)``, a generator of diagnostics. The engine applies configuration (select,
ignore, severity overrides) and inline suppressions in one place.
"""

from __future__ import annotations

import datetime as _dt
import importlib
import inspect
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from memls.core.config import Config
from memls.core.model import (
    Diagnostic,
    Document,
    Fix,
    Range,
    Severity,
    Suppressions,
    TextEdit,
)
from memls.core.workspace import Workspace

FAMILIES = (
    "checkpoint",
    "index",
    "handoff",
    "log",
    "bundle",
    "memoryfile",
    "memorybank",
    "size",
    "secrets",
)


@dataclass(frozen=True)
class Rule:
    """One rule: its code, name, default severity, and the words a user reads about it.

    ``rationale`` says why the rule has its severity, starting with the severity's label
    (``"warning: …"``); the policy: ``error`` only when memory is broken or will be lost —
    the agent will not load it, cannot read it, or follows a pointer to nothing; format and
    style preferences are ``warning`` or ``info``. ``doc`` is the longer explanation
    ``memls rules CODE`` shows: what the rule checks, why, an example of wrong and right,
    and the fix (written indented in the source; stored dedented).

    What an editor offers on a finding besides its fix (the LSP code actions read these;
    no front names a rule code): ``fix_group`` — the title of one action that applies the
    fixes of every finding of the document whose rule has this group, together ("Add all
    missing sections"); ``known_fake`` — the finding may be a false alarm, so offer marking
    it as a known fake (``memls-disable-next-line CODE`` on the line before);
    ``operation`` — the memls operation that resolves the finding (``"index.migrate"``),
    offered as a command.
    """

    code: str
    name: str  # kebab-case, e.g. "checkpoint-title"
    severity: Severity
    summary: str  # one line for `memls rules` and the README table
    fixable: bool = False
    rationale: str = ""
    doc: str = ""
    fix_group: str = ""
    known_fake: bool = False
    operation: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "doc", inspect.cleandoc(self.doc))


@dataclass
class RuleContext:
    """What a rule family sees: the document, its workspace, config and the clock."""

    doc: Document
    workspace: Workspace
    now: _dt.datetime

    @property
    def config(self) -> Config:
        return self.workspace.config

    def diag(self, code: str, message: str, rng: Range, fix: Fix | None = None) -> Diagnostic:
        rule = registry()[code]
        return Diagnostic(code, rule.severity, message, self.doc.path, rng, fix)

    def fix(self, title: str, *edits: TextEdit) -> Fix:
        return Fix(title, tuple(edits))


CheckFn = Callable[[RuleContext], Iterable[Diagnostic]]
_REGISTRY: dict[str, Rule] | None = None
_CHECKS: list[tuple[tuple[str, ...], CheckFn]] | None = None
"""Each family's codes and check function; a family none of whose codes is enabled is skipped."""


def _families() -> list[ModuleType]:
    return [importlib.import_module(f"memls.core.rules.{name}") for name in FAMILIES]


def registry() -> dict[str, Rule]:
    """Every rule by code, in code order."""
    global _REGISTRY, _CHECKS
    if _REGISTRY is None:
        rules: dict[str, Rule] = {}
        checks: list[tuple[tuple[str, ...], CheckFn]] = []
        for module in _families():
            for rule in module.RULES:
                if rule.code in rules:
                    raise RuntimeError(f"duplicate rule code {rule.code}")
                rules[rule.code] = rule
            checks.append((tuple(rule.code for rule in module.RULES), module.check))
        _REGISTRY = dict(sorted(rules.items()))
        _CHECKS = checks
    return _REGISTRY


def check_document(
    workspace: Workspace,
    doc: Document,
    now: _dt.datetime | None = None,
    config: Config | None = None,
) -> list[Diagnostic]:
    """Run every enabled rule on ``doc``; never raises on document content."""
    registry()
    assert _CHECKS is not None
    cfg = config or workspace.config
    ctx = RuleContext(doc, workspace, now or _dt.datetime.now())
    found: list[Diagnostic] = []
    for codes, check in _CHECKS:
        if (cfg.select or cfg.ignore) and not any(cfg.enabled(code) for code in codes):
            continue
        found.extend(check(ctx))
    return configured(found, cfg, doc.suppressions)


def configured(
    diags: Iterable[Diagnostic], cfg: Config, suppressions: Suppressions
) -> list[Diagnostic]:
    """Findings as the configuration and inline suppressions leave them, sorted: the one
    place select/ignore, ``memls-disable`` and severity overrides apply. A secret (SC) is
    silenced only line by line, never by a file-wide ``memls-disable``."""
    out: list[Diagnostic] = []
    for diag in diags:
        if not cfg.enabled(diag.code):
            continue
        line = diag.range.start.line
        if diag.code.startswith("SC"):
            if suppressions.suppresses_next_line(diag.code, line):
                continue
        elif suppressions.suppresses(diag.code, line):
            continue
        severity = cfg.severity_for(diag.code, diag.severity)
        out.append(diag if severity is diag.severity else _with_severity(diag, severity))
    out.sort(key=lambda d: (d.range.start.line, d.range.start.character, d.code))
    return out


def _with_severity(diag: Diagnostic, severity: Severity) -> Diagnostic:
    return Diagnostic(diag.code, severity, diag.message, diag.path, diag.range, diag.fix)


def check_paths(
    workspace: Workspace, paths: Iterable[Path] | None = None, now: _dt.datetime | None = None
) -> Iterator[tuple[Document, list[Diagnostic]]]:
    """Check the given files of a workspace (default: all of them)."""
    for path in paths if paths is not None else workspace.paths():
        doc = workspace.document(path)
        if doc is not None:
            yield doc, check_document(workspace, doc, now)
