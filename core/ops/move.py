"""Renaming and moving memory so that every link still leads where it did.

Three renames, each planned from the link graph (:mod:`memls.core.graph`) as one
:class:`MovePlan` — the file moves plus every text edit in every file:

- a **checkpoint** (``old`` → ``new`` names): ``checkpoint-old.md`` moves, its
  ``# Checkpoint:`` title, the Active Checkpoints bullet, every ``continue old`` line and
  every link or path naming the file are rewritten; the new name is checked by the same
  rules as ``checkpoint save`` (:func:`~memls.core.formats.checkpoint.sanitize_name`);
- a **memory file** (a path → another path in the same root): every link, code span,
  path bullet and ``Plan:`` line to it gets the new relative path (written the way it was:
  relative to the linking file, or to the root), and the moved file's own relative links
  are rewritten when it changes folder; moving ``checkpoint-a.md`` to ``checkpoint-b.md``
  is a checkpoint rename;
- a **heading** (``file.md#anchor`` → a new title): the heading and every ``#anchor``
  that leads to it.

The language server sends a plan to the editor as one WorkspaceEdit; :func:`move` applies
it on disk (``memls mv``) under the root lock: the moved file is written at its new path
first, then the files that point at it, then the old file is removed — a crash leaves
every byte of memory somewhere, never a half-written file. Before the first write the
whole move (each file's bytes before and after) is recorded in ``.memls/mv-intent.json``;
the next ``memls mv`` finishes a move a crash interrupted before doing its own, so the same
command run again converges on the finished move.

Plans are made on the text the writer edits: a file with bytes that are not UTF-8 is
planned on its ``surrogateescape`` text (:func:`plan_lossless`), the text
:func:`apply_plan` applies the offsets to. No plan edits committed LOG.md text (it is
append-only, LG001): a reference there keeps the old name, and the plan's notes (and
``kept``) say so; an entry appended since the last commit is still rewritten.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from memls.core.fixes import apply_edits
from memls.core.formats.checkpoint import checkpoint_name, sanitize_name
from memls.core.fsutil import (
    STATE_DIR,
    UnsafePathError,
    atomic_delete,
    atomic_write,
    check_relative,
    inside,
    open_private,
    root_lock,
    safe_join,
    state_dir,
    write_private,
)
from memls.core.graph import (
    ANCHOR,
    NAME_KINDS,
    PATH_KINDS,
    WIKILINK,
    LinkGraph,
    Ref,
    checkpoint_title_range,
    graph_of,
    relative_path,
    slug,
)
from memls.core.model import Document, FileKind, Position, Range, TextEdit
from memls.core.ops import OpError, OpResult
from memls.core.ops._text import sha256_bytes
from memls.core.parse import kind_for
from memls.core.text import decode_lossless, encode_lossless
from memls.core.workspace import Workspace


@dataclass(frozen=True)
class MovePlan:
    """What a rename changes: files to move and text edits per file (keyed by current path)."""

    kind: str  # "checkpoint" | "file" | "heading"
    old: str
    new: str
    moves: tuple[tuple[Path, Path], ...] = ()
    edits: dict[Path, tuple[TextEdit, ...]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()
    """Notes (also in ``notes``) on references left as written in committed LOG text."""

    @property
    def edit_count(self) -> int:
        return sum(len(e) for e in self.edits.values())

    def destination(self, path: Path) -> Path:
        """Where ``path`` is after the moves."""
        for old, new in self.moves:
            if old == path:
                return new
        return path


# -- validation ----------------------------------------------------------------
def check_memory_path(ws: Workspace, new: Path, old: Path | None = None) -> Path:
    """A new memory file path: a ``.md`` file in the root or its ``memory/`` folder, with a
    plain name, not leaving the root, not already taken. Returns it normalised."""
    root = ws.root
    new = Path(os.path.normpath(new if new.is_absolute() else root / new))
    try:
        rel = new.relative_to(root).as_posix()
    except ValueError:
        raise UnsafePathError(f"{new} is outside the memory root {root}") from None
    check_relative(rel, "new path")
    if not new.name.endswith(".md") or new.name.startswith("."):
        raise UnsafePathError(f"{rel}: a memory file is a visible Markdown file ending in .md")
    if new.parent not in (root, root / "memory"):
        raise UnsafePathError(
            f"{rel}: memory files live in the root or its memory/ folder, not in "
            f"{new.parent.relative_to(root).as_posix()}/"
        )
    if not inside(root, new.parent):
        raise UnsafePathError(f"{rel} resolves outside the memory root {root}")
    if new != old and (new.exists() or new in ws.paths()):
        raise OpError(f"{rel} already exists; memls never overwrites a memory file")
    return new


def heading_title(title: str) -> str:
    """A new heading title: one line, with something that makes an anchor."""
    clean = title.strip()
    if not clean or "\n" in clean or "\r" in clean:
        raise OpError("a heading title is one non-empty line")
    if clean.startswith("#"):
        raise OpError("give the heading's text without the leading #")
    if not slug(clean).strip("-"):
        raise OpError(f"heading {title!r} has no letters or digits to make an anchor from")
    return clean


# -- planning ------------------------------------------------------------------
def plan_checkpoint_rename(ws: Workspace, old: str, new_name: str) -> MovePlan:
    """Rename checkpoint ``old``; ``new_name`` is sanitised like ``checkpoint save`` does."""
    new = sanitize_name(new_name)
    if new == old:
        raise OpError(f'the checkpoint is already named "{old}"')
    graph = graph_of(ws)
    old_path = ws.root / f"checkpoint-{old}.md"
    new_path = ws.root / f"checkpoint-{new}.md"
    if new in ws.checkpoints() or new_path.exists():
        raise OpError(
            f'a checkpoint named "{new}" already exists ({new_path.name}); '
            "clear it first or pick another name"
        )
    exists = old in ws.checkpoints()
    moves = ((old_path, new_path),) if exists else ()
    edits: dict[Path, list[TextEdit]] = {}
    for ref in graph.refs_to(old_path):
        if ref.kind in NAME_KINDS:
            edits.setdefault(ref.source, []).append(TextEdit(ref.range, new))
        elif ref.kind in PATH_KINDS or ref.kind == WIKILINK:
            text = _renamed_basename(ref, old_path.name, new_path.name)
            edits.setdefault(ref.source, []).append(TextEdit(ref.range, text))
    doc = ws.document(old_path) if exists else None
    if doc is not None:
        title = checkpoint_title_range(doc)
        if (
            title is not None
            and doc.line_text(title.start.line)[title.start.character : title.end.character] == old
        ):
            edits.setdefault(old_path, []).append(TextEdit(title, new))
    notes: list[str] = []
    if not exists:
        notes.append(f"{old_path.name} does not exist: only the references were renamed")
    if new != new_name.strip():
        notes.append(f'"{new_name}" was sanitised to "{new}" (as checkpoint save does)')
    return _finished(ws, MovePlan("checkpoint", old, new, moves, _frozen(edits), tuple(notes)))


def _renamed_basename(ref: Ref, old_file: str, new_file: str) -> str:
    text = ref.text
    if ref.kind == WIKILINK:
        old_stem, new_stem = old_file[:-3], new_file[:-3]
        if text.casefold().endswith(old_file.casefold()):
            return text[: -len(old_file)] + new_file
        if text.casefold().endswith(old_stem.casefold()):
            return text[: -len(old_stem)] + new_stem
        return new_stem
    if text.endswith(old_file):
        return text[: -len(old_file)] + new_file
    encoded = quote(old_file)
    if text.endswith(encoded):
        return text[: -len(encoded)] + quote(new_file)
    return text.rsplit("/", 1)[0] + "/" + new_file if "/" in text else new_file


def plan_file_move(ws: Workspace, old: Path, new: Path, *, strict: bool = True) -> MovePlan:
    """Move (or rename) a memory file and rewrite every path that leads to it.

    ``strict=False`` is for a move the editor makes anyway (``willRenameFiles``): the new
    place is not checked, only the links are planned."""
    root = ws.root
    old = Path(os.path.normpath(old if old.is_absolute() else root / old))
    if old not in ws.paths():
        raise OpError(f"{old} is not a memory file of {root}")
    if strict and old.is_symlink():
        raise UnsafePathError(f"{old.name} is a symlink; memls does not move links")
    if strict:
        new = check_memory_path(ws, new, old)
    else:
        new = Path(os.path.normpath(new if new.is_absolute() else root / new))
    if new == old:
        raise OpError(f"{old.name} is already there")
    role_change = _role_change(old, new)
    if role_change is not None and strict and kind_for(old) in _ROLES:
        raise OpError(
            f"{role_change}: memls does not change what a file is by renaming it "
            "(nothing was moved)"
        )
    old_cp, new_cp = checkpoint_name(old), checkpoint_name(new)
    if old_cp is not None and new_cp is not None and old.parent == new.parent == root:
        try:
            plan = plan_checkpoint_rename(ws, old_cp, new_cp)
        except (OpError, UnsafePathError):
            if strict:
                raise
            plan = None
        if plan is not None and plan.new == new_cp:
            return plan
        if strict:
            raise UnsafePathError(
                f"{new.name}: a checkpoint file is named checkpoint-{sanitize_name(new_cp)}.md "
                "(lowercase, no spaces); rename it to that"
            )
    graph = graph_of(ws)
    edits: dict[Path, list[TextEdit]] = {}
    for ref in graph.refs_to(old):
        if ref.kind == ANCHOR:
            continue
        text = _rewritten(ref, new, new if ref.source == old else ref.source, root)
        if text is not None and text != ref.text:
            edits.setdefault(ref.source, []).append(TextEdit(ref.range, text))
    if old.parent != new.parent:
        for ref in graph.refs_from(old):
            if ref.target == old or ref.kind not in PATH_KINDS or ref.via_root:
                continue
            if ref.text.startswith(("/", "~")):
                continue
            text = _relative(ref, ref.target, new.parent)
            if text != ref.text:
                edits.setdefault(old, []).append(TextEdit(ref.range, text))
    notes: list[str] = [role_change] if role_change is not None else []
    if old_cp is not None and old.parent == root:
        notes.append(f"{old.name} is a checkpoint; after the move its bullet no longer has a file")
    if new_cp is not None and new.parent == root:
        notes.append(f"{new.name} becomes checkpoint '{new_cp}', which has no bullet yet")
    return _finished(
        ws,
        MovePlan(
            "file", _rel(root, old), _rel(root, new), ((old, new),), _frozen(edits), tuple(notes)
        ),
    )


_ROLES = {
    FileKind.INDEX: "the root's index (MEMORY.md, loaded at session start)",
    FileKind.LOG: "the append-only log (LOG.md)",
    FileKind.HANDOFF: "the compaction handoff (.handoff.md)",
    FileKind.IDENTITY: "an identity file",
}


def _role_change(old: Path, new: Path) -> str | None:
    """Why moving ``old`` to ``new`` changes what the file is (the index, the log, the
    handoff becoming a topic file, or a topic becoming one of them); None when it does not."""
    before, after = kind_for(old), kind_for(new)
    if before == after or (before not in _ROLES and after not in _ROLES):
        return None
    if before in _ROLES:
        return f"{old.name} is {_ROLES[before]}; renamed to {new.name} the root would lose it"
    return f"as {new.name}, {old.name} becomes {_ROLES[after]}"


def _rewritten(ref: Ref, new: Path, source_after: Path, root: Path) -> str | None:
    """The text a reference to a moved file becomes."""
    if ref.kind == WIKILINK:
        written = ref.text
        has_ext = written.casefold().endswith(".md")
        if "/" in written:
            rel = relative_path(new, root)
            return rel if has_ext else rel[:-3]
        return new.name if has_ext else new.stem
    if ref.kind not in PATH_KINDS:
        return None
    if ref.text.startswith("~"):
        home = Path.home()
        return "~/" + relative_path(new, home) if inside(home, new) else str(new)
    if ref.text.startswith("/"):
        return str(new)
    if ref.via_root:
        return _styled(ref, relative_path(new, root))
    return _relative(ref, new, source_after.parent)


def _relative(ref: Ref, target: Path, base: Path) -> str:
    return _styled(ref, relative_path(target, base))


def _styled(ref: Ref, path: str) -> str:
    """Keep how the original was written: a ``./`` prefix, percent-encoding."""
    if ref.text.startswith("./") and not path.startswith("../"):
        path = "./" + path
    if "%" in ref.text or (" " in path and ref.kind in ("markdown", "reference")):
        path = quote(path, safe="/~._-")
    return path


def plan_heading_rename(ws: Workspace, path: Path, anchor: str, new_title: str) -> MovePlan:
    """Retitle a heading of ``path`` and rewrite every ``#anchor`` that leads to it."""
    graph: LinkGraph = graph_of(ws)
    node = graph.heading(path, anchor)
    if node is None:
        raise OpError(f"{path.name} has no heading with the anchor #{slug(anchor)}")
    title = heading_title(new_title)
    if title == node.heading.title:
        raise OpError(f"the heading is already titled {title!r}")
    new_slug = slug(title)
    clash = graph.heading(path, new_slug)
    if clash is not None and clash.heading.line != node.heading.line:
        raise OpError(
            f"{path.name} already has a heading with the anchor #{new_slug} "
            f"(line {clash.heading.line + 1})"
        )
    edits: dict[Path, list[TextEdit]] = {path: [TextEdit(node.heading.title_range, title)]}
    for ref in graph.refs_to(path, anchor):
        if ref.anchor is None or ref.anchor_range is None:
            continue
        written = ref.anchor
        text = new_slug if written == slug(written) else title
        edits.setdefault(ref.source, []).append(TextEdit(ref.anchor_range, text))
    boundary = _committed_end(ws, path)
    if boundary is not None and node.heading.title_range.start < boundary:
        raise OpError(
            f"{path.name} is append-only and its heading on line {node.heading.line + 1} is "
            "committed: memls does not rewrite committed LOG text (add a new entry instead)"
        )
    rel = path.relative_to(ws.root).as_posix() if inside(ws.root, path) else path.name
    return _finished(
        ws, MovePlan("heading", f"{rel}#{node.slug}", f"{rel}#{new_slug}", (), _frozen(edits))
    )


