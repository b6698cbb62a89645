"""MF: memory files carry their frontmatter, decay when not re-applied, and are not duplicated.

MF003 has two sources of near-duplicates: the same content hash (here), and pairs that
similarity providers report. A provider is any ``Callable[[Workspace], Iterable[(Path, Path,
score)]]`` appended to :data:`SIMILARITY_PROVIDERS` (the recall helper registers one); pairs
at or above ``Config.duplicate_threshold`` are reported. Providers are asked once per
workspace generation (every edit starts one), so they must answer from their own cache and
never block on embedding; one that raises is skipped.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from memls.core.model import Diagnostic, Document, FileKind, Range, Severity, TextEdit
from memls.core.parse import kind_for
from memls.core.rules import Rule, RuleContext
from memls.core.workspace import (
    Layout,
    Workspace,
    claude_frontmatter,
    claude_memories_counted,
    is_blank_template,
    is_conventional_doc,
    is_dated,
    is_own_index_name,
    types_memories,
)

RULES = (
    Rule(
        "MF001",
        "memory-frontmatter",
        Severity.WARNING,
        "memory file frontmatter missing or lacking name/description/type (orchestrator "
        "memory/; in Claude Code roots, a frontmatter block lacking or emptying a key — "
        "`type` only where some file of the root uses it: a root of name-and-description "
        "memories, Replit's, uses no type)",
        fixable=True,
        rationale="warning: recall and decay cannot read the file's metadata; the text loads",
        doc="""
        A memory file carries YAML front matter with `name`, `description` and `type`;
        recall and decay read it. In an orchestrator's `memory/` folder the block is
        required; in a Claude Code root only a block that is present is checked (a key
        missing or empty). An unclosed block is reported too.

        Wrong: front matter with only `name: deploy` (no description, no type).
        Right: `---`, `name: deploy`, `description: how we deploy`, `type: project`, `---`.

        Fix: add the block or the key (the quick fix adds what it can derive from the
        file; the memory's type is the author's call).
        """,
    ),
    Rule(
        "MF002",
        "memory-decayed",
        Severity.INFO,
        "memory decayed: `last_applied + half_life_days` is past (and not `evergreen`)",
        rationale="info: a reminder to re-check an old memory, not a problem",
        doc="""
        A memory whose front matter sets `half_life_days` decays once `last_applied` (else
        `created`) plus that many days is past, unless it is `evergreen: true`.

        Example: `last_applied: 2026-01-01`, `half_life_days: 30`, checked on 2026-03-05.

        Fix: re-check the memory, then update `last_applied`, mark it `evergreen: true`,
        or retire it.
        """,
    ),
    Rule(
        "MF003",
        "memory-duplicate",
        Severity.WARNING,
        "near-duplicate memory files (same content hash, or recall similarity ≥ "
        "threshold): each copy once, naming the one to keep (nearest the root, not named "
        "as the copy: `deploy.md` before `deploy-copy.md`, `notes (1).md`), and one "
        "finding for a folder whose files are copies of another folder's "
        "(`notes/notes/`); a file still the same as its seed in a `templates/` folder is "
        "an unfilled copy; copies in history folders or filed under a day "
        "(`inbox/2026-04-20/`) are records, so are notes named by different days "
        "(`2026-04-25.md` = `2026-04-26.md`: a daily report with nothing new, OpenClaw's "
        "nightly dreaming reports), and notes of the same empty skeleton "
        "(headings and placeholders only) no duplicated memory",
        rationale="warning: duplicated memory may diverge; nothing is lost",
        doc="""
        Two memory files hold the same content (whitespace aside), or recall finds them
        at least as similar as the configured threshold. Duplicates drift apart and one
        of them goes stale. A tool's `templates/` folder (Squad's `.squad/templates/`) is
        the seed its live files are copied from: the templates are not judged, a live file
        that resembles its template is filled in as meant, and one still the same as it is
        reported once, as a copy nobody has filled in.

        Fix: keep one file, merge anything unique into it, and point the index at it.
        """,
    ),
    Rule(
        "MF004",
        "memory-folder-without-index",
        Severity.INFO,
        "a Claude Code memory folder has no MEMORY.md and nothing the agent loads names its files",
        rationale="info: the files are intact; no session is told they exist",
        doc="""
        A Claude Code memory folder (`.claude/memory`, `.claude/agent-memory/<agent>/`, or
        the auto-memory folder) holds topic files but no `MEMORY.md`, and neither
        `CLAUDE.md` / `AGENTS.md` nor the repository's Claude Code hooks, commands or
        settings name them. Claude Code loads `MEMORY.md` (or what `CLAUDE.md` imports)
        at session start; a folder with neither is read only when someone remembers it.
        Reported once, on the folder's first file.

        Wrong: `.claude/memory/decisions.md`, `lessons.md`, nothing else.
        Right: `.claude/memory/MEMORY.md` with `- [Decisions](decisions.md) — why sqlite`,
        or `@.claude/memory/decisions.md` in `CLAUDE.md`.

        Fix: add a `MEMORY.md` with one pointer per file, or import the files from
        `CLAUDE.md`.
        """,
    ),
)

REQUIRED_KEYS = ("name", "description", "type")
MEMORY_TYPES = ("user", "feedback", "project", "reference")

SimilarityProvider = Callable[[Workspace], Iterable[tuple[Path, Path, float]]]
SIMILARITY_PROVIDERS: list[SimilarityProvider] = []
"""Sources of (file, file, similarity) pairs for MF003 beyond identical content."""

_TRUE = {"true", "yes", "1", "on"}


def check(ctx: RuleContext) -> Iterator[Diagnostic]:
    doc = ctx.doc
    if doc.kind is not FileKind.TOPIC or not_memory(ctx.workspace, doc) is not None:
        return  # an Agent Skill or a project document: not memory, not judged as memory
    if _frontmatter_expected(ctx.workspace, doc):
        yield from _frontmatter(ctx)
    yield from _decay(ctx)
    yield from _duplicates(ctx)
    yield from _no_index(ctx)


def _no_index(ctx: RuleContext) -> Iterator[Diagnostic]:
    """MF004: a Claude Code memory folder nobody is told about (once, on its first file)."""
    ws, doc = ctx.workspace, ctx.doc
    if ws.layout is not Layout.CLAUDE or ws.index() is not None:
        return
    topics: list[Path] = ws.memo(
        "memls.rules.memoryfile.topics",
        lambda: sorted(
            p for p in ws.paths() if p.suffix.casefold() == ".md" and p != ws.index_path
        ),
    )  # once per workspace generation, not once per file
    if not topics or doc.path != topics[0]:
        return
    if any(p.parent == ws.root and is_own_index_name(p.name) for p in topics):
        return  # the folder keeps an index of its own (`index.md`): it is organised, named
    from memls.core.rules.index.pointers import agent_loads_any

    if agent_loads_any(ws, topics):
        return
    yield ctx.diag(
        "MF004",
        f"this Claude Code memory folder has no {ws.index_path.name} and nothing the agent "
        f"loads names its {len(topics)} file{'s' if len(topics) != 1 else ''}: add a "
        f"{ws.index_path.name} with one pointer per file (or import them from CLAUDE.md), "
        "so a session knows they exist",
        Range.line(0, min(len(doc.line_text(0)), 1000)),
    )


# -- what is not memory ------------------------------------------------------

SKILL_KEYS = frozenset(
    {
        "allowed-tools",
        "allowed_tools",
        "argument-hint",
        "disable-model-invocation",
        "user-invocable",
        "when_to_use",
        "license",
        "compatibility",
        "tools",
        "model",
    }
)
"""Frontmatter keys of Agent Skills, slash commands and subagents, never of a memory."""
_SKILL_FOLDERS = frozenset({"skills", "commands", "agents", "prompts"})
_SKILL_TEXT = re.compile(r"(?i)\b(?:use (?:this|the) skill|this skill\b|use when\b)")
DOC_FOLDERS = frozenset({"docs", "doc", "documentation"})


def not_memory(ws: Workspace, doc: Document) -> str | None:
    """Why a topic file of the root is not memory (None when it is): an Agent Skill
    definition (``SKILL.md``, or a ``name``/``description`` frontmatter with a skill's keys,
    in a skills folder or worded as a skill), or a project document in ``docs/`` that the
    index does not point at. The memory rules (MF001–MF003, IX010, IX012) leave it alone."""
    if not ws.contains(doc.path):
        return _not_memory(ws, doc)
    # Memoised on the workspace: the answer follows this file and the index's links.
    return ws.memo(
        f"memls.mf.not_memory:{doc.path}",
        lambda: _not_memory(ws, ws.document(doc.path) or doc),
    )


def _not_memory(ws: Workspace, doc: Document) -> str | None:
    if doc.path.name.casefold() == "skill.md":
        return "an Agent Skill definition (SKILL.md)"
    fm = doc.frontmatter
    if (
        fm is not None
        and fm.get("name") is not None
        and fm.get("description") is not None
        and _fm_key(doc, "type") is None
    ):
        keys = {entry.key.casefold() for entry in fm.entries}
        description = fm.get("description")
        value = "" if description is None else description.value
        text = value if isinstance(value, str) else " ".join(value)
        folder = {p.casefold() for p in doc.path.parent.parts[-2:]}
        if keys & SKILL_KEYS or folder & _SKILL_FOLDERS or _SKILL_TEXT.search(text):
            return "an Agent Skill, command or subagent definition (name/description frontmatter)"
    if _RELEASE_NOTES.match(doc.path.name) and not _indexed(ws, doc.path):
        return "a product's release notes or changelog, which the index does not point at"
    try:
        rel = doc.path.relative_to(ws.root)
    except ValueError:
        return None
    in_docs = ws.root.name.casefold() in DOC_FOLDERS or any(
        part.casefold() in DOC_FOLDERS for part in rel.parts[:-1]
    )
    if in_docs and _fm_key(doc, "type") is None and not _indexed(ws, doc.path):
        return "a project document in docs/ that the index does not point at"
    return None


_RELEASE_NOTES = re.compile(
    r"(?i)^(?:release[-_ ]?notes|changelog|changes)(?:[-_ .]?v?[\d.]+)?\.md$"
)
"""``RELEASE_NOTES_v1.0.0.md``, ``CHANGELOG.md``: what a release of the product changed, for
its users — the project's document, even when kept beside the memory."""


