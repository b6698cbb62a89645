"""Named checkpoints: save, resume, clear and list — the seed's procedure, step by step.

A save writes ``checkpoint-{name}.md`` (keeping the user's text of sections not given
anew), then rewrites only ``## Active Checkpoints`` in MEMORY.md. Both happen under the
root lock, so concurrent saves serialise and never lose a bullet; both writes are atomic,
so a crash leaves each file old or new. The checkpoint is written first: a crash between
the two writes leaves a checkpoint without a bullet (IX003), never a bullet without a file.
"""

from __future__ import annotations

import codecs
import datetime as dt
import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from memls.core.config import Config, load_config
from memls.core.formats.checkpoint import (
    CHECKPOINT_RE,
    DONE,
    FAILED,
    MODIFIED,
    NEXT_TITLES,
    NO_BRANCH,
    checkpoint_file_name,
    next_action_section,
    parse_saved,
    plan_exists,
    plan_line,
    plan_path,
    read_next_action,
    sanitize_name,
    saved_stamp,
    split_plan,
)
from memls.core.formats.index import (
    bullet_line,
    bullet_stamp,
    bullets,
    is_legacy_next_action,
    legacy_sections,
    remove_sections,
    set_bullet,
)
from memls.core.fsutil import (
    TEMP_PREFIX,
    UnsafePathError,
    atomic_delete,
    atomic_write,
    root_lock,
    safe_join,
)
from memls.core.gitfacade import Git
from memls.core.model import Document, Section
from memls.core.ops import ConflictError, OpError, OpResult
from memls.core.ops._text import (
    MAX_EDIT_CHARS,
    memory_index,
    now_minute,
    oversize,
    read_text,
    refuse_oversize,
    require_config,
    sha256_bytes,
    size_text,
)
from memls.core.parse import parse_text
from memls.core.text import decode_lossless, encode_lossless, strip_blank_edges

STATUS_LINES = 10
_STEP = re.compile(r"^\s*(\d+)\s*(?:/|of)\s*(\d+)\s*$")
_TEMP_MAX_AGE = 600.0


# -- step 1: the name (the policy is sanitize_name, in memls.core.formats.checkpoint) --
def default_name(git: Git) -> str | None:
    """The sanitised current branch, the name a save uses when none is given."""
    branch = git.current_branch()
    return sanitize_name(branch) if branch else None


def checkpoint_path(root: Path, name: str) -> Path:
    path = safe_join(root, checkpoint_file_name(name), "checkpoint file")
    if path.is_symlink():
        raise UnsafePathError(
            f"{path.name} is a symlink; memls does not write through links — "
            "replace it with a regular file"
        )
    return path


# -- the checkpoint file -----------------------------------------------------
@dataclass
class _Parts:
    """An existing checkpoint taken apart into what a save keeps or replaces."""

    plan_line: str | None = None
    preamble: list[str] = field(default_factory=list)  # user lines before the first section
    sections: list[tuple[str, list[str]]] = field(default_factory=list)  # (heading line, body)

    def find(self, *titles: str, prefix: bool = False) -> int | None:
        """The first section titled one of ``titles`` (or ``title: …``; with ``prefix``, any
        title starting so — how :func:`~memls.core.formats.checkpoint.next_action_section`
        finds the next action)."""
        for i, (heading, _) in enumerate(self.sections):
            title = heading.lstrip("#").strip().casefold()
            for t in (t.casefold() for t in titles):
                if title == t or title.startswith(t if prefix else t + ":"):
                    return i
        return None


def _split(doc: Document) -> _Parts:
    parts = _Parts()
    first = next((s.start_line for s in doc.sections if s.level >= 2), len(doc.lines))
    title_line = next((h.line for h in doc.headings if h.level == 1), -1)
    for ln in range(title_line + 1, first):
        f = next((f for f in doc.fields if f.line == ln), None)
        name = f.name.casefold() if f is not None else None
        if name == "plan":
            parts.plan_line = doc.lines[ln]
        elif name not in _HEADER:
            parts.preamble.append(doc.lines[ln])
    parts.preamble = strip_blank_edges(parts.preamble)
    for sec in doc.sections:
        if sec.level != 2:
            continue
        parts.sections.append((doc.lines[sec.start_line], strip_blank_edges(doc.body_lines(sec))))
    return parts


_HEADER = {"branch", "saved", "plan"}