def _frozen(edits: dict[Path, list[TextEdit]]) -> dict[Path, tuple[TextEdit, ...]]:
    out: dict[Path, tuple[TextEdit, ...]] = {}
    for path, group in edits.items():
        unique = sorted(set(group), key=lambda e: (e.range.start, e.range.end))
        out[path] = tuple(unique)
    return out


def _committed_end(ws: Workspace, path: Path) -> Position | None:
    """Where the committed text of an append-only LOG ends in ``path`` (edits before it
    would break LG001), or None when ``path`` is no LOG or has no committed version."""
    doc = ws.document(path)
    if doc is None or doc.kind is not FileKind.LOG:
        return None
    committed = ws.git.committed_text(path)
    if committed is None:
        return None
    before = _normalize(committed).rstrip()
    if not before:
        return None
    lines = before.split("\n")
    if _normalize(doc.text).startswith(before):
        return Position(len(lines) - 1, len(lines[-1]))
    return Position(len(lines), 0)  # already changed: keep every committed line as it is


def _normalize(text: str) -> str:
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def _finished(ws: Workspace, plan: MovePlan) -> MovePlan:
    """The plan without edits to committed LOG text (LOG.md is append-only: those lines
    keep naming the old name, and a note says so)."""
    edits: dict[Path, tuple[TextEdit, ...]] = {}
    notes = list(plan.notes)
    kept_notes = list(plan.kept)
    for path, group in plan.edits.items():
        boundary = _committed_end(ws, path)
        kept = group if boundary is None else tuple(e for e in group if e.range.start >= boundary)
        skipped = len(group) - len(kept)
        if skipped:
            lines = sorted({e.range.start.line + 1 for e in group if e not in kept})
            shown = ", ".join(str(n) for n in lines)
            note = (
                f"{_rel(ws.root, path)} is append-only: {skipped} reference"
                f"{'s' if skipped != 1 else ''} in committed text (line"
                f"{'s' if len(lines) != 1 else ''} {shown}) left as written, still naming "
                f'"{plan.old}"'
            )
            notes.append(note)
            kept_notes.append(note)
        if kept:
            edits[path] = kept
    if len(edits) == len(plan.edits) and len(notes) == len(plan.notes):
        return plan
    return MovePlan(
        plan.kind, plan.old, plan.new, plan.moves, edits, tuple(notes), tuple(kept_notes)
    )