def _indexed(ws: Workspace, path: Path) -> bool:
    from memls.core.rules.index import reachable

    reached = reachable(ws)
    return reached is not None and path in reached


# -- MF001 -------------------------------------------------------------------


def _frontmatter_expected(ws: Workspace, doc: Document) -> bool:
    """Frontmatter is the convention: orchestrator ``memory/*.md``, and topic files of a
    Claude Code root whose other topic files carry it. Daily logs and README-style
    documents never need it."""
    if is_dated(doc.path) or is_conventional_doc(doc.path):
        return False
    if ws.layout is Layout.ORCHESTRATOR:
        return doc.path.parent == ws.root / "memory"
    if ws.layout is Layout.CLAUDE and doc.path.parent == ws.root:
        # A frontmatter block with an empty or missing key is a slip; a topic file with
        # no block at all is the older hand-written style Claude Code reads as it is; a
        # block of another schema (`type: adr`, tags, updated) is the author's own.
        fm = doc.frontmatter
        if fm is None or claude_frontmatter(_frontmatter_text(doc)) is None:
            return False
        return ws.memo("memls.mf.typed", lambda: _claude_schema_root(ws.root))
    return False


def _frontmatter_text(doc: Document) -> str:
    fm = doc.frontmatter
    if fm is None:
        return ""
    return "\n".join(doc.lines[fm.start_line + 1 : min(fm.end_line, len(doc.lines))])