def _parse_step(step: str) -> tuple[int, int]:
    """``N/M`` (or ``N of M``) with 1 <= N <= M; anything else is refused before a write.

    CP031 rejects an impossible "step N of M", so a save never writes one.
    """
    m = _STEP.match(step)
    if m is None:
        raise OpError(f"{{step}} {step!r} is not N/M (for example 2/5)", param="step")
    n, total = int(m.group(1)), int(m.group(2))
    if total < 1 or not 1 <= n <= total:
        raise OpError(
            f"{{step}} {step!r} is impossible: N must be between 1 and M (for example 2/5)",
            param="step",
        )
    return n, total


def _modified(status: list[str]) -> list[str]:
    out = []
    for line in status[:STATUS_LINES]:
        code, path = line[:2].strip() or "?", line[3:].strip()
        out.append(f"- {path} ({code})")
    return out


def _status_paths(line: str) -> list[str]:
    """The path(s) of one ``git status --short`` line (both sides of a rename), unquoted."""
    rest = line[3:].rstrip("\n")
    parts = rest.split(" -> ") if line[:2].strip()[:1] in ("R", "C") else [rest]
    return [_unquote(part.strip()) for part in parts]


def _unquote(text: str) -> str:
    """Undo git's C-style quoting of unusual path names (``"a\\303\\251.md"``)."""
    if len(text) < 2 or not text[0] == text[-1] == '"':
        return text
    raw: bytes = codecs.escape_decode(text[1:-1].encode("utf-8"))[0]
    return raw.decode("utf-8", "replace")


def session_status(git: Git, root: Path) -> list[str]:
    """``git status --short`` without the memory root's own files (first 10 lines).

    The checkpoint and MEMORY.md a save writes are not files the session modified; listing
    them would make the next identical save differ. When the root is a folder inside the
    repository, everything in it (and an untracked folder holding it) is memory, not work.
    When the root is the repository itself, only memls's own files are left out — MEMORY.md,
    LOG.md, the handoff, the checkpoints, ``.memls/`` and what the hooks keep in
    ``transcripts/`` (archived sessions and compaction summaries, their ``.gitignore``, a
    handoff there — and the folder when it holds nothing else) — so the project's own files
    still show.
    """
    top = git.toplevel
    base = Path(git.cwd).resolve()
    folder = top is not None and root != top.resolve() and root.is_relative_to(top.resolve())
    archive = root / "transcripts"

    def is_memory(path: Path) -> bool:
        if path.name.startswith(TEMP_PREFIX):
            return True  # a writer's temp file (this save's or another process's), never work
        if folder and (path.is_relative_to(root) or root.is_relative_to(path)):
            return True
        if path.parent == archive:
            return _archive_entry(path.name)
        if path == archive:
            return _only_archive(archive)
        own = path.name in _OWN_NAMES or CHECKPOINT_RE.match(path.name)
        return path.parent == root and bool(own)

    kept = [
        line
        for line in git.status_short(1_000_000)
        if not any(is_memory(Path(os.path.normpath(base / p))) for p in _status_paths(line))
    ]
    return kept[:STATUS_LINES]


_OWN_NAMES = frozenset({"MEMORY.md", "LOG.md", ".handoff.md", ".memls"})
"""Files at a root memls writes (the checkpoints aside): never the session's own work."""
_COMPACT_SUMMARY = re.compile(r"\.compact-[0-9a-f]{12}\.md$")


def _archive_entry(name: str) -> bool:
    """A name the hooks keep in ``transcripts/``: an archived session or compaction summary,
    its ignore file, the handoff kept there, a writer's temp file."""
    return (
        name.endswith(".jsonl")
        or bool(_COMPACT_SUMMARY.search(name))
        or name in (".gitignore", ".handoff.md")
        or (name.startswith(TEMP_PREFIX))
    )


def _only_archive(folder: Path) -> bool:
    """Whether ``transcripts/`` (listed by git as one untracked folder) holds only those."""
    try:
        return all(_archive_entry(entry.name) for entry in os.scandir(folder))
    except OSError:
        return False


@dataclass(frozen=True)
class _Inputs:
    name: str
    branch: str
    stamp: str
    next_action: str | None
    done: Sequence[str]
    failed: Sequence[str]
    plan_line: str | None
    modified: list[str] | None  # None: not a git repository, keep what is there


