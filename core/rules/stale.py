"""Staleness from git, with evidence: what changed in the repository since a handoff or a
checkpoint was written (HO005–HO007 and CP023–CP025 present it).

When was it written? A tracked file without local changes: the newest commit that changed
it. A file git does not track (ignored, untracked, outside the repository): its own date
(``Updated:``/``Saved:``), else its file time, and the commits newer than that. A file
with local changes is being written now, so nothing has passed it.

The evidence comes from one ``git log`` of HEAD per repository (the newest
:data:`~memls.core.gitfacade.HISTORY_COMMITS` commits with the paths each changed), one
``git status`` of the root's handoffs and checkpoints, and for a branch named in memory the
merge commit that brought it into the default branch. Every call is bounded
(:mod:`memls.core.gitfacade`); without git, or when git does not answer, there is no finding.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import re
from dataclasses import dataclass
from pathlib import Path

from memls.core.formats.links import Link, extract_links
from memls.core.gitfacade import (
    Commit,
    History,
    default_branch,
    history,
    ignored,
    merge_commit,
    merged_branches,
    squash_commit,
    status_of,
)
from memls.core.model import Document, FileKind
from memls.core.workspace import HISTORY_FOLDERS, PROJECT_MARKERS, SOURCE_FILE, Workspace


@dataclass(frozen=True)
class Written:
    """When a memory file was written, as far as the repository can tell."""

    position: int
    """How many commits of HEAD are newer (0: nothing has passed it)."""
    time: float
    """Epoch seconds."""
    how: str
    """e.g. "last committed in 1a2b3c4d5 on 2026-09-01", "dated 2026-09-01"."""
    beyond_window: bool = False
    """Older than the history memls reads: at least ``position`` commits have passed."""


@dataclass(frozen=True)
class Deleted:
    link: Link
    path: str  # repository-relative path that was deleted
    commit: Commit
    moved_to: str | None


def _day(when: float) -> str:
    return _dt.datetime.fromtimestamp(when).strftime("%Y-%m-%d")


def _rel(top: Path, path: Path) -> str | None:
    try:
        return Path(os.path.realpath(path)).relative_to(os.path.realpath(top)).as_posix()
    except ValueError:
        return None


def _tracked_files(ws: Workspace) -> list[Path]:
    """The root's handoffs and checkpoints: the files one ``git status`` asks about."""
    return sorted(
        p for kind in (FileKind.HANDOFF, FileKind.CHECKPOINT) for p in _paths_of(ws, kind)
    )


def _paths_of(ws: Workspace, kind: FileKind) -> list[Path]:
    from memls.core.parse import kind_for

    return [p for p in ws.paths() if kind_for(p) is kind]


def _being_edited(ws: Workspace, doc: Document) -> bool:
    """An editor buffer that differs from the file on disk: written right now."""
    if not ws.has_overlay(doc.path):
        return False
    try:
        disk = doc.path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return True
    return disk.replace("\r\n", "\n") != doc.text.replace("\r\n", "\n")


def written(ws: Workspace, doc: Document, stamp: _dt.datetime | None) -> Written | None:
    """When ``doc`` was written (None: now, or the repository cannot tell)."""
    git = ws.git
    top = git.toplevel
    if top is None or _being_edited(ws, doc):
        return None
    hist = history(git)
    if hist is None or not hist.commits:
        return None
    rel = _rel(top, doc.path)
    if rel is not None:
        files = ws.memo("memls.stale.files", lambda: _tracked_files(ws))
        if doc.path in files:  # one `git status` for all of the root's handoffs and checkpoints
            status = ws.memo("memls.stale.status", lambda: status_of(git, files))
        else:
            status = status_of(git, [doc.path])
        if status is None:
            return None
        code = status.get(rel)
        if code is None:  # tracked, no local changes
            pos = hist.last_change.get(rel)
            if pos is not None:
                commit = hist.commits[pos]
                return Written(
                    pos, commit.time, f"last committed in {commit.short} on {_day(commit.time)}"
                )
            if hist.complete:
                return None  # not in HEAD's history at all (another branch's file)
            last = hist.commits[-1]
            return Written(
                len(hist.commits), last.time, f"last committed before {_day(last.time)}", True
            )
        if code not in ("??", "!!"):
            return None  # changed locally: being written now
    if stamp is not None:
        when = stamp.timestamp()
        how = f"dated {stamp:%Y-%m-%d}"
    else:
        try:
            when = doc.path.stat().st_mtime
        except OSError:
            return None
        how = f"file time {_day(when)}"
    return Written(hist.since(when), when, how)