def _claude_schema_root(root: Path) -> bool:
    """Most of the root's frontmatter blocks (at least half) follow Claude Code's schema."""
    _, fronted, claude, _ = claude_memories_counted(root)
    return claude > 0 and claude * 2 >= fronted


def _fm_key(doc: Document, key: str) -> tuple[int, str] | None:
    """(line, value) of ``key`` in the frontmatter: top level, or nested one level (under
    ``metadata:``, as some writers do)."""
    fm = doc.frontmatter
    if fm is None:
        return None
    entry = fm.get(key)
    if entry is not None:
        value = entry.value if isinstance(entry.value, str) else "".join(entry.value)
        return entry.line, value
    pattern = re.compile(rf"^\s+{re.escape(key)}\s*:\s*(?P<value>.*)$")
    for ln in range(fm.start_line + 1, min(fm.end_line, len(doc.lines))):
        m = pattern.match(doc.lines[ln])
        if m:
            return ln, m.group("value").strip().strip("'\"")
    return None


def _frontmatter(ctx: RuleContext) -> Iterator[Diagnostic]:
    doc = ctx.doc
    eol = doc.eol
    fm = doc.frontmatter
    if fm is None:
        values = _derived_values(doc)
        # Only keys with a value: an empty `type:` would be the next finding (the memory's
        # type is the author's call, so the finding that asks for it stays, without a fix).
        body = "".join(f"{k}: {values[k]}{eol}" for k in REQUIRED_KEYS if values[k])
        yield ctx.diag(
            "MF001",
            "this memory file has no YAML frontmatter: add a `---` block with name, "
            "description and type at the top (recall and decay read it)",
            Range.line(0, len(doc.line_text(0))),
            ctx.fix(
                "Add a frontmatter skeleton", TextEdit(Range.point(0), f"---{eol}{body}---{eol}")
            ),
        )
        return
    opening = Range.line(fm.start_line, len(doc.line_text(fm.start_line)))
    if not fm.terminated:
        yield ctx.diag(
            "MF001",
            "this memory file's frontmatter is not closed: end it with a `---` line",
            opening,
        )
        return
    values = _derived_values(doc)
    for key in REQUIRED_KEYS:
        entry = fm.get(key)
        if entry is None and _fm_key(doc, key) is not None:
            continue  # nested (``metadata:`` → ``type: user``)
        if entry is None and key == "type" and not _types_used(ctx.workspace):
            continue  # a root of name-and-description memories: no file uses `type:`
        if entry is None:
            fix = None
            if values[key]:  # never an empty key, which the next check would report
                fix = ctx.fix(
                    f"Add '{key}' to the frontmatter",
                    TextEdit(Range.point(fm.end_line), f"{key}: {values[key]}{eol}"),
                )
            yield ctx.diag(
                "MF001",
                f"the frontmatter lacks the required key '{key}': add `{key}:` with "
                f"{_explain(key)}",
                opening,
                fix,
            )
        elif not (entry.value if isinstance(entry.value, str) else "".join(entry.value)).strip():
            yield ctx.diag(
                "MF001",
                f"the frontmatter key '{key}' is empty: fill in {_explain(key)}",
                entry.range,
            )


