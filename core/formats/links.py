"""The link format: what in a memory file links to another file, and where it leads.

The one link model of memls: one :class:`Link` type, one extractor (:func:`extract_links`)
and one resolver (:class:`LinkResolver`, a workspace's ``links``). The rules (IX009 broken
index pointers, IX010 reachability, IX012 broken links in topic files, SZ005 unsafe
pointers, BN003 index pointers), the link graph (references, rename, file operations) and
the language server's document links and definitions all read links here, so an editor
shows exactly the links the rules check, leading to the same files.

Extraction (:func:`extract_links`) finds, outside front matter, fenced or indented code and
HTML blocks (what a Markdown reader shows as text, not as links):

- ``markdown``  — inline links ``[text](path#anchor)`` (not images, not inside code spans);
- ``reference`` — reference definitions ``[label]: path``;
- ``wikilink``  — ``[[target]]``, ``[[target|alias]]``, ``[[target#heading]]``, ``![[embed]]``
  (Kiro's ``#[[file:path]]`` names a file of the workspace: read as a ``markdown`` link);
- ``bullet``    — list items that start with a bare path: ``- feedback-testing.md — …``;
- ``code``      — file paths written in backticks (`` `memory/deploy.md` ``,
  `` `src/app.py:42` ``): a path with a ``/`` and an extension, or any ``*.md`` name
  (a Windows-style ``memory\\deploy.md`` too: SZ005 asks for ``/``).

External URLs (anything with a scheme, ``mailto:``), anchors alone (``#heading``) and
templated paths (``{name}``, globs) are not file links.

Resolution (:class:`LinkResolver`) tries, in order: relative to the linking file, to the
memory root, to the repository root (the nearest parent holding ``.git``), and to folders
the same line names (``in `docs/`: `api.md` ``). Wikilinks resolve by file stem anywhere in
the memory root, then the repository (like marksman and Obsidian); backtick and bullet
paths may also name a file by its path suffix anywhere in the repository. Every existence
check and every answer is cached, so a file with 400,000 pointers costs one ``stat`` per
distinct candidate path. A path that no link of a text holds (a bundle item's target)
resolves the same way through :meth:`LinkResolver.resolve_written`.
"""

from __future__ import annotations

import operator
import os
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable
from itertools import accumulate
from pathlib import Path
from typing import NamedTuple
from urllib.parse import unquote

from memls.core.gcpause import no_gc
from memls.core.model import Document, Position, Range

LINK_KINDS = ("markdown", "reference", "wikilink", "bullet", "code")

_CACHE_KEY = "memls.links"
_SKIP_DIRS = frozenset(
    {".git", ".memls", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache"}
)
MAX_INDEXED_FILES = 200_000
"""The repository walk for suffix and stem matches stops after this many files."""


class Link(NamedTuple):
    """A reference from one file to another file, as written: the one link type of memls
    (immutable; a flat tuple so that 400,000 of them are cheap to make and hold)."""

    source: Path  # absolute path of the file containing the link
    line: int  # 0-based line of the target text
    start: int  # its first character (code points)
    end: int  # just after it
    target: str  # raw target as written: path part, no anchor
    anchor: str | None  # the ``#heading`` part without ``#``, or None
    kind: str  # one of LINK_KINDS
    text: str = ""  # wikilink alias or reference label ("" for Markdown links)
    hints: tuple[str, ...] = ()  # other folders named on the same line (extra bases)

    @property
    def range(self) -> Range:
        """The target text (``target`` exactly, without anchor or alias)."""
        return Range(Position(self.line, self.start), Position(self.line, self.end))

    @property
    def is_markdown_file(self) -> bool:
        """Whether the target names a Markdown file (a wikilink always does)."""
        return self.kind == "wikilink" or self.target.casefold().endswith(".md")


# -- extraction ----------------------------------------------------------------

_CODE_SPAN = re.compile(r"(?P<ticks>`+)(?P<body>[^`].*?)(?<!`)(?P=ticks)(?!`)")
# The `[` comes first and the lookbehind after it (not `!`, `]` or `\` before the `[`): a
# pattern that starts with a literal is scanned for faster (a third less time).
_INLINE = re.compile(
    r"\[(?<![!\]\\]\[)(?P<text>[^\[\]\n]*(?:\[[^\[\]\n]*\][^\[\]\n]*)*)\]"
    r"\(\s*(?:<(?P<angled>[^<>\n]*)>|(?P<plain>[^()\s]*(?:\([^()\s]*\)[^()\s]*)*))"
    r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?\s*\)"
)
_INLINE_TEXT = re.compile(  # _INLINE for a whole text: any space but a line end
    r"\[(?<![!\]\\]\[)(?P<text>[^\[\]\n]*(?:\[[^\[\]\n]*\][^\[\]\n]*)*)\]"
    r"\([^\S\n]*(?:<(?P<angled>[^<>\n]*)>|(?P<plain>[^()\s]*(?:\([^()\s]*\)[^()\s]*)*))"
    r"(?:[^\S\n]+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?[^\S\n]*\)"
)
_NEWLINE = re.compile("\n")
_SIMPLE_TARGET = re.compile(r"(?!//)[^#:?{}*<>$|\s]+\Z")
"""A target ``_make`` keeps exactly as written: no anchor, scheme, query or template."""
_SPECIAL = re.compile(r"`|\[\[|\]:")
WHOLE_TEXT_LINES = 2000
"""From this many lines on, inline links are found in the whole text at once."""
_WIKI = re.compile(
    r"!?\[\[(?P<target>[^\[\]\n|#^]*)(?:[#^](?P<anchor>[^\[\]\n|]*))?(?:\|(?P<alias>[^\[\]\n]*))?\]\]"
)
_REFDEF = re.compile(
    r"^ {0,3}\[(?P<label>[^\[\]\n]+)\]:[ \t]*(?:<(?P<angled>[^<>\n]*)>|(?P<plain>\S+))"
    r"(?:[ \t]+[\"'(].*)?[ \t]*$"
)
"""A link reference definition (CommonMark): after the destination only a title, which
starts with a quote or a parenthesis; `[Task]: Reply with exactly …` is prose."""
_BULLET = re.compile(
    r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?(?P<bold>\*\*)?"
    r"(?P<path>[\w.~@+/-]*[\w@+-]\.md)(?P=bold)?(?=$|[\s:,;—–(-])"
)
_BULLET_ANYWHERE = re.compile(
    r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?(?:\*\*)?[\w.~@+/-]*[\w@+-]\.md",
    re.MULTILINE,
)
_BULLET_AFTER_BREAK = re.compile(
    r"\n[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?(?:\*\*)?[\w.~@+/-]*[\w@+-]\.md"
)
_LINK_ITEM = re.compile(r"[ \t]*[-*+][ \t]+\[(?!\[)")  # `- [`: a link, not a bare path
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_LINE_SUFFIX = re.compile(r":\d+(?:[:-]\d+)?$")
_CODE_PATH = re.compile(  # folders end in `/` (or `\`, which SZ005 reports)
    r"^(?:~/|\.{1,2}/|/)?(?:[\w@.+-]+[/\\])*[\w@+-][\w@.+-]*\.[A-Za-z][A-Za-z0-9]{0,9}$"
)
_FOLDER = re.compile(r"(?:^|(?<=[\s`(\"']))(?P<dir>(?:\.{0,2}/)?(?:[\w@.+-]+/)+)(?=$|[\s`):,;\"'])")
_TEMPLATE = re.compile(r"[{}*<>?$|]")