# -- history: memory kept as a record, not as the current state ----------------------

_NAME_DATE = re.compile(r"(?<!\d)(20\d{2})[-_.]?(\d{2})[-_.]?(\d{2})(?!\d)")


def name_date(name: str) -> _dt.date | None:
    """The date a file is named by (``handoff-2026-03-08.md``, ``HANDOFF_20260308.md``)."""
    for m in _NAME_DATE.finditer(name):
        try:
            return _dt.date(int(m[1]), int(m[2]), int(m[3]))
        except ValueError:
            continue
    return None


_HISTORY_WORDS = frozenset(
    {
        "history", "historical", "archive", "archives", "archived", "old", "prev", "previous",
        "legacy", "deprecated", "obsolete", "superseded", "trash", "backup",
        # the same in other languages: a folder of what was kept, or thrown away
        "arquivo", "archivo", "archiv", "archivio", "lixeira", "papelera", "corbeille",
        "papierkorb", "cestino", "antigo", "antiguo",
    }
)  # fmt: skip
"""Words that make a compound folder name a history folder (``handoff-history/``,
``_work_old/``, ``_workspace_prev_20260716/``)."""


def in_history_folder(ws: Workspace, doc: Document) -> bool:
    """A file in a folder named archive, old, history, past or legacy, or with history or
    archive as a word of its name (``handoff-history/``, ``archive_2025/``), below the
    repository."""
    return path_in_history_folder(ws, doc.path)


def path_in_history_folder(ws: Workspace, path: Path) -> bool:
    base = ws.repo_root or ws.root
    try:
        parts = path.parent.relative_to(base).parts
    except ValueError:
        parts = (path.parent.name,)
    for part in parts:
        low = part.casefold()
        if low in HISTORY_FOLDERS or set(re.split(r"[-_.\s]+", low)) & _HISTORY_WORDS:
            return True
    return False


def is_history(ws: Workspace, doc: Document) -> bool:
    """A handoff kept as history, not as the state to resume from: it is in an archive (or
    old, history, past) folder; or it is dated by its name and the repository holds a newer
    handoff (dated later by its name, or undated and written after that date) or its folder
    a later-dated file of the same series, or a log of the root has entries of a later day
    (the sessions since took it up); or every item of its checklist is ticked (the work is
    done); or it sits in a numbered session's folder with a later one beside it, or in a
    folder named by a date first (:func:`dated_record_folder`); or it was superseded
    (:func:`_superseded`); or it was answered (:func:`_answered`); or, dated, an undated
    handoff beside it names it (:func:`_cited_by_live`). No staleness finding applies to it."""
    if in_history_folder(ws, doc):
        return True
    day = name_date(doc.path.name)
    path = doc.path
    if day is not None and ws.memo(
        f"memls.stale.history:{path}", lambda: _newer_handoff(ws, path, day)
    ):
        return True
    if day is not None and _last_logged(ws) > day:
        return True  # the sessions logged beside it after its day took it up
    if day is not None and ws.memo(f"memls.stale.cited:{path}", lambda: _cited_by_live(path)):
        return True  # the live handoff beside it names it: the detail kept from that day
    if _all_done(doc) or _closed(doc) or _closed_name(doc.path.name):
        return True  # every item ticked, or marked resolved: a record of finished work
    if _later_session_folder(doc.path):
        return True  # `sessions/064/HANDOFF.md` beside `sessions/065/`: a past session's
    if _later_numbered_session(doc.path):
        return True  # `handoff-session-84.md` beside `-85.md`, or a log of session 133
    if dated_record_folder(ws, doc.path):
        return True  # `handoffs/2026-04-05/…`, `runs/20260605-audit/handoff.md`: that day's record
    return ws.memo(
        f"memls.stale.superseded:{path}", lambda: _superseded(ws, doc) or _answered(path)
    )