_HEADING_LINE = re.compile(r"^( {0,3})(#{1,6})(?=\s|$)")
_FENCE_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def _inert(lines: list[str]) -> list[str]:
    """The next action's body as text inside its section: a line that would start a heading
    is escaped (``\\## …`` renders as the same text, but is no section), and a code fence
    left open is closed, so the body can never swallow or split the sections after it."""
    out: list[str] = []
    fence: str | None = None
    for line in lines:
        m = _FENCE_LINE.match(line)
        if m:
            mark = m.group(1)
            if fence is None:
                fence = mark
            elif mark[0] == fence[0] and len(mark) >= len(fence):
                fence = None
            out.append(line)
            continue
        out.append(line if fence is not None else _HEADING_LINE.sub(r"\1\\\2", line))
    if fence is not None:
        out.append(fence)
    return out


def _render(inputs: _Inputs, old: _Parts | None, migrated: list[tuple[str, list[str]]]) -> str:
    parts = old or _Parts()
    sections = list(parts.sections)
    taken: set[int] = set()

    def existing(*titles: str, prefix: bool = False) -> tuple[str, list[str]] | None:
        i = parts.find(*titles, prefix=prefix)
        if i is None:
            return None
        taken.add(i)
        return sections[i]

    # Next Action: given, else kept, else taken from a legacy "## Next Action", else a prompt.
    kept_next = existing(*NEXT_TITLES, prefix=True)
    used_legacy = False
    legacy_next = next((m for m in migrated if is_legacy_next_action(m[0])), None)
    if inputs.next_action is not None:
        title, _, rest_text = inputs.next_action.strip().partition("\n")
        body_lines = _inert(strip_blank_edges(rest_text.splitlines())) or _next_body(inputs)
        next_section = (f"## Next Action: {' '.join(title.split())}", body_lines)
    elif kept_next is not None:
        next_section = kept_next
    elif legacy_next is not None:
        used_legacy = True
        legacy_body = legacy_next[1]
        first = next((ln for ln in legacy_body if ln.strip()), "")
        title = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", first).strip() or f"Continue {inputs.name}"
        next_section = (f"## Next Action: {title[:120]}", legacy_body)
    else:
        next_section = (f"## Next Action: Continue {inputs.name}", _next_body(inputs))
    if kept_next is not None and legacy_next is not None and kept_next[1] == legacy_next[1]:
        used_legacy = True  # moved by an earlier save that crashed before the index write
    migrated = [m for m in migrated if not (used_legacy and m is legacy_next)]

    def listed(title: str, given: Sequence[str], empty: str) -> tuple[str, list[str]]:
        kept = existing(title)
        if given:
            return (f"## {title}", [f"- {' '.join(item.split())}" for item in given])
        return kept if kept is not None else (f"## {title}", [empty])

    done = listed(DONE, inputs.done, "- None recorded")
    failed = listed(FAILED, inputs.failed, "- None")
    kept_modified = existing(MODIFIED)
    if inputs.modified is not None:
        modified = (f"## {MODIFIED}", inputs.modified or ["- None"])
    else:
        modified = kept_modified if kept_modified is not None else (f"## {MODIFIED}", ["- None"])
    rest = [s for i, s in enumerate(sections) if i not in taken]
    # Skip what an earlier save moved already (it crashed before writing the index).
    rest += [m for m in migrated if m not in rest]

    plan_line = inputs.plan_line if inputs.plan_line is not None else parts.plan_line
    out = [
        f"# Checkpoint: {inputs.name}",
        "",
        f"- **Branch:** `{inputs.branch}`",
        f"- **Saved:** {inputs.stamp}",
    ]
    if plan_line:
        out.append(plan_line)
    if parts.preamble:
        out += ["", *parts.preamble]
    for heading, lines in [next_section, done, failed, modified, *rest]:
        out += ["", heading, *lines]
    return "\n".join(out) + "\n"


def _next_body(inputs: _Inputs) -> list[str]:
    files = [m[2:].rsplit(" (", 1)[0] for m in (inputs.modified or [])[:3]]
    if files:
        return ["Files: " + ", ".join(f"`{f}`" for f in files)]
    return ["- (author: 1-3 lines on what to do next, with file paths)"]