def extract_links(doc: Document) -> list[Link]:
    """Every file link of ``doc``, in document order (cached on the immutable document)."""
    return list(_all_links(doc))


def _all_links(doc: Document) -> tuple[Link, ...]:
    cached = doc.extra.get(_CACHE_KEY)
    if isinstance(cached, tuple):
        return cached
    with no_gc():
        links = tuple(_extract(doc))
    doc.extra[_CACHE_KEY] = links
    return links


_LINE: Callable[[Link], int] = operator.itemgetter(Link._fields.index("line"))


def link_at(doc: Document, pos: Position) -> Link | None:
    """The link written at ``pos``: on its target, or anywhere on the text that writes it
    (a Markdown link's ``[text](…)``, a wikilink's brackets and alias, a code span's
    backticks). What go-to-definition follows."""
    links = _all_links(doc)
    at = bisect_left(links, pos.line, key=_LINE)  # links come in line order
    on_line: list[Link] = []
    while at < len(links) and links[at].line == pos.line:
        on_line.append(links[at])
        at += 1
    for link in on_line:
        if link.range.contains(pos):
            return link
    if not on_line:
        return None
    line, column = doc.line_text(pos.line), pos.character
    for pattern in (_INLINE, _WIKI, _CODE_SPAN):
        for m in pattern.finditer(line):
            if m.start() <= column <= m.end():
                for link in on_line:
                    if m.start() <= link.start < m.end():
                        return link
    return None


link_key: Callable[[Link], tuple[str, str, tuple[str, ...]]] = operator.itemgetter(
    *(Link._fields.index(f) for f in ("target", "kind", "hints"))
)
"""What a link's resolution depends on besides its file: (target, kind, hints)."""
_DISTINCT_KEY = "memls.links.distinct"


def distinct_links(doc: Document) -> list[Link]:
    """The first link of ``doc`` for each distinct (target, kind, hints), in document order:
    what resolution needs (:meth:`LinkResolver.resolve` answers alike for each of them).

    An index of 400,000 pointers to 1,000 files yields 1,000 links, and the other 399,000
    are never made (unless :func:`extract_links` is asked for, or was already)."""
    cached = doc.extra.get(_DISTINCT_KEY)
    if isinstance(cached, tuple):
        return list(cached)
    full = doc.extra.get(_CACHE_KEY)
    with no_gc():
        links = full if isinstance(full, tuple) else _extract(doc, distinct=True)
        first: dict[tuple[str, str, tuple[str, ...]], Link] = {}
        for link in links:
            key = link_key(link)
            if key not in first:
                first[key] = link
    result = tuple(first.values())
    doc.extra[_DISTINCT_KEY] = result
    return list(result)