_TASK = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+\[([ xX✓✔-])\]", re.MULTILINE)
ALL_DONE_MIN = 2
"""A handoff with this many checklist items or more, all ticked, is finished work."""


_SESSION_FOLDER = re.compile(r"(?i)^(?:session[-_ ]?)?(\d{1,4})$")


def _later_session_folder(path: Path) -> bool:
    """A handoff in a numbered session's folder (``sessions/064/``, ``session-12/``) with a
    later-numbered session folder beside it: the sessions since took it up."""
    match = _SESSION_FOLDER.match(path.parent.name)
    if match is None:
        return False
    mine = int(match[1])
    try:
        siblings = [e.name for e in os.scandir(path.parent.parent) if e.is_dir()]
    except OSError:
        return False
    for name in siblings:
        other = _SESSION_FOLDER.match(name)
        if other is not None and int(other[1]) > mine:
            return True
    return False


_SESSION_NUMBER = re.compile(r"(?i)(?<![a-z0-9])(?:session|sess)[-_ ]?(\d{1,4})(?!\d)")
_LOGGED_SESSION = re.compile(r"(?im)^#{1,4}\s.*?\bsession[-_ ]?(\d{1,4})\b")


def _later_numbered_session(path: Path) -> bool:
    """A handoff numbered by its session in its name (``handoff-session-84.md``) with a
    handoff of a later session beside it (``handoff-session-85.md``), or a session log
    beside it whose headings record a later session (``## … Session 133``): the sessions
    since took it up, it is their history."""
    from memls.core.workspace import is_handoff_name

    match = _SESSION_NUMBER.search(path.stem)
    if match is None:
        return False
    mine = int(match[1])
    try:
        names = [e.name for e in os.scandir(path.parent) if e.is_file()]
    except OSError:
        return False
    for name in names:
        if name == path.name:
            continue
        other = _SESSION_NUMBER.search(name.rsplit(".", 1)[0])
        if other is not None and int(other[1]) > mine and is_handoff_name(name):
            return True
    for name in names:
        low = name.lower()
        if not (low.endswith(".md") and "log" in low):
            continue
        try:
            with (path.parent / name).open("rb") as fh:
                head = fh.read(65536).decode("utf-8", "replace")
        except OSError:
            continue
        if any(int(m[1]) > mine for m in _LOGGED_SESSION.finditer(head)):
            return True
    return False


_DATE_FIRST = re.compile(r"^(20\d{2})[-_.]?(\d{2})[-_.]?(\d{2})(?:$|[-_.\sT])")


def dated_record_folder(ws: Workspace, path: Path) -> bool:
    """A file (a handoff) in a folder whose name starts with a date (``2026-04-05/``,
    ``20260605-quality-index/``), below the repository: the record of that day or of that
    run, kept as it was. A project's folder that only ends with a date
    (``brand-refresh-2026-05-09/``) is not one."""
    base = ws.repo_root or ws.root
    try:
        parts = path.parent.relative_to(base).parts
    except ValueError:
        return False
    for part in parts:
        m = _DATE_FIRST.match(part)
        if m is None:
            continue
        try:
            _dt.date(int(m[1]), int(m[2]), int(m[3]))
        except ValueError:
            continue
        return True
    return False


