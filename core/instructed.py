"""Memory a repository's agent instructions name: folders and files that AGENTS.md,
CLAUDE.md (and the other tools' instruction files and rule folders: ``.claude/rules/``,
``.cursor/rules/`` …) tell the agent to read or update.

People keep memory under names no list anticipates — ``.docs/ai/``, ``diary/``,
``wisdom/``, a journal in ``docs/MEMORY.md`` — and say so where the agent will read it:
"At the start of each session read `.docs/ai/`; before you stop, append to
`diary/`". This module reads those instruction files and returns the places they name as
memory, so discovery finds them and the workspace reads exactly what was named.

A line names memory when it carries a path (in backticks, as a link, or a bare
``folder/`` or ``file.md``) and either the path is a memory word (``journal``, ``wisdom``,
``memory`` …) or the line speaks of memory (memory, journal, diary, session, remember,
handoff, lessons …) and of reading or updating it. A named folder counts when it exists
inside the repository and holds mostly Markdown; a named file when it is Markdown and is
not itself an instruction or project front page (README, CONTRIBUTING …).

Pure: the file system only, cached per instruction file and its modification time.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

INSTRUCTION_FILES = (
    "AGENTS.md",
    "CLAUDE.md",
    "CLAUDE.local.md",
    "GEMINI.md",
    ".cursorrules",
    ".windsurfrules",
    ".clinerules",
    ".github/copilot-instructions.md",
    ".claude/CLAUDE.md",
)
"""Files each agent tool loads as its instructions, relative to the folder they govern."""
INSTRUCTION_FOLDERS = (
    (".claude/rules", (".md",)),
    (".cursor/rules", (".md", ".mdc")),
    (".windsurf/rules", (".md",)),
    (".clinerules", (".md",)),
    (".github/instructions", (".md",)),
)
"""Folders of rule files the tools load beside (or instead of) one instructions file."""
RULE_FILES_MAX = 64

ANCESTOR_LEVELS = 8
"""How many folders up from a root its instructions are looked for (stopping at the
repository's top, the folder holding ``.git``)."""

_PATH_WORDS = frozenset(
    {
        "memory", "memories", "journal", "journals", "diary", "diaries", "wisdom", "learnings",
        "lessons", "lessons-learned", "handoff", "handoffs", "sessions", "session-notes",
        "scratchpad", "brain", "agent-notes", "ai-notes", "devlog", "worklog", "progress-log",
        "progress_log", "session-log", "session_log", "memoria",
        "memória", "memorias", "memórias", "mémoire", "记忆", "記憶", "メモリ", "메모리",
    }
)  # fmt: skip
"""Names (a path part's stem) that say memory by themselves (not ``notes``: a project's
``docs/notes/`` of ideas is as common as an agent's)."""

_SPEAKS_OF_MEMORY = re.compile(
    r"(?i)\b(?:memor(?:y|ies)|journal|diary|remember|persist(?:ent|s)?|sessions?|handoff|"
    r"learnings?|lessons|wisdom|scratchpad|knowledge\s+base|context\s+(?:files?|notes?|folder)|"
    r"m[ée]moire|mem[oó]ri[ae]s?|ged[äa]chtnis|erinnerung\w*|памят\w*|sesi[oó]n(?:es)?|"
    r"sess[ãa]o|sess[õo]es)\b|记忆|記憶|メモリ|메모리|セッション|会话|會話"
    r"|引き?継ぎ|交接|세션|기억|인수인계"
)
"""Words that speak of memory, in English and a few other languages (a session, a
handoff)."""
_MEMORY_WORD = re.compile(
    r"(?i)\b(?:memor(?:y|ies)|m[ée]moire|mem[oó]ri[ae]s?|ged[äa]chtnis|памят\w*)\b"
    r"|记忆|記憶|メモリ|메모리"
)
"""The word memory itself: a lead-in that says it ("Memory files:") names its list."""
_READ_OR_UPDATE = re.compile(
    r"(?i)\b(?:read|re-?read|review|consult|check|load|update|append|record|write|log|add|"
    r"keep|kept|maintain|save|store|note|document|capture|wr[io]te|written|see|"
    r"voir|lire|mettre\s+à\s+jour|mise\s+à\s+jour|leer|ler|actualiz|atualiz|lesen|"
    r"aktualisier|обнов|чита)\w*\b|追記|追加|更新|記録|记录|読|阅读|读取|参照"
    r"|읽|업데이트|갱신|기록|추가"
)
"""Words of reading or updating, in English and a few other languages."""
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*)$")
_BACKTICK = re.compile(r"`([^`\n]{1,200})`")
_LINK = re.compile(r"\]\(\s*<?([^)\s>]{1,200})>?(?:\s+\"[^\"]*\")?\s*\)")
_BARE = re.compile(
    r"(?<![\w/.@:~-])((?:\.?[\w-]+/)+(?:[\w.-]+\.(?:md|txt))?|[\w.-]+\.(?:md|txt))(?![\w/-])"
)
_FENCE = re.compile(r"^\s*(```|~~~)")
_NOT_MEMORY_FILES = frozenset(
    {
        "readme.md", "contributing.md", "changelog.md", "license.md", "security.md",
        "code_of_conduct.md", "agents.md", "claude.md", "gemini.md", "claude.local.md",
    }
)  # fmt: skip
_NOT_MEMORY_PARTS = frozenset(
    {
        "src", "lib", "app", "apps", "packages", "test", "tests", "scripts", "bin", "node_modules",
        "commands", "skills", "agents", "prompts", "templates", "hooks", ".github", ".git",
        "vendor", "dist", "build",
    }
)  # fmt: skip
"""Path parts of code, instructions and tooling: never memory, whatever a line says."""