# -- save --------------------------------------------------------------------
def save_checkpoint(
    root: Path,
    name: str | None = None,
    *,
    next_action: str | None = None,
    summary: str | None = None,
    done: Sequence[str] = (),
    failed: Sequence[str] = (),
    plan: str | None = None,
    step: str | None = None,
    expect_sha: str | None = None,
    now: dt.datetime | None = None,
    git: Git | None = None,
) -> OpResult:
    """Save a named checkpoint and index it (the seed's save procedure, steps 1-7)."""
    root = root.resolve()
    require_config(root)
    git = git if git is not None else Git(root)
    if name is None:
        name = default_name(git)
        if name is None:
            raise OpError("No checkpoint name given and no git branch to derive one from.")
    else:
        name = sanitize_name(name)
    if step is not None and plan is None:
        raise OpError(
            "{step} needs {plan} (the plan file the step belongs to)", param=("step", "plan")
        )
    parsed_step = _parse_step(step) if step is not None else None
    warnings: list[str] = []
    if plan is not None and not plan.strip():
        raise OpError("{plan} is empty: give the plan file's path", param="plan")
    if plan is not None and not plan_exists(root, plan):
        # The procedure: "Omit the Plan: line if no plan file exists" — don't guess, and
        # don't write a line CP030 would flag. The checkpoint is still saved (insurance).
        warnings.append(
            f"Warning: plan file `{plan}` not found (relative paths are taken from the "
            f"memory root {root}); the Plan line was left out, as CP030 would flag it. "
            "Save again with the plan's absolute path to record it."
        )
        plan = None
    plan_text = plan_line(plan, parsed_step) if plan is not None else None
    path = checkpoint_path(root, name)
    index = memory_index(root)
    when = now_minute(now)
    branch = git.current_branch() or NO_BRANCH
    status = session_status(git, root) if git.is_repo else None
    inputs = _Inputs(
        name=name,
        branch=branch,
        stamp=saved_stamp(when),
        next_action=next_action,
        done=[d for d in done if d.strip()],
        failed=[f for f in failed if f.strip()],
        plan_line=plan_text,
        modified=_modified(status) if status is not None else None,
    )
    with root_lock(root):
        _sweep_temp(root)
        if index.parent != root:
            _sweep_temp(index.parent)  # the orchestrator layout's memory/ folder
        old_bytes = path.read_bytes() if path.exists() else None
        if expect_sha is not None:
            current = sha256_bytes(old_bytes) if old_bytes is not None else "absent"
            if expect_sha != current:
                raise ConflictError(
                    f"{path.name} changed since you read it: its sha256 is now {current} "
                    f"(you expected {expect_sha}). Re-read it and save again.",
                    current,
                )
        index_text = read_text(index)
        # Nothing is edited from a view of part of a file (the parser's limit): refuse
        # before anything is written.
        refuse_oversize(index, index_text, "index the checkpoint")
        migrated: list[tuple[str, list[str]]] = []
        if index_text is not None:
            index_doc = parse_text(index_text, index)
            legacy = legacy_sections(index_doc)
            migrated = [_section_parts(index_doc, s) for s in legacy]
            if legacy:
                index_text = remove_sections(index_text, index, legacy)
        # The kept sections are the user's bytes: read losslessly (bytes that are not UTF-8
        # as surrogateescape, the BOM remembered), so the save writes them back unchanged.
        old_text, bom = decode_lossless(old_bytes) if old_bytes else ("", False)
        refuse_oversize(path, old_text, "save")
        old = _split(parse_text(old_text, path)) if old_bytes else None
        content = _render(inputs, old, migrated)
        if "\r\n" in old_text:  # a CRLF checkpoint stays CRLF (its dominant line ending)
            content = content.replace("\r\n", "\n").replace("\n", "\r\n")
        content_bytes = encode_lossless(content, bom)
        refuse_oversize(path, content, "save", would=True)
        doc = parse_text(content, path)
        next_title = _next_text(doc) or f"Continue {name}"
        bullet_summary = summary
        if bullet_summary is None and next_action is None and index_text is not None:
            prior = next(
                (b for b in bullets(parse_text(index_text, index)) if b.name == name), None
            )
            bullet_summary = prior.canonical_summary if prior is not None else None
        bullet = bullet_line(name, branch, bullet_stamp(when), bullet_summary or next_title)
        new_index = set_bullet(index_text, index, name, bullet)
        refuse_oversize(index, new_index, "index the checkpoint", would=True)
        cp_changed = atomic_write(path, content_bytes, root=root)
        idx_changed = atomic_write(index, encode_lossless(new_index), root=root)
    changed = cp_changed or idx_changed
    has_plan = _field(doc, "plan") is not None
    next_step = _next_step(name, doc, next_title, has_plan, inputs)
    head = f'Checkpoint "{name}" {"saved" if changed else "unchanged"} -> {path.name}'
    lines = [head, *warnings]
    if migrated:
        titles = ", ".join(h.lstrip("#").strip() for h, _ in migrated)
        lines.append(f"Migrated from MEMORY.md into {path.name}: {titles}")
    lines += ["", next_step]
    return OpResult(
        "\n".join(lines),
        changed=changed,
        paths=tuple(p for p, c in ((path, cp_changed), (index, idx_changed)) if c),
        data={
            "name": name,
            "checkpoint": str(path),
            "checkpoint_changed": cp_changed,
            "index_changed": idx_changed,
            "migrated": [h.lstrip("#").strip() for h, _ in migrated],
            "next_step": next_step,
            "sha": sha256_bytes(content_bytes),
            "warnings": warnings,
        },
    )


