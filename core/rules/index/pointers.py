"""IX009, IX010, IX012: pointers and links — the index's pointers lead to files that exist,
every topic file is reached by some link from the index, and a topic file's links lead
somewhere."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from fnmatch import fnmatchcase as fnmatch
from pathlib import Path
from urllib.parse import unquote

from memls.core.formats.links import Link, distinct_links, extract_links, link_key
from memls.core.gitfacade import history, ignored
from memls.core.model import Diagnostic, Document, Range
from memls.core.parse import parse_file
from memls.core.rules import RuleContext
from memls.core.text import also_on
from memls.core.workspace import (
    MEMORY_FOLDER_NAMES,
    SOURCE_FILE,
    Layout,
    RootKind,
    Workspace,
    is_backup_copy,
    is_conventional_doc,
    is_dated,
    is_markdown_name,
)

_TARGETS_KEY = "memls.rules.index.pointer_targets"


def check_pointers(ctx: RuleContext) -> Iterator[Diagnostic]:
    """IX009: pointers of the index that lead nowhere at all."""
    doc = ctx.doc
    resolver = ctx.workspace.links
    # An index of many pointers repeats its targets: each distinct one is resolved once,
    # and only when one leads nowhere are all the links made, to report each pointer to it.
    missing = {link_key(link) for link in distinct_links(doc) if resolver.resolve(link) is None}
    if not missing:
        return
    dead = [link for link in extract_links(doc) if link_key(link) in missing]
    local = _kept_out_of_git(ctx.workspace, dead)
    kept = [
        link
        for link in dead
        if link_key(link) not in local
        and _reportable(ctx.workspace, link, doc)
        and not _to_another_machine(ctx.workspace, link)
    ]
    for link, again in _once_per_target(kept):
        where = _namesakes(ctx.workspace, link)
        if not _points(doc, link):
            # a path named in a sentence or a table: maybe a file of this memory, maybe one
            # of another repository or the owner's vault — a warning, not a lost memory
            if _conventional_name(link.target):
                continue  # "updated `CLAUDE.md` and `SKILL.md`": a kind of file, any repo's
            place = (
                f"is not at that path ({_noun(where)} of that name is at {where})"
                if where
                else f"exists nowhere (not beside {doc.name}, in the memory root or the repository)"
            )
            message = (
                f"`{link.target}`, named in passing in the index, {place}: if it is this "
                "memory's file, fix the path or create it; if it is another repository's, "
                "say which"
            )
            yield ctx.diag("IX013", message + also_on(again), link.range)
            continue
        if where:
            message = (
                f"pointer to `{link.target}`, which is not where it points (beside {doc.name}, "
                f"in the memory root or the repository); {_noun(where)} of that name is at {where}: "
                "point it there if the file moved, or remove the pointer"
            )
        else:
            message = (
                f"pointer to `{link.target}`, which exists nowhere (not beside {doc.name}, in "
                "the memory root or the repository): fix the path, create the file, or remove "
                "the pointer"
            )
        yield ctx.diag("IX009", message + also_on(again), link.range)


def _conventional_name(target: str) -> bool:
    """A bare file name in capitals (``CLAUDE.md``, ``SKILL.md``, ``README.Docker.md``,
    ``OMADA_TOOLS.md``): the name of a kind of document every repository may have, which a
    journal names in passing for another repository's as often as for this one's."""
    name = target.strip()
    if "/" in name or not name.lower().endswith(".md"):
        return False
    stem = name[:-3].split(".", 1)[0]
    return any(c.isupper() for c in stem) and stem == stem.upper()  # (CJK has no case)


def _points(doc: Document, link: Link) -> bool:
    """Whether the index presents ``link`` as a pointer: a Markdown link or wikilink, or a
    path that opens its list item (`` - `deploy.md` — how to ship``). A backticked path
    inside a sentence or a table cell names a file in passing (IX013)."""
    if link.kind not in ("code", "bullet"):
        return True
    line = doc.line_text(link.line)
    if link.kind == "bullet":
        return True  # `- NOW.md — what it holds`: already read as a pointer bullet
    if _POINTER_START.match(line[: link.start]) is not None:
        return _presented_as_pointer(line, link)
    # `- **Agents:** `a.md`, `b.md``: a labelled item listing paths, each one a pointer
    return _PATH_LIST.match(line[: link.start]) is not None


_PATH_LIST = re.compile(
    r"^\s*(?:[-*+]|\d{1,9}[.)])\s+(?:\*\*[^*]{1,40}\*\*:?\s*|[^`:*]{1,40}:\*{0,2}\s+)?"
    r"(?:`[^`]+`\s*(?:,|;|\band\b|&|\+|/)?\s*)*`$"
)
"""A list item's start that only a label and other paths come before: a list of pointers."""


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_DATE_PATTERN = re.compile(r"\d{4}-MM-DD|YYYY|MM-DD|\bHH-?MM\b")
"""The pattern of a day's file name (`memory/2026-MM-DD.md`), no file."""
_PLACEHOLDER = re.compile(
    r"(?i)kebab-case|snake_case|example|placeholder|your[-_]|xxx|yyyy|[-_]name\.md$|^name[-_]"
    rf"|(?-i:{_DATE_PATTERN.pattern})|(?-i:(?<![A-Za-z])NN(?![A-Za-z]))"
)
_CUT_SHORT = re.compile(r"…|[^./]\.{3}|\.{3}[^./]")
"""A long name cut short (``20260211T2023...manifold_1d12.md``), not ``../``."""
_BRACKETS = {"[": "]", "<": ">", "{": "}"}
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _names_itself(link: Link, line: str) -> bool:
    """A link whose text is its own target, an identifier with no extension or folder
    (``[`read_file`](read_file)``, a tool list an agent wrote): a name, not a file."""
    if not _IDENTIFIER.fullmatch(link.target):
        return False
    head = line[: link.start]
    text = re.search(r"\[`?([^\]`]*)`?\]\($", head) or re.search(r"\[`?([^\]`]*)`?\]$", head)
    return text is not None and text.group(1) == link.target