def _all_done(doc: Document) -> bool:
    """Every checklist item of the handoff ticked (``- [x]``), at least ``ALL_DONE_MIN`` of
    them: the work it handed over is done, so what changed since is no news to anyone."""
    marks = [m[1] for m in _TASK.finditer(doc.text)]
    return len(marks) >= ALL_DONE_MIN and all(m != " " for m in marks)


_CLOSED_WORD = (
    r"(?:resolved|closed|complete|completed|done|finished|superseded|obsolete|archived|"
    r"retired|merged|shipped|resuelto|cerrado|completado|conclu[íi]do|resolvido|fechado|"
    r"termin[ée]|erledigt|abgeschlossen)"
)
_CLOSED = re.compile(
    # `**Status:** RESOLVED (2026-03-02)`, `Status: ✅ Complete`, `> State: closed — see …`
    r"(?im)^\s{0,3}(?:>\s*)?(?:#{1,6}\s*|[-*]\s+)?\**(?:status|state|estado|statut)\**\s*:"
    r"\s*\**\s*(?:[^\w\s]{1,3}\s*)?" + _CLOSED_WORD + r"\b\**"
    r"[ \t.!*_)\]]*(?:$|[-—–(:,;/]|\d|(?:on|in|by|at|via|since|see)\b)"
    # `# Handoff — RESOLVED`, `# [CLOSED] Session handoff`: a title in capitals
    r"|(?-i:^#\s.*\b(?:RESOLVED|CLOSED|COMPLETED|DONE|SUPERSEDED|OBSOLETE|ARCHIVED)\b)"
    # `> **DEPRECATED — retained as historical reference**`: a banner in capitals
    r"|(?-i:^\s{0,3}(?:>\s*)?[*_]{0,2}(?:DEPRECATED|SUPERSEDED|OBSOLETE|ARCHIVED)\b)"
    # `Deprecated: 2026-06-15`, `Superseded by: docs/HANDOFF.md`
    r"|^\s{0,3}(?:>\s*)?\**(?:deprecated|superseded(?: by)?|replaced by)\**\s*:"
    # `> ⏭️ **Superseded for current state by [handoff.md](handoff.md)**`: a banner in words
    r"|^\s{0,3}(?:>\s*)?(?:[^\w\s]{1,4}\s*)?\**(?:superseded|replaced)\b[^\n]{0,40}?\bby\b"
)
CLOSED_HEAD_LINES = 30
"""How far down a handoff its status of resolved (closed, done, superseded) is looked for."""


_CLOSED_NAME_WORDS = frozenset(
    {"closed", "resolved", "done", "completed", "complete", "finished", "superseded", "obsolete"}
)


def _closed_name(name: str) -> bool:
    """A handoff whose file name says its work is closed (``handoff-decisions-closed.md``,
    ``HANDOFF_auth_DONE.md``): a record of what was handed over, kept."""
    words = set(re.split(r"[-_.\s]+", name.lower().removesuffix(".md")))
    return bool(words & _CLOSED_NAME_WORDS)


def _closed(doc: Document) -> bool:
    """A handoff whose title or status, near its top, says the work it handed over is
    resolved (closed, completed, superseded): a record, not the state to resume from. A
    status further down (an item's, a phase's) does not count, nor one that goes on to say
    what is still open (``Status: done with phase 1, phase 2 next`` is not ``done``)."""
    head = "\n".join(doc.text.splitlines()[:CLOSED_HEAD_LINES])
    return _CLOSED.search(head) is not None


_LOG_NAME = re.compile(r"(?i)(?:^|[-_ ])(?:log|journal|diary|worklog|devlog)\.md$")
_DATED_HEADING = re.compile(r"(?m)^#{1,4}\s+(?:[^\n]{0,40}?)(\d{4})-(\d{2})-(\d{2})\b")


