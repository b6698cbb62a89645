"""Memory roots, their two layouts, and a cross-file view that updates one file at a time.

The language server keeps one :class:`Workspace` per root and feeds it edits; the CLI builds
one, checks, and exits. Open editor buffers override disk content through :meth:`Workspace.set_text`.
"""

from __future__ import annotations

import enum
import functools
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from memls.core.config import Config, load_config

# re-exported: the checkpoint file names are the checkpoint format's (formats/checkpoint.py)
from memls.core.formats.checkpoint import CHECKPOINT_RE as CHECKPOINT_RE  # noqa: PLC0414
from memls.core.formats.checkpoint import checkpoint_name as checkpoint_name  # noqa: PLC0414
from memls.core.formats.index import bullets
from memls.core.formats.links import LinkResolver, distinct_links, find_repo_root
from memls.core.fsutil import TEMP_PREFIX, inside
from memls.core.gcpause import no_gc
from memls.core.gitfacade import Git
from memls.core.instructed import (
    EMPTY,
    SELF_HEAD_BYTES,
    Instructed,
    instructed_for,
    is_guide_name,
    is_instructed_root,
    merged,
    named_above,
    names_root,
    read_instructions,
    repository_top,
    self_instructed,
)
from memls.core.model import Document, FileKind
from memls.core.parse import kind_for, parse_bytes, parse_text

# re-exported: finding a root lives in roots.py, so it stays light (no parser, git, links)
from memls.core.roots import ROOT_MARKERS as ROOT_MARKERS  # noqa: PLC0414
from memls.core.roots import claude_memory_dir as claude_memory_dir  # noqa: PLC0414
from memls.core.roots import discover_root as discover_root  # noqa: PLC0414
from memls.core.roots import enclosing_root as enclosing_root  # noqa: PLC0414
from memls.core.roots import is_root as is_root  # noqa: PLC0414
from memls.core.roots import marker_file

if TYPE_CHECKING:
    from memls.core.graph import LinkGraph

T = TypeVar("T")

_VOLATILE = Path("\0volatile")
"""Marks a memo that depends on something other than documents (disk, git)."""
_SKIP_DIRS = {".git", ".memls", "node_modules", ".venv", "__pycache__"}
MAX_FILE_BYTES = 20 * 1024 * 1024


class Layout(enum.Enum):
    FLAT = "flat"
    """Named checkpoints and topic files beside MEMORY.md in one folder."""
    ORCHESTRATOR = "orchestrator"
    """MS4PI style: LOG.md, IDENTITY.md, memory/MEMORY.md + memory/*.md, transcripts/."""
    CLAUDE = "claude"
    """Claude Code memory: MEMORY.md (often headingless) pointing at topic files with
    name/description/type frontmatter, in ~/.claude/projects/<slug>/memory or .claude/memory."""
    WORKSPACE = "workspace"
    """An agent workspace (OpenClaw style): AGENTS.md, SOUL.md, TOOLS.md …, a curated
    MEMORY.md and dated daily logs in memory/YYYY-MM-DD.md."""


@dataclass(frozen=True)
class LayoutChoice:
    """The layout memls picked for a root, and the evidence it picked it on."""

    layout: Layout
    evidence: tuple[str, ...]
    """The signals found for the chosen layout, strongest first."""
    scores: tuple[tuple[str, int], ...]
    """Every layout's score, for `memls check --verbose`."""
    project_folder: bool
    """The root is also a project folder (``.git``, a build file): only files with memory
    names, and topic files the index reaches, are memory files there."""

    def describe(self) -> str:
        why = "; ".join(self.evidence) if self.evidence else "no layout-specific files"
        return f"{self.layout.value} ({why})"


_DATED = re.compile(r"^\d{4}-\d{2}-\d{2}")
WORKSPACE_DOCS = ("AGENTS.md", "SOUL.md", "TOOLS.md", "HEARTBEAT.md", "BOOTSTRAP.md")
PROJECT_MARKERS = (
    ".git",
    "pyproject.toml",
    "setup.py",
    "package.json",
    "Cargo.toml",
    "go.mod",
    "pom.xml",
    "build.gradle",
    "Gemfile",
    "composer.json",
    "Makefile",
)
MEMORY_TYPES = ("user", "feedback", "project", "reference")
_FM_TYPE = re.compile(r"^\s*type\s*:\s*['\"]?(?P<type>[\w-]+)", re.MULTILINE)


SOURCE_FILE = re.compile(
    r"(?i)\.(?:py|pyi|js|jsx|mjs|cjs|ts|tsx|go|rs|java|kt|kts|scala|rb|php|c|cc|cpp|h|hpp|cs|"
    r"swift|m|mm|dart|lua|ex|exs|erl|clj|hs|ml|vue|svelte|sh|bash|ps1|sql|r|jl|zig|nim)$"
)
"""A source file's name (``app.py``, ``run.sh``): code, not a note."""


def is_dated(path: Path) -> bool:
    """A journal entry named by its date (``2026-11-30.md``, ``2026-11-30-standup.md``)."""
    return _DATED.match(path.name) is not None


def is_conventional_doc(path: Path) -> bool:
    """A conventionally named document (README.md, AGENTS.md, SOUL.md …): upper-case stem."""
    stem = path.stem
    return any(c.isalpha() for c in stem) and stem == stem.upper()


def _frontmatter_head(path: Path) -> str | None:
    """The YAML frontmatter block of a file (first 4 KB), or None."""
    try:
        with path.open("rb") as fh:
            head = fh.read(4096).decode("utf-8", "replace")
    except OSError:
        return None
    if not head.startswith("---"):
        return None
    end = head.find("\n---", 3)
    return head[3:end] if end != -1 else None


def typed_memories(folder: Path, limit: int = 40) -> tuple[int, int]:
    """(topic files sampled, of which carry name/description/type frontmatter) in ``folder``."""
    sampled, typed, _ = typed_memories_counted(folder, limit)
    return sampled, typed


def _topic_heads(folder: Path, limit: int) -> tuple[list[str | None], int]:
    """The frontmatter (or None) of the first ``limit`` topic files of ``folder`` by name,
    and how many topic files it holds in all (MEMORY.md, LOG.md, dated logs and hidden
    files are not topic files here)."""
    heads: list[str | None] = []
    total = 0
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return [], 0
    for entry in entries:
        name = entry.name
        if not name.endswith(".md") or name in ("MEMORY.md", "LOG.md") or name.startswith("."):
            continue
        path = Path(entry.path)
        if kind_for(path) is not FileKind.TOPIC or is_dated(path):
            continue
        total += 1
        if len(heads) < limit:
            heads.append(_frontmatter_head(path))
    return heads, total


def typed_memories_counted(folder: Path, limit: int = 40) -> tuple[int, int, int]:
    """(topic files sampled, of which typed, topic files in all) in ``folder``: the first
    ``limit`` topic files (by name) are read, every one is counted."""
    heads, total = _topic_heads(folder, limit)
    typed = sum(
        1 for fm in heads if fm is not None and ("description" in fm or _FM_TYPE.search(fm))
    )
    return len(heads), typed, total


def types_memories(folder: Path, limit: int = 40) -> bool:
    """Whether any of the first ``limit`` topic files of ``folder`` gives a ``type:`` in its
    frontmatter: a root whose files all carry name and description alone (Replit's agent
    memory, a writer of its own) does not use the key at all, so no file lacks it."""
    heads, _ = _topic_heads(folder, limit)
    return any(fm is not None and _FM_TYPE_KEY.search(fm) for fm in heads)


_FM_TYPE_KEY = re.compile(r"^\s*type\s*:", re.MULTILINE)
_FM_KEY = re.compile(r"^\s*(?P<key>name|description|type)\s*:(?P<value>.*)$", re.MULTILINE)
_FM_ANY_KEY = re.compile(r"^[\w-]+\s*:", re.MULTILINE)


def claude_frontmatter(fm: str) -> bool | None:
    """Whether a frontmatter block follows Claude Code's memory schema: ``name`` and
    ``description``, or a ``type`` from its set (user, feedback, project, reference) —
    True; None when it is another schema (``type: adr``, ``tags``/``updated`` only);
    False when it starts Claude Code's schema but lacks or empties a key, or is empty (a
    slip)."""
    keys: dict[str, str] = {}
    for m in _FM_KEY.finditer(fm):
        keys.setdefault(m["key"], m["value"].strip().strip("'\"").strip())
    kind = keys.get("type")
    if kind and kind.casefold() not in MEMORY_TYPES:
        return None if not ("name" in keys and "description" in keys) else True
    if keys.get("name") and keys.get("description"):
        return True
    if kind:
        return True
    if keys or not _FM_ANY_KEY.search(fm):
        return False  # Claude Code's keys begun, or an empty block
    return None


def claude_memories_counted(folder: Path, limit: int = 40) -> tuple[int, int, int, int]:
    """(topic files sampled, of which carry frontmatter, of which in Claude Code's schema
    (:func:`claude_frontmatter`), topic files in all) in ``folder``."""
    heads, total = _topic_heads(folder, limit)
    fronted = [fm for fm in heads if fm is not None]
    claude = sum(1 for fm in fronted if claude_frontmatter(fm))
    return len(heads), len(fronted), claude, total


def _typed_words(typed: int, sampled: int, total: int, what: str) -> str:
    """'3 of 5 topic files', or '39 of the first 40 of 54 topic files' when not all were read."""
    if sampled >= total:
        return f"{typed} of {total} {what}"
    return f"{typed} of the first {sampled} of {total} {what}"


DOC_FOLDERS = frozenset({"docs", "doc", "documentation", "wiki", "checkpoints"})
"""Folders of a repository that hold memory among other documents (docs/MEMORY.md,
docs/checkpoints/): there, as in a project folder, only memory files by name and files the
index links are memory files."""


def _is_project_folder(root: Path) -> bool:
    if any(os.path.lexists(root / m) for m in PROJECT_MARKERS) or (root / "src").is_dir():
        return True
    return root.name.lower() in DOC_FOLDERS and find_repo_root(root) is not None


def layout_choice(root: Path) -> LayoutChoice:
    """Pick the layout by weighing several signals, never by one file name alone."""
    found: dict[Layout, list[tuple[int, str]]] = {layout: [] for layout in Layout}

    def add(layout: Layout, weight: int, why: str) -> None:
        found[layout].append((weight, why))

    def isfile(rel: str) -> bool:
        if rel in ROOT_MARKERS:
            return marker_file(root, rel) is not None  # MEMORY.MD too
        return (root / rel).is_file()

    memory = root / "memory"
    has_memory_dir = memory.is_dir()
    # Claude Code memory
    if is_claude_memory_dir(root):
        add(Layout.CLAUDE, 3, "the folder is Claude Code's ~/.claude/projects/<slug>/memory")
    elif root.name in ("memory", "memories") and root.parent.name == ".claude":
        add(Layout.CLAUDE, 3, f"the folder is a project's .claude/{root.name}")
    sampled, _, claude, total = claude_memories_counted(root)
    if claude and isfile("MEMORY.md"):
        words = _typed_words(claude, sampled, total, "topic files")
        add(Layout.CLAUDE, 2, f"{words} carry Claude Code's name/description/type frontmatter")
    # Orchestrator (MS4PI)
    if has_memory_dir:
        if isfile("LOG.md"):
            add(Layout.ORCHESTRATOR, 2, "LOG.md")
        if isfile("memory/MEMORY.md"):
            add(Layout.ORCHESTRATOR, 2, "memory/MEMORY.md")
        if (root / "transcripts").is_dir():
            add(Layout.ORCHESTRATOR, 1, "transcripts/")
        m_sampled, m_typed, m_total = typed_memories_counted(memory)
        if m_typed:
            words = _typed_words(m_typed, m_sampled, m_total, "memory/*.md")
            add(Layout.ORCHESTRATOR, 1, f"{words} carry frontmatter")
        dated = _dated_count(memory)
        if dated:
            add(Layout.WORKSPACE, 2, f"{dated} dated daily logs in memory/")
    identity = [n for n in ("IDENTITY.md", "USER.md") if isfile(n)]
    if identity and has_memory_dir:
        add(Layout.ORCHESTRATOR, 1, " and ".join(identity))
        add(Layout.WORKSPACE, 1, " and ".join(identity))
    docs = [n for n in WORKSPACE_DOCS if isfile(n)]
    if docs:
        add(Layout.WORKSPACE, min(3, len(docs)), ", ".join(docs))
    # Flat (named checkpoints)
    try:
        checkpoints = sum(1 for _ in root.glob("checkpoint-*.md"))
    except OSError:
        checkpoints = 0
    if checkpoints:
        add(Layout.FLAT, 2, f"{checkpoints} checkpoint-*.md")
    if isfile("MEMORY.md"):
        add(Layout.FLAT, 1, "MEMORY.md in the folder itself")

    scores = {layout: sum(w for w, _ in signals) for layout, signals in found.items()}
    minimum = {Layout.ORCHESTRATOR: 3, Layout.WORKSPACE: 3, Layout.CLAUDE: 2, Layout.FLAT: 0}
    order = (Layout.ORCHESTRATOR, Layout.CLAUDE, Layout.WORKSPACE, Layout.FLAT)
    eligible = [lay for lay in order if scores[lay] >= minimum[lay] and scores[lay] > 0]
    if Layout.ORCHESTRATOR in eligible and not (
        isfile("LOG.md")
        or (isfile("memory/MEMORY.md") and (identity or (root / "transcripts").is_dir()))
    ):
        # IDENTITY.md beside memory/ is not enough, nor is a Claude memory folder copied
        # to memory/ at a repository's (or a ~/.claude copy's) top level.
        eligible.remove(Layout.ORCHESTRATOR)
    chosen = max(eligible, key=lambda lay: scores[lay]) if eligible else Layout.FLAT
    evidence = tuple(why for _, why in sorted(found[chosen], key=lambda p: -p[0]))
    return LayoutChoice(
        chosen,
        evidence,
        tuple((lay.value, scores[lay]) for lay in order),
        _is_project_folder(root),
    )


def _dated_count(folder: Path) -> int:
    try:
        return sum(1 for e in os.scandir(folder) if e.name.endswith(".md") and _DATED.match(e.name))
    except OSError:
        return 0


def detect_layout(root: Path) -> Layout:
    return layout_choice(root).layout


def index_path(root: Path, layout: Layout | None = None) -> Path:
    """Where the root's index is: ``MEMORY.md`` (or ``MEMORY.MD``, the name it has on disk),
    or ``memory/MEMORY.md`` for an orchestrator's root; where it would be when none yet."""
    layout = layout or detect_layout(root)
    own = marker_file(root, "MEMORY.md")
    if own is None and (layout is Layout.ORCHESTRATOR or (root / "memory" / "MEMORY.md").is_file()):
        return root / "memory" / "MEMORY.md"  # the index is where it is
    return own or root / "MEMORY.md"