# -- what a position renames (the language server's prepareRename / rename) ------
@dataclass(frozen=True)
class RenameTarget:
    """What a rename at a position renames, the text it replaces and what to offer."""

    kind: str  # "checkpoint" | "file" | "heading"
    range: Range  # in the document the position is in
    placeholder: str
    name: str | None = None  # checkpoint
    path: Path | None = None  # file or heading's file
    anchor: str | None = None  # heading
    ref: Ref | None = None  # the link the rename starts from (files)


def rename_at(ws: Workspace, doc: Document, pos: Position) -> RenameTarget | None:
    """The renameable thing at ``pos``: a checkpoint name (bullet, ``continue`` line,
    ``# Checkpoint:`` title), a memory file (from a link to it) or a heading (from a
    ``#anchor`` or the heading itself). Raises :class:`OpError` for what cannot be renamed."""
    graph = graph_of(ws)
    ref = graph.ref_at(doc.path, pos)
    if ref is not None:
        on_anchor = ref.anchor_range is not None and ref.anchor_range.contains(pos)
        if ref.kind in NAME_KINDS and ref.range.contains(pos):
            return RenameTarget("checkpoint", ref.range, ref.text, name=ref.text)
        if ref.kind in NAME_KINDS:
            return None
        if (on_anchor or ref.kind == ANCHOR) and ref.anchor and ref.anchor_range is not None:
            node = graph.heading(ref.target, ref.anchor)
            if node is None:
                raise OpError(f"{ref.target.name} has no heading #{ref.anchor} to rename")
            return RenameTarget(
                "heading", ref.anchor_range, node.heading.title, path=ref.target, anchor=ref.anchor
            )
        if not ref.exists:
            raise OpError(f"{ref.text} does not exist, so there is nothing to rename")
        return RenameTarget("file", ref.range, ref.text, path=ref.target, ref=ref)
    title = checkpoint_title_range(doc) if doc.kind is FileKind.CHECKPOINT else None
    name = checkpoint_name(doc.path)
    if title is not None and title.contains(pos) and name is not None:
        return RenameTarget("checkpoint", title, name, name=name)
    for h in doc.headings:
        if h.line == pos.line and h.title and (title is None or h.line != title.start.line):
            return RenameTarget("heading", h.title_range, h.title, path=doc.path, anchor=h.title)
    return None