_POINTER_START = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+(?:\*\*)?`$")


def _reportable(ws: Workspace, link: Link, doc: Document | None = None) -> bool:
    """Whether a link that does not resolve is a finding (conservative for backtick paths)."""
    target = link.target
    if "\\" in target or _CONTROL.search(target):
        return False  # SZ005 reports it
    if not any(c.isalnum() for c in target):
        return False  # `[<url>](`/`)`, `[x](/)`: no file named, a site's root or a mark
    if _CUT_SHORT.search(target):
        return False  # `20260211T2023...manifold_1d12.md`: a long name cut short, no path
    if _BRACKETS.get(target[:1]) == target[-1:]:
        return False  # `[x]([type/requirement])`: a placeholder to fill in, no file
    line = doc.line_text(link.line) if doc is not None else ""
    if link.kind == "markdown" and _names_itself(link, line):
        return False  # [`read_file`](read_file): a tool's name written as a link, no file
    if link.kind in ("wikilink", "markdown") and _explains_syntax(link, line):
        return False  # `use the [[filename]] format`: an example of the syntax, no link
    if link.kind == "markdown" and _math_notation(link, line):
        return False  # `f^[n](e0)`: f applied n times to e0, in a proof sketch
    if link.kind == "markdown" and _ARRAY_TYPE.search(line[: link.start]):
        return False  # `TEXT[](2026-07-12, batch)`: an array type, then a parenthesis
    if _said_future(line) or _said_owed(line, link) or _listed_as_future(doc, link.line):
        return False  # `docs/DESIGN_SYSTEM.md` — Future (if needed): a file still to write
    if _said_gone(line, link):
        return False  # "Deleted the duplicate `feedback/x.md`": a record that it went
    if link.kind == "wikilink":
        if _DIRECTIVE.match(target):
            return False  # `[[reply_to_current]]`: an agent's reply directive, no note
        if _numbered_note(ws, link, target):
            return False  # `[[106. Backlog Is The Tracker]]`: note 106 by its number and title
        if _names_a_skill(ws, target):
            return False  # `[[hil-author-test]]`: the skill `.claude/skills/hil-author-test/`
        if _VAULT_LABEL.search(line[: link.start]):
            return False  # `Obsidian: [[2026-05-30-comms]]`: a note of the owner's vault
        if _in_claude_auto_memory(ws, target, _MEMORY_LABEL.search(line[: link.start]) is not None):
            return False  # `[[reference-ci-gotchas]]` from a handoff: Claude Code's own memory
        return _norm_words(target) not in _SYNTAX_WORDS
    if _CURSOR_PLAN.search(target):
        return False  # `name_37d1bdf0.plan.md`: Cursor keeps its plans in the home folder
    if link.kind in ("code", "bullet") and _placeholder_in_legend(link, line):
        return False  # `@file.md` = import: a legend of the syntax, no file
    if link.kind in ("code", "bullet") and doc is not None and _said_absent(doc, link.line):
        return False  # under "these files are NOT in this directory": mentions, no pointers
    if _beyond_reach(ws, link, target):
        return False
    if link.kind != "wikilink" and ws.links.by_tail(target) is not None:
        return False  # `projects/x/data/notes/facts.md` with `y/data/notes/facts.md` here
    if link.kind != "wikilink" and _into_another_codebase(ws, target):
        return False  # `browser_use/dom/service.py` in notes on another project's code
    if is_backup_copy(ws.repo_root) and not _into_a_copied_folder(ws, link):
        return False  # a backup holds the files its script copies; the rest stay live
    if ws.root_kind is RootKind.CODEX and not _into_codex_folder(ws, target):
        return False  # Codex's one memory for every workspace: `docs/x.md` is the task's
    if link.kind in ("markdown", "reference"):
        return True
    if not target.casefold().endswith(".md") or target.startswith("~"):
        return False  # a home path is this machine's business, not the memory's
    if _DATE_PATTERN.search(target.rsplit("/", 1)[-1]):
        return False  # `**memory/YYYY-MM-DD.md** — daily logs`: the pattern of a day's name
    if link.kind == "bullet":
        # `- NOW.md — what it holds` presents a pointer; `- NOW.md "lifeboat" file, an idea
        # from …` mentions a file name in prose.
        return doc is None or _presented_as_pointer(line, link)
    if _PLACEHOLDER.search(target.rsplit("/", 1)[-1]):
        return False  # `category/kebab-case-name.md`: a template, not a pointer
    # A backtick path is a pointer when it names a memory file (a bare name, or a path
    # under ``memory/``), or when its folder exists but the file does not; a template such
    # as `category/kebab-case-name.md` names a folder that exists nowhere either.
    parts = target.lstrip("./").split("/")
    leading = doc is not None and _POINTER_START.match(line[: link.start]) is not None
    if leading and not _presented_as_pointer(line, link):
        return False  # - `NOW.md` "lifeboat" file, …: a file name in prose
    if len(parts) == 1 or parts[0] == "memory" or ws.layout is Layout.WORKSPACE:
        return True  # an agent workspace's MEMORY.md names its files in backticks
    if leading:
        return True  # `- `path.md` — what it is`: a pointer bullet
    folder = "/".join(parts[:-1])
    bases = [link.source.parent, ws.root] + ([ws.repo_root] if ws.repo_root else [])
    return any(ws.links.exists(base / folder) for base in bases)


_NUMBER_AND_TITLE = re.compile(r"^(\d{1,5})[.)]?\s+\S")


def _numbered_note(ws: Workspace, link: Link, target: str) -> bool:
    """A wikilink naming a note by its number and title (``[[106. Backlog Is The Tracker]]``)
    where a note numbered so is beside it or in the root (``106-backlog-is-the-tracker.md``):
    the number finds it, whatever the title's spelling."""
    match = _NUMBER_AND_TITLE.match(target)
    if match is None:
        return False
    number = match[1]
    for folder in {link.source.parent, ws.root}:
        try:
            names = [e.name for e in os.scandir(folder) if e.is_file()]
        except OSError:
            continue
        if any(re.match(rf"0*{number}[-_. ]", n) and is_markdown_name(n) for n in names):
            return True
    return False