def _section_parts(doc: Document, section: Section) -> tuple[str, list[str]]:
    return doc.lines[section.start_line], strip_blank_edges(doc.body_lines(section))


def _next_step(name: str, doc: Document, next_title: str, has_plan: bool, inputs: _Inputs) -> str:
    """The seed's smart output: /clear when a plan tracks progress, else /compact."""
    if has_plan:
        return f"/clear then: continue {name}\nNext: {next_title}"
    focus = [f"focus on: {next_title}"]
    failed = _items(doc, FAILED)
    if failed:
        focus.append("failed approaches: " + "; ".join(failed[:3]))
    files = [m[2:].rsplit(" (", 1)[0] for m in (inputs.modified or [])[:3]]
    if files:
        focus.append("files: " + ", ".join(files))
    return "/compact " + "; ".join(focus)


def _sweep_temp(folder: Path) -> None:
    """Remove temp files that a killed writer left behind (old enough to be nobody's)."""
    cutoff = time.time() - _TEMP_MAX_AGE
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith(TEMP_PREFIX) and entry.is_file(follow_symlinks=False):
            try:
                if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                    os.unlink(entry.path)
            except OSError:
                continue


# -- reading checkpoints -----------------------------------------------------
def _field(doc: Document, name: str) -> str | None:
    f = doc.field(name)
    return f.value if f is not None else None


def _next_title(doc: Document) -> str | None:
    """The next action's title (what resume shows after ``Next Action:``)."""
    nxt = read_next_action(doc)
    return nxt.title if nxt is not None else None


def _next_text(doc: Document) -> str | None:
    """The next action in one line: its title, else its body's first line (what a listing
    shows, and a bullet summarises — as the IX rules' canonical bullet does)."""
    nxt = read_next_action(doc)
    return nxt.text if nxt is not None else None


def _items(doc: Document, title: str) -> list[str]:
    sec = doc.section(title)
    if sec is None:
        return []
    out = []
    for item in doc.items_in(sec):
        text = item.text.strip()
        if item.indent == 0 and text and not re.match(r"(?i)none\b", text):
            out.append(text)
    return out


@dataclass(frozen=True)
class CheckpointInfo:
    name: str
    path: Path
    branch: str | None
    saved: dt.datetime | None
    age_days: float | None
    stale: bool  # older than stale_days, or its branch is gone
    branch_mismatch: bool  # the current branch is another one
    next_action: str | None
    summary: str | None  # from the index bullet


def _checkpoint_files(root: Path) -> dict[str, Path]:
    out: dict[str, Path] = {}
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return out
    for entry in entries:
        m = CHECKPOINT_RE.match(entry.name)
        if m and entry.is_file(follow_symlinks=False):
            out[m.group("name")] = Path(entry.path)
    return out


def _index_bullets(root: Path) -> dict[str, str | None]:
    try:
        index = memory_index(root)
    except UnsafePathError:
        return {}  # listing still works; saving will say what is wrong with MEMORY.md
    text = read_text(index)
    if text is None:
        return {}
    return {b.name: b.canonical_summary for b in bullets(parse_text(text, index))}