def plan_rename(ws: Workspace, target: RenameTarget, new_text: str) -> MovePlan:
    """The plan for renaming ``target`` to what the user typed over its placeholder."""
    if target.kind == "checkpoint":
        assert target.name is not None
        return plan_checkpoint_rename(ws, target.name, new_text)
    if target.kind == "heading":
        assert target.path is not None
        assert target.anchor is not None
        return plan_heading_rename(ws, target.path, target.anchor, new_text)
    assert target.path is not None
    assert target.ref is not None
    ref = target.ref
    written = new_text.strip()
    if not written:
        raise OpError("the new path is empty")
    if ref.kind == WIKILINK:
        stem = written[:-3] if written.casefold().endswith(".md") else written
        new = ws.root / f"{stem}.md" if "/" in stem else target.path.parent / f"{stem}.md"
    elif written.startswith(("/", "~")):
        new = Path(os.path.expanduser(written))
    else:
        base = ws.root if ref.via_root else ref.source.parent
        new = base / written
    return plan_file_move(ws, target.path, new)


# -- applying (the command line and the agent) -----------------------------------
def plan_for(ws: Workspace, old: str, new: str, base: Path | None = None) -> MovePlan:
    """Read ``memls mv OLD NEW``: ``file.md#anchor`` → a heading, a path (ends in ``.md`` or
    has a ``/``) → a file move, anything else → a checkpoint name. Paths are taken from
    ``base`` (the current folder) when the file is there, else from the root."""
    root = ws.root
    if "#" in old and old.split("#", 1)[0].endswith(".md"):
        file_part, anchor = old.split("#", 1)
        path = _locate(ws, file_part, base)
        return plan_heading_rename(ws, path, anchor, new)
    if old.endswith(".md") or "/" in old:
        path = _locate(ws, old, base)
        from_base = base is not None and not Path(old).is_absolute() and (base / old).exists()
        target = Path(os.path.expanduser(new))
        if not target.is_absolute():
            target = (base if from_base and base is not None else root) / target
        if target.is_dir():
            target = target / path.name
        return plan_file_move(ws, path, target)
    name = old.strip()
    if name not in ws.checkpoints() and not any(
        r.text == name for r in graph_of(ws).refs_to(root / f"checkpoint-{name}.md")
    ):
        available = ", ".join(sorted(ws.checkpoints())) or "none"
        raise OpError(f'no checkpoint named "{name}" in {root} (checkpoints: {available})')
    return plan_checkpoint_rename(ws, name, new)