_SYNTAX_WORDS = frozenset({"wikilink", "wikilinks", "wiki link", "wiki links", "link", "links"})
"""`[[wikilinks]]` in prose mentions the syntax; it names no note."""
_PLACEHOLDER_NAMES = frozenset(
    {
        "filename",
        "file name",
        "file",
        "note",
        "note name",
        "notename",
        "page",
        "page name",
        "name",
        "title",
        "target",
        "path",
        "url",
        "slug",
        "topic",
        "something",
        "foo",
        "bar",
        "x",
    }
)
"""Targets that name a kind of thing, not a file: `[[filename]]`, `[text](url)`."""
_SYNTAX_TALK = re.compile(r"(?i)\b(?:syntax|format|formatted|notation|convention|wiki-?links?)\b")
_QUOTES = {'"': '"', "'": "'", "“": "”", "‘": "’", "«": "»"}


def _explains_syntax(link: Link, line: str) -> bool:
    """A link written as an example of the syntax: a placeholder target (``[[filename]]``,
    ``[text](url)``), a link in quotes, or a made-up target in a sentence about the format."""
    word = _norm_words(link.target.removesuffix(".md"))
    if word in _PLACEHOLDER_NAMES or _PLACEHOLDER.search(link.target.rsplit("/", 1)[-1]):
        return True
    if not line:
        return False
    open_at = line.rfind("[", 0, link.start)
    open_at = open_at - 1 if link.kind == "wikilink" and open_at > 0 else open_at
    close_at = line.find(")" if link.kind == "markdown" else "]]", link.end)
    if close_at != -1:
        close_at += 1 if link.kind == "markdown" else 2
    before = line[open_at - 1] if open_at > 0 else ""
    after = line[close_at] if 0 <= close_at < len(line) else ""
    if before in _QUOTES and after == _QUOTES[before]:
        return True  # "[[filename]]": quoted, as an example
    return link.kind == "wikilink" and _SYNTAX_TALK.search(line) is not None


_MATH_BEFORE = re.compile(r"[\^_]\[[^\]]*\]\($")


_ARRAY_TYPE = re.compile(r"\w\[\]\(<?\s*$")
"""Empty brackets right after a word (``TEXT[]``, ``string[]``): an array type in prose or
a schema, which a parenthesis after it makes look like a link with no text."""


def _math_notation(link: Link, line: str) -> bool:
    """``f^[n](x)`` (Lean's iterate), ``a_[i](t)``, or a link inside ``$…$``: mathematics
    the Markdown syntax happens to match, no link."""
    before = line[: link.start]
    if _MATH_BEFORE.search(before) is not None:
        return True
    return before.count("$") % 2 == 1 and "$" in line[link.end :]


_SKILL_FOLDERS = (".claude/skills", ".agent/skills", ".agents/skills", "skills")


def _names_a_skill(ws: Workspace, target: str) -> bool:
    """A wikilink naming an Agent Skill of the repository (a folder with ``SKILL.md`` under
    ``.claude/skills/``, ``.agents/skills/`` …): the note points at the skill, which is there."""
    if ws.repo_root is None or "/" in target:
        return False
    name = target.removesuffix(".md")
    return any((ws.repo_root / base / name / "SKILL.md").is_file() for base in _SKILL_FOLDERS)


_AUTO_MEMORY_NOTE = re.compile(
    r"(?i)^(?:memory[-_])?(?:user|feedback|project|reference)[-_][\w-]+(?:\s+\w+){0,2}$"
)
_USER_NOTE = re.compile(r"(?i)^(?:user|feedback)[-_]")


_VAULT_LABEL = re.compile(r"(?i)\b(?:obsidian|(?:in\s+the\s+)?vault)(?:\s+notes?)?\s*[:：]")
"""A label saying the wikilinks after it are notes of an Obsidian vault kept elsewhere."""
_MEMORY_LABEL = re.compile(
    r"(?i)\b(?:related\s+|see\s+)?memor(?:y|ies)\s*(?:notes?\s*)?[:：]"
    r"|(?:관련\s*)?메모리\s*[:：]|メモリ\s*[:：]|记忆\s*[:：]|記憶\s*[:：]"
)
"""A line's label saying the wikilinks after it name memories ("Related memory:",
"관련 메모리:"): notes of the agent's own memory, wherever it keeps them."""


def _in_claude_auto_memory(ws: Workspace, target: str, labelled: bool = False) -> bool:
    """A wikilink named like a note of Claude Code's auto memory (``reference_ci_gotchas``,
    ``feedback-commit-style``) or after a label calling it one ("Related memory:
    [[db-schema]]"), written in a handoff or notes root (or a root with no index,
    a sprint folder's log and retro), not a memory folder of such notes: Claude Code keeps
    that memory in the owner's home folder (``~/.claude/projects/<slug>/memory/``), which
    no checkout holds."""
    name = target.removesuffix(".md")
    if _AUTO_MEMORY_NOTE.match(name) is None and not labelled:
        return False  # (a wikilink the line calls a memory is one, whatever its name)
    if _indexed_elsewhere(ws, name):
        return True  # the index links it in the home folder's memory: the note is there
    subagent = any(p.name.lower() == "agent-memory" for p in (ws.root, *ws.root.parents)[:3])
    if subagent and _USER_NOTE.match(name) is not None:
        # a subagent's memory (`.claude/agent-memory/<agent>/`) citing the user's feedback,
        # which the main memory keeps; its own project and reference notes live here
        return True
    unindexed = ws.root_kind is RootKind.MEMORY and ws.index() is None
    if ws.root_kind not in (RootKind.HANDOFF, RootKind.NOTES) and not unindexed:
        return False  # (a sprint folder's log.md and retro: memory with no index of notes)
    # `.claude/memory/` holding `project_x.md`: such notes live here; a missing one is
    # missing. A memory folder of other names (`ki/bench_history.md`) links the agent's.
    folders = [p for p in (ws.root, *ws.root.parents)[:4] if p.name.lower() in MEMORY_FOLDER_NAMES]
    return not any(_keeps_typed_notes(ws, folder) for folder in folders)