def list_checkpoints(
    root: Path,
    *,
    now: dt.datetime | None = None,
    git: Git | None = None,
    config: Config | None = None,
) -> list[CheckpointInfo]:
    """Every checkpoint of the root, newest first."""
    root = root.resolve()
    git = git if git is not None else Git(root)
    config = config if config is not None else load_config(root)
    current_time = now if now is not None else dt.datetime.now()
    current = git.current_branch()
    branches = git.branches()
    summaries = _index_bullets(root)
    allowed = frozenset(config.allow_secrets)
    infos = []
    for name, path in _checkpoint_files(root).items():
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            continue  # cleared by another process since the folder was listed
        doc = parse_text(data.decode("utf-8", "replace"), path)
        branch = _field(doc, "branch")
        saved_value = _field(doc, "saved")
        saved = parse_saved(saved_value) if saved_value else None
        age = (current_time - saved).total_seconds() / 86400 if saved else None
        gone = (
            branches is not None
            and branch is not None
            and branch != NO_BRANCH
            and not branches.exists(branch)
        )
        infos.append(
            CheckpointInfo(
                name=name,
                path=path,
                branch=branch,
                saved=saved,
                age_days=age,
                stale=gone or (age is not None and age > config.stale_days),
                branch_mismatch=bool(current and branch and branch not in (NO_BRANCH, current)),
                next_action=_shown(_next_text(doc), allowed),
                summary=_shown(summaries.get(name), allowed),
            )
        )
    infos.sort(key=lambda i: (i.saved or dt.datetime.min, i.name), reverse=True)
    return infos


def _shown(text: str | None, allowed: frozenset[str]) -> str | None:
    """A line a listing shows (next action, index summary), secrets redacted."""
    if not text:
        return text
    from memls.core.secrets import redact

    return redact(text, allowed)


# -- resume ------------------------------------------------------------------
def resume_checkpoint(
    root: Path,
    name: str | None = None,
    *,
    consume: bool = False,
    git: Git | None = None,
) -> OpResult:
    """Pick and present a checkpoint (the seed's resume procedure)."""
    root = root.resolve()
    require_config(root)
    git = git if git is not None else Git(root)
    if name is not None:  # validated before anything is written (orphan bullets included)
        name = sanitize_name(name)
    files = _checkpoint_files(root)
    chosen: bytes | None = None
    if name is None and len(files) == 1:
        name = next(iter(files))
    if name is not None and name in files:
        try:
            chosen = files[name].read_bytes()
        except FileNotFoundError:  # cleared by another process meanwhile
            files.pop(name)
    if chosen is not None:
        refuse_oversize(files[str(name)], decode_lossless(chosen)[0], "resume it")
    orphans, skipped = _remove_orphans(root)
    notes = [f'Removed the orphaned index bullet for "{o}" (its file is missing).' for o in orphans]
    notes += [skipped] if skipped else []
    if name is None or name not in files or chosen is None:
        infos = list_checkpoints(root, git=git)
        if not infos:
            status = "none"
            lines = [f'Checkpoint "{name}" not found.'] if name is not None else []
            lines.append("No checkpoints found.")
        else:
            status = "missing" if name is not None else "many"
            head = (
                f'Checkpoint "{name}" not found. Available checkpoints:'
                if name is not None
                else "Several checkpoints — pick one with `continue {name}`:"
            )
            lines = [head]
            for info in infos:
                saved = saved_stamp(info.saved) if info.saved else "unknown time"
                lines.append(f"- {info.name} ({info.branch or 'no branch'}, saved {saved})")
        return OpResult(
            "\n".join(notes + lines),
            changed=bool(orphans),
            data={
                "status": status,
                "name": name,
                "checkpoints": [i.name for i in infos],
                "warnings": notes,
                "orphans_removed": orphans,
            },
        )
    path = files[name]
    doc = parse_text(chosen.decode("utf-8", "replace"), path)
    branch = _field(doc, "branch")
    saved_text = _field(doc, "saved")
    current = git.current_branch()
    warnings = list(notes)
    lines = [f'Resuming checkpoint "{name}" (branch `{branch or "?"}`, saved {saved_text or "?"})']
    if current and branch and branch not in (current, NO_BRANCH):
        warning = (
            f"Warning: You're on `{current}` but checkpoint was saved on `{branch}`. "
            f"Switch with: git checkout {branch}"
        )
        warnings.append(warning)
        lines.append(warning)
    plan = doc.field("plan")
    if plan is not None:
        lines.append(f"Plan: {plan.raw_value}")
        plan_text = split_plan(plan.raw_value).path
        if plan_text and not plan_exists(root, plan_text):
            warning = f"Plan file {plan_path(root, plan_text)} is missing."
            warnings.append(warning)
            lines.append(warning)
    done = _items(doc, DONE)
    if done:
        lines.append("Done last session:")
        lines += [f"- {d}" for d in done]
    failed = _items(doc, FAILED)
    lines += [f"⚠ Previously failed: {f}" for f in failed]
    sec = next_action_section(doc)
    if sec is not None:
        lines.append(f"Next Action: {_next_title(doc) or ''}".rstrip())
        lines += strip_blank_edges(doc.body_lines(sec))
    changed = bool(orphans)
    if consume:
        cleared = clear_checkpoint(root, name)
        lines.append(cleared.message)
        changed = True
    # what resume presents goes to whoever continues — often an agent, and so its model
    # provider: a secret in the checkpoint is shown redacted (the file keeps it; SC reports it)
    from memls.core.config import load_config
    from memls.core.secrets import redact

    allowed = frozenset(load_config(root).allow_secrets)
    next_title = _next_title(doc)
    return OpResult(
        redact("\n".join(notes + lines), allowed),
        changed=changed,
        paths=(path,),
        data={
            "status": "one",
            "name": name,
            "checkpoints": sorted(files),
            "warnings": warnings,
            "failed": [redact(f, allowed) for f in failed],
            "next_action": redact(next_title, allowed) if next_title else next_title,
            "branch": branch,
            "consumed": consume,
            "orphans_removed": orphans,
        },
    )