def _locate(ws: Workspace, written: str, base: Path | None) -> Path:
    raw = Path(os.path.expanduser(written))
    candidates = [raw] if raw.is_absolute() else []
    if not raw.is_absolute():
        if base is not None:
            candidates.append(base / raw)
        candidates.append(ws.root / raw)
    known = set(ws.paths())
    for candidate in candidates:
        norm = Path(os.path.normpath(candidate.absolute()))
        if norm in known:
            return norm
        try:
            real = candidate.resolve()
        except OSError:
            continue
        if real in known:
            return real
    raise OpError(f"{written} is not a memory file of {ws.root}")


INTENT_FILE = "mv-intent.json"
"""``<root>/.memls/mv-intent.json``: the writes of a ``memls mv`` in progress, recorded before
the first one, so the next ``memls mv`` can finish a move a crash interrupted."""


def intent_path(root: Path) -> Path:
    return root / STATE_DIR / INTENT_FILE


def apply_plan(
    root: Path, plan: MovePlan, *, request: tuple[str, ...] = (), summary: str = ""
) -> list[Path]:
    """Write a plan to disk (the caller holds the root lock). Returns the files written.

    Every write is recorded first in the intent file (``.memls/mv-intent.json``: each
    file's bytes before and after), so a move a crash interrupts is finished by
    :func:`finish_interrupted`; the intent goes once the last write is done. ``request``
    and ``summary`` (the command and its report) are kept in it for the rerun."""
    texts: dict[Path, tuple[bytes, bytes]] = {}
    for path, edits in plan.edits.items():
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise OpError(f"{path} disappeared while renaming; nothing was changed") from None
        except IsADirectoryError as exc:
            raise UnsafePathError(f"{path} is a directory, not a file") from exc
        text, bom = decode_lossless(data)
        texts[path] = (data, encode_lossless(apply_edits(text, edits), bom))
    for old, new in plan.moves:
        if new.exists():
            raise OpError(f"{new} already exists; memls never overwrites a memory file")
        if not old.is_file() or old.is_symlink():
            raise OpError(f"{old} is not a regular file; nothing was changed")
    writes: list[dict[str, object]] = []
    deletes: list[dict[str, object]] = []
    for old, new in plan.moves:
        content = texts.pop(old, None)
        before = old.read_bytes()
        after = content[1] if content is not None else before
        writes.append(
            {"path": _rel(root, new), "before": None, "after": _b64(after), "mode": _mode(old)}
        )
        deletes.append({"path": _rel(root, old), "before": sha256_bytes(before)})
    for path, (before, after) in texts.items():
        if before != after:
            writes.append(
                {"path": _rel(root, path), "before": sha256_bytes(before), "after": _b64(after)}
            )
    if not writes and not deletes:
        return []
    intent = {
        "version": 1,
        "request": list(request),
        "summary": summary,
        "writes": writes,
        "deletes": deletes,
    }
    for item in [*writes, *deletes]:
        path = root / str(item["path"])
        if not inside(root, path) or Path(str(item["path"])).is_absolute():
            raise UnsafePathError(f"refusing to write {path}: it is outside the memory root")
    record = intent_path(root)
    state_dir(root)
    write_private(record, json.dumps(intent, indent=1).encode("utf-8"))
    try:
        written = _carry_out(root, intent)
    except OpError:
        atomic_delete(record, root=root)  # refused before its first write: nothing to finish
        raise
    atomic_delete(record, root=root)
    return written


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _mode(path: Path) -> int | None:
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        return None