def _last_logged(ws: Workspace) -> _dt.date:
    """The latest day a log of the root (``LOG.md``, ``session-log.md``, a journal) has an
    entry headed by: a handoff dated before it was taken up by the sessions logged since
    (``date.min`` when the root keeps no dated log)."""

    def latest() -> _dt.date:
        best = _dt.date.min
        for path in ws.paths():
            if path.parent != ws.root or not _LOG_NAME.search(path.name):
                continue
            doc = ws.document(path)
            if doc is None:
                continue
            for m in _DATED_HEADING.finditer(doc.text):
                try:
                    best = max(best, _dt.date(int(m[1]), int(m[2]), int(m[3])))
                except ValueError:
                    continue
        return best

    return ws.memo("memls.stale.last_logged", latest)


SERIES_MIN = 3
"""A folder holding this many handoffs or more keeps them as a series: the newest one is
the state to resume from, the others its history."""


def _superseded(ws: Workspace, doc: Document) -> bool:
    """A handoff that a newer commit replaced: its folder keeps a series of handoffs
    (``SERIES_MIN`` or more) and another of them was committed after it, or a handoff of the
    same name elsewhere in the repository was committed after it (a copy moved on)."""
    from memls.core.workspace import is_handoff_name

    top = ws.git.toplevel
    hist = history(ws.git) if top is not None else None
    if top is None or hist is None:
        return False
    path = doc.path
    rel = _rel(top, path)
    when = written(ws, doc, None)
    if when is None or rel is None or (rel not in hist.last_change and not when.beyond_window):
        return False  # being written, or not committed yet: it is the current one
    mine = when.position
    try:
        siblings = [
            Path(e.path)
            for e in os.scandir(path.parent)
            if e.is_file() and is_handoff_name(e.name) and e.path != str(path)
        ]
    except OSError:
        siblings = []

    def newer(other: Path) -> bool:
        other_rel = _rel(top, other)
        pos = hist.last_change.get(other_rel) if other_rel is not None else None
        return pos is not None and pos < mine and other_rel not in hist.deleted

    if len(siblings) + 1 >= SERIES_MIN and any(newer(o) for o in siblings):
        return True
    name = path.name.casefold()
    for changed in hist.last_change:
        if changed == rel or changed.rsplit("/", 1)[-1].casefold() != name:
            continue
        other = top / changed
        if other.is_file() and newer(other):
            return True
    return False


_ANSWER_WORDS = frozenset(
    {
        "final", "result", "results", "report", "done", "output", "response", "reply",
        "answer", "complete", "completed", "outcome", "summary",
    }
)  # fmt: skip
_HANDOFF_WORDS = frozenset(
    {
        "handoff", "hand", "off", "brief", "task", "session", "sessions", "next", "notes",
        "the", "to", "for", "and", "of", "new", "agent", "md",
    }
)  # fmt: skip
"""Words of a brief's name that are not its tag (``handoff-A-emission.md``: A, emission)."""
_TOKEN = re.compile(r"[A-Za-z0-9]+")


def _answered(path: Path) -> bool:
    """A handoff written as a brief for another agent (``handoff-A.md``, ``HANDOFF_auth.md``)
    beside the answer to it: a file in the same folder whose name carries the brief's own
    tag and a word of completion (``codex-A-final.md``, ``auth-result.md``). The work it
    handed off came back; it is a record now."""
    from memls.core.workspace import is_handoff_name, is_markdown_name

    tags = {
        t.casefold()
        for t in _TOKEN.findall(path.name[: -len(".md")])
        if t.casefold() not in _HANDOFF_WORDS
    }
    if not tags:
        return False  # `.handoff.md`, `HANDOFF.md`: the one state of the project
    try:
        names = [e.name for e in os.scandir(path.parent) if e.is_file()]
    except OSError:
        return False
    for name in names:
        if name == path.name or not is_markdown_name(name) or is_handoff_name(name):
            continue
        words = {t.casefold() for t in _TOKEN.findall(name[: -len(".md")])}
        if words & _ANSWER_WORDS and tags & words:
            return True
    return False


CITE_READ_LIMIT = 512 * 1024
"""How much of a live handoff is read to see whether it names a dated one beside it."""