def _remove_orphans(root: Path) -> tuple[list[str], str | None]:
    """Drop index bullets whose checkpoint file is gone; returns their names (and a note
    when MEMORY.md is over the parser's limit, so it was left as it is).

    The files are listed under the lock: a listing from before it would call a checkpoint
    that another process saved meanwhile an orphan, and drop its new bullet.
    """
    index = memory_index(root)
    if not index.exists():
        return [], None
    with root_lock(root):
        present = set(_checkpoint_files(root))
        text = read_text(index)
        if text is None:
            return [], None
        if oversize(text):
            return [], (
                f"Note: {index} is {size_text(text)}, over the {MAX_EDIT_CHARS:,}-character "
                "limit memls parses: orphaned index bullets were not looked for."
            )
        names = [b.name for b in bullets(parse_text(text, index))]
        orphans = [n for n in dict.fromkeys(names) if n not in present]
        for orphan in orphans:
            text = set_bullet(text, index, orphan, None)
        if orphans:
            atomic_write(index, encode_lossless(text), root=root)
    return orphans, None


# -- clear -------------------------------------------------------------------
def clear_checkpoint(root: Path, name: str | None, *, all: bool = False) -> OpResult:
    """Delete checkpoint files and their bullets (the seed's cleanup procedure)."""
    root = root.resolve()
    require_config(root)
    if not all and name is None:
        raise OpError("Name the checkpoint to clear, or clear {all}.", param="all")
    index = memory_index(root)
    with root_lock(root):
        files = _checkpoint_files(root)
        text = read_text(index)
        refuse_oversize(index, text, "clear checkpoints")
        indexed = [b.name for b in bullets(parse_text(text, index))] if text is not None else []
        if all:
            names = sorted(set(files) | set(indexed))
        else:
            assert name is not None
            names = [sanitize_name(name)]
        removed_files = []
        for n in names:
            path = files.get(n)
            if path is not None and atomic_delete(path, root=root):
                removed_files.append(path)
        new_text = text
        for n in names:
            if new_text is not None:
                new_text = set_bullet(new_text, index, n, None)
        idx_changed = (
            new_text is not None
            and new_text != text
            and atomic_write(index, encode_lossless(new_text), root=root)
        )
    cleared = [n for n in names if n in files or n in indexed]
    if not cleared:
        available = sorted(set(files) | set(indexed))
        if all:
            what = "No checkpoints to clear."
        elif available:
            what = f'No checkpoint "{names[0]}" to clear. Available checkpoints: ' + ", ".join(
                available
            )
        else:
            what = f'No checkpoint "{names[0]}" to clear (there are no checkpoints).'
        return OpResult(what, changed=False, data={"cleared": [], "available": available})
    if all:
        message = f"Cleared {len(cleared)} checkpoint{'s' if len(cleared) != 1 else ''}: " + (
            ", ".join(cleared)
        )
    else:
        message = f'Cleared checkpoint "{cleared[0]}"'
    paths = tuple(removed_files) + ((index,) if idx_changed else ())
    return OpResult(message, changed=True, paths=paths, data={"cleared": cleared})