def _types_used(ws: Workspace) -> bool:
    """Whether the root's topic files use the ``type:`` key at all. An orchestrator's
    ``memory/`` is memls's own format, where every topic file has its type."""
    if ws.layout is Layout.ORCHESTRATOR:
        return True
    return ws.memo("memls.mf.types", lambda: types_memories(ws.root))


def _explain(key: str) -> str:
    return {
        "name": "the memory's short name",
        "description": "one line on what this memory is for (recall matches on it)",
        "type": "the memory type (" + ", ".join(MEMORY_TYPES) + ")",
    }[key]


def _derived_values(doc: Document) -> dict[str, str]:
    """What a fix can safely fill in: name from the file, description from the title, type from the prefix."""
    stem = doc.path.stem
    description = ""
    for h in doc.headings:
        if h.level == 1 and h.title:
            description = h.title
            break
    prefix = stem.split("-", 1)[0].split("_", 1)[0].casefold()
    kind = prefix if prefix in MEMORY_TYPES else ""
    return {"name": stem, "description": _yaml_scalar(description), "type": kind}


def _yaml_scalar(text: str) -> str:
    """Quote a value when YAML would otherwise misread it."""
    text = text.strip()
    if not text:
        return ""
    if re.search(r"[:#\[\]{},&*!|>'\"%@`]", text) or text[0] in "-?":
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return text