def _intent_file(root: Path, rel: object) -> Path:
    if not isinstance(rel, str):
        raise OpError(f"{intent_path(root)} is damaged; remove it to drop the interrupted move")
    return safe_join(root, rel, "a path in the interrupted move")


def _carry_out(root: Path, intent: dict[str, Any]) -> list[Path]:
    """Do (or finish) an intent's writes and deletes. Each file is checked first: it holds
    what it held before the move, or already what the move writes (or, for a file the
    move removes, is gone); anything else means it changed since, and nothing is done."""
    todo: list[tuple[Path, bytes, int | None]] = []
    gone: list[Path] = []
    changed: list[str] = []
    for item in intent.get("writes", []):
        path = _intent_file(root, item.get("path"))
        after = base64.b64decode(str(item.get("after", "")))
        current = path.read_bytes() if path.is_file() and not path.is_symlink() else None
        if current == after:
            continue
        before = item.get("before")
        if (current is None and before is None and not path.is_symlink()) or (
            current is not None and sha256_bytes(current) == before
        ):
            mode = item.get("mode")
            todo.append((path, after, mode if isinstance(mode, int) else None))
        else:
            changed.append(_rel(root, path))
    for item in intent.get("deletes", []):
        path = _intent_file(root, item.get("path"))
        if not os.path.lexists(path):
            continue
        if (
            path.is_file()
            and not path.is_symlink()
            and sha256_bytes(path.read_bytes()) == item.get("before")
        ):
            gone.append(path)
            continue
        changed.append(_rel(root, path))
    if changed:
        raise OpError(
            "an interrupted `memls mv` cannot be finished: "
            + ", ".join(changed)
            + " changed since it stopped; memls left everything as it is (check the files, "
            f"then remove {intent_path(root)} to drop the unfinished move)"
        )
    written: list[Path] = []
    for path, data, mode in todo:
        if atomic_write(path, data, root=root):
            written.append(path)
        if mode is not None:
            with contextlib.suppress(OSError):
                os.chmod(path, mode)
    for path in gone:
        atomic_delete(path, root=root)
    return written