@dataclass(frozen=True)
class Instructed:
    """What the instructions of one folder name as memory (absolute, existing paths)."""

    folders: frozenset[Path]
    """Folders named as memory: every Markdown file in them (and their subfolders) is."""
    files: frozenset[Path]
    """Markdown files named as memory (their folder is a root reading only them)."""


EMPTY = Instructed(frozenset(), frozenset())


def _candidates(line: str) -> list[str]:
    found: list[str] = []
    for pattern in (_BACKTICK, _LINK):
        found += [_leading_path(m.group(1).strip()) for m in pattern.finditer(line)]
    rest = _LINK.sub(" ", _BACKTICK.sub(" ", line))
    found += [m.group(1) for m in _BARE.finditer(rest)]
    return found


_PATH_THEN_WORDS = re.compile(r"^([\w./-]+(?:\.(?:md|txt)|/))\s+(?:§|#|>|—|-|:)")


def _leading_path(code: str) -> str:
    """The path a code span starts with when words follow it (```TRACKER.md § Current
    state```, ```STATE.md — phase```); the span itself otherwise."""
    m = _PATH_THEN_WORDS.match(code)
    return m.group(1) if m is not None else code


def _stem(part: str) -> str:
    part = part.lower().lstrip(".")
    for suffix in (".md", ".txt"):
        if part.endswith(suffix):
            return part[: -len(suffix)]
    return part


_PROGRESS = re.compile(r"^(?:[a-z0-9]+[-_])?progress(?:[-_](?:log|notes))?$")
"""A progress file (``progress.txt``, ``claude-progress.txt``, ``PROGRESS.md``): memory
when the line that names it tells the agent to read or update it (the long-running
harness keeps its state between context windows in one)."""
_STATE_FILE = re.compile(
    r"^(?:[a-z0-9]+[-_])?(?:progress(?:[-_](?:log|notes))?|status|state|current[-_]state|"
    r"context|todos?|tracker|decisions|next[-_]steps)$"
)
"""A file that keeps the project's state by its name (``STATUS.md``, ``TODO.md``,
``TRACKER.md``, ``DECISIONS.md``, ``context.md``, ``NEXT_STEPS.md``, a progress file):
memory when the line that names it tells the agent to read or update it ("Read
`context.md` first", "add a bullet to `TRACKER.md`") — a tracker the agent keeps."""


def _progress_file(parts: list[str]) -> bool:
    """The path ends in a state file (not a folder of progress documents)."""
    return (
        bool(parts)
        and parts[-1].lower().endswith((".md", ".txt"))
        and _STATE_FILE.match(_stem(parts[-1])) is not None
    )