def _keeps_typed_notes(ws: Workspace, folder: Path) -> bool:
    """Whether a memory folder keeps notes named by Claude Code's memory types
    (``feedback_x.md``, ``project-y.md``), at any depth: where such a note belongs."""
    return any(
        name.endswith(".md") and _AUTO_MEMORY_NOTE.match(name[:-3])
        for name in ws.links.names_under(folder)
    )


def _indexed_elsewhere(ws: Workspace, name: str) -> bool:
    """The memory's index links a note of this name (``-`` and ``_`` alike) outside the
    checkout (``../../../.claude/projects/<slug>/memory/feedback_x.md``): the wikilink names
    that note, kept in the owner's home folder."""
    index = ws.index()
    if index is None:
        return False
    want = name.casefold().replace("-", "_")
    for link in extract_links(index):
        stem = link.target.rsplit("/", 1)[-1].removesuffix(".md").casefold().replace("-", "_")
        if stem == want and (link.target.startswith("~") or ".claude/projects/" in link.target):
            return True
    return False


_CURSOR_PLAN = re.compile(r"(?:^|/)[\w-]+_[0-9a-f]{8}\.plan\.md$")
"""Cursor's plan files (``surfing-the-landscape_37d1bdf0.plan.md``): kept in ``~/.cursor/plans/``."""

_DIRECTIVE = re.compile(r"(?i)^reply_to(?:_[a-z0-9]+)*$|^audio_as_voice$")
"""Reply directives agents write in double brackets (OpenClaw's ``[[reply_to_current]]``)."""
_LEGEND = re.compile(r"\s=\s|(?i:\b(?:syntax|format|notation|means|legend)\b)")


def _placeholder_in_legend(link: Link, line: str) -> bool:
    """A placeholder name (`file.md`, `path.md`) on a line that explains a notation."""
    word = _norm_words(link.target.rsplit("/", 1)[-1].removesuffix(".md"))
    return word in _PLACEHOLDER_NAMES and _LEGEND.search(line) is not None


_ABSENT = re.compile(
    r"(?i)\b(?:not\s+(?:in|here|included|kept|stored|committed|tracked|part\s+of|shared|present"
    r"|copied)|n't\s+(?:in|here|included|kept|stored|committed|tracked)|excluded|omitted"
    r"|left\s+out|removed|deleted|moved\s+(?:out|away|to)|private|gitignored|untracked"
    r"|elsewhere|outside\s+(?:this|the)\s+(?:repo|repository|folder|directory))\b"
)
"""Words of a heading or lead-in saying the files listed below it are not here."""


def _said_absent(doc: Document, line: int) -> bool:
    """Whether the heading over ``line``, or the prose line that leads into its list, says
    the files it lists are not here (excluded, private, moved …): names, not pointers."""
    heading = None
    for sec in doc.sections:
        if sec.start_line < line < sec.end_line and (heading is None or sec.level > heading.level):
            heading = sec
    if heading is not None and _ABSENT.search(heading.title):
        return True
    start = heading.body_start if heading is not None else 0
    for ln in range(line - 1, max(start, line - 40) - 1, -1):
        text = doc.line_text(ln).strip()
        if not text or re.match(r"(?:[-*+]|\d{1,9}[.)])\s", text):
            continue  # the list itself, and blank lines inside it
        return _ABSENT.search(text) is not None
    return False


_POINTER_AFTER = re.compile(r"^`?(?:\*\*)?\s*(?:$|[—–:(,;|→]|-{1,2}(?:\s|$)|->|\[)")


_FUTURE = re.compile(
    r"(?i)\b(?:future|planned|if needed|when needed|to be (?:created|written|added)|to create|"
    r"(?:if|once|when) (?:it is |it's )?(?:written|created)|if (?:it )?exists|"
    r"not (?:yet )?(?:created|written)|not written yet|tbd|"
    r"in each (?:project|repo(?:sitory)?)|per[- ]project|project[- ]level|"
    r"(?:private|local)[- ]only|not (?:in|committed to) (?:the |this )?repo(?:sitory)?|"
    r"never (?:copy|commit) (?:it )?(?:to|into))\b|项目级|当前项目|项目目录|各项目"
)
_SPANS = re.compile(r"`[^`]*`|\[[^\]]*\]\([^)]*\)|\[\[[^\]]*\]\]")


_OWED = re.compile(
    r"(?i)\b(?:owed|proposals?|proposed|deferred|candidate|follow-?ups?|hypothetical|"
    r"would (?:be|need)|to (?:write|draft)|not yet)\b"
)
OWED_WINDOW = 48
"""How many characters each side of a pointer are read for words saying it is owed."""


def _said_owed(line: str, link: Link) -> bool:
    """The words next to the pointer say the file is owed or only proposed ("`docs/X.md`
    owed", "first-step proposal = `docs/PACKS.md`", "candidate follow-ups = `…`"): a file
    still to write, named in a long line whose other pointers are judged."""
    before = _SPANS.sub(" ", line[max(0, link.start - OWED_WINDOW) : link.start])
    after = _SPANS.sub(" ", line[link.end : link.end + OWED_WINDOW])
    return _OWED.search(before) is not None or _OWED.search(after) is not None


_GONE_BEFORE = re.compile(
    r"(?i)\b(?:deleted|removed|archived|retired|dropped|renamed|moved|merged|superseded|"
    r"deprecated|obsoleted|consolidated|folded)\b(?:\s+(?:the|a|an|old|stale|byte-identical|"
    r"duplicate|empty|unused|orphaned|[\w-]+ly))*\s*[:(]?\s*[`\[*\"']*$"
)
_GONE_AFTER = re.compile(
    r"(?i)^[`\]*\"')]*\s*(?:\((?:now\s+)?(?:deleted|removed|archived|retired|gone|superseded|"
    r"deprecated|obsolete|merged)\b|(?:\s*[a-z][\w-]*){0,2}\s*(?:was|were|has been|have been|is now|now)"
    r"\s+(?:deleted|"
    r"removed|archived|retired|gone|superseded|deprecated|merged))"
)