def read_intent(root: Path) -> dict[str, Any] | None:
    """The interrupted move recorded in ``.memls/``, or None."""
    path = intent_path(root)
    if not os.path.lexists(path):
        return None
    fd = open_private(path, os.O_RDONLY)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read()
    try:
        intent = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        intent = None
    if not isinstance(intent, dict) or intent.get("version") != 1:
        raise OpError(f"{path} is damaged; remove it to drop the interrupted move")
    return intent


def finish_interrupted(root: Path) -> dict[str, Any] | None:
    """Finish a move a crash interrupted (the caller holds the root lock); returns its
    intent (``request``, ``summary``), or None when there was none."""
    intent = read_intent(root)
    if intent is None:
        return None
    _carry_out(root, intent)
    atomic_delete(intent_path(root), root=root)
    return intent


def plan_lossless(ws: Workspace, make: Callable[[Workspace], MovePlan]) -> MovePlan:
    """Plan on the text :func:`apply_plan` edits: a file with bytes that are not UTF-8 is
    read as ``surrogateescape`` text (one character per such byte, as the writer sees it),
    not with U+FFFD substitutions, so every offset lands where it was meant to."""
    plan = make(ws)
    seen: set[Path] = set()
    for _ in range(4):
        fresh = False
        for path in plan.edits:
            if path in seen or ws.has_overlay(path):
                continue
            seen.add(path)
            try:
                data = path.read_bytes()
            except OSError:
                continue
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                ws.set_text(path, decode_lossless(data)[0])
                fresh = True
        if not fresh:
            return plan
        plan = make(ws)
    return plan