def _extract(doc: Document, *, distinct: bool = False) -> list[Link]:
    """The links of ``doc`` in order. ``distinct``: a simple Markdown target already found
    is not made again (the caller keeps the first link per key)."""
    source = doc.path if doc.path.is_absolute() else Path(os.path.abspath(doc.path))
    start = doc.frontmatter.end_line + 1 if doc.frontmatter is not None else 0
    fenced = _fence_flags(doc)
    if len(doc.lines) < WHOLE_TEXT_LINES or "](" not in doc.text:
        return list(_extract_lines(doc, source, range(start, len(doc.lines)), fenced))
    # A big document: the regex engine finds inline links in the whole text at once, and
    # only lines that need more (code spans, wikilinks, reference definitions, bare-path
    # bullets) go through the line scan. Same links, in the same order.
    text = doc.text
    lines = doc.lines
    n = len(lines)
    if "\r" in text:
        starts = [0, *[m.end() for m in _NEWLINE.finditer(text)]]
    else:  # each line's length plus its "\n", summed in C
        starts = list(accumulate(map((1).__add__, map(len, lines)), initial=0))
        starts.pop()  # the offset after the last line starts no line
    special: set[int] = set()
    for needle in ("`", "[[", "]:"):  # the lines _SPECIAL finds, by substring search
        special.update(_lines_with(text, needle, starts))
    # A bare-path bullet starts a line: found after each line break (a literal the regex
    # engine scans for quickly), and on the first line.
    special.update(bisect_right(starts, m.start()) for m in _BULLET_AFTER_BREAK.finditer(text))
    if lines and _BULLET_ANYWHERE.match(lines[0]):
        special.add(0)
    # One flag per line the fast path must leave alone: front matter, code and HTML blocks,
    # lines the line scan reads, very long lines.
    skip = bytearray(n)
    skip[:start] = b"\x01" * min(start, n)
    for fence_start, fence_end in _opaque(doc):
        first, last = max(0, fence_start), min(n - 1, fence_end)
        if first <= last:
            skip[first : last + 1] = b"\x01" * (last + 1 - first)
    for ln in special:
        skip[ln] = 1
    if n and max(map(len, lines)) > 20_000:
        for ln in range(n):
            if len(lines[ln]) > 20_000:
                skip[ln] = 1
    slow = sorted(ln for ln in special if ln >= start and not fenced[ln])
    slow.append(n)  # a sentinel: the loop below needs no bounds check
    next_slow = 0
    out: list[Link] = []
    append = out.append
    new = tuple.__new__  # a Link without the Python-level __new__ of NamedTuple
    # Per distinct raw target: itself when kept exactly as written (one string shared by
    # every pointer to it), "" when _make must judge it.
    simple: dict[str, str] = {}
    made: set[str] = set()  # with ``distinct``: simple targets already made
    plain_group = _INLINE_TEXT.groupindex["plain"]  # by number: no name lookup per match
    angled_group = _INLINE_TEXT.groupindex["angled"]
    # The line of each match: matches come in order, so mostly the same or the next line
    # (a bisection only for a jump); ``starts`` gets a sentinel after the last line.
    starts.append(len(text) + 1)
    ln, base, nxt = 0, 0, starts[1]
    for m in _INLINE_TEXT.finditer(text):
        a, b = m.span(plain_group)
        angled = None if a >= 0 else m.group(angled_group)
        if angled is not None:
            a, b = m.span(angled_group)
        if a >= nxt:
            ln += 1
            base, nxt = nxt, starts[ln + 1]
            if a >= nxt:
                ln = bisect_right(starts, a, ln) - 1
                base, nxt = starts[ln], starts[ln + 1]
        while slow[next_slow] <= ln:
            out.extend(_extract_lines(doc, source, (slow[next_slow],), fenced))
            next_slow += 1
        if skip[ln]:
            continue
        if angled is None:
            raw = text[a:b]
            kept = simple.get(raw)
            if kept is None:
                kept = simple[raw] = raw if _SIMPLE_TARGET.match(raw) else ""
            if kept:  # kept exactly as written (what _make would keep)
                if distinct:
                    if kept in made:
                        continue
                    made.add(kept)
                append(new(Link, (source, ln, a - base, b - base, kept, None, "markdown", "", ())))
                continue
            link = _make(source, ln, raw, a - base, "markdown", "")
        else:
            link = _make(source, ln, angled, a - base, "markdown", "")
        if link is not None:
            append(link)
    for ln in slow[next_slow:-1]:
        out.extend(_extract_lines(doc, source, (ln,), fenced))
    return out


def _lines_with(text: str, needle: str, starts: list[int]) -> list[int]:
    """The lines (by their offsets ``starts``) on which ``needle`` occurs."""
    found: list[int] = []
    n = len(starts)
    at = text.find(needle)
    while at != -1:
        ln = bisect_right(starts, at) - 1
        found.append(ln)
        if ln + 1 >= n:
            break
        at = text.find(needle, starts[ln + 1])  # the rest of this line is known
    return found


def _extract_lines(
    doc: Document, source: Path, numbers: Iterable[int], fenced: list[bool]
) -> Iterable[Link]:
    for ln in numbers:
        if fenced[ln]:
            continue
        line = doc.lines[ln]
        if not line or len(line) > 20_000:
            continue
        has_bracket = "[" in line
        has_tick = "`" in line
        bullet = _BULLET.match(line) if ".md" in line and not _LINK_ITEM.match(line) else None
        if not (has_bracket or has_tick or bullet):
            continue
        if not has_tick and bullet is None and "[[" not in line and "]:" not in line:
            # The common case (a pointer bullet, prose with links): inline links only.
            if "](" in line:
                for m in _INLINE.finditer(line):
                    angled, raw = m.group("angled", "plain")
                    if angled is None:
                        at = m.start("plain")
                        if _SIMPLE_TARGET.match(raw):  # kept exactly as written
                            yield Link(source, ln, at, at + len(raw), raw, None, "markdown")
                            continue
                        link = _make(source, ln, raw, at, "markdown", "")
                    else:
                        link = _make(source, ln, angled, m.start("angled"), "markdown", "")
                    if link is not None:
                        yield link
            continue
        yield from _line_links(source, line, ln, has_bracket, has_tick, bullet)