def _cited_by_live(path: Path) -> bool:
    """A dated handoff (``handoff-2026-08-17-tickets.md``) that an undated handoff in the
    same folder (``handoff.md``, the one the next agent reads) names: the live handoff
    keeps its state and points at the dated one for that day's detail — a record."""
    from memls.core.workspace import is_handoff_name

    try:
        siblings = [
            e.path
            for e in os.scandir(path.parent)
            if e.path != str(path) and is_handoff_name(e.name) and name_date(e.name) is None
        ]
    except OSError:
        return False
    for other in siblings:
        try:
            with open(other, encoding="utf-8", errors="replace") as fh:
                text = fh.read(CITE_READ_LIMIT)
        except OSError:
            continue
        if path.name in text:
            return True
    return False


def _newer_handoff(ws: Workspace, path: Path, day: _dt.date) -> bool:
    from memls.core.workspace import is_handoff_name

    candidates: set[Path] = set()
    for folder in {path.parent, ws.root}:
        try:
            candidates.update(Path(e.path) for e in os.scandir(folder) if is_handoff_name(e.name))
        except OSError:
            continue
    with contextlib.suppress(OSError):  # a dated series in its folder: `…-SESSION-31.md` on
        candidates.update(
            Path(e.path)
            for e in os.scandir(path.parent)
            if e.name.lower().endswith(".md") and name_date(e.name) is not None
        )
    top = ws.git.toplevel
    hist = history(ws.git) if top is not None else None
    if top is not None and hist is not None:
        for changed in hist.last_change:
            if changed not in hist.deleted and is_handoff_name(changed.rsplit("/", 1)[-1]):
                candidates.add(top / changed)
    end_of_day = _dt.datetime.combine(day + _dt.timedelta(days=1), _dt.time()).timestamp()
    own = os.path.realpath(path)
    for other in candidates:
        if os.path.realpath(other) == own or not other.is_file():
            continue
        other_day = name_date(other.name)
        if other_day is not None:
            if other_day > day:
                return True
            continue
        rel = _rel(top, other) if top is not None else None
        pos = hist.last_change.get(rel) if hist is not None and rel is not None else None
        when: float
        try:
            if hist is not None and pos is not None:
                when = hist.commits[pos].time  # undated: when it was last committed
            else:
                when = other.stat().st_mtime
        except OSError:
            continue
        if when >= end_of_day:
            return True
    return False


# -- files named that were deleted since ------------------------------------------


def _candidates(ws: Workspace, doc: Document, top: Path, target: str) -> list[str]:
    clean = target.strip()
    if clean.startswith("~") or "://" in clean or not clean:
        return []
    clean = clean.lstrip("/") if clean.startswith("/") else clean
    out: list[str] = []
    for base in (doc.path.parent, ws.root, top):
        rel = _rel(top, Path(os.path.normpath(base / clean)))
        if rel is not None and rel not in out:
            out.append(rel)
    return out


def deleted_since(ws: Workspace, doc: Document, when: Written) -> list[Deleted]:
    """Files ``doc`` names (links, pointer bullets, backtick paths) that a commit newer
    than ``when`` deleted, and that exist nowhere now; one per file, in document order. A
    file taken out of git that the repository now ignores is kept on disk, not deleted."""
    top = ws.git.toplevel
    hist = history(ws.git)
    if top is None or hist is None or not hist.deleted:
        return []
    by_name: dict[str, list[str]] = {}
    for path in hist.deleted:
        by_name.setdefault(path.rsplit("/", 1)[-1], []).append(path)
    found: list[Deleted] = []
    seen: set[str] = set()
    for link in extract_links(doc):
        if link.kind == "wikilink" or ws.links.resolve(link) is not None:
            continue
        name = link.target.rstrip("/").rsplit("/", 1)[-1]
        if name not in by_name:
            continue
        hit = next((c for c in _candidates(ws, doc, top, link.target) if c in hist.deleted), None)
        if hit is None and "/" in link.target.strip("./"):
            suffix = "/" + link.target.strip().lstrip("./")
            hits = [p for p in by_name[name] if ("/" + p).endswith(suffix)]
            hit = hits[0] if len(hits) == 1 else None
        if hit is None or hit in seen:
            continue
        pos = hist.deleted[hit]
        if pos >= when.position:
            continue  # deleted before the memory was written: not news to its author
        if _GOING.search(doc.line_text(link.line)):
            continue  # "remove `old.sh`": the memory expected it to go
        seen.add(hit)
        found.append(Deleted(link, hit, hist.commits[pos], _moved_to(hist, pos, hit)))
    if found:
        # `git rm --cached .claude/settings.json` + .gitignore: taken out of git, kept on
        # disk as a local file; the clone lacks it by design, the owner still has it
        kept = ignored(ws.git, [top / d.path for d in found])
        found = [d for d in found if top / d.path not in kept]
    return found