# -- MF002 -------------------------------------------------------------------


def _decay(ctx: RuleContext) -> Iterator[Diagnostic]:
    fm = ctx.doc.frontmatter
    if fm is None:
        return
    evergreen = fm.get("evergreen")
    if evergreen is not None and str(evergreen.value).strip().casefold() in _TRUE:
        return
    half = fm.get("half_life_days")
    if half is None or not isinstance(half.value, str):
        return
    try:
        days = float(half.value.strip())
    except ValueError:
        return
    if not days > 0 or days > 36_500:
        return
    anchor = fm.get("last_applied")
    what = "last applied"
    if anchor is None:
        anchor, what = fm.get("created"), "created (never applied since)"
    if anchor is None or not isinstance(anchor.value, str):
        return
    when = _parse_day(anchor.value)
    if when is None:
        return
    try:
        due = when + _dt.timedelta(days=days)
    except OverflowError:
        return
    if due >= ctx.now:
        return
    yield ctx.diag(
        "MF002",
        f"this memory decayed on {due:%Y-%m-%d}: {what} {when:%Y-%m-%d} with a half-life of "
        f"{half.value.strip()} days — re-check it, then update `last_applied`, mark it "
        "`evergreen: true`, or retire it",
        anchor.range,
    )


def _parse_day(value: str) -> _dt.datetime | None:
    value = value.strip()
    for fmt, size in (("%Y-%m-%d %H:%M", 16), ("%Y-%m-%dT%H:%M", 16), ("%Y-%m-%d", 10)):
        try:
            return _dt.datetime.strptime(value[:size], fmt)
        except ValueError:
            continue
    return None


# -- MF003 -------------------------------------------------------------------


def content_hash(doc: Document) -> str | None:
    """sha256 of the body (frontmatter excluded) with whitespace runs collapsed; None when blank."""
    cached = doc.extra.get("memls.mf.hash", False)
    if cached is not False:
        return cached if isinstance(cached, str) else None
    start = doc.frontmatter.end_line + 1 if doc.frontmatter is not None else 0
    body = " ".join(" ".join(doc.lines[start:]).split())
    digest = hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest() if body else None
    doc.extra["memls.mf.hash"] = digest
    return digest


def _hash_index(ws: Workspace) -> dict[str, list[Path]]:
    """Topic files by content hash, computed once per workspace generation."""

    def compute() -> dict[str, list[Path]]:
        by_hash: dict[str, list[Path]] = {}
        for path in ws.paths():
            if kind_for(path) is not FileKind.TOPIC:
                continue
            doc = ws.document(path)
            digest = content_hash(doc) if doc is not None else None
            if digest is not None:
                by_hash.setdefault(digest, []).append(path)
        return by_hash

    return ws.memo("memls.mf.hash_index", compute)