def _said_gone(line: str, link: Link) -> bool:
    """The line records that the file went — "Deleted the duplicate `x.md`", "`y.md`
    (archived)", "`z.md` was merged into …": history of the memory, no pointer to follow."""
    before = line[max(0, link.start - 60) : link.start]
    before = re.split(r"[.;!?]\s", before)[-1]
    after = line[link.end : link.end + 40]
    return _GONE_BEFORE.search(before) is not None or _GONE_AFTER.match(after) is not None


_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s")


def _listed_as_future(doc: Document | None, line: int) -> bool:
    """A list item under a lead-in that says its files are still to come (``**File
    structure (TO CREATE):**`` followed by ``- `x-watchlist.md` — …``): planned, no pointer."""
    if doc is None or not _LIST_ITEM.match(doc.line_text(line)):
        return False
    at = line - 1
    while at >= 0 and at > line - 40:
        text = doc.line_text(at)
        if text.strip() and not _LIST_ITEM.match(text) and not text.startswith((" ", "\t")):
            return _FUTURE.search(_SPANS.sub(" ", text)) is not None
        at -= 1
    return False


def _said_future(line: str) -> bool:
    """The line says the file is still to come ("Future", "planned", "(if needed)", "to be
    created", "TBD"), that it is made in each project ("per project", "project-level"), or
    that it is kept out of the repository ("private, never copied", "local-only"), in its
    words outside the links and code spans: no dead pointer."""
    return _FUTURE.search(_SPANS.sub(" ", line)) is not None


def _beyond_reach(ws: Workspace, link: Link, target: str) -> bool:
    """A path memls cannot judge from the repository: in the home folder (``~/…``, this
    machine's business), a site path with no file extension (``/automation/orders``), or a
    relative path that climbs out of the repository (``../../../plans/x.md`` from a copy of
    a home memory folder)."""
    if target.startswith("~"):
        return True
    if target.startswith("/"):
        return "." not in target.rsplit("/", 1)[-1]
    repo = ws.repo_root
    if repo is None or not target.startswith(".."):
        return False  # without a repository the path is on this machine: judged
    landed = os.path.normpath(os.path.join(str(link.source.parent), unquote(target)))
    if _github_route(target) and not _route_folder_exists(landed, target):
        return True  # `../../issues/12`: the repository's issue on GitHub, not a file
    if landed == str(repo) or landed.startswith(str(repo) + os.sep):
        return False
    # It leaves the repository. A copy of a home folder may come back in through a folder
    # the repository has (`../../../dotfiles/knowledge/x.md` → `knowledge/`): judged; a
    # folder the repository does not have (`../../../plans/`) is another machine's.
    parts = [p for p in unquote(target).split("/")[:-1] if p not in ("", ".", "..")]
    return not any((repo / "/".join(parts[i:])).is_dir() for i in range(len(parts)))


def _into_another_codebase(ws: Workspace, target: str) -> bool:
    """A path to a source file (not a note) under a top folder this repository has at no
    depth, now or in the commits memls reads (``browser_use/agent/service.py`` in notes
    about another project's code): a path in that codebase, not a file here gone missing."""
    if ws.repo_root is None:
        return False
    parts = [p for p in unquote(target).split("#", 1)[0].split("/") if p not in ("", ".", "..")]
    if len(parts) < 2 or not SOURCE_FILE.search(parts[-1]):
        return False
    first = parts[0].casefold()
    if first in ws.links.folder_names():
        return False
    hist = history(ws.git) if ws.git.toplevel is not None else None
    return hist is None or first not in hist.folder_names


_GITHUB_ROUTES = frozenset(
    {
        "issues", "pull", "pulls", "wiki", "blob", "tree", "commit", "commits", "compare",
        "actions", "releases", "discussions", "projects", "milestone", "milestones", "labels",
        "security", "tags", "branches",
    }
)  # fmt: skip
"""The pages of a repository on GitHub a relative link climbs out to (`../../issues/12`)."""


def _github_route(target: str) -> bool:
    """A relative link that climbs up to one of GitHub's pages of the repository:
    `../issues/12`, `../../../pull/7`, `../../wiki/Home`, `../../blob/main/x.py` (not a
    Markdown file under such a name): written for the page GitHub renders
    (`<owner>/<repo>/blob/<branch>/<path>`), a link to the web, not to a file on disk."""
    parts = [p for p in unquote(target).split("#", 1)[0].split("/") if p not in ("", ".")]
    rest = [p for p in parts if p != ".."]
    if not rest or len(rest) == len(parts) or rest[0] not in _GITHUB_ROUTES:
        return False
    return rest[0] in ("blob", "tree") or not rest[-1].casefold().endswith(".md")


def _route_folder_exists(landed: str, target: str) -> bool:
    """Whether the folder a GitHub-route link lands in (`issues/` of `../issues/12`) is
    one on disk: then the link is to a file of it, judged as any other."""
    rest = [p for p in unquote(target).split("#", 1)[0].split("/") if p not in ("", ".", "..")]
    depth = len(rest) - 1
    folder = landed
    for _ in range(depth):
        folder = os.path.dirname(folder)
    return os.path.isdir(os.path.join(folder, rest[0])) if rest else False


def _into_a_copied_folder(ws: Workspace, link: Link) -> bool:
    """In a backup, whether a pointer leads into a subfolder the backup holds (`memory/…`
    when it copies memory/): judged. A top-level name (the script copies a chosen few) or a
    folder the backup does not hold (`projects/…`) may be one left in the live workspace."""
    parts = [p for p in unquote(link.target).split("/")[:-1] if p not in ("", ".")]
    if not parts or ".." in parts:
        return False
    return (link.source.parent / parts[0]).is_dir() or (ws.root / parts[0]).is_dir()


_CODEX_FILES = frozenset({"memory.md", "memory_summary.md", "raw_memories.md"})