_GOING = re.compile(
    r"(?i)\b(?:remov|delet|drop|retir|obsolete|deprecat|replac|renam|mov(?:e|ed|ing) to)|\brm\b"
)


def _moved_to(hist: History, pos: int, path: str) -> str | None:
    name = path.rsplit("/", 1)[-1]
    added = [p for p in hist.added_by.get(pos, ()) if p.rsplit("/", 1)[-1] == name]
    return added[0] if len(added) == 1 else None


def describe_deleted(item: Deleted) -> str:
    c = item.commit
    what = f"moved to `{item.moved_to}`" if item.moved_to else "deleted"
    return f"`{item.path}` was {what} in {c.short} on {_day(c.time)} ('{_subject(c)}')"


# -- commits since ----------------------------------------------------------------


def commits_since(ws: Workspace, when: Written, folder: str | None = None) -> str:
    """What the commits since ``when`` (those that changed ``folder``, when given) did: how
    many files they changed, the newest one."""
    newer = _newer(ws, when, folder)
    if not newer:
        return ""
    files = {path for c in newer for _, path in c.changes}
    head = newer[0]
    return (
        f"they changed {len(files)} file{'s' if len(files) != 1 else ''}; the newest is "
        f"{head.short} on {_day(head.time)} ('{_subject(head)}')"
    )


def _newer(ws: Workspace, when: Written, folder: str | None) -> list[Commit]:
    """HEAD's commits newer than ``when``, newest first; with ``folder``, those that
    changed a file in it."""
    hist = history(ws.git)
    if hist is None or when.position <= 0:
        return []
    newer = list(hist.commits[: when.position])
    if folder is None:
        return newer
    prefix = folder + "/"
    return [c for c in newer if any(p.startswith(prefix) for _, p in c.changes)]


_MORE_MANIFESTS = (
    "build.gradle.kts", "settings.gradle.kts", "settings.gradle", "CMakeLists.txt",
    "requirements.txt", "deno.json", "pubspec.yaml", "mix.exs",
)  # fmt: skip


def project_of(path: Path, repo: Path) -> str:
    """The sub-project ``path`` (a file, or a memory folder) belongs to, as a
    repository-relative prefix (``day-1-app/``): the nearest folder above it with a project
    manifest (``package.json``, ``pyproject.toml`` …) below the repository's top; "" for
    the whole repository."""
    markers = [m for m in PROJECT_MARKERS if m != ".git"] + list(_MORE_MANIFESTS)
    here = path.parent
    while here != repo and repo in here.parents:
        if any((here / m).exists() for m in markers):
            return here.relative_to(repo).as_posix() + "/"
        here = here.parent
    return ""


_SHARED_TOPS = frozenset(
    {
        "docs", "doc", "documentation", "notes", "memory", "memories", "memory-bank",
        "memory_bank", "handoffs", "handoff", "handovers", "sessions", "journal", "logs",
        "wiki", "knowledge", "context", "ai", "agents", "workspace", "src", "app", "lib",
    }
)  # fmt: skip
"""Top folders of a repository that are not projects of their own: what they say is
about the whole repository (``docs/``, ``notes/``), or they are its one codebase (``src/``)."""