def _text_memory_name(name: str) -> bool:
    """A plain-text file (``.txt``) that is memory by its name: a progress file or a memory
    word (``memory.txt``, ``session-log.txt``); ``requirements.txt`` and ``notes.txt`` of
    anything else are not, whatever a line says."""
    stem = _stem(name)
    return _PROGRESS.match(stem) is not None or stem in _PATH_WORDS


def _prose(text: str) -> str:
    """The words of ``text``, without the paths on it (a path names, it does not speak)."""
    return _BARE.sub(" ", _LINK.sub(" ", _BACKTICK.sub(" ", text)))


def _speaks(text: str) -> bool:
    return _SPEAKS_OF_MEMORY.search(_prose(text)) is not None


def _acts(text: str) -> bool:
    return _READ_OR_UPDATE.search(_prose(text)) is not None


_SENTENCE = re.compile(r"(?<=[.!?])\s+|;\s*")


def named_paths(line: str) -> list[str]:
    """The paths a line names as memory. A path names memory by itself when a part of it
    is a memory word (``diary/``, ``wisdom/``); otherwise its clause (the line cut at
    commas and brackets, within its sentence) must speak of memory and of reading or
    updating it — or say the reading or updating while a clause of the same sentence that
    names no path of its own speaks of memory ("At the start of each session, read
    `.docs/ai/`"). "a memory bullet in CLAUDE.md, an update in `shared/`" names neither."""
    out: list[str] = []
    for sentence in _SENTENCE.split(line):
        clauses = _split_outside(sentence)
        lenders = [c for c in clauses if not _candidates(c) and _speaks(c)]
        for clause in clauses:
            for raw in _candidates(clause):
                parts = [p for p in raw.split("/") if p and p != "."]
                by_name = any(_stem(p) in _PATH_WORDS for p in parts)
                acts = _acts(clause)
                progress = acts and _progress_file(parts)
                if by_name or progress or (acts and (_speaks(clause) or lenders)):
                    out.append(raw)
    return out


def _split_outside(sentence: str) -> list[str]:
    """Cut at commas and brackets outside code spans and link targets."""
    out: list[str] = []
    buf: list[str] = []
    in_code = False
    depth = 0
    for i, ch in enumerate(sentence):
        if ch == "`":
            in_code = not in_code
        elif not in_code and ch == "(" and i and sentence[i - 1] == "]":
            depth += 1
        elif not in_code and ch == ")" and depth:
            depth -= 1
        elif not in_code and not depth and ch in ",()":
            out.append("".join(buf))
            buf = []
            continue
        buf.append(ch)
    out.append("".join(buf))
    return out


def _mostly_markdown(folder: Path) -> bool:
    """At least one Markdown file, and Markdown is half or more of the files in the folder
    and its immediate subfolders (a folder of code is not memory, whatever a line says)."""
    md = other = 0
    try:
        for entry in os.scandir(folder):
            if entry.name.startswith("."):
                continue
            if entry.is_dir(follow_symlinks=False):
                try:
                    for sub in os.scandir(entry.path):
                        if sub.is_file(follow_symlinks=False):
                            md, other = _count(sub.name, md, other)
                except OSError:
                    continue
            elif entry.is_file(follow_symlinks=False):
                md, other = _count(entry.name, md, other)
    except OSError:
        return False
    return md >= 1 and md >= other


def _count(name: str, md: int, other: int) -> tuple[int, int]:
    return (md + 1, other) if name.lower().endswith(".md") else (md, other + 1)


def _resolve(base: Path, top: Path, raw: str) -> Path | None:
    text = raw.strip().strip("'\"").split("#", 1)[0].rstrip(":,;.")
    if not text or "://" in text or text.startswith(("~", "$", "@")) or "*" in text:
        return None
    if any(ch in text for ch in " <>{}|\\"):
        return None
    for start in (base, top):
        candidate = Path(os.path.normpath(start / text.lstrip("/")))
        try:
            rel = candidate.relative_to(top)
        except ValueError:
            continue
        if any(p.lower() in _NOT_MEMORY_PARTS for p in rel.parts):
            return None
        if candidate.exists():
            return candidate
    return None