def _opaque(doc: Document) -> tuple[tuple[int, int], ...]:
    """The line spans that hold no links: code blocks and HTML blocks."""
    return doc.fences + doc.html_blocks if doc.html_blocks else doc.fences


def _fence_flags(doc: Document) -> list[bool]:
    """Per line, whether it is in a code or HTML block."""
    flags = [False] * len(doc.lines)
    for a, b in _opaque(doc):
        for i in range(max(0, a), min(len(flags), b + 1)):
            flags[i] = True
    return flags


def _line_links(
    source: Path,
    line: str,
    ln: int,
    has_bracket: bool,
    has_tick: bool,
    bullet: re.Match[str] | None,
) -> Iterable[Link]:
    spans: list[tuple[int, int, str, int]] = []  # code spans: start, end, body, body start
    if has_tick:
        for m in _CODE_SPAN.finditer(line):
            spans.append((m.start(), m.end(), m.group("body"), m.start("body")))

    def in_code(pos: int) -> bool:
        return any(a <= pos < b for a, b, _, _ in spans)

    found: list[tuple[int, Link]] = []
    taken: list[tuple[int, int]] = []
    folders: tuple[str, ...] | None = None

    def line_folders() -> tuple[str, ...]:
        nonlocal folders
        if folders is None:
            folders = tuple(dict.fromkeys(m.group("dir") for m in _FOLDER.finditer(line)))
        return folders

    if has_bracket:
        ref = _REFDEF.match(line)
        if ref is not None and not line.lstrip().startswith("[["):
            group = "angled" if ref.group("angled") is not None else "plain"
            link = _make(source, ln, ref.group(group), ref.start(group), "reference", ref["label"])
            if link is not None:
                found.append((ref.start(), link))
                taken.append((ref.start(), ref.end()))
        if "[[" in line:
            for m in _WIKI.finditer(line):
                if in_code(m.start()):
                    continue
                taken.append((m.start(), m.end()))
                target = m.group("target").strip()
                if not target:
                    continue  # [[#heading]]: a link inside the same note
                if target.startswith("--") or line.endswith("--", 0, m.start()):
                    continue  # a Lua block comment `--[[ … ]]` (or `[[----…]]`), no note
                t_start = m.start("target") + (
                    len(m.group("target")) - len(m.group("target").lstrip())
                )
                anchor = m.group("anchor")
                kind = "wikilink"
                if target.startswith("file:") and len(target) > 5:
                    # Kiro's `#[[file:api/openapi.yaml]]`: a file of the workspace, a path
                    kind, target, t_start = "markdown", target[5:].strip(), t_start + 5
                found.append(
                    (
                        m.start(),
                        Link(
                            source,
                            ln,
                            t_start,
                            t_start + len(target),
                            target,
                            anchor.strip() if anchor and anchor.strip() else None,
                            kind,
                            (m.group("alias") or "").strip(),
                        ),
                    )
                )
        if "](" in line:
            for m in _INLINE.finditer(line):
                if in_code(m.start()) or any(a <= m.start() < b for a, b in taken):
                    continue
                group = "angled" if m.group("angled") is not None else "plain"
                link = _make(source, ln, m.group(group), m.start(group), "markdown", "")
                taken.append((m.start(), m.end()))
                if link is not None:
                    found.append((m.start(), link))
    if bullet is not None and not in_code(bullet.start("path")):
        path = bullet.group("path")
        at = bullet.start("path")
        if path.startswith("@") and len(path) > 1:
            path, at = path[1:], at + 1  # `- @decisions.md`: Claude Code's import syntax
        if not any(a <= at < b for a, b in taken):
            link = _make(source, ln, path, at, "bullet", "", line_folders())
            if link is not None:
                found.append((at, link))
                taken.append((at, bullet.end("path")))
    for a, _b, body, body_start in spans:
        if any(x <= a < y for x, y in taken):
            continue
        stripped = body.strip()
        if not stripped or " " in stripped:
            continue
        lead = body.find(stripped)
        if stripped.startswith("@") and len(stripped) > 1:
            stripped, lead = stripped[1:], lead + 1  # `@path`: Claude Code's import syntax
        target = _LINE_SUFFIX.sub("", stripped)
        path_part = target.split("#", 1)[0]
        if not _CODE_PATH.match(path_part):
            continue
        if "/" not in path_part and not path_part.casefold().endswith(".md"):
            continue
        link = _make(source, ln, target, body_start + lead, "code", "", line_folders())
        if link is not None:
            found.append((a, link))
    found.sort(key=lambda pair: pair[0])
    return [link for _, link in found]