def project_folder(ws: Workspace, doc: Document) -> str | None:
    """The sub-project a handoff or checkpoint is about, as a repository-relative folder:
    the nearest folder above it with a project manifest (:func:`project_of`), else its top
    folder when that one (not hidden, not one of :data:`_SHARED_TOPS`) holds source files
    of its own (``integra-metodologia/`` with its ``scripts/``); None: the repository."""
    top = ws.git.toplevel
    rel = _rel(top, doc.path) if top is not None else None
    if top is None or rel is None or "/" not in rel:
        return None
    prefix = project_of(doc.path, top)
    if prefix:
        return prefix.rstrip("/")
    first = rel.split("/", 1)[0]
    if first.startswith(".") or first.lower() in _SHARED_TOPS:
        return None
    return (
        first if ws.memo(f"memls.stale.code-in:{first}", lambda: _has_code(top / first)) else None
    )


def _has_code(folder: Path) -> bool:
    """Source files in ``folder`` or its subfolders, two levels down (at most 400 entries
    looked at)."""
    seen = 0
    for here, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "node_modules"]
        if any(SOURCE_FILE.search(f) for f in files):
            return True
        seen += len(files) + len(dirs)
        if seen > 400 or here.count(os.sep) - str(folder).count(os.sep) >= 2:
            dirs[:] = []
    return False


def behind(ws: Workspace, when: Written, folder: str | None) -> int:
    """How many commits since ``when`` changed the project: all of HEAD's newer commits,
    or, for memory of a sub-project (``folder``), those that changed a file in it."""
    return when.position if folder is None else len(_newer(ws, when, folder))


def _subject(commit: Commit) -> str:
    s = commit.subject.strip()
    return s if len(s) <= 72 else s[:69] + "..."


# -- merged branch ------------------------------------------------------------------


def _merge_subject(branch: str) -> re.Pattern[str]:
    b = re.escape(branch)
    return re.compile(
        rf"^Merge (?:branch|remote-tracking branch) '(?:[^'/]+/)?{b}'"
        rf"|^Merge pull request #\d+ from [^\s/]+/{b}\s*$"
        rf"|^Merged in {b}\b"
    )


def merged_since(ws: Workspace, branch: str, when: Written) -> tuple[str, Commit] | None:
    """(default branch, merge commit) when ``branch`` was merged after ``when``: an
    existing branch the default branch contains through a merge commit, or whose work it
    took as one squashed commit, or a branch gone from the repository whose merge commit is
    in HEAD's history."""
    git = ws.git
    squashed = False
    into = default_branch(git)
    if into is None or branch in (into, into.split("/", 1)[-1]):
        return None
    branches = git.branches()
    if branches is None:
        return None
    if branches.exists(branch):
        squashed = branch not in merged_branches(git, into)
        # not an ancestor: its work may have come in as one squashed commit
        find = squash_commit if squashed else merge_commit
        commit = find(git, branch, into)
    else:
        hist = history(git)
        pattern = _merge_subject(branch)
        commit = (
            next((c for c in hist.commits if pattern.search(c.subject)), None) if hist else None
        )
    if commit is None or commit.time < when.time:
        return None
    if commit.time == when.time and not squashed:
        return None  # a squash commit brings the memory itself in: it was written before
    return into, commit


def describe_merge(into: str, commit: Commit) -> str:
    return f"merged into `{into}` by {commit.short} on {_day(commit.time)} ('{_subject(commit)}')"


__all__ = [
    "HISTORY_FOLDERS",
    "Deleted",
    "Written",
    "commits_since",
    "deleted_since",
    "describe_deleted",
    "describe_merge",
    "in_history_folder",
    "is_history",
    "merged_since",
    "name_date",
    "written",
]