class RootKind(enum.Enum):
    """What kind of memory a root holds: memls's own layouts, or another tool's format."""

    MEMORY = "memory"
    """MEMORY.md, LOG.md, checkpoint-*.md, a Claude Code or orchestrator or workspace root."""
    MEMORY_BANK = "memory-bank"
    """A Cline / Cursor memory bank: projectbrief.md, activeContext.md, progress.md …"""
    SERENA = "serena"
    """Serena's ``.serena/memories/``: notes the agent reads by name on demand."""
    CODEX = "codex"
    """Codex's ``~/.codex/memories/``: memory_summary.md, MEMORY.md, rollout_summaries/."""
    MEMORY_TOOL = "memory-tool"
    """A ``memories/`` folder kept for Anthropic's memory tool: files the model writes."""
    HERMES = "hermes"
    """Hermes Agent's ``memories/``: MEMORY.md and USER.md, entries separated by ``§``."""
    HANDOFF = "handoff"
    """A folder whose only memory is a handoff (HANDOFF.md, docs/HANDOFF.md, .handoff.md)."""
    NOTES = "notes"
    """A folder (or files in it) the repository's agent instructions — AGENTS.md,
    CLAUDE.md … — tell the agent to read or update, in no format memls knows."""
    JSON = "json"
    """A memory folder kept as JSON by a memory server or an agent (``.agentMemory/data.json``,
    ``memory/*.json``), or an agent's checkpoints kept as JSON or YAML
    (``.claude/checkpoints/*.yaml``): no Markdown to judge; its files are searched for
    secrets."""


MEMORY_BANK_FILES = (
    "projectbrief.md",
    "productContext.md",
    "activeContext.md",
    "systemPatterns.md",
    "techContext.md",
    "progress.md",
)
"""The six core files of a Cline / Cursor memory bank (tasks.md and journal/ are optional)."""


def bank_name(name: str) -> str:
    """A memory bank file's name as the bank's rules compare it: lower case, without ``-``
    and ``_`` (``active_context.md`` and ``active-context.md`` are ``activeContext.md``)."""
    return name.lower().replace("_", "").replace("-", "")


_MEMORY_BANK_LOWER = {bank_name(n) for n in MEMORY_BANK_FILES}
KILO_BANK_FILES = ("brief.md", "product.md", "context.md", "architecture.md", "tech.md")
"""Kilo Code's memory bank (``.kilocode/rules/memory-bank/``): its five core files."""
MEMORY_BANK_DIRS = ("memory-bank", "memory_bank", "memorybank", ".memory-bank", "cline_docs")
_AGENT_NAMES = r"(?:claude|codex|devin|gemini|copilot|cursor|jules|aider|cline|windsurf|agent)"
"""Agents a handoff is written to or by (``claude-handoff-auth.md``, ``X_HANDOFF_DEVIN.md``)."""
_HANDOFF_NAME = re.compile(
    r"^(?:\.?(?:hand-?off|handover|pass-?off)(?:[-_. ][^/]*)?"
    r"|[\w. -]*[-_ ](?:hand-?off|handover|pass-?off)(?:[-_. ][A-Za-z]{0,2}\d[\w.-]*)?"
    r"|(?:19|20)\d{2}-?\d{2}-?\d{2}[-_ ](?:[\w.-]*[-_ ])?(?:hand-?off|handover)[-_ ][A-Za-z][\w-]*"
    r"|(?:[\w.-]*[-_ ])?" + _AGENT_NAMES + r"[-_ ](?:hand-?off|handover)(?:[-_. ][^/]*)?"
    r"|[\w.-]*[-_ ](?:hand-?off|handover)[-_ ](?:to[-_ ])?" + _AGENT_NAMES + r"(?:[-_. ][^/]*)?"
    r"|next[-_ ]?session(?:[-_. ][^/]*)?"
    # `CONTEXT_FOR_NEXT_AGENT.md`, `notes-for-the-next-session.md`: addressed to the next one
    r"|(?:[\w.-]*[-_ ])?for[-_ ](?:the[-_ ])?next[-_ ](?:agent|session|ai|assistant|chat|claude|llm)"
    r"(?:[-_. ][^/]*)?"
    r"|(?-i:SNAPSHOT)(?:-[^/]*)?|(?-i:PICKUP)|(?:session|context)[-_ ]?snapshot(?:[-_.][^/]*)?"
    # `CONTINUE.md`, `continue-here.md`, `CONTINUATION_PROMPT.md`: where the next one resumes
    r"|(?-i:CONTINUE)(?:[-_][^/]*)?|continue[-_ ]here|continuation(?:[-_ ]prompt)?)\.md$",
    re.IGNORECASE,
)
_FOREIGN = (
    "BN", "CP", "HO", "LG", "IX00", "IX010", "IX011", "IX013", "MF001", "MF002", "SZ002", "SZ003",
    "SZ004",
)  # fmt: skip
_NOT_FOR_KIND: dict[RootKind, tuple[str, ...]] = {
    RootKind.MEMORY: (),  # MB rules look for a memory bank themselves
    RootKind.MEMORY_BANK: _FOREIGN,
    RootKind.SERENA: ("MB", *_FOREIGN),
    RootKind.MEMORY_TOOL: ("MB", *_FOREIGN),
    RootKind.HERMES: ("MB", *_FOREIGN),
    RootKind.CODEX: (
        "MB", "BN", "CP", "HO", "LG", "IX001", "IX002", "IX003", "IX004", "IX005", "IX006",
        "IX007", "IX008", "IX010", "IX011", "MF001", "MF002", "SZ002", "SZ003", "SZ004",
    ),
    RootKind.HANDOFF: ("MB", "BN", "CP", "LG", "IX", "MF", "SZ002", "SZ003", "SZ004"),
    RootKind.NOTES: ("MB", "HO", *_FOREIGN),
    RootKind.JSON: ("MB", "BN", "CP", "HO", "LG", "IX", "MF", "SZ"),
}  # fmt: skip
"""Rule codes (prefixes) that do not apply to a kind of root: another tool's files are not
in memls's format, and the snapshot limits are for roots memls snapshots."""
KIND_RULES: dict[RootKind, str] = {
    RootKind.MEMORY: "every rule",
    RootKind.MEMORY_BANK: "MB (core files, staleness), IX012 (links), SC (secrets), SZ001",
    RootKind.SERENA: "IX012 (links), MF003 (duplicates), SC (secrets), SZ001 (encoding)",
    RootKind.MEMORY_TOOL: "IX012 (links), MF003 (duplicates), SC (secrets), SZ001 (encoding)",
    RootKind.HERMES: "IX012 (links), MF003 (duplicates), SC (secrets), SZ001 (encoding)",
    RootKind.CODEX: "IX009/IX013 (pointers), IX012 (links), MF003, SC (secrets), SZ001, SZ005",
    RootKind.HANDOFF: "HO (handoff), SC (secrets), SZ001 (encoding), SZ005",
    RootKind.NOTES: "IX012 (links), MF003 (duplicates), SC (secrets), SZ001 (encoding)",
    RootKind.JSON: "SC (secrets)",
}
"""What each kind of root is judged by, in words (for `memls check --verbose` and JSON)."""


_ABOUT_HANDOFFS = re.compile(
    r"[-_. ](?:protocol|template|guide|guidelines|instructions|howto|how-to|types|format|"
    r"spec|schema|readme|rules|process|policy)$",
    re.IGNORECASE,
)
"""A name's ending that makes a handoff-named file a document about handoffs."""


def is_handoff_name(name: str) -> bool:
    """``.handoff.md``, ``HANDOFF.md``, ``handoff.md``, ``HANDOFF-2026-11.md``,
    ``session-handoff-S54.md``, a dated one to a person (``2026-03-02-handover-maria.md``)
    (any case); a note to resume from (``CONTINUE.md``, ``continue-here.md``,
    ``CONTINUATION_PROMPT.md``); a session snapshot handed to the next session
    (``SNAPSHOT.md``, ``SNAPSHOT-2026-03-18-auth.md`` in capitals, ``session-snapshot.md``;
    not a ``PRODUCTION_SNAPSHOT_….md`` of a release);
    a checkpoint (``checkpoint-x-handoff.md``),
    a template (``handoff-template.md``), a protocol or a guide (``HANDOFF-PROTOCOL.md``,
    ``handoff_guide.md``) is not a handoff."""
    if _HANDOFF_NAME.match(name) is None or "template" in name.lower():
        return False
    if name.lower().startswith("checkpoint-"):
        return False  # `checkpoint-auth-handoff.md` is a checkpoint, never also a handoff
    return _ABOUT_HANDOFFS.search(name[: -len(".md")]) is None


_HANDOFF_STATE = re.compile(
    r"(?<!\d)(?:19|20)\d{2}-\d{2}-\d{2}(?!\d)|(?<!\d)(?:19|20)\d{2}/\d{1,2}/\d{1,2}(?!\d)"
    r"|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.? \d{1,2},? \d{4}\b"
    r"|\b\d{1,2} (?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]* \d{4}\b"
    r"|\b\d{1,2} de (?:enero|febrero|marzo|abril|mayo|junio|julio|agosto|sept?iembre|octubre"
    r"|noviembre|diciembre|janeiro|fevereiro|mar[çc]o|maio|junho|julho|setembro|outubro"
    r"|novembro|dezembro) (?:de )?\d{4}\b"
    r"|\b(?:branch|branches|commit|commits|committed|sha)\b|\b(?-i:HEAD)\b"
    r"|^\s{0,3}#{1,6}\s*(?:\d+[.)]?\s*)?[^\w\n]*(?:current[- ]state|current[- ]status|status"
    r"|state|where (?:we|things) (?:are|stand)|next[- ]steps?|next[- ]actions?|next up|todo"
    r"|open work|in progress|progress|done|completed|left off|resume|remaining|tl;?dr|summary"
    r"|context|key files|decisions?|objective|mission|plan|open questions|blockers?"
    r"|known issues|risks?|contexto|estado(?: actual| atual)?|pr[óo]ximos? pas[s]?os"
    r"|siguientes pasos|pendientes?|pendentes?|decisiones|decis[õo]es)\b"
    r"|`[^`\n]*[\w-]/[\w.-]+`|`[\w-]+\.(?:py|ts|tsx|js|go|rs|rb|java|sh|toml|ya?ml|json)`",
    re.IGNORECASE | re.MULTILINE,
)


def handoff_has_state(text: str) -> bool:
    """Whether a handoff-named text carries state for the next agent: a date, a branch or a
    commit, a section of state (Current State, Next Steps, TL;DR, Context, Key Files,
    Decisions, Plan …), or a file it names in a code span. A file with none of them (a
    note on how to hand off) is no handoff, nor is one titled as another kind of document
    (a retro, an RFC, a runbook: :func:`_titled_otherwise`), nor one that says it holds nothing
    now (``## Status: none`` and only headings and ``<!-- … -->`` comments: a handoff slot
    cleared after the last resume)."""
    if _idle_handoff(text) or _titled_otherwise(text):
        return False
    return _HANDOFF_STATE.search(text) is not None


_OTHER_DOCUMENT = re.compile(
    r"(?i)\b(?:retro|retrospective|post-?mortem|proposal|rfc|adr|design doc(?:ument)?|"
    r"spec(?:ification)?|runbook|playbook|template|(?:hand-?off|handover)\s+guide|"
    r"data\s+model|api\s+reference|reference\s+guide|glossary|(?:architecture|system)\s+overview)\b"
)
_OTHER_DOCUMENT_LAST = re.compile(
    r"(?i)\b(?:evidence|classification|audit|checklist|requirements)\W*$"
)
"""A kind of document named last in a title ("Handoff Removal Acceptance Evidence"); first
or in the middle it is the subject ("Handoff: GH-Pages Audit Campaign Dispatch")."""
_TITLE = re.compile(r"^\s{0,3}#\s+(.+)$", re.MULTILINE)


def _titled_otherwise(text: str) -> bool:
    """A handoff-named file whose title says it is another kind of document: "Handoff
    payload authoring — a retro", "Handoff RFC", "Handoff runbook", "Agent Handoff
    Template", "Deployment Handover Guide" (not "the persistent guide"), "HANDOFF_TECHNICAL:
    the data model" (a reference document filed by a handoff's name): not a handoff."""
    title = _TITLE.search(text[:4096])
    if title is None:
        return False
    words = title.group(1)
    if _OTHER_DOCUMENT.search(words) is not None:
        return True
    return not re.match(r"(?i)\W*hand-?(?:off|over)\b\W*:", words) and bool(
        _OTHER_DOCUMENT_LAST.search(words)
    )


_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_IDLE_STATUS = re.compile(
    r"(?im)^\s{0,3}(?:#{1,6}\s*|[-*]\s+)?\**status\**\s*:\s*\**\s*"
    r"(?:none|idle|empty|cleared|n/?a|nothing(?: pending)?|no (?:active )?handoff)\b"
)