def _into_codex_folder(ws: Workspace, target: str) -> bool:
    """Whether a path in Codex's memory names one of the memory folder's own files: Codex
    keeps one memory for every workspace it works in, so `docs/PLAN.md` or `ARCHITECTURE.md`
    is relative to the working folder of the task that wrote it (which this folder does
    not know), while `rollout_summaries/x.md` or `raw_memories.md` is the memory's own."""
    parts = [p for p in unquote(target).split("#", 1)[0].split("/") if p not in ("", ".")]
    if not parts:
        return False
    if len(parts) == 1:
        return parts[0].casefold() in _CODEX_FILES
    return (ws.root / parts[0]).is_dir()


def _presented_as_pointer(line: str, link: Link) -> bool:
    """Whether a bullet's leading path is presented as a pointer: nothing after it, or a
    separator (`—`, `:`, `(` …) before what it is; a path followed by words is prose."""
    return _POINTER_AFTER.match(line[link.end :]) is not None


def _norm_words(text: str) -> str:
    return " ".join(re.split(r"[-_\s]+", text.strip().casefold()))


def check_topic_links(ctx: RuleContext) -> Iterator[Diagnostic]:
    """IX012: Markdown links and wikilinks in a topic file that lead nowhere."""
    doc = ctx.doc
    resolver = ctx.workspace.links
    if is_session_transcript(doc):
        return  # a saved conversation quotes brackets it never meant as links
    if is_record(ctx.workspace, doc):
        return  # a dated or archived record: the files it linked then have moved on
    dead = [
        link
        for link in extract_links(doc)
        if link.kind in ("markdown", "reference", "wikilink")
        and _reportable(ctx.workspace, link, doc)
        and resolver.resolve(link) is None
    ]
    local = _kept_out_of_git(ctx.workspace, dead)
    kept = [
        link
        for link in dead
        if link_key(link) not in local
        and not _to_another_machine(ctx.workspace, link)
        and not (
            link.kind == "wikilink"
            and (
                _TRACKER_ITEM.fullmatch(link.target.strip())
                or _names_an_instruction_section(ctx.workspace, link)
            )
        )  # an issue of the tracker, or a section of the agent's instructions
    ]
    for link, again in _once_per_target(kept):
        shown = f"[[{link.target}]]" if link.kind == "wikilink" else f"`{link.target}`"
        where = _namesakes(ctx.workspace, link)
        if where:
            message = (
                f"link to {shown}, which is not where it points (beside this file, in the "
                f"memory root or the repository); {_noun(where)} of that name is at {where}: point "
                "the link there if it moved, or create the file it names"
            )
        else:
            message = (
                f"link to {shown}, which exists nowhere (not beside this file, in the memory "
                "root or the repository): fix the link, or create the file it names"
            )
        yield ctx.diag("IX012", message + also_on(again), link.range)


def _once_per_target(links: list[Link]) -> list[tuple[Link, list[int]]]:
    """Dead links grouped by what they name: the first of each, with the other lines
    that name it (one cause, one finding)."""
    groups: dict[tuple[str, str], tuple[Link, list[int]]] = {}
    for link in links:
        key = ((link.kind == "wikilink" and "wikilink") or "path", link.target.strip())
        if key in groups:
            first, lines = groups[key]
            if link.line != first.line and link.line not in lines:
                lines.append(link.line)
        else:
            groups[key] = (link, [])
    return list(groups.values())


def _words(text: str) -> tuple[str, ...]:
    return tuple(w for w in re.split(r"[\W_]+", text.casefold()) if w)


def _instruction_headings(ws: Workspace) -> frozenset[tuple[str, ...]]:
    """The words of every heading in the agent instructions above the memory root
    (CLAUDE.md, AGENTS.md, `.claude/rules/*.md` …, up to the repository's top)."""
    from memls.core.instructed import instruction_paths, repository_top

    def compute() -> frozenset[tuple[str, ...]]:
        top = ws.repo_root or repository_top(ws.root) or ws.root
        out: set[tuple[str, ...]] = set()
        here = ws.root
        while True:
            for path in instruction_paths(here):
                try:
                    with open(path, encoding="utf-8", errors="replace") as fh:
                        text = fh.read(262_144)
                except OSError:
                    continue
                for line in text.splitlines():
                    if _HEADING_LINE.match(line):
                        words = _words(line.lstrip("#"))
                        if words:
                            out.add(words)
            if here in (top, here.parent) or top not in (here, *here.parents):
                return frozenset(out)
            here = here.parent

    return frozenset(ws.memo("memls.pointers.instruction_headings", compute))


_HEADING_LINE = re.compile(r"#{1,6}\s")
_TRACKER_ITEM = re.compile(r"(?i)(?:issues?|pr|pull|ticket|bug|gh)[-_ #]?\d+")
"""A wikilink naming an item of the issue tracker (``[[issue-828]]``, ``[[PR-12]]``)."""


def _names_an_instruction_section(ws: Workspace, link: Link) -> bool:
    """A wikilink naming a section of the agent's instructions by its heading's words
    (``[[scope-clean-as-you-go]]`` for `# Scope — Clean As You Go` in `.claude/rules/`,
    ``[[archivist-frame]]`` for `## Why this exists — the archivist frame` in CLAUDE.md):
    a rule the agent loads each session, not a memory file that is missing."""
    wanted = _words(link.target)
    if len(wanted) < 2:
        return False
    n = len(wanted)
    return any(h[-n:] == wanted or h == wanted for h in _instruction_headings(ws) if len(h) >= n)


def _namesakes(ws: Workspace, link: Link) -> str:
    """Where files of a dead link's name are in the repository (`a` or `b`), or ""; a
    wikilink names no path, so none."""
    moved = [] if link.kind == "wikilink" else ws.links.namesakes(link.target)
    base = ws.repo_root or ws.root
    return " or ".join(f"`{os.path.relpath(p, base)}{'/' if p.is_dir() else ''}`" for p in moved)


def _noun(where: str) -> str:
    """ "a folder" for a namesake shown with a trailing slash, else "a file"."""
    return "a folder" if where.endswith("/`") else "a file"