def read_instructions(folder: Path, top: Path) -> Instructed:
    """The memory the instruction files of ``folder`` name (paths inside ``top``)."""
    folders: set[Path] = set()
    files: set[Path] = set()
    instructed = False
    for path in _instruction_paths(folder):
        try:
            stamp = path.stat().st_mtime_ns
        except OSError:
            continue
        if not path.is_file():
            continue
        instructed = True
        got = _read_one(str(path), stamp, str(folder), str(top))
        folders.update(got.folders)
        files.update(got.files)
    if instructed:
        files.update(kept_trackers(folder))
    if not folders and not files:
        return EMPTY
    return Instructed(frozenset(folders), frozenset(files))


_TRACKER = re.compile(
    r"^(?:[a-z0-9]+[-_])?(?:progress|status|state|current[-_]state|project[-_]?state|todos?"
    r"|tasks|tracker|next|next[-_]steps|heartbeat|context)$"
)
"""A tracker's name (``STATUS.md``, ``TODO.md``, ``TASKS.md``, ``NEXT.md``, ``HEARTBEAT.md``,
``ProjectState.md``, ``CONTEXT.md``)."""
_DATED_STATE = re.compile(
    r"(?<!\d)20\d{2}-[01]\d-[0-3]\d(?!\d)|(?i:\blast[ _-]updated\b|\bcurrent (?:state|status|focus)\b)"
)
"""What a tracker kept from session to session shows: a day (``2026-04-20``), a "Last
updated" or a "Current state"."""
TRACKER_HEAD_BYTES = 20_000


def kept_trackers(folder: Path) -> list[Path]:
    """The trackers kept beside a folder's agent instructions (``STATUS.md``, ``TODO.md``,
    ``NEXT.md`` … at the top of a repository with a CLAUDE.md or AGENTS.md) that read as
    state carried from session to session — dated, "Last updated" or "Current state": the
    agent's memory though no line of the instructions names them. An undated list of
    chores (``TODO.md`` of three bullets) is not."""
    try:
        entries = [e for e in os.scandir(folder) if e.is_file(follow_symlinks=False)]
    except OSError:
        return []
    out: list[Path] = []
    for entry in entries:
        name = entry.name
        if not name.lower().endswith((".md", ".txt")) or _TRACKER.match(_stem(name)) is None:
            continue
        try:
            stamp = entry.stat().st_mtime_ns
        except OSError:
            continue
        if _dated_state(entry.path, stamp):
            out.append(Path(entry.path))
    return out


@functools.lru_cache(maxsize=512)
def _dated_state(path: str, _stamp: int) -> bool:
    try:
        with open(path, "rb") as fh:
            head = fh.read(TRACKER_HEAD_BYTES).decode("utf-8", "replace")
    except OSError:
        return False
    return _DATED_STATE.search(head) is not None


def instruction_paths(folder: Path) -> list[Path]:
    """The instruction files of ``folder`` that exist (its CLAUDE.md, AGENTS.md …, and the
    rule files of its rule folders)."""
    return [p for p in _instruction_paths(folder) if p.is_file()]


def _instruction_paths(folder: Path) -> list[Path]:
    paths = [folder / rel for rel in INSTRUCTION_FILES]
    for rel, suffixes in INSTRUCTION_FOLDERS:
        place = folder / rel
        if not place.is_dir():
            continue
        try:
            names = sorted(e.name for e in os.scandir(place) if e.name.endswith(suffixes))
        except OSError:
            continue
        paths += [place / n for n in names[:RULE_FILES_MAX]]
    return paths


@functools.lru_cache(maxsize=512)
def _named_in(path: str, _stamp: int) -> tuple[str, ...]:
    """The paths an instruction file names as memory, as written (cached per file and
    modification time; whether they exist is asked each time)."""
    try:
        with open(path, "rb") as fh:
            text = fh.read(262_144).decode("utf-8", "replace")
    except OSError:
        return ()
    out: list[str] = []
    fenced = False
    lead = ""  # the line ending in ':' that introduces the list (or lone paths) below it
    heading = ""
    for line in _logical_lines(text):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced or not line.strip():
            continue
        title = _HEADING.match(line)
        if title is not None:
            heading, lead = title.group(1), ""
        elif not _LIST_ITEM.match(line) and not _lone_path(line):
            lead = line.strip() if line.rstrip().endswith(":") else ""
        elif lead:
            out += _introduced(lead, heading, line)
        if "/" not in line and ".md" not in line.lower() and ".txt" not in line.lower():
            continue
        out += named_paths(line)
    return tuple(dict.fromkeys(out))