def _real(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return path


def _duplicates(ctx: RuleContext) -> Iterator[Diagnostic]:
    doc, ws = ctx.doc, ctx.workspace
    first_line = Range.line(0, len(doc.line_text(0)))
    digest = content_hash(doc)
    reported: set[Path] = set()
    me = _real(doc.path)
    if _in_templates(ws.root, doc.path):
        return  # a template is there to be copied: its copies are the ones judged
    from memls.core.rules.stale import path_in_history_folder

    kept = path_in_history_folder(ws, doc.path) or day_filed(ws, doc.path)
    if digest is not None and not kept:
        copies = [
            other
            for other in _hash_index(ws).get(digest, [])
            if other != doc.path
            and _real(other) != me  # `CLAUDE.md -> AGENTS.md`: one file under two names
            and not path_in_history_folder(ws, other)  # archive/: a record, by design
            and not day_filed(ws, other)  # `inbox/2026-04-20/`: that day's record
        ]
        templates = [o for o in copies if _in_templates(ws.root, o)]
        for other in templates:
            reported.add(other)
            yield ctx.diag(
                "MF003",
                f"same content as the template {_rel(ws.root, other)} (whitespace aside): "
                "a copy of it nobody has filled in; fill it in, or remove it if it was "
                "copied by mistake",
                first_line,
            )
        reported.update(o for o in copies if o not in templates)
        message = _copy_message(ws, doc.path)
        if message is not None:
            yield ctx.diag("MF003", message, first_line)
    threshold = ctx.config.duplicate_threshold
    for a, b, score in _similar_pairs(ws):
        if score < threshold:
            continue
        partner = b if a == doc.path else a if b == doc.path else None
        if partner is None or partner == doc.path or partner in reported or _real(partner) == me:
            continue
        if _in_templates(ws.root, partner):
            continue  # a filled-in copy of a template resembles it by design
        if kept or path_in_history_folder(ws, partner):
            continue  # an archived version resembles the live one (and its siblings) by design
        reported.add(partner)
        yield ctx.diag(
            "MF003",
            f"near-duplicate of {_rel(ws.root, partner)} (similarity {score:.2f} ≥ "
            f"{threshold:.2f}): merge the two memories into one file",
            first_line,
        )


def _filler_only(text: str) -> bool:
    """Headings with one sentence said under each of them (``### 09:00`` … ``No activity
    logged.`` for every hour): a note generated before anything happened, not memory."""
    body = [
        ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")
    ]
    return len(body) >= 3 and len(set(body)) == 1 and len(body[0]) <= 80


_TEMPLATE_FOLDERS = frozenset({"templates", "template", "_templates", "_template"})


_FOLDER_COPY = 3
"""Copies of as many files of one other folder or more: one finding for the folder."""


def _copy_plan(ws: Workspace) -> dict[Path, tuple[Path, int]]:
    """For every topic file that repeats another's content (not in a history or day folder,
    not a template): the copy to keep (:func:`_keep_first`) and how many other copies."""

    def compute() -> dict[Path, tuple[Path, int]]:
        plan: dict[Path, tuple[Path, int]] = {}
        for group in _hash_index(ws).values():
            if len(group) < 2:
                continue  # no copy: nothing to ask of the file system
            first = ws.document(group[0])
            if first is not None and (is_blank_template(first.text) or _filler_only(first.text)):
                continue  # dated notes never filled in: the same empty skeleton, no memory
            real: dict[Path, Path] = {}
            for path in group:
                if path_in_history_folder(ws, path) or day_filed(ws, path):
                    continue
                if _in_templates(ws.root, path):
                    continue
                real.setdefault(_real(path), path)  # one file under two names: one
            kept = sorted(real.values(), key=_keep_first)
            days = [p.name[:10] for p in kept if is_dated(p)]
            if len(days) == len(kept) and len(set(days)) == len(days):
                continue  # `2026-04-25.md` = `2026-04-26.md`: two days' records, same words
            for other in kept[1:]:
                plan[other] = (kept[0], len(kept) - 2)
        return plan

    from memls.core.rules.stale import path_in_history_folder

    return ws.memo("memls.mf.copy_plan", compute)


def _folder_copies(ws: Workspace) -> dict[tuple[Path, Path], list[Path]]:
    """The copies of the plan by (their folder, the kept files' folder), sorted: computed
    once per workspace, not once per file checked."""

    def compute() -> dict[tuple[Path, Path], list[Path]]:
        by: dict[tuple[Path, Path], list[Path]] = {}
        for path, (keep, _) in _copy_plan(ws).items():
            if keep.parent != path.parent:
                by.setdefault((path.parent, keep.parent), []).append(path)
        return {pair: sorted(paths) for pair, paths in by.items()}

    return ws.memo("memls.mf.folder_copies", compute)


def _copy_message(ws: Workspace, path: Path) -> str | None:
    """MF003's words for a copy: once per file, or once for a folder whose files are
    copies of another folder's (``liangzai/liangzai/`` inside ``liangzai/``)."""
    entry = _copy_plan(ws).get(path)
    if entry is None:
        return None
    keep, more = entry
    if keep.parent != path.parent:
        same = _folder_copies(ws).get((path.parent, keep.parent), [])
        if len(same) >= _FOLDER_COPY:
            if path != same[0]:
                return None  # the folder's one finding is on its first copy
            source = (
                "the root's own files"
                if keep.parent == ws.root
                else f"files of {_rel(ws.root, keep.parent)}/"
            )
            where = _rel(ws.root, path.parent) if path.parent != ws.root else "the root"
            return (
                f"{len(same)} files of {where}/ have the same content as {source} "
                "(whitespace aside): a copy of that folder — keep one, merge anything unique "
                "into it, and point the index at the survivor"
            )
    also = f" and {more} other cop{'y' if more == 1 else 'ies'}" if more else ""
    return (
        f"same content as {_rel(ws.root, keep)}{also} (whitespace aside): keep one file, "
        "merge anything unique into it, and point the index at the survivor"
    )


_COPY_NAME = re.compile(
    r"(?i)(?:^|[-_ .(])(?:copy|copia|kopie|backup|bak|old|dup(?:licate)?|\d{1,2})\)?$"
)
"""A name that says it is the copy: ``copy.md``, ``deploy-copy.md``, ``notes (1).md``,
``plan-old.md``, ``deploy-2.md``."""


def _keep_first(path: Path) -> tuple[int, bool, int, str]:
    """The order in which copies are kept: the one nearest the root first (``notes/x.md``
    before its copy in ``notes/notes/``), then one whose name does not say it is the copy
    (``deploy.md`` before ``copy.md``, ``deploy (1).md``), then the shortest name, then by
    path."""
    stem = path.name[: -len(path.suffix)] if path.suffix else path.name
    return len(path.parts), _COPY_NAME.search(stem) is not None, len(path.name), str(path)


def day_filed(ws: Workspace, path: Path) -> bool:
    """A file in a folder named by a date first (``inbox/2026-04-20/``), below the
    repository: the record of that day, kept as it was — its copy filed under another
    day is that day's record too, not a duplicate to merge."""
    from memls.core.rules.stale import dated_record_folder

    return dated_record_folder(ws, path)


def _in_templates(root: Path, path: Path) -> bool:
    """A file in a ``templates/`` folder of the root (Squad's ``.squad/templates/``): the
    seed a tool copies live files from, not a memory of its own."""
    try:
        parts = path.relative_to(root).parts[:-1]
    except ValueError:
        return False
    return any(p.casefold() in _TEMPLATE_FOLDERS for p in parts)


def _similar_pairs(ws: Workspace) -> list[tuple[Path, Path, float]]:
    """Every provider's pairs, asked once per workspace generation (and provider set)."""
    providers = list(SIMILARITY_PROVIDERS)

    def compute() -> list[tuple[Path, Path, float]]:
        pairs: list[tuple[Path, Path, float]] = []
        for provider in providers:
            try:
                found = list(provider(ws))
            except Exception:  # a provider must never break checking
                continue
            pairs.extend(found)
        return pairs

    key = "memls.mf.similar:" + ",".join(str(id(p)) for p in providers)
    return ws.memo(key, compute)


def _rel(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.name


__all__ = [
    "REQUIRED_KEYS",
    "RULES",
    "SIMILARITY_PROVIDERS",
    "SimilarityProvider",
    "check",
    "content_hash",
    "not_memory",
]

# Recall's MF003 provider: near-duplicate topic files from the recall store's precomputed
# file vectors (cheap: cached per store generation, never embeds). Imported last because it
# appends to SIMILARITY_PROVIDERS above.
from memls.core.recall.similarity import recall_similarity  # noqa: E402

SIMILARITY_PROVIDERS.append(recall_similarity)