def _idle_handoff(text: str) -> bool:
    """A handoff slot with nothing in it: a status of none (idle, empty, cleared) and, the
    comments aside, nothing but headings."""
    bare = _HTML_COMMENT.sub("", text)
    if _IDLE_STATUS.search(bare) is None:
        return False
    body = [ln for ln in bare.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    return all(_IDLE_STATUS.match(ln) for ln in body)


def _handoff_file_has_state(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            head = fh.read(65536).decode("utf-8", "replace")
    except OSError:
        return True  # unreadable: judged (and reported) as the handoff its name says
    return handoff_has_state(head)


def is_hermes_memory(folder: Path) -> bool:
    """Hermes Agent's memory folder: ``memories/MEMORY.md`` (or USER.md) whose entries are
    separated by lines holding only ``§``, or both files in a Hermes home (beside its
    ``SOUL.md`` or ``config.yaml``) — or a folder of another name whose MEMORY.md has at
    least three such separators."""
    by_name = folder.name == "memories"
    if (
        by_name
        and (folder / "MEMORY.md").is_file()
        and (folder / "USER.md").is_file()
        and any((folder.parent / home).is_file() for home in ("SOUL.md", "config.yaml"))
    ):
        return True  # a Hermes home's store (beside SOUL.md / config.yaml), § lines or not
    for name in ("MEMORY.md", "USER.md"):
        try:
            with (folder / name).open("rb") as fh:
                head = fh.read(65536).decode("utf-8", "replace")
        except OSError:
            continue
        marks = sum(1 for line in head.splitlines() if line.strip() == "§")
        if marks >= (1 if by_name else 3):  # elsewhere: three entries' worth of evidence
            return True
    return False


_POINTER_LINE = re.compile(
    r"^\s*(?:[-*+]|\d+[.)])\s+.*(?:\]\([^)\s]+\)|\[\[[^\]]+\]\]|`[^`]+\.md`)", re.IGNORECASE
)


_ADDRESSED_TO_AGENTS = re.compile(
    r"(?i)\bfor (?:ai |coding |future )?agents?\b|\bagents? (?:starting|reading|must|should)\b"
    r"|\b(?:start|beginning) of (?:a|each|every|the next) session\b|\bstarting a session\b"
    r"|\bcurrent[- ]state\b|\bcurrent branch\b|\bnext session\b"
    r"|\b(?:future|later|next) (?:\w+ )?(?:agent |AI |coding )?sessions\b"
    r"|\b(?:Claude|Codex|Gemini|Cursor|Copilot|AI|agent) sessions\b"
)
"""Words a memory file says to the agent that reads it, and a document about memory does not."""


def reads_like_index(path: Path) -> bool:
    """A MEMORY.md that is a memory index, not a document about memory (a design note in
    ``docs/``): it has an ``## Active Checkpoints`` section, or at least a third of its
    text lines are list items that point at a file (a link, a wikilink, a backticked .md)."""
    try:
        with path.open("rb") as fh:
            text = fh.read(131072).decode("utf-8", "replace")
    except OSError:
        return False
    if re.search(r"^#+\s*Active Checkpoints\s*$", text, re.MULTILINE):
        return True
    if _ADDRESSED_TO_AGENTS.search(text[:2000]):
        return True  # "Distilled memory for agents starting a session": memory itself
    lines = [
        line
        for line in text.splitlines()
        if line.strip() and not line.lstrip().startswith(("#", "---", ">", "|", "```"))
    ]
    if not lines:
        return False
    pointers = sum(1 for line in lines if _POINTER_LINE.match(line))
    return pointers * 3 >= len(lines)


def is_markdown_name(name: str) -> bool:
    """A Markdown file name: ``.md`` in any case (``NOTES.MD`` too)."""
    return name.lower().endswith(".md")


def root_kind(root: Path) -> RootKind:
    """The kind of memory ``root`` holds, from its name, its parent's and the files in it."""
    name = root.name
    parent = root.parent.name
    if (name == "memories" and parent == ".codex") or (root / "memory_summary.md").is_file():
        return RootKind.CODEX
    if name == "memories" and parent == ".serena":
        return RootKind.SERENA
    if is_hermes_memory(root):
        return RootKind.HERMES
    if is_memory_bank(root):
        return RootKind.MEMORY_BANK
    if is_notes_folder(root):
        return RootKind.NOTES
    if is_root(root) or _journal_log_in(root):
        return RootKind.MEMORY
    handoffs = _handoff_files(root)
    if (
        (root / "memory" / "MEMORY.md").is_file()
        and name != ".claude"
        and (not handoffs or (root / "memory" / "LOG.md").is_file() or (root / "LOG.md").is_file())
    ):
        # an orchestrator's root (a docs/ with a handoff: its memory/ is a root of its own;
        # Claude Code's `.claude/` is its settings folder: its memory/ is the root)
        return RootKind.MEMORY
    if name == "memories" and parent != ".claude":
        return RootKind.MEMORY_TOOL
    if handoffs:
        return RootKind.HANDOFF
    if name.startswith(".") and _has_memory_note(root):
        return RootKind.MEMORY  # a tool's hidden memory folder (`.wolf/memory.md`)
    if (
        is_instructed_root(root)
        or journal_notes(root)
        or tool_memory_notes(root)
        or is_agent_notes_folder(root)
    ):
        return RootKind.NOTES
    if is_json_memory(root):
        return RootKind.JSON
    return RootKind.MEMORY


JSON_MEMORY_FOLDERS = frozenset(
    {
        "memory", "memories", ".memory", ".memories", ".agentmemory", "agentmemory",
        "agent-memory", "agent_memory", ".beads",
    }
)  # fmt: skip
"""Folder names (lower-cased) that hold memory kept as JSON when they hold no Markdown."""
JSON_FILES_MAX = 64
_CODE_OR_DATA = re.compile(
    r"(?i)^(?:src|lib|scripts?|tests?|spec|packages|node_modules|vendor|dist|build)$"
    r"|corpus|fixture|sample|example|golden|mock|seed|testdata"
)


_DATA_SUFFIXES = (".json", ".jsonl", ".yaml", ".yml")
_MEMORY_DATA_NAME = re.compile(
    r"(?i)^(?:[\w.]+[-_])?memor(?:y|ies)(?:[-_][\w.-]+)?\.(?:jsonl?|ya?ml)$"
)
"""A memory store's file by its name (``memory.jsonl``, ``memory-project.jsonl``,
``.claude/memory.yaml``): in a hidden folder, a tool's memory kept as JSON or YAML (the MCP
knowledge graph's ``.aim/``)."""


def is_json_memory(folder: Path) -> bool:
    """A memory-named folder (``.agentMemory/``, ``memory/``, Beads' ``.beads/``) of JSON
    (or JSON Lines) files and no Markdown but a README: a memory server's store or an
    agent's records, kept as JSON; an agent folder's
    ``checkpoints/`` of JSON or YAML files (``.claude/checkpoints/03.7.yaml``), and any
    ``checkpoints/`` of YAML files only."""
    low = folder.name.lower()
    if low == "checkpoints":
        try:
            names = [e.name.lower() for e in os.scandir(folder) if e.is_file()]
        except OSError:
            return False
        if _in_agent_folder(folder, 1):
            return any(n.endswith(_DATA_SUFFIXES) for n in names) and not any(
                is_markdown_name(n) for n in names
            )
        # elsewhere, a folder of YAML checkpoints only (`05.1.yaml` …): a model's or a game's
        # checkpoints are weights, JSON configs or saves, not a series of YAML files
        yaml = [n for n in names if n.endswith((".yaml", ".yml"))]
        return len(yaml) >= 2 and len(yaml) == len([n for n in names if n != "readme.md"])
    if low.startswith(".") and low not in _NOT_NOTES_FOLDERS:
        try:
            if any(_MEMORY_DATA_NAME.match(e.name) and e.is_file() for e in os.scandir(folder)):
                return True  # `.aim/memory.jsonl`, `.lovable/memory.json`: a tool's memory store
        except OSError:
            return False
    if low not in JSON_MEMORY_FOLDERS:
        return False
    top = repository_top(folder) or folder.parent
    try:
        above = folder.relative_to(top).parts[:-1]
    except ValueError:
        above = ()
    if any(_CODE_OR_DATA.search(part) for part in above):
        return False  # `scripts/golden-corpus/memory/`: a test's data, not the agent's memory
    try:
        names = [e.name.lower() for e in os.scandir(folder) if e.is_file(follow_symlinks=False)]
    except OSError:
        return False
    data = any(n.endswith((".json", ".jsonl")) for n in names)
    return data and not any(is_markdown_name(n) and n != "readme.md" for n in names)


def json_memory_files(folder: Path) -> list[Path]:
    """The JSON (and YAML) files of a JSON memory folder (its top level, at most
    ``JSON_FILES_MAX``)."""
    try:
        found = [
            Path(e.path)
            for e in os.scandir(folder)
            if e.name.lower().endswith(_DATA_SUFFIXES) and e.is_file(follow_symlinks=False)
        ]
    except OSError:
        return []
    return sorted(found)[:JSON_FILES_MAX]


NOTES_FOLDERS = frozenset(
    {
        "sessions", "session-logs", "session_logs",
        "session-summaries", "devlog", "devlogs", "dev-log", "dev_log", "dev-logs", "dev_logs",
        "worklog", "worklogs", "work-log", "work_log", "work-logs", "work_logs", "session-log",
        "session_log", "checkpoints", "handoff", "handoffs",
        "chat", "chats", "chat-log", "chat_log", "chat-logs", "chat_logs", "conversations",
    }
)  # fmt: skip
"""Folders whose name says they keep an agent's notes session by session (and a
``checkpoints/`` of another tool's format): memory when most of their Markdown is dated or
numbered by its name (``2026-01-24-stats.md``, ``session-42.md``, ``2026-04-21-cp03.md``)."""
JOURNAL_FOLDERS = frozenset(
    {
        "diary", "diaries", "journal", "journals", "daily", "dailies", "daily-notes", "daily_notes",
        "reflections", "summaries", "daily-summaries", "daily_summaries", "observations",
    }
)  # fmt: skip
"""Folders that are memory by their name alone once they hold one dated Markdown file."""
_DAILY = frozenset({"daily", "dailies"})
NAMED_NOTES_FOLDERS = frozenset(
    {
        "agent-notes", "agent_notes", "ai-notes", "ai_notes", "ai-docs", "ai_docs", "ai-context",
        "session-notes", "session_notes",
    }
)  # fmt: skip
"""Folders an agent's notes are kept in by their name alone (any Markdown in them)."""
_NUMBERED = re.compile(r"\d")


def _bank_of_its_own_names(folder: Path) -> bool:
    """A ``memory-bank/`` none of whose files has a core file's name (``contextoativo.md``,
    ``progresso.md``: a bank kept in another language): its notes, read as they are."""
    if is_memory_bank(folder):
        return False
    return len(_own_notes(folder)) >= 2


def _own_notes(folder: Path) -> list[str]:
    """The Markdown files of a folder itself, its README aside (none when unreadable)."""
    try:
        return [
            e.name
            for e in os.scandir(folder)
            if e.is_file() and is_markdown_name(e.name) and e.name.lower() != "readme.md"
        ]
    except OSError:
        return []


def _nested_bank(folder: Path) -> bool:
    """A ``memory-bank/`` reorganised into subfolders (``current/``, ``history/`` …) with
    none of its core files at the top: its notes, read as they are (MB's checks of the
    core files are for a bank in Cline's layout)."""
    if is_memory_bank(folder):
        return False
    try:
        subs = [e.path for e in os.scandir(folder) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return False
    for sub in subs:
        for place, _dirs, files in os.walk(sub):
            if any(is_markdown_name(f) for f in files):
                return True
            if place.count(os.sep) - folder.as_posix().count("/") >= 2:
                break
    return False


_LOG_WORDS = frozenset({"log", "logs", "worklog", "worklogs", "devlog", "devlogs"})


def _folder_word(name: str) -> str:
    """``checkpoints-pre-phase3`` → ``checkpoints``; ``session_logs`` stays whole; a
    role's log (``manager-log``, ``agent_logs``) → ``worklogs``; ``research-diary`` and
    ``devJournal`` → ``diary``, ``journal``."""
    words = [w.lower() for w in re.split(r"[-_.]|(?<=[a-z])(?=[A-Z])", name.lstrip(".")) if w]
    name = name.lower().lstrip(".")
    if name in NOTES_FOLDERS or name in JOURNAL_FOLDERS:
        return name
    words = words or [name]
    head = words[0]
    if head in NOTES_FOLDERS or (head in JOURNAL_FOLDERS and head not in _DAILY):
        return head  # (`daily-health/`, `daily_reports/` are a job's output, not daily notes)
    if len(words) > 1 and words[-1] in JOURNAL_FOLDERS and words[-1] not in _DAILY:
        return words[-1]  # `research-diary/`, `dev_journal/`: a diary by its last word
    if len(words) > 1 and words[-1] in ("handoff", "handoffs", "conversations"):
        return words[-1]  # `dev_handoffs/`, `claude_conversations/`: by the last word
    return "worklogs" if len(words) > 1 and words[-1] in _LOG_WORDS else name


_REPORT_FOLDERS = frozenset(
    {"report", "reports", "log", "logs", "journal", "journals", "sessions", "notes"}
)


def filed_by_date(folder: Path) -> bool:
    """An agent's reports (logs, notes) filed by year, month and day below its folder
    (``ctx/agent/report/2025/11/02/13-18-iteration-report.md``): a journal of notes, read
    three levels down. Only below a folder of an agent's (``agent/``, ``.claude/``, ``ai/``)."""
    if folder.name.lower() not in _REPORT_FOLDERS:
        return False
    above = [folder.parent.name, folder.parent.parent.name]
    if not any(re.split(r"[-_.]", a.lower().lstrip("."))[0] in _HIDDEN_AGENT_WORDS for a in above):
        return False
    try:
        years = [
            e for e in os.scandir(folder) if e.is_dir() and re.fullmatch(r"(?:19|20)\d\d", e.name)
        ]
        for year in years[:3]:
            for month in os.scandir(year.path):
                if not (month.is_dir() and re.fullmatch(r"0[1-9]|1[0-2]", month.name)):
                    continue
                for day in os.scandir(month.path):
                    if (
                        day.is_dir()
                        and re.fullmatch(r"0[1-9]|[12]\d|3[01]", day.name)
                        and any(is_markdown_name(n) for n in os.listdir(day.path))
                    ):
                        return True
    except OSError:
        return False
    return False


def memory_subfolder(folder: Path) -> bool:
    """A subfolder of a memory folder, up to two levels down (``memory/projects/``,
    ``memory/evolution/goals/``, ``.ai_memory/<project>/``), that holds Markdown notes of
    its own (a README alone is none) and no index or checkpoints of its own (those make it
    a memory root): the agent's memory, filed by topic — kind ``notes``, judged by the
    generic rules. Not a folder of commands, skills, templates or the like."""
    name = folder.name
    if name.startswith(".") or _not_memory_tree(name) or name.lower() in NOT_MEMORY_FOLDERS:
        return False
    parents = [folder.parent, folder.parent.parent]
    if not any(_memory_folder_name(p.name) for p in parents):
        return False
    if any(_not_memory_tree(p.name) for p in parents[:1]) or is_root(folder):
        return False
    return bool(_own_notes(folder))


def is_notes_folder(folder: Path) -> bool:
    """A folder of session notes, a diary or a journal by its name and its files' names
    (see ``NOTES_FOLDERS``, ``JOURNAL_FOLDERS``): kind ``notes``, judged by the generic
    rules only. A ``checkpoints/`` (or ``handoff/``) folder counts when memls's own
    checkpoint (handoff) names are not the most of its files — then memls's rules judge it."""
    name = _folder_word(folder.name)
    if folder.name.lower() in MEMORY_BANK_DIRS:
        return _nested_bank(folder) or _bank_of_its_own_names(folder)
    if (
        name not in NOTES_FOLDERS
        and name not in JOURNAL_FOLDERS
        and name not in NAMED_NOTES_FOLDERS
    ):
        return (
            _session_named(folder)
            or _dated_in_agent_folder(folder)
            or _numbered_session_logs(folder)
            or memory_subfolder(folder)
            or filed_by_date(folder)
            or _day_folders_in_agent_folder(folder)
            or _specstory_history(folder)
        )
    try:
        every = [e.name for e in os.scandir(folder) if e.is_file() and is_markdown_name(e.name)]
    except OSError:
        return False
    if name in NAMED_NOTES_FOLDERS:
        return bool(every)  # `agent-notes/README.md`: the agent's notes by the folder's name
    md = [n for n in every if n.lower() != "readme.md"]  # a README on what it is for: no note
    if name not in ("checkpoints", "handoff", "handoffs"):
        md += _history_notes(folder)  # `dev-log/current.md` and its `history/2026-11-02.md`
    by_day = False
    if not md:
        md = _dated_subfolder_notes(folder)  # `handoff/2026-07-17/2058-suni.md`, a worklog's days
        by_day = bool(md)
    if name in JOURNAL_FOLDERS or (name == "sessions" and folder.parent.name == ".claude"):
        # Claude Code's session summaries too; undated reflections filed in a memory folder;
        # a journal kept month by month (`journal/2026-03.md`)
        return (
            any(_has_name_date(n) for n in md)
            or (name in JOURNAL_FOLDERS and any(_MONTH_NAME.match(n) for n in md))
            or memory_subfolder(folder)
        )
    if name == "checkpoints" and sum(1 for n in md if CHECKPOINT_RE.match(n)) * 2 >= len(md):
        return False  # memls's (or a named) checkpoint folder: a memory root
    if name == "checkpoints":
        return bool(md)  # `checkpoints/latest.md`
    if name in ("handoff", "handoffs") and sum(1 for n in md if is_handoff_name(n)) * 2 >= len(md):
        return False  # a folder of handoffs: a handoff root
    if name in ("handoff", "handoffs"):
        return any("template" not in n.lower() for n in md)  # handoffs by where they are
    if "log" in name and any(_is_state_note(n) or n.lower() == "current.md" for n in md):
        return True  # `dev-log/current.md` (or STATUS.md): the log's note of where work stands
    if by_day:
        return True  # `sessions/20251112-01-obsidian/session-summary.md`: filed by the day
    marked = sum(1 for n in md if _NUMBERED.search(n))
    if len(md) == 1:  # the first note of a series: `sessions/session-01.md`
        only = md[0].lower()
        return _has_name_date(only) or (_NUMBERED.search(only) is not None and "session" in only)
    return len(md) >= 2 and marked * 2 >= len(md)


HISTORY_FOLDERS = frozenset(
    {
        "archive", "archives", "archived", "old", "history", "historical", "past", "legacy",
        "deprecated", "obsolete",
    }
)  # fmt: skip
"""Folders whose handoffs and checkpoints are kept as history: nothing in them is stale
(and an agent folder's ``archive/`` of dated captures counts with them)."""


def _specstory_history(folder: Path) -> bool:
    """SpecStory's ``.specstory/history/``: the agent's chat sessions it saves as Markdown,
    one dated file each — archived transcripts (their links are that day's record)."""
    if folder.name != "history" or folder.parent.name != ".specstory":
        return False
    try:
        return any(is_markdown_name(e.name) for e in os.scandir(folder) if e.is_file())
    except OSError:
        return False


def _day_folders_in_agent_folder(folder: Path) -> bool:
    """An agent's own hidden folder (``.ai_work_context/``, ``.claude-sessions/``) of two or
    more folders named by a day and time (``20250216_1200/``), each with its notes (in it or
    one level down: ``20250216_1200/04_logs/x.md``): the agent's work, session by session."""
    name = folder.name.lower()
    if not name.startswith("."):
        return False
    words = re.split(r"[-_.]+", name.lstrip("."))
    if not words or words[0] not in _HIDDEN_AGENT_WORDS:
        return False
    found = 0
    try:
        days = [
            e.path
            for e in os.scandir(folder)
            if e.is_dir(follow_symlinks=False) and _DAY_FOLDER.match(e.name)
        ]
        for day in days[:64]:
            for place, dirs, files in os.walk(day):
                if any(is_markdown_name(f) for f in files):
                    found += 1
                    break
                if place != day:
                    dirs[:] = []  # one level below the day's folder
            if found >= 2:
                return True
    except OSError:
        return False
    return False


def _dated_subfolder_notes(folder: Path) -> list[str]:
    """The Markdown names in a folder's subfolders named by a day (``2026-07-17/``): a
    handoff folder that files each day's handoffs under that day, a worklog each day's
    entries (``worklog/2026-02-24/153900-first-cycle.md``)."""
    try:
        subs = [
            e.path
            for e in os.scandir(folder)
            if e.is_dir(follow_symlinks=False) and _DAY_FOLDER.match(e.name)
        ]
        return [n for sub in subs[:64] for n in os.listdir(sub) if is_markdown_name(n)]
    except OSError:
        return []


_DAY_FOLDER = re.compile(r"^20\d{2}-?[01]\d-?[0-3]\d(?:[-_][\w-]+)?$")
"""A day's folder: ``2026-07-17/``, ``20260717/``, ``2026-02-12-session-recovery/``,
``20250216_1200/``."""


def _history_notes(folder: Path) -> list[str]:
    """The Markdown names in a folder's ``history/`` (``archive/``, ``old/`` …) subfolders
    and their dated subfolders: the earlier notes of a series whose current one sits at the top."""
    try:
        subs = [
            e.path
            for e in os.scandir(folder)
            if e.name.lower() in HISTORY_FOLDERS and e.is_dir(follow_symlinks=False)
        ]
        names: list[str] = []
        for sub in subs:
            for e in os.scandir(sub):
                if is_markdown_name(e.name):
                    names.append(e.name)
                elif _has_name_date(e.name) and e.is_dir(follow_symlinks=False):
                    names += [n for n in os.listdir(e.path) if is_markdown_name(n)]
        return names  # `archive/2026-04-26/…`: an archive filed by day, too
    except OSError:
        return []


def _dated_in_agent_folder(folder: Path) -> bool:
    """A folder of an agent's own (``.claude/inbox/``, ``.codex/captures/``) whose notes are
    mostly dated by their names: what the agent wrote down session by session."""
    above = folder.parent.name.lower()
    if not above.startswith(".") or above[1:] not in _HIDDEN_AGENT_WORDS:
        return False
    low = folder.name.lower()
    if low in NOT_MEMORY_FOLDERS or low in _NOT_NOTES_FOLDERS or low in MEMORY_FOLDER_NAMES:
        return False  # `.claude/memory/` is a memory folder, whatever its sessions/ hold
    md: list[str] = []
    try:
        for e in os.scandir(folder):
            if e.is_file() and is_markdown_name(e.name):
                md.append(e.name)
    except OSError:
        return False
    md += _history_notes(folder)  # its archive/
    dated = sum(1 for n in md if _has_name_date(n))
    return dated >= 2 and dated * 2 > len(md)  # one dated report is no series of notes


_SESSION_WORDS = frozenset(
    {
        "session", "sessions", "sessao", "sessão", "sessoes", "sessões", "sesion", "sesión",
        "sesiones", "sitzung", "sitzungen", "seance", "séance", "seances", "séances",
    }
)  # fmt: skip
"""Words for a session in a few languages (``docs/PLANOS_SESSAO/``, ``claude-sessions/``)."""


def _session_named(folder: Path) -> bool:
    """A folder whose name has a word for a session (not its first: ``sessions/`` itself
    is in ``NOTES_FOLDERS``) and whose Markdown is mostly dated by name."""
    words = set(re.split(r"[-_.\s]+", folder.name.lower().lstrip(".")))
    if not words & _SESSION_WORDS:
        return False
    try:
        md = [e.name for e in os.scandir(folder) if e.is_file() and is_markdown_name(e.name)]
    except OSError:
        return False
    marked = sum(1 for n in md if _has_name_date(n) or _SESSION_FILE.match(n))
    return len(md) >= 2 and marked * 2 > len(md)  # dated, or `session-001-foundation.md`


_LOG_FOLDERS = frozenset({"logs", "log", "notes", "history"})
_SESSION_FILE = re.compile(r"(?i)^session[-_ ]?\d{1,4}(?:[-_ .][^/]*)?\.md$")


def _numbered_session_logs(folder: Path) -> bool:
    """A ``logs/`` (``notes/``, ``history/``) folder whose Markdown is mostly numbered
    sessions (``session_07_auth.md``, ``session-12.md``): an agent's log, one file a
    session. Elsewhere (``workshop/session-1.md``) a numbered session is as often a
    lesson's."""
    if folder.name.lower() not in _LOG_FOLDERS:
        return False
    try:
        md = [e.name for e in os.scandir(folder) if e.is_file() and is_markdown_name(e.name)]
    except OSError:
        return False
    sessions = sum(1 for n in md if _SESSION_FILE.match(n))
    return sessions >= 2 and sessions * 2 > len(md)


_JOURNAL_NAME = re.compile(
    r"^\.?(?:memory|(?:session[-_ ]?)?journal|diary|devlog|worklog|(?:session|agent|work|dev|prompt)[-_ ]?log"
    r"|(?:session|dev)[-_ ]?notes)\.md$",
    re.IGNORECASE,
)
_DIARY_WORD = re.compile(
    r"(?i)^(?:[^.]*[-_ ])?(?:diario|diary|journal|bit[áa]cora|tagebuch|dziennik|logbook|"
    r"memoria|m[ée]moire|session[-_ ]?notes?)"
    r"(?:[-_ ][^.]*)?\.md$"
)
"""Names of a running record in a few languages (``Diario_Proyecto.md``, ``project-journal.md``):
such a file is memory when it carries its own instructions to the agent."""


HARNESS_PROGRESS = "claude-progress.txt"
"""The progress log of Anthropic's long-running agent harness, by its name: what each
session did, read by the next one (plain text)."""


def _dated_file(path: Path, least: int) -> bool:
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        return False
    return _dated_journal(str(path), stamp, least)


def _carries_own_instructions(path: Path) -> bool:
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        return False
    return _self_instructed_file(str(path), stamp)


@functools.lru_cache(maxsize=4096)
def _self_instructed_file(path: str, _stamp: int) -> bool:
    try:
        with open(path, "rb") as fh:
            head = fh.read(SELF_HEAD_BYTES).decode("utf-8", "replace")
    except OSError:
        return False
    return self_instructed(head)


_SESSION_NOTES_NAME = re.compile(r"^session[-_ ]?notes\.md$", re.IGNORECASE)
"""``SESSION-NOTES.md``: one dated session in it makes it a journal (its blank template has
none)."""
_LOG_BY_NAME = re.compile(
    r"^\.?(?:(?:session|agent)[-_ ]?log|session[-_ ]?journal)\.md$", re.IGNORECASE
)
"""A session or agent log is one by its name alone, dated headings or not (``SESSION_LOG.md``
whose entries are headed by phase); a ``journal.md`` or ``memory.md`` must be dated."""
_STATE_FILES = frozenset({"CHECKPOINT.md", "SESSION-STATE.md", "SESSION_STATE.md", "NOW.md"})
_SESSION_REPORT = re.compile(r"^SESSION[-_ ]?\d{1,4}(?:[-_ ][\w-]*)?\.md$")
"""A numbered session's report in capitals (``SESSION23_SUMMARY.md``, ``SESSION-12.md``):
two or more in a folder are an agent's notes session by session (a workshop's
``Session 1 - Intro.md`` is a lesson)."""
_SESSION_STATE_NAMES = frozenset(
    {
        "session-state.md", "session_state.md", "session-context.md", "session_context.md",
        "compact-state.md", "compact_state.md",
    }
)  # fmt: skip
"""A session's state note by its name in any case (``change_tracking/session_state.md``,
``.claude/session-context.md``, what a pre-compact hook writes: ``compact-state.md``)."""
_CURRENT_STATE_STEMS = frozenset(
    {
        "current-state", "current-status", "current-work", "current-phase", "current-focus",
        "current-task", "current-context",
    }
)  # fmt: skip


def _current_state_name(name: str) -> bool:
    """``CURRENT_STATE.md``, ``current-status.md``: a note of where the work stands now,
    kept up to date between sessions (the name says "current"; a bare ``STATUS.md`` is as
    often a project's status page)."""
    if not is_markdown_name(name):
        return False
    return name[:-3].lower().replace("_", "-").replace(" ", "-") in _CURRENT_STATE_STEMS


_PLANNING_FILES = ("STATE.md", "PROJECT.md", "ROADMAP.md")
"""The files GSD (get-shit-done) keeps at the top of ``.planning/`` and reads at the start
of each session: where the work stands, what the project is, the phases and their status."""
_PLANNING_SIGNS = ("STATE.json", "MILESTONES.md", "REQUIREMENTS.md")
"""Other files of GSD's ``.planning/`` (its state as JSON, the milestones shipped, the
requirements): with one of the state files, the folder is GSD's; they are not read."""


def gsd_planning_files(folder: Path, names: Iterable[str]) -> list[Path]:
    """GSD's ``.planning/`` state files, when two of them are there (``STATE.md`` beside
    ``ROADMAP.md``, or ``PROJECT.md`` beside ``ROADMAP.md``): those files alone — its
    ``phases/`` plans and research are the work's, not its memory."""
    present = set(names)
    have = [n for n in _PLANNING_FILES if n in present]
    signs = len(have) + sum(1 for n in _PLANNING_SIGNS if n in present)
    return [folder / n for n in have] if have and signs >= 2 else []


_OTHER_CHECKPOINT = re.compile(r"(?i)^checkpoint[-_ ](?P<stem>.+)\.md$")


def _other_checkpoint_name(name: str) -> bool:
    """A checkpoint named in another case or with another separator than memls's
    ``checkpoint-{name}.md`` (``CHECKPOINT-phase-3.md``, ``Checkpoint_2026-11-02.md``):
    a checkpoint of another tool's format, read as notes; a guide or template about
    checkpoints (``CHECKPOINT-GUIDE.md``) is not one."""
    match = _OTHER_CHECKPOINT.match(name)
    if match is None or CHECKPOINT_RE.match(name) or "template" in name.lower():
        return False
    return _ABOUT_HANDOFFS.search("-" + match["stem"]) is None


"""One-file checkpoints (``CHECKPOINT.md``, ``NOW.md`` — the "lifeboat" pointer to the
current task —, in capitals like ``HANDOFF.md``): the state to resume from, by their name
(a ``checkpoint.md`` is as often a page on checkpointing)."""


_TOOL_MEMORY_NAME = re.compile(r"(?i)^(?:[\w.]+[-_])?memor(?:y|ies)\.md$")
_OWNED_MEMORY_NAME = re.compile(
    r"(?i)^(?:project|agent|agents|session|team|ai|claude|codex|copilot|gemini|cursor)[-_ ]"
    r"memor(?:y|ies)\.md$"
)
"""A memory file named for whose memory it is (``project_memory.md``, ``agent-memory.md``):
memory in any folder (a bare ``memory.md`` in a visible folder is as often a page about a
memory feature)."""


def tool_memory_notes(folder: Path) -> list[Path]:
    """An agent tool's memory file beside its instructions in a hidden folder, named for
    what it is: ``.github/copilot-memory.md`` (beside ``copilot-instructions.md``),
    ``.cursor/project-memory.md``, ``.gemini/agent_memory.md``; in a visible folder, one
    named for whose memory it is (``docs/project_memory.md``). Only those files are read:
    the folder's other files are the tool's settings, templates and workflows. And a
    ``GEMINI.md`` holding Gemini CLI's ``## Gemini Added Memories`` (what its ``save_memory``
    tool appends, in any folder): that file alone."""
    gemini = folder / "GEMINI.md"
    saved = [gemini] if _holds_gemini_memories(gemini) else []
    if folder.name == ".git":
        return saved
    pattern = _TOOL_MEMORY_NAME if folder.name.startswith(".") else _OWNED_MEMORY_NAME
    try:
        named = [Path(e.path) for e in os.scandir(folder) if pattern.match(e.name) and e.is_file()]
    except OSError:
        return saved
    return sorted([*saved, *(p for p in named if not _blank_template(p))])


_GEMINI_MEMORIES = re.compile(r"(?m)^##\s+Gemini Added Memories\s*$")


def _holds_gemini_memories(path: Path) -> bool:
    """A ``GEMINI.md`` with the section Gemini CLI's ``save_memory`` writes, and an entry."""
    try:
        with path.open("rb") as fh:
            text = fh.read(262144).decode("utf-8", "replace")
    except OSError:
        return False
    match = _GEMINI_MEMORIES.search(text)
    return match is not None and re.search(r"(?m)^\s*[-*]\s+\S", text[match.end() :]) is not None


def _blank_template(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            text = fh.read(65536).decode("utf-8", "replace")
    except OSError:
        return False
    return is_blank_template(text)


def is_blank_template(text: str) -> bool:
    """A text of headings, ``<!-- … -->`` comments, rules and placeholders (``[Describe
    the focus]``) only: a template the agent has not written in yet."""
    for line in _HTML_COMMENT.sub("", text).splitlines():
        bare = line.strip().strip("-*+>").strip()
        if bare and not bare.startswith("#") and not re.fullmatch(r"[\[(<{].*[\])>}]", bare):
            return False
    return True


def journal_notes(folder: Path) -> list[Path]:
    """A ``Memory.md`` (any case but ``MEMORY.md``, memls's index), ``JOURNAL.md``,
    ``DIARY.md`` … in the folder that is a dated journal (two or more dated headings): an
    agent's running notes, whatever the case of its name; a ``SESSION_LOG.md`` or
    ``AGENT_LOG.md`` by its name alone, and so a ``WORKLOG.md`` or ``JOURNAL.md`` in an
    agent's own folder (``.claude/``, ``.codex/``); and a one-file checkpoint
    (``CHECKPOINT.md``)."""
    try:
        names = [e.name for e in os.scandir(folder) if e.is_file()]
    except OSError:
        return []
    out = []
    in_agent_folder = folder.name.startswith(".") and folder.name[1:].lower() in _HIDDEN_AGENT_WORDS
    if folder.name == ".planning":
        out += gsd_planning_files(folder, names)  # GSD's state, read at each session's start
    reports = [n for n in names if _SESSION_REPORT.match(n)]
    if len(reports) >= 2:
        out += [folder / n for n in reports]  # SESSION12_COMPLETE.md, SESSION13_SUMMARY.md
    for name in names:
        if (
            name in _STATE_FILES
            or name.lower() in _SESSION_STATE_NAMES
            or (_current_state_name(name) and folder.name.lower() not in MEMORY_FOLDER_NAMES)
            or name == HARNESS_PROGRESS
            or _other_checkpoint_name(name)
        ):
            out.append(folder / name)  # CHECKPOINT.md; the long-running harness's progress log
            continue
        if in_agent_folder and name.lower() == "notes.md":
            out.append(folder / name)  # `.claude/NOTES.md`: the agent's own notes
            continue
        if (
            name.lower() == "history.md"
            and folder.parent.name.lower().lstrip(".") == "agents"
            and folder.parent.parent != folder.parent
        ):
            out.append(folder / name)  # `company/agents/engineer/history.md`: a role's history
            continue
        if in_agent_folder and is_markdown_name(name) and not _JOURNAL_NAME.match(name):
            if not is_guide_name(name) and _dated_file(folder / name, 1):
                out.append(folder / name)  # `.jules/bolt.md`: a persona's dated journal
            continue
        if not _JOURNAL_NAME.match(name) or name in ("MEMORY.md", "LOG.md"):
            if _DIARY_WORD.search(name) and _carries_own_instructions(folder / name):
                out.append(folder / name)  # Diario_Proyecto.md: "update this diary each session"
            continue
        path = folder / name
        if _LOG_BY_NAME.match(name) or (in_agent_folder and name.lower() != "memory.md"):
            out.append(path)  # SESSION_LOG.md; `.claude/WORKLOG.md`, kept by the agent
            continue
        if _dated_file(path, 1 if _SESSION_NOTES_NAME.match(name) else 2):
            out.append(path)
    return sorted(out)


_AGENT_WORDS = frozenset(
    {
        "agent", "agents", "ai", "llm", "claude", "codex", "copilot", "harness", "assistant",
        "gemini", "antigravity", "jules",
    }
)  # fmt: skip
_HIDDEN_AGENT_WORDS = _AGENT_WORDS | {
    "windsurf", "cursor", "cline", "roo", "kilocode", "kiro", "opencode", "aider",
}  # fmt: skip
"""Names of an agent's hidden folder (``.windsurf/``, ``.cursor/``): with the dot only —
``cursor-pagination/`` is a project's."""
_LEADING_ONLY = frozenset({"ai", "llm", "assistant"})
"""Agent words that name an agent's folder only as its first word (``ai-docs/``, ``ai/``):
elsewhere (``16_ai_tier/``, ``features/ai/``) they name a topic."""
_AGENT_TOOLS = frozenset({"claude", "codex", "copilot", "gemini", "antigravity"})
"""Agents by name: a ``knowledge/`` of theirs is what they learned (an ``agents/knowledge/``
beside subagent definitions is their reference material)."""
_KNOWLEDGE_FOLDERS = frozenset({"knowledge", "knowledge-base", "knowledge_base"})
"""What an agent learned, one item a file, in a folder of the agent's
(``antigravity/knowledge/``, ``.gemini/knowledge/``)."""
_NOT_NOTES_FOLDERS = frozenset({".github", ".vscode", ".idea", ".git", "rules", "workflows"})


_MEMORY_SUBFOLDERS = frozenset({"learnings", "lessons", "memory", "memories", "decisions"})
_AGENT_RECORDS = frozenset({"decisions", "attempts", "inbox", "notes", "audit", "audits"})
"""Folders of an agent's hidden folder (``.claude/decisions/``, ``.claude/attempts/``) that
hold what it decided, tried or learned: its memory, by where they are."""
_CONTEXT_WORDS = frozenset({"context", "contexto", "contexte", "contesto", "kontext"})
_STATE_STEMS = frozenset(
    {
        "current-state", "current-status", "state", "status", "now", "active-context",
        "activecontext", "estado", "estado-atual", "estado-actual", "etat-actuel", "stato",
        "project-state", "project-status", "current-focus", "current-task", "progress",
    }
)  # fmt: skip
"""A context folder's note of where the work stands (``ESTADO_ATUAL.md``, ``STATUS.md``)."""


def _is_state_note(name: str) -> bool:
    stem = name[:-3].lower().replace("_", "-").replace(" ", "-")
    return re.sub(r"^\d{1,3}-", "", stem) in _STATE_STEMS  # and a numbered `04_current_status`


def is_agent_notes_folder(folder: Path) -> bool:
    """A hidden folder, or one named for an agent (``docs/agent-workflow/``, ``.harness/``,
    ``docs/ai/``), holding two or more Markdown files of which one is named as a memory note
    (``lessons.md``, ``learnings.md``, ``decisions.md`` …) or — named for an agent — beside
    a ``learnings/`` (or ``lessons/``, ``memory/``) subfolder of Markdown: an agent's notes. A folder named for
    context in any of a few languages (``context/``, ``contexto/``), or an agent folder's
    ``state/``, counts when one of its notes says where the work stands (``ESTADO_ATUAL.md``,
    ``current-state.md``, ``PROJECT_STATE.md``, ``current-focus.md``); an agent folder's
    records (``.claude/decisions/``, ``attempts/``, ``lessons/``, ``inbox/``: ``_AGENT_RECORDS``)
    count by where they are, and its ``plans/`` when they are dated session by session. A
    ``knowledge/`` folder of an agent's (``antigravity/knowledge/``) is its notes too."""
    name = folder.name.lower()
    if agent_plans(folder) or kiro_steering(folder):
        return True
    if name in _NOT_NOTES_FOLDERS or name in NOT_MEMORY_FOLDERS:
        return False
    split = [w for w in re.split(r"[-_.\s]+", name.lstrip(".")) if w]
    words = set(split)
    if not name.startswith(".") and split and split[-1] == "agents":
        return False  # `CODE_REVIEW_AGENTS/`, `sub-agents/`: the agents' definitions, not notes
    agent = name.startswith(".") or bool(words & (_AGENT_WORDS - _LEADING_ONLY))
    agent = agent or bool(split and split[0] in _LEADING_ONLY)  # `ai-docs/`, not `16_ai_tier/`
    if name in _KNOWLEDGE_FOLDERS:
        above = set(re.split(r"[-_.\s]+", folder.parent.name.lower().lstrip(".")))
        return bool(above & _AGENT_TOOLS) and _markdown_count(folder) >= 2
    in_agent = (
        name in ("state", "status") or name in _AGENT_RECORDS or bool(words & _CONTEXT_WORDS)
    ) and _in_agent_folder(folder, 1)
    # `.agents/state/`, `.claude/context/`, `.claude/decisions/`: what the agent keeps there
    if not agent and not words & _CONTEXT_WORDS and not in_agent:
        return False
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return False
    md = [e.name for e in entries if e.is_file() and is_markdown_name(e.name)]
    if len(md) < 2:
        return False
    if in_agent:
        return True  # what the agent keeps in its own folder's context/ or state/
    if not agent:
        return any(_is_state_note(n) for n in md)
    if any(e.name == ".git" for e in entries):
        return False  # a repository named for agents (`claude-electron`, `ai-config`)
    if any(is_memory_note_name(n) for n in md):
        return True
    if name.startswith("."):
        # `.opus/STATE.md`; else a hidden spec folder (GSD's `.planning/`: its state files alone)
        return name != ".planning" and any(_is_state_note(n) for n in md)
    return any(
        e.name.lower() in _MEMORY_SUBFOLDERS and e.is_dir(follow_symlinks=False) and _has_md(e.path)
        for e in entries
    )


def agent_plans(folder: Path) -> bool:
    """An agent folder's ``plans/`` of plans dated by their names, two or more: what the
    agent planned session by session (a project's ``plans/`` is not); Claude Code's own
    ``.claude/plans/`` (where plan mode saves its plans, dated or not) with any plan."""
    if folder.name.lower() != "plans" or not _in_agent_folder(folder, 1):
        return False
    if folder.parent.name.lower() == ".claude":
        return _markdown_count(folder) >= 1  # Claude Code's plan mode keeps its plans here
    return _dated_count(folder) >= 2


def kiro_steering(folder: Path) -> bool:
    """Kiro's ``.kiro/steering/`` (``product.md``, ``tech.md``, ``structure.md`` …): what the
    agent knows of the project, loaded into its sessions — Kiro's memory."""
    return (
        folder.name.lower() == "steering"
        and folder.parent.name.lower() == ".kiro"
        and _markdown_count(folder) >= 1
    )


def _has_md(folder: str) -> bool:
    try:
        return any(e.is_file() and is_markdown_name(e.name) for e in os.scandir(folder))
    except OSError:
        return False


_NAME_DATE = re.compile(r"(?<!\d)20\d{2}[-_.]?[01]\d[-_.]?[0-3]\d(?!\d)")


_MONTH_NAME = re.compile(r"^20\d{2}-(?:0[1-9]|1[0-2])\.md$", re.IGNORECASE)


def _has_name_date(name: str) -> bool:
    """A file name carrying a date (``2026-01-31.md``, ``20260131-notes.md``)."""
    return _NAME_DATE.search(name) is not None


def is_memory_bank(folder: Path) -> bool:
    """A Cline / Cursor memory bank: a ``memory-bank/`` folder with one of its core files,
    or any folder with three of them (projectbrief.md, activeContext.md, progress.md …,
    in any case, snake or kebab: ``active_context.md``; in a ``memory-bank/``, kept as YAML
    or JSON too: ``progress.yaml``);
    Kilo Code's: a ``memory-bank/`` folder with two of ``KILO_BANK_FILES``."""
    try:
        names = {bank_name(e.name) for e in os.scandir(folder) if e.is_file()}
    except OSError:
        return False
    core = len(names & _MEMORY_BANK_LOWER)
    if core >= 3:
        return True
    named = folder.name.lower() in MEMORY_BANK_DIRS
    if named and not core:  # `memory-bank/progress.yaml`: a core file kept as data
        as_md = {re.sub(r"\.(?:ya?ml|json)$", ".md", n) for n in names}
        core = len(as_md & _MEMORY_BANK_LOWER)
    return named and (core >= 1 or len(names & set(KILO_BANK_FILES)) >= 2)


NOT_MEMORY_FOLDERS = frozenset(
    {
        "commands", "skills", "prompts", "templates", "template", "_template", "_templates",
        "agents", "plans", "specs", "design", "designs", "architecture", "process", "processes",
        "ideas",
        "runs", "runbooks", "runbook", "playbooks", "workflows",
        # a template folder in the languages memory is written in
        "plantillas", "plantilla", "vorlagen", "vorlage", "modeles", "modèles", "modelos",
        "modelli", "sjablonen", "szablony", "шаблоны", "模板", "テンプレート", "템플릿",
    }
)  # fmt: skip
"""Folders whose handoff-named files are instructions (a Claude Code slash command, an
Agent Skill, a template — ``plantillas/``, ``Vorlagen/`` —, a workflow's steps, a page on
the team's process, an idea about handing off) or a
designer's hand-off to the developers (``design/<bundle>/HANDOFF.md``), or the record of
an experiment's run (``runs/``), not handoffs between sessions."""


_INSTRUCTION_FOLDERS = frozenset({"rules", "contracts"})
"""Folders of an agent's rules and a workflow's contracts (``.claude/rules/``,
``.kilocode/contracts/``): a handoff-named file there says how to hand off, it is none."""
HANDOFF_TREES = frozenset({"plans", "specs"})
"""Trees searched for handoffs alone (``specs/032-reply/HANDOFF.md``, ``docs/plans/handoffs/``):
their other files are the work's plans and specs, never memory."""


def _handoff_files(folder: Path) -> list[Path]:
    low = folder.name.lower()
    if (low in NOT_MEMORY_FOLDERS and low not in HANDOFF_TREES) or (
        folder.parent.name.lower() == "agents"
    ):
        return []  # `agents/brand/HANDOFF.md`: one agent role's brief to another
    try:
        entries = [e for e in os.scandir(folder) if e.is_file()]
    except OSError:
        return []
    named = [Path(e.path) for e in entries if is_handoff_name(e.name)]
    md = sum(1 for e in entries if is_markdown_name(e.name))
    if named and md >= _CROWD and len(named) * 20 <= md:
        # a backlog of 3,000 items or 400 reports, one of them about a "…-handoff": a
        # topic among many, unless it is named a handoff from its first word
        named = [p for p in named if _LEADING_HANDOFF.match(p.name)]
    above = _repository_parts(folder) if named else set()
    if above & _INSTRUCTION_FOLDERS:
        return []  # `.claude/rules/context-handoff.md`: a rule on handing off
    if above & HANDOFF_TREES:
        # among plans and specs, a handoff says so from its first word or is addressed to an
        # agent (`specs/032/HANDOFF.md`, `X_HANDOFF_CLAUDE.md`); `2026-06-23-foreign-handoff.md`
        # is a plan about handing off
        named = [p for p in named if _LEADING_HANDOFF.match(p.name) or _TO_AGENT.search(p.name)]
    return sorted(p for p in named if _handoff_file_has_state(p))


def _repository_parts(folder: Path) -> set[str]:
    """The folder names, lower-cased, from ``folder``'s repository down to ``folder``."""
    top = repository_top(folder)
    try:
        parts = folder.relative_to(top).parts if top is not None else (folder.name,)
    except ValueError:
        parts = (folder.name,)
    return {part.lower() for part in parts}


_TO_AGENT = re.compile(
    r"(?i)(?:^|[-_ ])" + _AGENT_NAMES + r"[-_ ](?:hand-?off|handover)"
    r"|(?:hand-?off|handover)[-_ ](?:to[-_ ])?" + _AGENT_NAMES + r"(?:$|[-_. ])"
)
_CROWD = 20
_LEADING_HANDOFF = re.compile(r"(?i)^\.?(?:hand-?off|handover|pass-?off|next[-_ ]?session)")


_NESTED_KINDS = {
    RootKind.MEMORY_BANK: 2,
    RootKind.SERENA: 3,
    RootKind.MEMORY_TOOL: 3,
    RootKind.HERMES: 0,
    RootKind.NOTES: 2,
}
"""Kinds whose subfolders are part of the memory (a memory bank's journal/), and how deep."""
_CODEX_DIRS = ("rollout_summaries",)


def memory_files(root: Path, kind: RootKind | None = None) -> list[Path]:
    """Every Markdown memory file of a root, sorted, symlinks out of the root skipped.

    A memls root: the folder, ``memory/`` and ``transcripts/.handoff.md``. A memory bank,
    Serena's or the memory tool's folder: its Markdown files, subfolders included. Codex:
    the folder and ``rollout_summaries/``. A handoff folder: its handoff files only."""
    kind = kind or root_kind(root)
    if kind is RootKind.JSON:
        return []  # no Markdown: its JSON is searched for secrets (rules/secrets.scan_paths)
    if kind is RootKind.HANDOFF:
        named = [f for f in instructed_for(root).files if f.is_file()]
        return sorted({*_handoff_files(root), *named})  # and what the instructions name
    if kind is RootKind.NOTES:
        chosen = notes_files(root)
        if chosen is not None:
            return chosen
    found: list[Path] = []
    depth = _NESTED_KINDS.get(kind, 0)
    if kind is RootKind.NOTES and filed_by_date(root):
        depth = 3  # `report/2025/11/02/13-18-iteration-report.md`
    if kind is RootKind.MEMORY:
        places = [(root, 0), (root / "memory", 0), (root / "transcripts", 0)]
    elif kind is RootKind.CODEX:
        places = [(root, 1)]  # rollout_summaries/ and the folders a user keeps beside it
    else:
        places = [(root, depth)]
    real_root = root.resolve()
    while places:
        place, more = places.pop(0)
        if not place.is_dir():
            continue
        try:
            entries = sorted(os.scandir(place), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            if more and not name.startswith(".") and entry.is_dir(follow_symlinks=False):
                places.append((Path(entry.path), more - 1))
                continue
            if not is_markdown_name(name) or name.startswith(TEMP_PREFIX):
                continue
            if place.name == "transcripts" and place != root and name != ".handoff.md":
                continue
            path = Path(entry.path)
            try:
                if not entry.is_file():
                    continue
                if entry.is_symlink() and real_root not in path.resolve().parents:
                    continue
            except OSError:
                continue
            found.append(path)
    return _one_name_each(sorted(found))


def _one_name_each(paths: list[Path]) -> list[Path]:
    """The files without a symlink to one of them (``same.md -> deploy.md``): one file
    under two names is read once, under its own."""
    linked = [p for p in paths if p.is_symlink()]
    if not linked:
        return paths
    real = {p.resolve() for p in paths if not p.is_symlink()}
    return [p for p in paths if not (p.is_symlink() and p.resolve() in real)]


def notes_files(root: Path) -> list[Path] | None:
    """The files a ``notes`` root reads when it is not a whole folder of notes: the files
    the agent's instructions name in it and its dated journals (``Memory.md``); None when
    the whole folder is read (a named folder, a folder of session notes or agent notes)."""
    named = instructed_for(root)
    if named.folders or is_notes_folder(root) or is_agent_notes_folder(root):
        return None
    return sorted(
        {*(f for f in named.files if f.is_file()), *journal_notes(root), *tool_memory_notes(root)}
    )


def is_memory_path(root: Path, path: Path, kind: RootKind | None = None) -> bool:
    """``path`` (on disk or not yet) is where a memory file of ``root`` sits, as
    :func:`memory_files` reads the root: a memls root's folder, ``memory/`` and
    ``transcripts/.handoff.md``; a handoff folder's handoff files; the files the agent's
    instructions name; a memory bank's (Serena's, the memory tool's) folder and its
    subfolders. The language server checks an open buffer live only where this holds.
    A path outside ``root`` is answered before anything is read from disk: the server asks
    this of every root on every edit."""
    if root not in path.parents:
        return False
    kind = kind or root_kind(root)
    parent = path.parent
    if kind is RootKind.HANDOFF:
        return parent == root and (is_handoff_name(path.name) or path in instructed_for(root).files)
    if kind is RootKind.NOTES:
        chosen = notes_files(root)
        if chosen is not None:
            return path in chosen or path in instructed_for(root).files
    if kind is RootKind.MEMORY:
        return parent in (root, root / "memory") or path == root / "transcripts" / ".handoff.md"
    if kind is RootKind.CODEX:
        return root in (parent, parent.parent)
    try:
        rel = parent.relative_to(root)
    except ValueError:
        return False
    depth = _NESTED_KINDS.get(kind, 0)
    if kind is RootKind.NOTES and filed_by_date(root):
        depth = 3
    return len(rel.parts) <= depth and not any(p.startswith(".") for p in rel.parts)


_DATED_HEADING = re.compile(r"^#{1,3}\s.*\b\d{4}-\d{2}-\d{2}\b", re.MULTILINE)


@functools.lru_cache(maxsize=4096)
def _dated_journal(path: str, _stamp: int, least: int = 2) -> bool:
    try:
        with open(path, "rb") as fh:
            head = fh.read(65536).decode("utf-8", "replace")
    except OSError:
        return False
    return len(_DATED_HEADING.findall(head)) >= least


def is_journal_log(path: Path) -> bool:
    """A ``log.md`` (any case but ``LOG.md``) that is a dated journal: two or more headings
    carrying a date. Such a file is a LOG; a ``log.md`` about logging is not."""
    if path.name.lower() != "log.md" or path.name == "LOG.md":
        return False
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        return False
    return _dated_journal(str(path), stamp)


def _journal_log_in(folder: Path) -> bool:
    try:
        return any(
            is_journal_log(Path(e.path)) for e in os.scandir(folder) if e.name.lower() == "log.md"
        )
    except OSError:
        return False


def kind_of(path: Path) -> FileKind:
    """The file kind as the workspace reads it: :func:`kind_for`, plus handoffs by their
    other names (HANDOFF.md, docs/HANDOFF.md), a dated journal named ``log.md``, and
    ``.MD`` files read as Markdown."""
    name = path.name
    if name != ".handoff.md" and is_handoff_name(name):
        return FileKind.HANDOFF
    if is_journal_log(path):
        return FileKind.LOG
    kind = kind_for(path)
    if kind is FileKind.OTHER and is_markdown_name(name):
        return kind_for(path.with_name(path.stem + ".md"))
    return kind


def transcript_files(root: Path, extra: Iterable[Path] = ()) -> list[Path]:
    """Session transcripts (*.jsonl) for a root: ``transcripts/``, the root itself, the
    session files beside a Claude Code auto-memory directory, and configured folders."""
    places = [root / "transcripts", root]
    live: set[str] = set()
    if is_claude_memory_dir(root):
        places.append(root.parent)  # ~/.claude/projects/<slug>/*.jsonl
        # `memls hook` archives these into transcripts/ under the same name; while the live
        # session file exists it is the one read (it is never behind its archive).
        live = {p.name for p in root.parent.glob("*.jsonl") if p.is_file()}
    places.extend(extra)
    out: list[Path] = []
    seen: set[Path] = set()
    for place in places:
        if not place.is_dir():
            continue
        for path in sorted(p for p in place.glob("*.jsonl") if p.is_file()):
            if place == root / "transcripts" and path.name in live:
                continue
            if path not in seen:
                seen.add(path)
                out.append(path)
    return out


def is_claude_memory_dir(root: Path) -> bool:
    """``~/.claude/projects/<slug>/memory`` (by shape, wherever the home folder is)."""
    parts = root.resolve().parts
    return (
        len(parts) >= 4
        and parts[-1] == "memory"
        and parts[-3] == "projects"
        and parts[-4] == ".claude"
    )


_ALL_BUT_SECRETS = ("MB", "BN", "CP", "HO", "LG", "IX", "MF", "SZ")
ARCHIVED_RULES = "SC (secrets): an archived memory or saved chat is a record, kept as it was"
_ARCHIVE_FOLDERS = frozenset({"archive", "archives", "archived"})


def archived_root(root: Path, repo: Path | None) -> bool:
    """A root inside an archive folder of its repository (``.archive/memory_legacy/memory/``,
    ``docs/archive/old-bank/``), or SpecStory's ``.specstory/history/`` of saved chats: a
    record kept as it was — its format, links, sizes and bytes are no longer anyone's to
    fix; only its secrets are judged."""
    if root.name == "history" and root.parent.name == ".specstory":
        return True  # SpecStory's saved chats: transcripts, kept as they were said
    if repo is None:
        return False
    try:
        parts = root.relative_to(repo).parts
    except ValueError:
        return False
    return any(p.lower().lstrip("._") in _ARCHIVE_FOLDERS for p in parts)


def rules_off(kind: RootKind, archived: bool = False) -> tuple[str, ...]:
    """Rule codes (prefixes) that do not apply to a root of ``kind`` (archived or not)."""
    return _ALL_BUT_SECRETS if archived else _NOT_FOR_KIND.get(kind, ())


def for_kind(config: Config, kind: RootKind, archived: bool = False) -> Config:
    """``config`` with the rules that do not apply to ``kind`` of root switched off."""
    off = tuple(c for c in rules_off(kind, archived) if c not in config.ignore)
    return replace(config, ignore=(*config.ignore, *off)) if off else config


@dataclass(frozen=True)
class IndexEntry:
    """One bullet of ``## Active Checkpoints``."""

    name: str
    line: int


class Workspace:
    """All memory documents of one root, with cross-file lookups.

    Documents are parsed lazily from disk; editor buffers override disk via ``set_text``.
    """

    def __init__(self, root: Path, config: Config | None = None, git: Git | None = None) -> None:
        self.root = root.resolve()
        self.root_kind = root_kind(self.root)
        """What kind of memory the root holds; rules that do not apply to it are off."""
        self.repo_root = repo_root_for(self.root)
        self.archived = archived_root(self.root, self.repo_root)
        """In an archive folder of the repository: only the secret rules judge it."""
        self._config = for_kind(
            config if config is not None else load_config(self.root),
            self.root_kind,
            self.archived,
        )
        self.git = git if git is not None else Git(self.root)
        self.layout_choice = layout_choice(self.root)
        self.layout = self.layout_choice.layout
        self.links = LinkResolver(
            self.root,
            self.repo_root,
            extra_exists=self._is_overlay,
            outer_root=enclosing_memory_folder(self.root, self.repo_root),
        )
        """Resolves links of every document of the root (cached; see core/formats/links.py):
        the one resolver of the rules, the link graph, document links and definitions."""
        self._docs: dict[Path, Document] = {}
        self._overlays: dict[Path, str] = {}
        self._paths: list[Path] | None = None
        self._memo: dict[str, object] = {}
        self._memo_deps: dict[str, set[Path]] = {}
        """Per memo, the documents its computation read (``_VOLATILE``: something else)."""
        self._reading: list[set[Path]] = []
        """Dependency sets of the memos being computed right now (nested)."""
        self._checkpoints: tuple[list[Path] | None, dict[str, Path]] | None = None
        self._sizes: dict[Path, int] = {}
        self._size_sum: int | None = None
        """Bytes of every listed file, kept current edit by edit (see :meth:`total_bytes`)."""
        self._size_stale: set[Path] = set()
        self._kinds: tuple[list[Path] | None, dict[FileKind, list[Path]], set[Path]] | None = None
        self.generation = 0
        """Bumped on every change; cross-file facts memoised with :meth:`memo` follow it."""
        self.listeners: list[Callable[[Path | None], None]] = []
        """Called with each invalidated path (None: everything); the link graph listens."""

    @property
    def config(self) -> Config:
        """The root's configuration, with the rules its kind of memory does not take off."""
        return self._config

    @config.setter
    def config(self, config: Config) -> None:
        self._config = for_kind(config, self.root_kind, self.archived)

    # -- files -------------------------------------------------------------
    def paths(self) -> list[Path]:
        if self._paths is None:
            on_disk = memory_files(self.root, self.root_kind)
            extra = [
                p
                for p in self._overlays
                if p not in on_disk and is_memory_path(self.root, p, self.root_kind)
            ]
            listed = sorted(set(on_disk) | set(extra))
            if self.layout_choice.project_folder and self.root_kind is not RootKind.NOTES:
                listed = self._memory_in_project(listed)  # notes: the instructions chose
            self._paths = listed
        return list(self._paths)

    def _memory_in_project(self, listed: list[Path]) -> list[Path]:
        """In a project folder, a root-level ``*.md`` is memory only by name or when the index
        reaches it; README.md, CONTRIBUTING.md and docs are the project's, not memory."""
        keep = [
            p
            for p in listed
            if p.parent != self.root or kind_of(p) not in (FileKind.TOPIC, FileKind.OTHER)
        ]
        candidates = {p for p in listed if p not in keep}
        if not candidates:
            return keep
        index = self.index_path
        frontier = [p for p in keep if p == index]
        seen = set(frontier)
        while frontier:
            path = frontier.pop()
            doc = self.document(path)
            if doc is None:
                continue
            for link in distinct_links(doc):  # resolution depends on the target only
                target = self.links.resolve(link)
                if target is not None and target in candidates and target not in seen:
                    seen.add(target)
                    frontier.append(target)
        return sorted([*keep, *(p for p in candidates if p in seen)])

    def _is_overlay(self, path: Path) -> bool:
        return path in self._overlays

    def contains(self, path: Path) -> bool:
        path = path.resolve() if path.is_absolute() else (self.root / path).resolve()
        return path == self.root or self.root in path.parents

    @property
    def index_path(self) -> Path:
        return index_path(self.root, self.layout)

    def document(self, path: Path) -> Document | None:
        """The parsed document (editor buffer if open, else disk); None when absent."""
        path = self._norm(path)
        for deps in self._reading:
            deps.add(path)
        doc = self._docs.get(path)
        if doc is not None:
            return doc
        if path in self._overlays:
            doc = parse_text(self._overlays[path], path, kind_of(path))
        else:
            try:
                if path.stat().st_size > MAX_FILE_BYTES:
                    data = path.open("rb").read(MAX_FILE_BYTES)
                else:
                    data = path.read_bytes()
            except OSError:
                return None
            with no_gc():
                doc = parse_bytes(data, path, kind_of(path))
        self._docs[path] = doc
        return doc

    def documents(self, kind: FileKind | None = None) -> list[Document]:
        docs = [d for p in self.paths() if (d := self.document(p)) is not None]
        return [d for d in docs if kind is None or d.kind is kind]

    def _norm(self, path: Path) -> Path:
        return path if path.is_absolute() else (self.root / path)

    # -- updates (one file at a time) --------------------------------------
    def has_overlay(self, path: Path) -> bool:
        return self._norm(path) in self._overlays

    def overlay(self, path: Path) -> str | None:
        """The editor buffer's text for ``path`` (None when it is not open)."""
        return self._overlays.get(self._norm(path))

    def set_text(self, path: Path, text: str | None, doc: Document | None = None) -> set[Path]:
        """Set an editor buffer's text (``None``: closed, fall back to disk). Returns affected paths.

        ``doc``: the text already parsed (by the language server off its worker thread, or a
        document being restored), so it is not parsed again."""
        path = self._norm(path)
        if text is None:
            self._overlays.pop(path, None)
        else:
            self._overlays[path] = text
        affected = self.invalidate(path)
        if doc is not None and text is not None:
            self._docs[path] = doc
        return affected

    def invalidate(self, path: Path) -> set[Path]:
        """Forget what is cached for ``path`` (changed, created or deleted on disk).

        The file list is rescanned only when the file set may have changed, so an edit
        of one buffer costs one parse, not a directory scan.
        """
        path = self._norm(path)
        self._docs.pop(path, None)
        old_size = self._sizes.pop(path, None)
        self.generation += 1
        for listener in self.listeners:
            listener(path)
        edited = self._paths is not None and path in self._paths
        self.links.invalidate(path)
        if self._paths is not None and self.layout_choice.project_folder:
            self._paths = None  # which root-level files are memory depends on the index's links
            edited = False
        if self._paths is not None:
            listed = path in self._paths
            present = path in self._overlays or (
                self._listable(path) and path.is_file() and inside(self.root, path)
            )
            if listed != present:
                # A new list object: caches keyed on the list (checkpoints()) notice the change.
                others = [p for p in self._paths if p != path]
                self._paths = sorted([*others, path]) if present else others
                edited = False
        self._forget_memos(path if edited else None)
        if self._size_sum is not None:
            if edited and old_size is not None:
                self._size_sum -= old_size
                self._size_stale.add(path)
            elif not (edited and path in self._size_stale):
                self._size_sum = None
        return self.affected_by(path)

    def _forget_memos(self, path: Path | None) -> None:
        """Drop the memos that read ``path`` (None: every memo). A memory file whose content
        changed leaves facts about the other files standing, so an edit of MEMORY.md does not
        recompute what thousands of checkpoints say about themselves."""
        if path is None:
            self._memo.clear()
            self._memo_deps.clear()
            return
        for key, deps in list(self._memo_deps.items()):
            if path in deps or _VOLATILE in deps:
                del self._memo_deps[key]
                self._memo.pop(key, None)

    def drop_memos(self) -> None:
        """Forget every memoised cross-file fact (git state or configuration changed)."""
        self._forget_memos(None)

    def _listable(self, path: Path) -> bool:
        """Whether ``memory_files`` would list ``path`` (:func:`is_memory_path`)."""
        name = path.name
        if not is_markdown_name(name) or name.startswith(TEMP_PREFIX):
            return False
        return is_memory_path(self.root, path, self.root_kind)

    def refresh(self) -> None:
        """Forget everything (e.g. after many files changed at once)."""
        self._docs.clear()
        self._sizes.clear()
        self._size_sum = None
        self._paths = None
        self._forget_memos(None)
        self.generation += 1
        for listener in self.listeners:
            listener(None)
        self.layout_choice = layout_choice(self.root)
        self.layout = self.layout_choice.layout
        kind = root_kind(self.root)
        if kind is not self.root_kind:
            old = set(rules_off(self.root_kind, self.archived))
            kept = tuple(c for c in self._config.ignore if c not in old)
            self.root_kind = kind
            self.config = replace(self._config, ignore=kept)
        self.links.invalidate()
        self.git.invalidate()

    def total_bytes(self) -> int:
        """Bytes of every listed memory file (editor buffers for open ones), updated per
        edit instead of summed over the whole root again."""
        if self._size_sum is None:
            self._size_stale.clear()
            self._size_sum = sum(self.byte_size(p) for p in self.paths())
        for path in self._size_stale:
            self._size_sum += self.byte_size(path)
        self._size_stale.clear()
        return self._size_sum

    def byte_size(self, path: Path) -> int:
        """Size of a memory file in bytes (the editor buffer's when open), cached until it changes."""
        path = self._norm(path)
        size = self._sizes.get(path)
        if size is None:
            if path in self._overlays:
                size = len(self._overlays[path].encode("utf-8", "surrogatepass"))
            else:
                try:
                    size = path.stat().st_size
                except OSError:
                    size = 0
            self._sizes[path] = size
        return size

    def memo(self, key: str, compute: Callable[[], T]) -> T:
        """A cross-file fact (e.g. a hash index), kept until a document it read changes or
        the file list does; one that read no document is recomputed after every change."""
        if key in self._memo:
            deps = self._memo_deps.get(key, {_VOLATILE})
            for outer in self._reading:
                outer.update(deps)
            return self._memo[key]  # type: ignore[return-value]
        deps = set()
        self._reading.append(deps)
        try:
            value = compute()
        finally:
            self._reading.pop()
        if not deps:
            deps.add(_VOLATILE)
        for outer in self._reading:
            outer.update(deps)
        self._memo[key] = value
        self._memo_deps[key] = deps
        return value

    def _by_kind(self) -> tuple[dict[FileKind, list[Path]], set[Path]]:
        """Listed files by kind, and as a set (recomputed only when the file list changes)."""
        self.paths()
        cached = self._kinds
        if cached is not None and cached[0] is self._paths:
            return cached[1], cached[2]
        groups: dict[FileKind, list[Path]] = {}
        for p in self._paths or ():
            groups.setdefault(kind_of(p), []).append(p)
        self._kinds = (self._paths, groups, set(self._paths or ()))
        return groups, self._kinds[2]

    def affected_by(self, path: Path) -> set[Path]:
        """Documents whose diagnostics may change when ``path`` changes."""
        affected = {path}
        kind = kind_of(path)
        idx = self.index_path
        if path != idx:
            affected.add(idx)
        groups, present = self._by_kind()
        affected.update(groups.get(FileKind.HANDOFF, ()))
        if kind in (FileKind.INDEX, FileKind.TOPIC):
            affected.update(groups.get(FileKind.TOPIC, ()))
        return {p for p in affected if p in present or p in self._overlays}

    # -- cross-file view ---------------------------------------------------
    def checkpoints(self) -> dict[str, Path]:
        """Checkpoint files by name (recomputed only when the file list changes; do not mutate)."""
        self.paths()
        cached = self._checkpoints
        if cached is not None and cached[0] is self._paths:
            return cached[1]
        out: dict[str, Path] = {}
        for p in self._paths or ():
            name = checkpoint_name(p)
            if name is not None and p.parent == self.root:
                out[name] = p
        self._checkpoints = (self._paths, out)
        return out

    def index(self) -> Document | None:
        return self.document(self.index_path)

    def index_entries(self) -> list[IndexEntry]:
        """Names in ``## Active Checkpoints`` bullets (``- **name** …``)."""
        doc = self.index()
        if doc is None:
            return []
        return [IndexEntry(b.name, b.line) for b in bullets(doc)]

    def pointer_targets(self) -> set[Path]:
        """Files that some pointer (link or code span) in the index points at."""
        doc = self.index()
        if doc is None:
            return set()
        targets: set[Path] = set()
        for link in distinct_links(doc):  # a realpath per distinct target, not per link
            found = self.links.resolve(link)
            # A pointer to a missing file is still a pointer (IX009 reports where it leads).
            targets.add((found or doc.path.parent / link.target).resolve())
        return targets

    def topic_files(self) -> list[Path]:
        return [p for p in self.paths() if kind_of(p) is FileKind.TOPIC]

    def graph(self) -> LinkGraph:
        """The root's link graph (:mod:`memls.core.graph`), brought up to date on each call."""
        from memls.core.graph import graph_of

        return graph_of(self)


def enclosing_memory_folder(root: Path, repo: Path | None) -> Path | None:
    """The memory folder ``root`` sits inside, up to three levels up and below the
    repository (``sartor/memory/`` of ``sartor/memory/projects/``), or None: the notes
    filed below a memory folder link to its other notes from there (``[[feedback/x]]``)."""
    for above in list(root.parents)[:3]:
        if repo is not None and (above == repo or repo not in above.parents):
            return None
        if _memory_folder_name(above.name):
            return above
    return None


def project_parents(project: Path | None) -> set[Path]:
    """``project`` and the folders above it (none for no project)."""
    return set() if project is None else {project, *project.parents}


def repo_root_for(root: Path) -> Path | None:
    """The repository a memory root belongs to: the nearest parent with ``.git``; for
    Claude Code's auto-memory folder, the project its ``<slug>`` names (when it exists) —
    unless the folder is committed inside another repository than the home folder's or the
    project's (a copy of ``~/.claude`` kept in a repository): then that repository."""
    if is_claude_memory_dir(root):
        project = project_for_slug(root.parent.name)
        holder = find_repo_root(root)
        if holder is not None and holder != Path.home() and holder not in project_parents(project):
            return (
                holder  # a copy of `~/.claude` committed in a repository: its pointers lead there
            )
        if project is not None:
            return find_repo_root(project) or project
        # A home folder kept as a repository (`.claude/projects/<slug>/memory` committed
        # inside it): the memory's pointers lead into that repository.
        return find_repo_root(root)
    return find_repo_root(root)


_BACKUP_WORD = re.compile(r"(?i)(?:^|[-_. ])backups?(?:$|[-_. ])")
_README_TITLE = re.compile(r"(?m)^#\s+(.+)$")
_PROJECT_MANIFESTS = (*(m for m in PROJECT_MARKERS if m != ".git"), "CMakeLists.txt")


def is_backup_copy(repo: Path | None) -> bool:
    """Whether the repository is a backup of a live agent workspace (``cleo-backup``, a
    README titled "… Daily Backup"): a script copies the files it chooses (MEMORY.md, the
    daily notes) and leaves the rest where the agent works, so a pointer to a file the
    backup does not hold says nothing about the memory the agent reads. A repository with a
    project manifest (``package.json``, ``pyproject.toml`` …) is software — a backup tool
    among them — and its memory is judged as any other. Cached per modification time of
    the repository's folder and its README, so a long-running server sees a manifest or a
    title added later."""
    if repo is None:
        return False
    try:
        folder = repo.stat().st_mtime_ns
    except OSError:
        return False
    try:
        readme = (repo / "README.md").stat().st_mtime_ns
    except OSError:
        readme = 0
    return _backup_copy(repo, folder, readme)


@functools.lru_cache(maxsize=256)
def _backup_copy(repo: Path, _folder_mtime: int, _readme_mtime: int) -> bool:
    if any((repo / name).exists() for name in _PROJECT_MANIFESTS):
        return False  # a software project (a backup tool among them), not a copy of files
    if _BACKUP_WORD.search(repo.name):
        return True
    try:
        with (repo / "README.md").open("rb") as fh:
            head = fh.read(4096).decode("utf-8", "replace")
    except OSError:
        return False
    title = _README_TITLE.search(head)
    return title is not None and _BACKUP_WORD.search(title.group(1).strip()) is not None


def project_for_slug(slug: str, limit: int = 5000) -> Path | None:
    """The existing folder a Claude Code project slug stands for (``-home-me-my-app`` →
    ``/home/me/my-app``): ``/``, ``-``, ``.``, ``_`` and spaces all became ``-``. A name is
    only extended while some entry of its folder starts with it, so a long path of
    underscored names stays a short search."""
    parts = slug.lstrip("-").split("-")
    if not parts or not parts[0]:
        return None
    budget = [limit]
    listings: dict[str, tuple[str, ...]] = {}

    def names(folder: str) -> tuple[str, ...]:
        if folder not in listings:
            try:
                listings[folder] = tuple(os.listdir(folder or "/"))
            except OSError:
                listings[folder] = ()
        return listings[folder]

    def walk(prefix: str, i: int) -> Path | None:
        budget[0] -= 1
        if budget[0] < 0:
            return None
        if i == len(parts):
            return Path(prefix) if os.path.isdir(prefix) else None
        for joiner in ("/", "-", ".", "_", " "):
            if joiner == "/" and not os.path.isdir(prefix):
                continue
            candidate = prefix + joiner + parts[i]
            folder, _, last = candidate.rpartition("/")
            if not any(n.startswith(last) for n in names(folder)):
                continue
            found = walk(candidate, i + 1)
            if found is not None:
                return found
        return None

    return walk("/" + parts[0], 1)


_INDEX_STEMS = frozenset({"index", "_index", "memory-index", "memory_index", "memoryindex"})
"""Stems of an index a memory folder keeps under another name than MEMORY.md."""


def is_own_index_name(name: str) -> bool:
    """``index.md``, ``INDEX.md``, ``MEMORY_INDEX.md``: a memory folder's index of its own."""
    return is_markdown_name(name) and name[:-3].lower() in _INDEX_STEMS


def _looks_like_memory_folder(folder: Path) -> bool:
    """A ``memory/`` folder that holds memls's files, typed memories, dated notes only, or
    an index of its own (``MEMORY_INDEX.md``, ``index.md``), a note of where the work
    stands (``CURRENT_STATE.md``, ``STATUS.md``) or a memory note (``LESSONS_LEARNED.md``)
    beside other notes, dated notes as many as the others or more; a hidden
    one (``.memory/``, ``.memories/``) holding any Markdown."""
    if is_root(folder) or (folder / ".handoff.md").is_file():
        return True
    try:
        md = [e.name for e in os.scandir(folder) if e.is_file() and is_markdown_name(e.name)]
    except OSError:
        md = []
    if len(md) >= 2 and any(
        is_own_index_name(n)
        or _is_state_note(n)
        or is_memory_note_name(n)
        or n.lower() == "checkpoint.md"
        for n in md
    ):
        # an index of its own, a state note (CURRENT_STATE.md), LESSONS_LEARNED.md, the
        # checkpoint the agent resumes from
        return True
    if folder.name.startswith(".") and md:
        return True  # `.memories/QUICK.md`: a hidden memory folder is one by its name
    if md and _in_agent_folder(folder):
        return True  # `.agents/context/memory/learnings.md`: the agent's, by where it is
    sampled, typed = typed_memories(folder)
    dated = _dated_count(folder)
    # dated notes only, or mostly (`2026-02-27.md` … beside a HEARTBEAT.md and a mission)
    return typed > 0 or (dated > 0 and sampled == 0) or (dated >= 2 and dated >= sampled)


def _in_agent_folder(folder: Path, levels: int = 3) -> bool:
    """Whether a folder above ``folder`` (up to ``levels``) is an agent's hidden folder
    (``.agents/``, ``.claude/``, ``.codex/``, ``.copilot-tracking/`` …)."""
    for above in list(folder.parents)[:levels]:
        name = above.name.lower()
        if name.startswith(".") and re.split(r"[-_]", name[1:])[0] in _HIDDEN_AGENT_WORDS:
            return True  # `.copilot-tracking/` too: the agent's by its first word
    return False


WALK_SKIP = frozenset(
    {
        ".git", ".hg", ".svn", ".memls", "node_modules", "bower_components", ".venv", "venv",
        "virtualenv", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox",
        ".nox", "site-packages", "build", "dist", "target", "out", ".next", ".nuxt",
        ".svelte-kit", ".turbo", ".cache", ".gradle", ".idea", "Pods", "DerivedData",
        "vendor", "coverage", ".terraform", ".dart_tool", "bin", "obj", "fixtures",
        "__fixtures__", "testdata", "seed", "seeds", "mocks", "__mocks__", ".specify",
    }
)  # fmt: skip
"""Folders the discovery walk never enters: version control, dependencies, virtualenvs,
caches, build output, test fixtures and seed data (an app's demo `seed/Journal.md` is its
data, not an agent's memory), and spec-kit's `.specify/` (its `memory/constitution.md` is
the project's principles)."""
WALK_MAX_DEPTH = 8
WALK_MAX_ENTRIES = 50_000
LOOKED_FOR = (
    "MEMORY.md, LOG.md, checkpoint-*.md (in any folder, e.g. checkpoints/), handoffs "
    "(.handoff.md, HANDOFF.md, docs/HANDOFF.md), memory folders (.claude/memory, memory/, "
    "memories/), Cline/Cursor memory-bank/, Serena's .serena/memories/, Codex's "
    ".codex/memories/ and Claude Code's auto memory (~/.claude/projects/<slug>/memory)"
)
"""What discovery looks for, in words (said when it finds nothing)."""


@dataclass
class Discovery:
    """The roots a folder holds and how far the walk that found them went."""

    roots: list[Path]
    folders: int = 0
    """Folders the walk looked into."""
    truncated: str | None = None
    """Why the walk stopped before the end (a bound was reached), or None."""


def _is_virtualenv(path: Path) -> bool:
    return (path / "pyvenv.cfg").is_file()


def _own_folders(folder: Path, kind: RootKind, layout: Layout | None) -> set[str]:
    """Subfolders that belong to a root found at ``folder`` (not searched for more roots)."""
    if kind in _NESTED_KINDS or kind is RootKind.CODEX:
        if _NESTED_KINDS.get(kind) == 0:
            return set()  # Hermes reads only its own files: a subfolder may be a root
        return {"*"}
    if layout in (Layout.ORCHESTRATOR, Layout.WORKSPACE):
        return {"memory", "transcripts"}
    return set()


def _not_memory_tree(name: str) -> bool:
    """Commands, skills (``optional-skills/`` too), prompts (``agent-prompts/``), templates, plans, specs,
    design bundles, process pages: instructions, deliverables and their references, never
    memory — not searched for roots below
    (``agents/`` is searched: a persona's folder may hold its memory)."""
    low = name.lower()
    if low == "agents":
        return False  # agents/<name>/ may hold a persona's own MEMORY.md
    if {"template", "templates"} & set(re.split(r"[-_.\s]+", low)):
        return True  # `_TEMPLATE_feature/`: the seed a feature's folder is copied from
    return low in NOT_MEMORY_FOLDERS or low.endswith(
        ("-skills", "_skills", "-prompts", "_prompts", "-commands", "_commands")
    )  # `agent-prompts/`: the tasks given to agents, not what they kept


def _walk_candidate(path: Path, top: bool, named: Instructed = EMPTY) -> RootKind | None:
    """The kind of root ``path`` is, when it is one (found by its files and its name, or
    because the agent instructions above it, ``named``, name it as memory). A folder of
    commands, skills, prompts, templates, subagents or plans is never one."""
    name = path.name
    parent = path.parent.name
    if (
        not top
        and (_not_memory_tree(name) or name.lower() in NOT_MEMORY_FOLDERS)
        and not agent_plans(path)
    ):
        return None
    if name == "memories" and parent in (".codex", ".serena"):
        return RootKind.CODEX if parent == ".codex" else RootKind.SERENA
    if (path / "memory_summary.md").is_file() and name == "memories":
        return RootKind.CODEX
    if is_hermes_memory(path):
        return RootKind.HERMES
    if is_memory_bank(path):
        return RootKind.MEMORY_BANK
    if is_notes_folder(path):
        return RootKind.NOTES
    if is_root(path) and (top or _memory_by_content(path)):
        return RootKind.MEMORY
    if not top and _memory_folder_name(name) and _looks_like_memory_folder(path):
        return RootKind.MEMORY
    if is_claude_project_memory(path):
        return RootKind.MEMORY  # .claude/memory with notes and no MEMORY.md: no index
    if name.lower() in LESSON_FOLDERS and _markdown_count(path) >= 2 and _agent_place(path.parent):
        return RootKind.MEMORY  # an agent's learnings/ (an index and its topic files)
    if _journal_log_in(path) or (name.startswith(".") and _has_memory_note(path)):
        return RootKind.MEMORY  # docs/log.md as a journal; a tool's .wolf/memory.md
    if name == "memories" and parent != ".claude":
        try:
            files = [e.name for e in os.scandir(path) if e.is_file() and e.name[:1] != "."]
        except OSError:
            return None
        md = sum(1 for n in files if is_markdown_name(n))
        if md and md * 2 >= len(files):
            return RootKind.MEMORY_TOOL  # not an album's `memories/` of photos and a README
    if _handoff_files(path):
        return RootKind.HANDOFF
    if (
        names_root(named, path)
        or journal_notes(path)
        or tool_memory_notes(path)
        or is_agent_notes_folder(path)
    ):
        return RootKind.NOTES
    if is_json_memory(path):
        return RootKind.JSON
    return None


MEMORY_FOLDER_NAMES = frozenset(
    {
        "memory", "memories", ".memory", ".memories", "memoria", "memória", "memorias", "memórias",
        "mémoire", "gedächtnis", "erinnerungen", "pamięć", "память", "记忆", "記憶", "メモリ",
        "메모리", "기억",
    }
)  # fmt: skip
"""A memory folder's name, in English and a few other languages (compared lower-cased)."""


def _memory_folder_name(name: str) -> bool:
    """``memory/``, ``memória/``, and a hidden folder with memory as a word of its name
    (``.cunzhi-memory/``, ``.project-memories/``)."""
    low = name.lower()
    if low in MEMORY_FOLDER_NAMES:
        return True
    words = re.split(r"[-_.\s]+", low.lstrip("."))
    return low.startswith(".") and bool({"memory", "memories"} & set(words))


def _has_memory_note(folder: Path) -> bool:
    """A ``memory.md`` (any case) in a hidden folder, or two or more memory notes by name
    (decisions.md, lessons.md, notes.md, learnings.md, session-summaries.md,
    observations.md): an agent tool's memory (``.wolf/``, a tool's ``.<name>/``); in a
    visible one it is as often a page about a memory feature."""
    try:
        names = [e.name for e in os.scandir(folder) if is_markdown_name(e.name) and e.is_file()]
    except OSError:
        return False
    if any(n.lower() == "memory.md" for n in names):
        return True
    return sum(1 for n in names if is_memory_note_name(n)) >= 2


LESSON_FOLDERS = frozenset({"learnings", "lessons", "lessons-learned", "lessons_learned"})
"""Folders of what an agent learned, one topic per file: memory by their name."""


def _agent_place(folder: Path) -> bool:
    """Where an agent keeps what it learned: the repository's top, a hidden tool folder
    (``.claude/``, ``.agent/``), docs or a memory folder — not deep in a course's notes
    (``Mentoria/Lessons/``, a class's lessons)."""
    name = folder.name.lower()
    return (
        (folder / ".git").exists()
        or name.startswith(".")
        or name in ("docs", "doc", "ai", "agent", "agents", "notes", "knowledge")
        or _memory_folder_name(folder.name)
    )


def _markdown_count(folder: Path) -> int:
    try:
        return sum(1 for e in os.scandir(folder) if is_markdown_name(e.name) and e.is_file())
    except OSError:
        return 0


MEMORY_NOTE_WORDS = frozenset(
    {
        "decision", "decisions", "lesson", "lessons", "note", "notes", "learning", "learnings",
        "observation", "observations", "session-summary", "session-summaries", "gotcha",
        "gotchas", "pitfalls",
    }
)  # fmt: skip
"""Names agents give their memory notes (a file's stem, or its first or last word)."""


def is_memory_note_name(name: str) -> bool:
    """``decisions.md``, ``lessons-learned.md``, ``self-observations.md``, ``NOTES.md``."""
    if not is_markdown_name(name):
        return False
    stem = name[:-3].lower().replace("_", "-").replace(" ", "-")
    if stem in MEMORY_NOTE_WORDS:
        return True
    words = stem.split("-")
    return len(words) > 1 and (words[0] in MEMORY_NOTE_WORDS or words[-1] in MEMORY_NOTE_WORDS)


def is_claude_project_memory(folder: Path) -> bool:
    """A project's ``.claude/memory/`` (or ``.claude/memories/``, or a subagent's
    ``.claude/agent-memory/<name>/``) holding Markdown: memory by where it is, with or
    without a MEMORY.md index."""
    parent = folder.parent
    placed = (parent.name == ".claude" and folder.name in ("memory", "memories")) or (
        parent.name == "agent-memory" and parent.parent.name == ".claude"
    )
    if not placed:
        return False
    try:
        return any(is_markdown_name(e.name) and e.is_file() for e in os.scandir(folder))
    except OSError:
        return False


PERSONA_FILES = ("SOUL.md", "IDENTITY.md", "LEARNINGS.md")
"""Files of an agent's persona: a MEMORY.md beside them is that agent's memory."""


def _persona_memory(folder: Path) -> bool:
    """A MEMORY.md beside an agent's persona files (SOUL.md, IDENTITY.md, LEARNINGS.md, or
    AGENTS.md outside a documentation folder), at any depth: that agent's own memory."""
    if not (folder / "MEMORY.md").is_file():
        return False
    if any((folder / n).is_file() for n in PERSONA_FILES):
        return True
    return (folder / "AGENTS.md").is_file() and folder.name.lower() not in DOC_FOLDERS


def _memory_by_content(folder: Path) -> bool:
    """A folder below the one searched, holding MEMORY.md, LOG.md or checkpoints: memory
    unless its only sign is a MEMORY.md that is a document about memory, not an index."""
    if (folder / "LOG.md").is_file() or folder.name.lower() in MEMORY_FOLDER_NAMES:
        return True
    try:
        names = [e.name for e in os.scandir(folder) if is_markdown_name(e.name)]
    except OSError:
        return False
    checkpoints = sum(1 for n in names if CHECKPOINT_RE.match(n))
    if checkpoints and (checkpoints * 2 >= len(names) or "checkpoint" in folder.name.lower()):
        return True  # a folder of checkpoints, not one checkpoint-named note among others
    return (
        folder.parent.name == ".claude"
        or is_claude_memory_dir(folder)
        or _persona_memory(folder)
        or reads_like_index(folder / "MEMORY.md")
    )


def discover(folder: Path, *, home: Path | None = None) -> Discovery:
    """Every memory root a folder holds, found by a bounded walk of the folder (skipping
    version control, dependencies, virtualenvs and build output; at most
    ``WALK_MAX_DEPTH`` folders deep and ``WALK_MAX_ENTRIES`` entries): each folder is a
    root when its files say so (:func:`root_kind`), plus Claude Code's auto-memory folder
    for the project. A root's own subfolders (``memory/`` of an orchestrator, a memory
    bank's ``journal/``) belong to it and are not roots of their own."""
    folder = folder.resolve()
    found: list[Path] = []
    choice = layout_choice(folder)
    whole = choice.layout in (Layout.ORCHESTRATOR, Layout.WORKSPACE)
    result = Discovery(found)
    top_named = named_above(folder)
    own_top = _walk_candidate(folder, top=True, named=top_named)
    if own_top is not None or whole:
        found.append(folder)
    skip_top = _own_folders(folder, own_top or RootKind.MEMORY, choice.layout if whole else None)
    if (
        own_top is RootKind.NOTES
        and folder not in top_named.folders
        and not is_notes_folder(folder)
    ):
        skip_top = set()  # the top holds named files only: the rest is still searched
    repo_top = repository_top(folder) or folder
    entries_seen = 0
    stack: list[tuple[Path, int, Instructed, bool]] = [(folder, 0, top_named, False)]
    while stack:
        place, depth, named, handoffs_only = stack.pop()
        if place != folder:
            named = merged(named, read_instructions(place, repo_top))
        result.folders += 1
        try:
            entries = sorted(os.scandir(place), key=lambda e: e.name, reverse=True)
        except OSError:
            continue
        entries_seen += len(entries)
        if entries_seen > WALK_MAX_ENTRIES:
            result.truncated = f"stopped after {WALK_MAX_ENTRIES:,} files and folders"
            break
        for entry in entries:
            name = entry.name
            try:
                if not entry.is_dir(follow_symlinks=False):
                    continue
            except OSError:
                continue
            if name in WALK_SKIP:
                continue
            only = handoffs_only or name.lower() in HANDOFF_TREES
            if _not_memory_tree(name) and not only:
                continue
            sub = Path(entry.path)
            if place == folder and ("*" in skip_top or name in skip_top):
                if name == "memory" and "*" not in skip_top:
                    stack.append((Path(entry.path), depth + 1, named, only))  # its subfolders
                continue
            if _is_virtualenv(sub):
                continue
            if only and not agent_plans(sub):  # below plans/ and specs/: handoffs alone
                kind = RootKind.HANDOFF if _handoff_files(sub) else None
            else:
                kind = _walk_candidate(sub, top=False, named=named)
            if kind is not None:
                found.append(sub)
                sub_choice = layout_choice(sub) if kind is RootKind.MEMORY else None
                own = _own_folders(sub, kind, sub_choice.layout if sub_choice else None)
                files_only = kind is RootKind.NOTES and sub not in named.folders
                if "*" in own and not (files_only and not is_notes_folder(sub)):
                    continue
            if depth + 1 >= WALK_MAX_DEPTH:
                if result.truncated is None:
                    result.truncated = f"folders deeper than {WALK_MAX_DEPTH} levels not searched"
                continue
            stack.append((sub, depth + 1, named, only))
    if (folder / "transcripts" / ".handoff.md").is_file() and folder not in found:
        found.append(folder)
    auto = claude_memory_dir(folder, home)
    if auto.is_dir():
        found.append(auto)
    ordered = list(dict.fromkeys(found))
    # a root's own subfolders are part of it: an orchestrator's memory/ is not a second root
    parents = {r for r in ordered if root_kind(r) is RootKind.MEMORY}
    result.roots = [
        r
        for r in ordered
        if not (
            r.name in ("memory", "transcripts")
            and r.parent in parents
            and layout_choice(r.parent).layout in (Layout.ORCHESTRATOR, Layout.WORKSPACE)
        )
    ]
    return result


def find_roots(folder: Path, *, home: Path | None = None) -> list[Path]:
    """Every memory root a folder holds (see :func:`discover`). Used when ``memls check``
    is given a folder."""
    return discover(folder, home=home).roots


SKIPPED_LIMIT = 200


def skipped_files(ws: Workspace, secret_only: Iterable[Path] = ()) -> list[tuple[Path, str]]:
    """Files in a root that were not read as memory files, each with why (at most
    ``SKIPPED_LIMIT``): scanned for secrets only, a project's own document, a subfolder of
    the memory folder, not Markdown. Subfolders that are roots of their own are left out."""
    root = ws.root
    listed = set(ws.paths())
    out: list[tuple[Path, str]] = []
    secret = list(secret_only)
    for path in secret:
        rel = _rel_parent(root, path)
        if is_markdown_name(path.name) and rel:
            out.append(
                (path, f"in {rel}/, a subfolder of the memory folder: scanned for secrets only")
            )
        else:
            out.append((path, "not a Markdown memory file: scanned for secrets only"))
    seen = set(secret) | listed
    project = ws.layout_choice.project_folder
    stack: list[tuple[Path, int]] = [(root, 0 if project else 2)]
    if project:
        stack += [(root / d, 2) for d in ("memory", "transcripts") if (root / d).is_dir()]
    while stack and len(out) < SKIPPED_LIMIT:
        place, more = stack.pop()
        try:
            entries = sorted(os.scandir(place), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            path = Path(entry.path)
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if (
                    more
                    and entry.name not in WALK_SKIP
                    and not entry.name.startswith(".")
                    and (_walk_candidate(path, top=False) is None or path.name == "memory")
                ):
                    stack.append((path, more - 1))
                continue
            if path in seen or not is_markdown_name(entry.name):
                continue
            if entry.name.startswith(TEMP_PREFIX):
                continue
            rel = _rel_parent(root, path)
            if ws.root_kind is RootKind.HANDOFF:
                why = "not a handoff: the other documents of a handoff's folder are not memory"
            elif project and place == root:
                why = "a project document: not a memory file by name, and no index link reaches it"
            elif rel:
                why = f"in {rel}/, a subfolder this kind of root does not read"
            else:
                why = "not a memory file of this root"
            out.append((path, why))
            if len(out) >= SKIPPED_LIMIT:
                break
    return out


def _rel_parent(root: Path, path: Path) -> str:
    try:
        rel = path.parent.relative_to(root).as_posix()
    except ValueError:
        return path.parent.as_posix()
    return "" if rel == "." else rel


def roots_for(paths: Iterable[Path], explicit: Path | None = None) -> dict[Path, list[Path]]:
    """Group paths (files or folders) by their memory root."""
    grouped: dict[Path, list[Path]] = {}
    for path in paths:
        root = discover_root(path, explicit)
        if root is None:
            root = (path if path.is_dir() else path.parent).resolve()
        grouped.setdefault(root, []).append(path)
    return grouped