def _logical_lines(text: str) -> Iterator[str]:
    """The lines of ``text`` with a paragraph's (or list item's) soft-wrapped lines joined,
    so that a sentence wrapped across lines ("keep it cheap / to read every session") is
    read whole. Blank lines, headings, fences, list items, quotes and table rows start a new
    line, as do a line after a lead-in ending in ':' and a line that is only a path."""
    buf: str | None = None
    fenced = False
    for line in text.splitlines():
        stripped = line.strip()
        fence = _FENCE.match(line) is not None
        if fenced or fence or not stripped or _HEADING.match(line) is not None:
            if buf is not None:
                yield buf
                buf = None
            fenced ^= fence
            yield line  # a line of its own: blank, a heading, a fence or fenced code
            continue
        if buf is not None and not (
            buf.rstrip().endswith(":")
            or _LIST_ITEM.match(line) is not None
            or stripped.startswith(("|", ">", "<"))
            or _lone_path(line)
        ):
            buf = buf.rstrip() + " " + stripped  # a soft-wrapped continuation
            continue
        if buf is not None:
            yield buf
        buf = line
    if buf is not None:
        yield buf


def _lone_path(line: str) -> bool:
    """A line that is only a path (```docs/ai/PROGRESS.md```), as a list item would be."""
    found = _candidates(line)
    return len(found) == 1 and not _prose(line).strip(" \t*_`-—:")


def _introduced(lead: str, heading: str, item: str) -> list[str]:
    """The paths of a list item under a lead-in: named when the lead-in says memory
    ("Project memory files:", "Voir les fichiers de mémoire projet :"), or when it (or the
    item) says the reading or updating and it, or the heading above it, speaks of memory
    ("## Sessions" … "At the start, read:")."""
    if _MEMORY_WORD.search(_prose(lead)):
        return _candidates(item)  # "Memory files:", "Voir les fichiers de mémoire projet :"
    if not (_acts(lead) or _acts(item)) or not (_speaks(lead) or _speaks(heading)):
        return []
    return _candidates(item)


def _read_one(path: str, stamp: int, folder: str, top: str) -> Instructed:
    base, root = Path(folder), Path(top)
    folders: set[Path] = set()
    files: set[Path] = set()
    for raw in _named_in(path, stamp):
        target = _resolve(base, root, raw)
        if target is None or target == root:
            continue
        if target.is_dir():
            if _mostly_markdown(target):
                folders.add(target)
        elif _memory_file_name(target.name):
            files.add(target)
    return Instructed(frozenset(folders), frozenset(files))


_GUIDE_WORDS = frozenset(
    {
        "workflow", "workflows", "guide", "guidelines", "quickref", "reference", "conventions",
        "rules", "instructions", "process", "standards", "style", "styleguide", "howto",
        "playbook", "runbook", "checklist", "setup", "prd", "architecture", "spec",
        "specification", "design", "schema", "glossary", "requirements",
    }
)  # fmt: skip
"""Words that make a file's name say it is a guide to follow (``DEVELOPMENT_WORKFLOW.md``,
``SEMGREP_QUICKREF.md``, ``coding-conventions.md``) or the project's reference (``PRD.md``,
``architecture.md``, ``API_SPEC.md``): read each time, not memory written between
sessions."""


def is_guide_name(name: str) -> bool:
    """A Markdown file named as instructions, a front page or a guide to follow
    (``CLAUDE.md`` and its translations, ``README.md``, ``MCP_QUICK_REFERENCE.md``,
    ``MCP_SETUP.md``)."""
    lower = name.lower()
    translated = lower.startswith(("claude.", "agents.", "gemini."))  # `CLAUDE.zh-TW.md`
    return lower in _NOT_MEMORY_FILES or _named_as_guide(lower) or translated


def _named_as_guide(lower: str) -> bool:
    """A lower-case Markdown name with a word of ``_GUIDE_WORDS``."""
    return bool(set(re.split(r"[-_.\s]+", lower.removesuffix(".md"))) & _GUIDE_WORDS)