def move(
    root: Path, old: str, new: str, *, dry_run: bool = False, base: Path | None = None
) -> OpResult:
    """``memls mv OLD NEW``: rename a checkpoint, a memory file or a heading, links included.

    A move a crash interrupted is finished first; rerunning that same move reports it."""
    root = root.resolve()
    request = (old, new, str(base) if base is not None else "")
    earlier: list[str] = []
    with root_lock(root):
        if dry_run:
            pending = read_intent(root)
            if pending is not None:
                earlier.append(
                    "Note: an interrupted `memls mv` is pending; the next memls mv finishes it"
                )
        else:
            done = finish_interrupted(root)
            if done is not None:
                summary = str(done.get("summary", ""))
                if list(done.get("request", [])) == list(request):
                    return OpResult(
                        f"Finished the interrupted move:\n{summary}",
                        changed=True,
                        data={"resumed": True, "request": list(request)},
                    )
                earlier.append(f"Finished an interrupted move first:\n{summary}")
        ws = Workspace(root)
        plan = plan_lossless(ws, lambda w: plan_for(w, old, new, base))
        what = {"checkpoint": "checkpoint", "file": "memory file", "heading": "heading"}
        verb = "Would rename" if dry_run else "Renamed"
        lines = [f'{verb} {what[plan.kind]} "{plan.old}" → "{plan.new}"']
        for a, b in plan.moves:
            lines.append(f"  move {_rel(root, a)} → {_rel(root, b)}")
        for path, edits in sorted(plan.edits.items()):
            shown = _rel(root, plan.destination(path))
            lines.append(f"  {len(edits)} edit{'s' if len(edits) != 1 else ''} in {shown}")
        lines += [f"Note: {n}" for n in plan.notes]
        written = (
            [] if dry_run else apply_plan(root, plan, request=request, summary="\n".join(lines))
        )
    return OpResult(
        "\n".join([*earlier, *lines]),
        changed=bool(written),
        paths=tuple(written),
        data={
            "kind": plan.kind,
            "old": plan.old,
            "new": plan.new,
            "dry_run": dry_run,
            "moves": [[str(a), str(b)] for a, b in plan.moves],
            "edits": {
                str(plan.destination(p)): [
                    {"range": _range_json(e.range), "new_text": e.new_text} for e in edits
                ]
                for p, edits in sorted(plan.edits.items())
            },
            "notes": list(plan.notes),
        },
    )


def _rel(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix() if inside(root, path) else str(path)


def _range_json(rng: Range) -> dict[str, dict[str, int]]:
    return {
        "start": {"line": rng.start.line, "character": rng.start.character},
        "end": {"line": rng.end.line, "character": rng.end.character},
    }


__all__ = [
    "MovePlan",
    "RenameTarget",
    "apply_plan",
    "check_memory_path",
    "finish_interrupted",
    "heading_title",
    "intent_path",
    "move",
    "plan_checkpoint_rename",
    "plan_file_move",
    "plan_for",
    "plan_heading_rename",
    "plan_lossless",
    "plan_rename",
    "read_intent",
    "rename_at",
]