def _make(
    source: Path,
    ln: int,
    raw: str | None,
    at: int,
    kind: str,
    text: str,
    hints: tuple[str, ...] = (),
) -> Link | None:
    """A link for a raw target at column ``at``; None for URLs, anchors alone and templates."""
    if not raw:
        return None
    target = raw
    if raw[0].isspace() or raw[-1].isspace():
        target = raw.strip()
        at += len(raw) - len(raw.lstrip())
        if not target:
            return None
    first = target[0]
    if first == "#" or target.startswith("//") or (":" in target and _SCHEME.match(target)):
        return None
    anchor: str | None = None
    if "#" in target:
        target, anchor = target.split("#", 1)
        anchor = anchor or None
    if "?" in target and kind in ("markdown", "reference"):
        target = target.split("?", 1)[0]
    if not target or _TEMPLATE.search(target):
        return None
    return Link(source, ln, at, at + len(target), target, anchor, kind, text, hints)


# -- resolution ----------------------------------------------------------------


def find_repo_root(start: Path) -> Path | None:
    """The nearest directory at or above ``start`` holding ``.git`` (a folder or a file)."""
    start = Path(os.path.abspath(start))
    for candidate in (start, *start.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


_LINE_SUFFIX = re.compile(r"(?::\d+(?:[-:]\d+)?|#L\d+(?:C\d+)?(?:-L?\d+(?:C\d+)?)?)$")
"""A cited line range after a file name: ``:12``, ``:12-40``, ``#L12-L40`` (Cline and Roo
memory banks cite code this way)."""


_NO_SUFFIX = re.compile(r"(?:^|/)[^/.]+$")
"""A path whose last part has no extension (``projects/ideas/INDEX``)."""


class LinkResolver:
    """Resolves links to existing files, caching every ``stat`` and every answer.

    ``exists`` may add files that are not on disk (editor buffers of new files). Call
    :meth:`invalidate` when a file is created or deleted; content changes need nothing.
    """

    def __init__(
        self,
        memory_root: Path,
        repo_root: Path | None = None,
        *,
        extra_exists: Callable[[Path], bool] | None = None,
        outer_root: Path | None = None,
    ) -> None:
        self.memory_root = Path(os.path.abspath(memory_root))
        self.outer_root = Path(os.path.abspath(outer_root)) if outer_root is not None else None
        """The memory folder a root sits inside (``memory/`` of ``memory/projects/``): its
        files' links are written from there too (``[[feedback/x]]``)."""
        self.repo_root = Path(os.path.abspath(repo_root)) if repo_root is not None else None
        self._extra = extra_exists
        self._exists: dict[str, bool] = {}
        self._answers: dict[tuple[Path, str, str, tuple[str, ...]], Path | None] = {}
        self._stems: dict[str, list[Path]] | None = None  # memory root: stem → files
        self._repo_names: dict[str, list[str]] | None = None  # repo: file name → rel paths
        self._folders: frozenset[str] | None = None
        self._names_under: dict[str, frozenset[str]] = {}
        self.stat_calls = 0
        """How many existence checks reached the file system (a regression test counts them)."""

    # -- cache control --
    def invalidate(self, path: Path | None = None) -> None:
        """Forget cached answers after ``path`` was created or deleted (None: everything)."""
        if path is not None:
            key = os.path.abspath(path)
            before = self._exists.pop(key, None)
            now = self._check(key)
            if before is not None and before == now:
                return  # same existence as before: every answer still holds
        else:
            self._exists.clear()
        self._answers.clear()
        self._stems = None
        self._repo_names = None
        self._folders = None
        self._names_under = {}

    # -- public --
    def resolve(self, link: Link) -> Path | None:
        """The existing file or folder ``link`` leads to, or None when it exists nowhere."""
        key = (link.source, link.target, link.kind, link.hints)
        if key in self._answers:
            return self._answers[key]
        answer = self._resolve(link)
        self._answers[key] = answer
        return answer

    def resolve_written(self, source: Path, target: str) -> Path | None:
        """Where ``target``, a path written in ``source`` outside any link (a bundle item's
        file), leads: where a Markdown link to it would."""
        source = source if source.is_absolute() else Path(os.path.abspath(source))
        return self.resolve(Link(source, 0, 0, len(target), target, None, "markdown"))

    def resolve_all(self, links: Iterable[Link]) -> list[tuple[Link, Path | None]]:
        return [(link, self.resolve(link)) for link in links]

    def exists(self, path: Path | str) -> bool:
        return self._check(os.path.abspath(path))

    def candidates(self, link: Link) -> list[Path]:
        """The places a link that leads nowhere would have led: its target (a wikilink's
        with ``.md``) from each base it may start at (for asking git whether they are
        ignored, i.e. files kept out of the repository on purpose)."""
        target = unquote(link.target) if "%" in link.target else link.target
        target = _LINE_SUFFIX.sub("", target).split("#", 1)[0]
        if not target or target.startswith(("~", "/")):
            return []
        if link.kind == "wikilink" and not target.lower().endswith(".md"):
            target += ".md"
        return [Path(os.path.normpath(os.path.join(b, target))) for b in self._bases(link)]

    # -- internals --
    def _check(self, key: str) -> bool:
        known = self._exists.get(key)
        if known is not None:
            return known
        self.stat_calls += 1
        found = os.path.exists(key) or (self._extra is not None and self._extra(Path(key)))
        self._exists[key] = found
        return found

    def _bases(self, link: Link) -> list[str]:
        """Where a relative target may start: the file's folder, the roots, named folders."""
        plain = [str(link.source.parent), str(self.memory_root)]
        if self.outer_root is not None:
            plain.append(str(self.outer_root))
        if self.repo_root is not None:
            plain.append(str(self.repo_root))
        bases = list(dict.fromkeys(plain))
        for hint in link.hints:
            for base in plain:
                candidate = os.path.normpath(os.path.join(base, hint))
                if candidate not in bases:
                    bases.append(candidate)
        # Last, the folders between the file and the top (`.claude/plans/x.md` linking
        # `workflow/planning.md` from `.claude/`): a note written from its parent's view.
        # (`../x/` says where it starts: from the file's folder; a bare `x.md` is beside it.)
        top = self.repo_root or self.outer_root or self.memory_root
        folder = link.source.parent.parent
        if link.target.startswith(("../", "./")) or "/" not in link.target.strip("/"):
            folder = top
        while folder != folder.parent and folder.is_relative_to(top) and folder != top:
            if str(folder) not in bases:
                bases.append(str(folder))
            folder = folder.parent
        return bases

    def _resolve(self, link: Link) -> Path | None:
        target = unquote(link.target) if "%" in link.target else link.target
        target = target.replace("\\", "/") if "\\" in target and "/" not in target else target
        if link.kind == "wikilink":
            return self._wikilink(link, target)
        found = self._by_path(link, target)
        if found is None and link.kind == "markdown" and _NO_SUFFIX.search(target):
            # `[ideas](projects/ideas/INDEX)`: a note written without `.md`, as a vault does
            found = self._by_path(link, target + ".md")
        if found is None and _LINE_SUFFIX.search(target):
            # `src/app.py:12-40`, `app.py#L12-L40`: a file and the lines cited in it
            found = self._by_path(link, _LINE_SUFFIX.sub("", target))
        if found is None and link.kind in ("code", "bullet"):
            found = self._by_suffix(target)
        if found is None and (target.startswith(("~/", "../", "/")) or "/../" in target):
            found = self._by_tail(target)
        return found

    def _by_tail(self, target: str) -> Path | None:
        """A path that leaves the repository (``../../../app/docs/x.md``, a home path
        ``~/.claude/knowledge/x.md`` in a copy of ``~/.claude``) and names a file the
        repository has under a trailing part of it (``docs/x.md``)."""
        parts = [p for p in target.replace("~", "", 1).split("/") if p not in ("", ".", "..")]
        for start in range(len(parts) - 1):
            tail = "/".join(parts[start:])
            if len(parts) - start < 2:
                break
            found = self._by_suffix(tail)
            if found is not None:
                return found
            if self.repo_root is None:
                candidate = os.path.normpath(os.path.join(self.memory_root.parent, tail))
                if self._check(candidate):
                    return Path(candidate)
        if target.startswith("/") and len(parts) >= 3 and self.repo_root is not None:
            # `/root/app/package.json`: the writer's checkout, and the file at its top
            candidate = os.path.join(str(self.repo_root), parts[-1])
            if self._check(candidate):
                return Path(candidate)
        return None

    def _by_path(self, link: Link, target: str) -> Path | None:
        if target.startswith("~"):
            expanded = os.path.expanduser(target)
            return Path(expanded) if self._check(os.path.normpath(expanded)) else None
        if target.startswith("/"):
            if self._check(os.path.normpath(target)):
                return Path(os.path.normpath(target))
            target = target.lstrip("/")
            roots = [str(b) for b in (self.repo_root, self.memory_root) if b is not None]
            for root in roots:
                found = os.path.normpath(os.path.join(root, target))
                if self._check(found):
                    return Path(found)
            return None
        for base in self._bases(link):
            candidate = os.path.normpath(os.path.join(base, target))
            if self._check(candidate):
                return Path(candidate)
        return None

    def _wikilink(self, link: Link, target: str) -> Path | None:
        found = self._wikilink_to(link, target)
        if found is None:
            typed = _TYPED_RELATION.match(target.strip())
            if typed is not None:  # `[[works_at:ACME]]`: a relation, then the note it names
                found = self._wikilink_to(link, typed["target"])
        if found is None:
            spoken = _NAME_THEN_WORDS.match(target.strip())
            if spoken is not None:  # `[[memory/ki/bench.md in the repo]]`: a note, then words
                found = self._wikilink_to(link, spoken["name"])
        if found is None:
            found = self._by_kind_folder(target.strip())
        return found

    def _by_kind_folder(self, name: str) -> Path | None:
        """A wikilink naming a note by its kind, then its file's name (``[[lesson-0014-x]]``
        → ``lessons/0014-x.md``, ``[[adr-0007-y]]`` → ``adr/0007-y.md``): the one file of
        that name in a folder named for the kind."""
        kinded = _KIND_THEN_NAME.match(name.removesuffix(".md"))
        if kinded is None or self.repo_root is None:
            return None
        kind = kinded["kind"].casefold()
        folders = {kind, kind + "s", kind + "es"}
        hits = [
            rel
            for rel in self._repo_index().get(kinded["name"].casefold() + ".md", [])
            if "/" in rel and rel.rsplit("/", 2)[-2].casefold() in folders
        ]
        return self.repo_root / hits[0] if len(hits) == 1 else None

    def _wikilink_to(self, link: Link, target: str) -> Path | None:
        name = target.strip()
        if name.casefold().endswith(".md"):
            name = name[:-3]
        has_ext = bool(re.search(r"\.[A-Za-z][A-Za-z0-9]{0,9}$", name))
        # A path-like wikilink may be written relative to the file or the root.
        bases = [str(link.source.parent), str(self.memory_root)]
        if self.outer_root is not None:
            bases.append(str(self.outer_root))
        for base in bases:
            for candidate in (name,) if has_ext else (name + ".md", name):
                path = os.path.normpath(os.path.join(base, candidate))
                if self._check(path) and (has_ext or candidate.endswith(".md")):
                    return Path(path)
            if "/" in name.rstrip("/"):
                # `[[machines/gpu1]]`, `[[reference/heloc/]]`: a folder of notes;
                # `[[adapters/v3/lineage]]`: a note kept as YAML or JSON
                path = os.path.normpath(os.path.join(base, name))
                if os.path.isdir(path):
                    return Path(path)
                other = _other_extension(path)
                if other is not None:
                    return other
        stems = self._stem_index()
        for key in _wiki_keys(name):
            hits = stems.get(key)
            if hits:
                return _closest(link.source, hits)
        # Then the rest of the repository, by file name.
        wanted = (name if has_ext else name + ".md").rsplit("/", 1)[-1]
        rels = self._repo_index().get(wanted.casefold())
        if rels and self.repo_root is not None:
            suffix = (name if has_ext else name + ".md").casefold()
            for rel in rels:
                if ("/" + rel.casefold()).endswith("/" + suffix):
                    return self.repo_root / rel
        if not has_ext and "/" not in name:
            return self._by_stem_prefix(name)
        return None

    def _by_stem_prefix(self, name: str) -> Path | None:
        """The one Markdown file whose name starts with the wikilink's words
        (``[[ADR-0022]]`` → ``adr-0022-reporting-client-side.md``); none when several do."""
        key = _norm_name(name) + "-"
        found = {p for k, paths in self._stem_index().items() if k.startswith(key) for p in paths}
        if len(found) == 1:
            return found.pop()
        if found or self.repo_root is None:
            return None
        hits = [
            rel
            for base, rels in self._repo_index().items()
            if base.endswith(".md") and _norm_name(base[:-3]).startswith(key)
            for rel in rels
        ]
        return self.repo_root / hits[0] if len(hits) == 1 else None

    def namesakes(self, target: str, limit: int = 2) -> list[Path]:
        """Files of the repository with ``target``'s file name, elsewhere (where a link
        that leads nowhere may mean to go: the file moved), or the repository's folder of
        that path."""
        name = target.strip().rstrip("/").rsplit("/", 1)[-1]
        if not name or self.repo_root is None:
            return []
        rels = self._repo_index().get(name.casefold()) or []
        found = [self.repo_root / rel for rel in rels[:limit]]
        if not found:
            # a folder (`../infrastructure/` written from the repository's top): no file of
            # that name, but the folder is there
            parts = [p for p in target.strip().split("/") if p not in ("", ".", "..", "~")]
            top = os.path.normpath(os.path.join(self.repo_root, *parts)) if parts else ""
            if top and os.path.isdir(top):
                found.append(Path(top))
        return found

    def by_tail(self, target: str, parts: int = 3) -> Path | None:
        """The one repository file whose last ``parts`` path components are ``target``'s
        (``projects/x/data/notes/facts.md`` → ``y/data/notes/facts.md``): the same file,
        named from another base (a workspace mounted elsewhere, another checkout's top)."""
        names = [p for p in target.strip().split("#", 1)[0].split("/") if p not in ("", ".", "..")]
        if len(names) < parts or self.repo_root is None:
            return None
        tail = "/" + "/".join(names[-parts:]).casefold()
        rels = [
            rel
            for rel in self._repo_index().get(names[-1].casefold(), [])
            if ("/" + rel.casefold()).endswith(tail)
        ]
        return self.repo_root / rels[0] if len(rels) == 1 else None

    def folder_names(self) -> frozenset[str]:
        """Every folder name of the repository's files, at any depth (lower-cased)."""
        if self._folders is None:
            self._folders = frozenset(
                part.casefold()
                for rels in self._repo_index().values()
                for rel in rels
                for part in rel.split("/")[:-1]
            )
        return self._folders

    def names_under(self, folder: Path) -> frozenset[str]:
        """The lower-cased names of the repository's files under ``folder``, at any depth
        outside hidden folders (from the same index as :meth:`folder_names`)."""
        base = self.repo_root or self.memory_root
        try:
            rel = Path(os.path.abspath(folder)).relative_to(base).as_posix()
        except ValueError:
            return frozenset()
        known = self._names_under.get(rel)
        if known is None:
            prefix = "" if rel == "." else rel + "/"
            known = frozenset(
                name
                for name, rels in self._repo_index().items()
                for path in rels
                if path.startswith(prefix)
                and not any(part.startswith(".") for part in path[len(prefix) :].split("/")[:-1])
            )
            self._names_under[rel] = known
        return known

    def _by_suffix(self, target: str) -> Path | None:
        """A path that names a repository file by its trailing components (``rules/foo.md``)."""
        clean = target.strip().lstrip("./")
        if not clean or clean.startswith("../") or self.repo_root is None:
            return None
        name = clean.rstrip("/").rsplit("/", 1)[-1]
        rels = self._repo_index().get(name.casefold())
        if not rels:
            return None
        suffix = "/" + clean.casefold().rstrip("/")
        for rel in rels:
            if ("/" + rel.casefold()).endswith(suffix):
                return self.repo_root / rel
        return None

    def _stem_index(self) -> dict[str, list[Path]]:
        """Markdown files under the memory root by normalised stem, root-relative path,
        stem without a memory-type prefix or a leading note number (``75-x.md``), and
        frontmatter ``name`` (Claude Code's
        wikilinks name the memory, not the file: ``[[reference-x]]`` → ``reference_x.md``)."""
        if self._stems is None:
            index: dict[str, list[Path]] = {}
            root = str(self.outer_root or self.memory_root)

            def add(key: str, path: Path) -> None:
                paths = index.setdefault(key, [])
                if path not in paths:
                    paths.append(path)

            for rel in _walk(root):
                if not rel.casefold().endswith(".md"):
                    continue
                path = Path(root, rel)
                stem = _norm_name(rel[:-3])
                base = stem.rsplit("/", 1)[-1]
                add(base, path)
                if "/" in stem:
                    add(stem, path)
                bare = _TYPE_PREFIX.sub("", base)
                if bare != base:
                    add(bare, path)
                unnumbered = _NUMBER_PREFIX.sub("", base)
                if unnumbered != base:  # `75-feedback_native_first.md` ← [[feedback_native_first]]
                    add(unnumbered, path)
                    add(_TYPE_PREFIX.sub("", unnumbered), path)
                name = _frontmatter_name(path)
                if name:
                    add(_norm_name(name), path)
            self._stems = index
        return self._stems

    def _repo_index(self) -> dict[str, list[str]]:
        """Repository files by lower-cased file name (paths relative to the repository)."""
        if self._repo_names is None:
            index: dict[str, list[str]] = {}
            base = self.repo_root or self.memory_root
            for rel in _walk(str(base)):
                index.setdefault(rel.rsplit("/", 1)[-1].casefold(), []).append(rel)
            self._repo_names = index
        return self._repo_names


_NAME_THEN_WORDS = re.compile(
    r"^(?P<name>[^\s\[\]|#]*[-_/.][^\s\[\]|#]*)\s+(?P<words>\w+(?:\s+\w+){0,2})$"
)
"""A wikilink whose note name (a path or a ``kebab``/``snake`` name) a few words follow."""

_KIND_THEN_NAME = re.compile(r"^(?P<kind>[A-Za-z]{2,12})[-_](?P<name>\d{2,5}[-_][^\s/]+)$")
"""A kind, then a numbered file's name (``lesson-0014-argv-drift``)."""

_TYPED_RELATION = re.compile(r"^(?P<rel>[a-z][a-z0-9]*(?:_[a-z0-9]+)*)::?(?P<target>[^:\s][^:]*)$")
"""A wikilink that names a relation before its note (``[[works_at:ACME]]``)."""


def _other_extension(path: str) -> Path | None:
    """A file at ``path`` under another extension (``lineage`` → ``lineage.yaml``)."""
    folder, stem = os.path.split(path)
    try:
        names = os.listdir(folder) if folder else []
    except OSError:
        return None
    for name in sorted(names):
        if name.startswith(stem + ".") and "." not in name[len(stem) + 1 :]:
            return Path(folder, name)
    return None


_NUMBER_PREFIX = re.compile(r"^\d{1,5}-(?=\D)")
"""A numbered note's number (``75-feedback_x.md``): its wikilinks name it without one."""
_TYPE_PREFIX = re.compile(r"^(?:feedback|project|reference|user)-")
_NAME_LINE = re.compile(r"^name\s*:\s*['\"]?(?P<name>[^'\"\n]+?)['\"]?\s*$", re.MULTILINE)


def _norm_name(text: str) -> str:
    """Case, ``-``, ``_`` and spaces do not tell two memory names apart."""
    return re.sub(r"[-_ ]+", "-", text.strip().casefold())


def _wiki_keys(name: str) -> list[str]:
    key = _norm_name(name)
    keys = [key]
    if "/" in key:
        keys.append(key.rsplit("/", 1)[-1])
    return keys


def _frontmatter_name(path: Path) -> str | None:
    try:
        with open(path, "rb") as fh:
            head = fh.read(2048).decode("utf-8", "replace")
    except OSError:
        return None
    if not head.startswith("---"):
        return None
    end = head.find("\n---", 3)
    m = _NAME_LINE.search(head[3 : end if end != -1 else None])
    return m.group("name") if m else None


def _walk(root: str) -> Iterable[str]:
    """Relative POSIX paths of the files under ``root`` (build and VCS folders skipped)."""
    count = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        rel_dir = os.path.relpath(dirpath, root)
        prefix = "" if rel_dir == "." else rel_dir.replace(os.sep, "/") + "/"
        for name in sorted(filenames):
            yield prefix + name
            count += 1
            if count >= MAX_INDEXED_FILES:
                return


def _closest(source: Path, paths: list[Path]) -> Path:
    """Of several files with one stem, the one nearest the linking file (then the first)."""
    if len(paths) == 1:
        return paths[0]
    src = str(source.parent)

    def distance(path: Path) -> tuple[int, str]:
        common = os.path.commonpath([src, str(path.parent)])
        return (src.count(os.sep) - common.count(os.sep)) + (
            str(path.parent).count(os.sep) - common.count(os.sep)
        ), str(path)

    return min(paths, key=distance)


__all__ = [
    "LINK_KINDS",
    "Link",
    "LinkResolver",
    "distinct_links",
    "extract_links",
    "find_repo_root",
    "link_at",
    "link_key",
]