def _to_another_machine(ws: Workspace, link: Link) -> bool:
    """A link to a committed symlink whose target is not here (``.claude/TEMPLATE.md ->
    /home/owner/…``), or into a folder that is one (``memory/ -> /home/owner/vault``): the
    file is on its owner's machine, which this checkout cannot see."""
    top = ws.repo_root or ws.root
    for path in ws.links.candidates(link):
        if os.path.islink(path):
            return True
        for above in path.parents:  # `memory/ -> ~/vault/memory`: a folder linked away
            if above == top or top not in above.parents:
                break
            if os.path.islink(above) and not above.exists():
                return True
    return False


def _kept_out_of_git(ws: Workspace, links: list[Link]) -> set[tuple[str, str, tuple[str, ...]]]:
    """Keys of the links whose target git ignores wherever it would be (a local-only file
    the repository keeps out on purpose, `shared/kb/*.md` in .gitignore): a checkout —
    CI's, a clone's — cannot tell whether it exists where the memory is used, so no
    finding. One ``git check-ignore`` for all of them."""
    if not links or ws.repo_root is None:
        return set()
    wanted = {id(link): ws.links.candidates(link) for link in links}
    every = sorted({p for paths in wanted.values() for p in paths})
    gone = ignored(ws.git, every)
    if not gone:
        return set()
    return {link_key(link) for link in links if any(p in gone for p in wanted[id(link)])}


def is_record(ws: Workspace, doc: Document) -> bool:
    """A note kept as a record of its day, not maintained after: one in an archive (old,
    history, past) folder, one dated by its name (``2025-11-30-SESSION-16.md``,
    ``2026-04-21-cp03.md``), or one in a folder named by its day first
    (``sessions/20251112-01-obsidian/init.md``). The links it held lead where the project
    was then."""
    from memls.core.rules.stale import dated_record_folder, in_history_folder, name_date

    return (
        name_date(doc.path.name) is not None
        or in_history_folder(ws, doc)
        or dated_record_folder(ws, doc.path)
    )


_TURN = re.compile(r"^(?:\*\*)?(?:user|assistant|human|ai|system)(?:\*\*)?\s*:", re.IGNORECASE)


_TRANSCRIPT_NAME = re.compile(r"(?i)(?:^|[-_. ])transcripts?(?:$|[-_. ])")


def is_session_transcript(doc: Document) -> bool:
    """A conversation saved as Markdown (a session hook's ``# Session: …`` file, or a file
    of ``user:`` / ``assistant:`` turns): its brackets are quoted words, not links."""
    if _TRANSCRIPT_NAME.search(doc.path.stem):
        return True  # `transcript.md`, `2026-03-02-transcript.md`: a conversation by its name
    head = doc.lines[:12]
    if any(re.match(r"#\s*Session\b", ln) for ln in head) and any(
        re.match(r"(?i)\W*session\s+(?:key|id)\b", ln) for ln in head
    ):
        return True
    turns = sum(1 for ln in doc.lines[:400] if _TURN.match(ln))
    return turns >= 4


def _named_by_agent_config(ws: Workspace, doc: Document) -> bool:
    """Whether the repository's Claude Code commands, hooks, subagents, skills or settings
    name the file: a hook writes it and injects it at session start, a subagent is told to
    read it, so no index link is needed."""
    names = ws.memo("memls.rules.index.agent_config_text", lambda: _agent_config_text(ws))
    if not names:
        return False
    rel = os.path.relpath(doc.path, ws.repo_root or ws.root).replace(os.sep, "/")
    return doc.path.name in names or rel in names


def agent_loads_any(ws: Workspace, paths: list[Path]) -> bool:
    """Whether CLAUDE.md / AGENTS.md, or the repository's Claude Code hooks, commands,
    subagents, skills or settings, name any of ``paths`` (or the folder that holds them)."""
    names = {path.name for path in paths}
    base = ws.repo_root or ws.root
    if ws.root != base:
        names.add(os.path.relpath(ws.root, base).replace(os.sep, "/"))
    config = ws.memo("memls.rules.index.agent_config_text", lambda: _agent_config_text(ws))
    if any(name in config for name in names):
        return True
    for doc in _agent_instructions(ws):
        # `.claude/CLAUDE.md` naming `memory/` names the folder beside it
        rel = os.path.relpath(ws.root, doc.path.parent).replace(os.sep, "/")
        wanted = names | ({rel, rel + "/"} if not rel.startswith("..") and rel != "." else set())
        if any(name in doc.text for name in wanted):
            return True
    return False


def _agent_config_text(ws: Workspace) -> str:
    bases = [ws.root] + ([ws.repo_root] if ws.repo_root is not None else [])
    out: list[str] = []
    budget = 2_000_000
    for base in dict.fromkeys(bases):
        claude = base / ".claude"
        if not claude.is_dir():
            continue
        candidates = [claude / "settings.json", claude / "settings.local.json"]
        for sub in ("commands", "hooks", "agents", "skills"):
            folder = claude / sub
            if folder.is_dir():
                candidates.extend(sorted(folder.rglob("*"))[:200])
        for path in candidates:
            try:
                if not path.is_file() or path.is_symlink() or path.stat().st_size > 200_000:
                    continue
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            budget -= len(text)
            if budget < 0:
                return "\n".join(out)
            out.append(text)
    return "\n".join(out)


def check_unreferenced(ctx: RuleContext) -> Iterator[Diagnostic]:
    ws = ctx.workspace
    doc = ctx.doc
    if ws.layout is Layout.WORKSPACE or doc.path.parent.name == "transcripts":
        return  # an agent workspace's MEMORY.md is curated memory, not a pointer index
    if is_dated(doc.path) or is_conventional_doc(doc.path):
        return  # a daily log, or README.md / AGENTS.md: found by date or by name
    index = ws.index()
    if index is None:
        return
    reached = reachable(ws)
    if reached is None:
        return  # the index points at no file at all: it is not used as a pointer index
    if doc.path in reached or _named_by_agent_config(ws, doc):
        return
    rel = Path(os.path.relpath(doc.path, ws.index_path.parent)).as_posix()
    yield ctx.diag(
        "IX010",
        f"no link reaches {rel} (from {ws.index_path.name} or the topic files it links): add "
        f"a pointer (e.g. `- [{doc.path.stem}]({rel})`) so the memory is found, or delete "
        "the file",
        Range.line(0, min(len(doc.line_text(0)), 1000)),
    )