def _memory_file_name(name: str) -> bool:
    """A named file that can be memory: Markdown that is not an instruction or front page
    nor named as a guide (``_GUIDE_WORDS``), or a plain-text file memory by its name."""
    lower = name.lower()
    if lower.endswith(".md"):
        return lower not in _NOT_MEMORY_FILES and not _named_as_guide(lower)
    return lower.endswith(".txt") and _text_memory_name(lower)


_THIS_FILE = re.compile(
    r"(?i)\b(?:this|este|esta|ce|cette|dies(?:e[snmr]?)?|questo|questa|deze|dit)\s+"
    r"(?:\w+\s+)?(?:file|diary|journal|log|document|notes|archivo|fichero|diario|bit[áa]cora|"
    r"registro|documento|fichier|carnet|datei|tagebuch|protokoll|dokument|memoria|memory)\b"
)
"""A file speaking of itself ("this diary", "este archivo", "cette page de journal")."""
_CHAT = re.compile(
    r"(?i)\b(?:sessions?|sesi[oó]n(?:es)?|sess[ãa]o|sess[õo]es|chats?|conversations?|"
    r"conversaci[oó]n(?:es)?|context\s+window)\b"
)
_SELF_VERB = re.compile(
    r"(?i)\b(?:update|append|re-?read|read|add\s+(?:an?\s+)?entr(?:y|ies)\s+to|actualiz\w*|"
    r"atualiz\w*|mett(?:re|ez|s)\s+à\s+jour|aktualisier\w*|erg[äa]nz\w*|lee|lire|lis|lies|"
    r"copia|copy|paste|pega|añade|agrega|ajoute)\b"
)
"""Reading or updating said of a file itself (not "check", "see", "keep aligned")."""
SELF_HEAD_BYTES = 8192


def self_instructed(text: str) -> bool:
    """The opening of a file tells the agent to read or update the file itself between
    sessions ("At the end of each session, update this diary"; "Al final de cada sesión,
    actualiza este diario"): memory that carries its own instructions. One line must say,
    together, a session or chat, the reading or updating, and this file."""
    for line in text[:SELF_HEAD_BYTES].splitlines():
        if _THIS_FILE.search(line) and _SELF_VERB.search(line) and _CHAT.search(line):
            return True
    return False


def repository_top(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` holding ``.git`` (at most
    ``ANCESTOR_LEVELS`` up), or None."""
    here = start
    for _ in range(ANCESTOR_LEVELS + 1):
        if (here / ".git").exists():
            return here
        if here.parent == here:
            return None
        here = here.parent
    return None


def merged(a: Instructed, b: Instructed) -> Instructed:
    """Both sets of named places."""
    if not b.folders and not b.files:
        return a
    if not a.folders and not a.files:
        return b
    return Instructed(a.folders | b.folders, a.files | b.files)


def named_above(folder: Path) -> Instructed:
    """Everything the instruction files of ``folder`` and of the folders above it, up to
    its repository's top, name as memory."""
    folder = Path(os.path.abspath(folder))
    top = repository_top(folder) or folder
    got = EMPTY
    here = folder
    while True:
        got = merged(got, read_instructions(here, top))
        if here in (top, here.parent):
            return got
        here = here.parent


def names_root(named: Instructed, root: Path) -> bool:
    """``root`` is a folder ``named`` names, or holds a file it names."""
    return root in named.folders or any(f.parent == root for f in named.files)


def instructed_for(root: Path) -> Instructed:
    """What the instructions of ``root``'s repository name as memory, restricted to
    ``root``: ``folders`` holds ``root`` when it was named as a folder (then all its
    Markdown is memory), ``files`` the named files directly in it."""
    root = Path(os.path.abspath(root))
    named = named_above(root)
    folders = frozenset(f for f in named.folders if f == root)
    files = frozenset(f for f in named.files if f.parent == root)
    if not folders and not files:
        return EMPTY
    return Instructed(folders, files)


def is_instructed_root(root: Path) -> bool:
    """``root`` is a folder the agent's instructions name as memory, or holds files they
    name as memory."""
    return names_root(named_above(root), Path(os.path.abspath(root)))


__all__ = [
    "EMPTY",
    "INSTRUCTION_FILES",
    "Instructed",
    "instructed_for",
    "instruction_paths",
    "is_instructed_root",
    "merged",
    "named_above",
    "names_root",
    "read_instructions",
    "repository_top",
    "self_instructed",
]