def reachable(ws: Workspace) -> frozenset[Path] | None:
    """Memory files reachable from the index through links (Markdown, wikilinks, bullets,
    backtick paths) of the index and of every file reached; None when the index links to
    no file at all. Computed once per workspace generation."""
    return ws.memo(_TARGETS_KEY, lambda: _reachable(ws))


def _reachable(ws: Workspace) -> frozenset[Path] | None:
    index = ws.index()
    if index is None:
        return None
    members = set(ws.paths())
    resolver = ws.links
    seen: set[Path] = {index.path}
    indexes = [index, *_second_indexes(ws, index.path, members)]
    seen.update(d.path for d in indexes)
    frontier = [*indexes, *_agent_instructions(ws)]
    pointed = False
    stems: dict[str, list[Path]] | None = None
    numbered: dict[tuple[Path, str], list[Path]] | None = None
    while frontier:
        doc = frontier.pop()
        targets = [t for link in distinct_links(doc) if (t := resolver.resolve(link)) is not None]
        listing = doc in indexes
        if listing and "`" in doc.text:  # the index lists `deploy-notes`, `p6a-*`
            if stems is None:
                stems = {}
                for p in members:
                    stems.setdefault(p.stem.casefold(), []).append(p)
            targets.extend(_named_by_stem(doc.text, stems))
        if _BY_NUMBER.search(doc.text):
            if numbered is None:
                numbered = _numbered_notes(members)
            targets.extend(_named_by_number(doc, numbered))
        for target in targets:
            if listing and target != index.path and target in members:
                pointed = True
            if target in seen or target not in members:
                continue
            seen.add(target)
            nxt = ws.document(target)
            if nxt is not None:
                frontier.append(nxt)
    return frozenset(seen) if pointed else None


_SECOND_INDEX = re.compile(r"(?i)^(?:memory[-_ ]?)?index$")


def _second_indexes(ws: Workspace, index: Path, members: set[Path]) -> list[Document]:
    """Another index beside MEMORY.md (``MEMORY_INDEX.md``, ``INDEX.md`` in the root's
    folder): its table of `anti_patterns.md`, `models.md` lists notes as the index does."""
    found = []
    for path in sorted(members):
        if path != index and path.parent == ws.root and _SECOND_INDEX.match(path.stem):
            doc = ws.document(path)
            if doc is not None:
                found.append(doc)
    return found


_BY_NUMBER = re.compile(r"(?m)^\s*[-*+]\s+(\d{1,5})\.\s+\S")
"""`- 75. Native-First Default — …`: a bullet that names a numbered note by its number."""


def _numbered_notes(members: set[Path]) -> dict[tuple[Path, str], list[Path]]:
    """The root's numbered notes (`75-<slug>.md`) by their folder and number, made once."""
    out: dict[tuple[Path, str], list[Path]] = {}
    for p in members:
        if m := re.match(r"(\d{1,5})-\D", p.name):
            out.setdefault((p.parent, m[1]), []).append(p)
    return out


def _named_by_number(doc: Document, numbered: dict[tuple[Path, str], list[Path]]) -> list[Path]:
    """The notes a sub-index lists by number (`- 75. Title` opens `75-<slug>.md` beside
    it): each number that exactly one file beside the list starts with."""
    wanted = {m[1] for m in _BY_NUMBER.finditer(doc.text)}
    folder = doc.path.parent
    return [h[0] for n in wanted if len(h := numbered.get((folder, n), [])) == 1]


_STEM_SPAN = re.compile(r"`([\w*?-][\w.*?-]{1,80})`")
_STEM_RANGE = re.compile(r"`([\w-]{1,40})\*`\s*(?:…|\.\.\.?|–|—|to)\s*`([\w-]{1,40})\*`")


def _natural(text: str) -> list[str | int]:
    """``p6a-x`` < ``p11-y``: digits compare as numbers."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def _named_by_stem(text: str, stems: dict[str, list[Path]]) -> list[Path]:
    """Files a text names in backticks by stem (`` `deploy-notes` ``) or by a glob of
    stems (`` `p6a-*` ``), as an index that lists its topic files by name does."""
    out: list[Path] = []
    for m in _STEM_RANGE.finditer(text):  # `p6a-*` … `p16-*`: the whole ladder between
        low, high = _natural(m.group(1).casefold()), _natural(m.group(2).casefold() + "\uffff")
        out.extend(
            p for stem, paths in stems.items() if low <= _natural(stem) <= high for p in paths
        )
    spans = (m.group(1).casefold().removesuffix(".md") for m in _STEM_SPAN.finditer(text))
    for token in dict.fromkeys(spans):
        if "*" in token or "?" in token:
            out.extend(p for stem, paths in stems.items() if fnmatch(stem, token) for p in paths)
        else:
            out.extend(stems.get(token, ()))
    return out


AGENT_INSTRUCTIONS = ("CLAUDE.md", "AGENTS.md", ".claude/CLAUDE.md", "CLAUDE.local.md")
"""Files an agent loads by convention: a memory file they link is reachable too."""


def _agent_instructions(ws: Workspace) -> list[Document]:
    out: list[Document] = []
    bases = [ws.root] + ([ws.repo_root] if ws.repo_root is not None else [])
    for base in dict.fromkeys(bases):
        for rel in AGENT_INSTRUCTIONS:
            path = base / rel
            doc = ws.document(path) if ws.contains(path) else None
            if doc is None and path.is_file():
                try:
                    if path.stat().st_size <= 1_000_000:
                        doc = parse_file(path)
                except OSError:
                    doc = None
            if doc is not None:
                out.append(doc)
    return out
