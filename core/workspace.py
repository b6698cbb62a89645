"""Memory roots, their two layouts, and a cross-file view that updates one file at a time.

The language server keeps one :class:`Workspace` per root and feeds it edits; the CLI builds
one, checks, and exits. Open editor buffers override disk content through :meth:`Workspace.set_text`.
"""

from __future__ import annotations

import enum
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from memls.core.config import Config, load_config
from memls.core.fsutil import TEMP_PREFIX, inside
from memls.core.gitfacade import Git
from memls.core.model import Document, FileKind
from memls.core.parse import kind_for, parse_bytes, parse_text

if TYPE_CHECKING:
    from memls.core.graph import LinkGraph

T = TypeVar("T")

ROOT_MARKERS = ("MEMORY.md", "LOG.md")
_SKIP_DIRS = {".git", ".memls", "node_modules", ".venv", "__pycache__"}
MAX_FILE_BYTES = 20 * 1024 * 1024
CHECKPOINT_RE = re.compile(r"^checkpoint-(?P<name>.+)\.md$")


class Layout(enum.Enum):
    FLAT = "flat"
    ORCHESTRATOR = "orchestrator"


def is_root(directory: Path) -> bool:
    """A directory holding MEMORY.md, LOG.md or checkpoint files."""
    try:
        if any((directory / m).is_file() for m in ROOT_MARKERS):
            return True
        return any(directory.glob("checkpoint-*.md"))
    except OSError:
        return False


def claude_memory_dir(project: Path, home: Path | None = None) -> Path:
    """Claude Code's auto-memory directory for a project: ``~/.claude/projects/<slug>/memory``."""
    slug = str(project.resolve()).replace("/", "-")
    return (home or Path.home()) / ".claude" / "projects" / slug / "memory"


def discover_root(start: Path, explicit: Path | None = None) -> Path | None:
    """Find the memory root for ``start`` (a file or directory), in the spec's order.

    ``explicit`` (``--root``) wins. Then configured ``roots`` containing ``start``, then the
    nearest directory at or above ``start`` that looks like a root (an orchestrator's
    ``memory/`` folder resolves to its parent), then the Claude Code auto-memory directory.
    """
    if explicit is not None:
        return explicit.resolve()
    start = start.resolve()
    base = start if start.is_dir() else start.parent
    cfg_roots = _configured_roots(base)
    for root in cfg_roots:
        if base == root or root in base.parents:
            return root
    for candidate in (base, *base.parents):
        if is_root(candidate):
            if candidate.name == "memory" and (candidate.parent / "LOG.md").is_file():
                return candidate.parent
            return candidate
        if (candidate / "memory" / "MEMORY.md").is_file() and (candidate / "LOG.md").is_file():
            return candidate
        if (candidate / ".git").exists():
            break
    auto = claude_memory_dir(base)
    if auto.is_dir():
        return auto
    return None


def _configured_roots(base: Path) -> tuple[Path, ...]:
    for candidate in (base, *base.parents):
        if (candidate / "memls.toml").is_file() or (candidate / "pyproject.toml").is_file():
            try:
                cfg = load_config(candidate)
            except ValueError:
                return ()
            if cfg.roots:
                return cfg.roots
        if (candidate / ".git").exists():
            break
    return ()


def detect_layout(root: Path) -> Layout:
    if (root / "memory").is_dir() and (
        (root / "LOG.md").is_file()
        or (root / "IDENTITY.md").is_file()
        or (root / "memory" / "MEMORY.md").is_file()
    ):
        return Layout.ORCHESTRATOR
    return Layout.FLAT


def index_path(root: Path, layout: Layout | None = None) -> Path:
    layout = layout or detect_layout(root)
    if layout is Layout.ORCHESTRATOR and not (root / "MEMORY.md").is_file():
        return root / "memory" / "MEMORY.md"
    return root / "MEMORY.md"


def memory_files(root: Path) -> list[Path]:
    """Every Markdown memory file of a root (both layouts), sorted, symlinks out of the root skipped."""
    found: list[Path] = []
    places = [root, root / "memory", root / "transcripts"]
    real_root = root.resolve()
    for place in places:
        if not place.is_dir():
            continue
        try:
            entries = sorted(os.scandir(place), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if not entry.name.endswith(".md") or entry.name.startswith(TEMP_PREFIX):
                continue
            if place.name == "transcripts" and place != root and entry.name != ".handoff.md":
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
    return found


def transcript_files(root: Path, extra: Iterable[Path] = ()) -> list[Path]:
    """Session transcripts (*.jsonl) for a root: ``transcripts/``, the root itself, the
    session files beside a Claude Code auto-memory directory, and configured folders."""
    places = [root / "transcripts", root]
    if is_claude_memory_dir(root):
        places.append(root.parent)  # ~/.claude/projects/<slug>/*.jsonl
    places.extend(extra)
    out: list[Path] = []
    seen: set[Path] = set()
    for place in places:
        if not place.is_dir():
            continue
        for path in sorted(p for p in place.glob("*.jsonl") if p.is_file()):
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


def checkpoint_name(path: Path) -> str | None:
    m = CHECKPOINT_RE.match(path.name)
    return m.group("name") if m else None


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
        self.config = config if config is not None else load_config(self.root)
        self.git = git if git is not None else Git(self.root)
        self.layout = detect_layout(self.root)
        self._docs: dict[Path, Document] = {}
        self._overlays: dict[Path, str] = {}
        self._paths: list[Path] | None = None
        self._memo: dict[str, object] = {}
        self._checkpoints: tuple[list[Path] | None, dict[str, Path]] | None = None
        self._sizes: dict[Path, int] = {}
        self.generation = 0
        """Bumped on every change; cross-file facts memoised with :meth:`memo` follow it."""

    # -- files -------------------------------------------------------------
    def paths(self) -> list[Path]:
        if self._paths is None:
            on_disk = memory_files(self.root)
            extra = [p for p in self._overlays if p not in on_disk and self.contains(p)]
            self._paths = sorted(set(on_disk) | set(extra))
        return list(self._paths)

    def contains(self, path: Path) -> bool:
        path = path.resolve() if path.is_absolute() else (self.root / path).resolve()
        return path == self.root or self.root in path.parents

    @property
    def index_path(self) -> Path:
        return index_path(self.root, self.layout)

    def document(self, path: Path) -> Document | None:
        """The parsed document (editor buffer if open, else disk); None when absent."""
        path = self._norm(path)
        doc = self._docs.get(path)
        if doc is not None:
            return doc
        if path in self._overlays:
            doc = parse_text(self._overlays[path], path)
        else:
            try:
                if path.stat().st_size > MAX_FILE_BYTES:
                    data = path.open("rb").read(MAX_FILE_BYTES)
                else:
                    data = path.read_bytes()
            except OSError:
                return None
            doc = parse_bytes(data, path)
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

    def set_text(self, path: Path, text: str | None) -> set[Path]:
        """Set an editor buffer's text (``None``: closed, fall back to disk). Returns affected paths."""
        path = self._norm(path)
        if text is None:
            self._overlays.pop(path, None)
        else:
            self._overlays[path] = text
        return self.invalidate(path)

    def invalidate(self, path: Path) -> set[Path]:
        """Forget what is cached for ``path`` (changed, created or deleted on disk).

        The file list is rescanned only when the file set may have changed, so an edit
        of one buffer costs one parse, not a directory scan.
        """
        path = self._norm(path)
        self._docs.pop(path, None)
        self._sizes.pop(path, None)
        self.generation += 1
        self._memo.clear()
        if self._paths is not None:
            listed = path in self._paths
            present = path in self._overlays or (
                self._listable(path) and path.is_file() and inside(self.root, path)
            )
            if listed != present:
                # A new list object: caches keyed on the list (checkpoints()) notice the change.
                others = [p for p in self._paths if p != path]
                self._paths = sorted([*others, path]) if present else others
        return self.affected_by(path)

    def _listable(self, path: Path) -> bool:
        """Whether ``memory_files`` would list ``path`` (without touching the disk)."""
        name = path.name
        if not name.endswith(".md") or name.startswith(TEMP_PREFIX):
            return False
        parent = path.parent
        if parent in (self.root, self.root / "memory"):
            return True
        return parent == self.root / "transcripts" and name == ".handoff.md"

    def refresh(self) -> None:
        """Forget everything (e.g. after many files changed at once)."""
        self._docs.clear()
        self._sizes.clear()
        self._paths = None
        self._memo.clear()
        self.generation += 1
        self.layout = detect_layout(self.root)
        self.git.invalidate()

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
        """A cross-file fact computed once per workspace generation (e.g. a hash index)."""
        if key in self._memo:
            return self._memo[key]  # type: ignore[return-value]
        value = compute()
        self._memo[key] = value
        return value

    def affected_by(self, path: Path) -> set[Path]:
        """Documents whose diagnostics may change when ``path`` changes."""
        affected = {path}
        kind = kind_for(path)
        idx = self.index_path
        if path != idx:
            affected.add(idx)
        listed = self.paths()
        for p in listed:
            k = kind_for(p)
            if k is FileKind.HANDOFF or (
                k is FileKind.TOPIC and kind in (FileKind.INDEX, FileKind.TOPIC)
            ):
                affected.add(p)
        present = set(listed)
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
        section = doc.section("Active Checkpoints")
        if section is None:
            return []
        out = []
        for item in doc.items_in(section):
            m = re.match(r"\*\*(?P<name>[^*]+)\*\*", item.text)
            if m:
                out.append(IndexEntry(m.group("name").strip(), item.line))
        return out

    def pointer_targets(self) -> set[Path]:
        """Files that some pointer (link or code span) in the index points at."""
        doc = self.index()
        if doc is None:
            return set()
        base = doc.path.parent
        targets: set[Path] = set()
        for link in doc.links:
            for candidate in (base / link.target, self.root / link.target):
                targets.add(candidate.resolve())
        return targets

    def topic_files(self) -> list[Path]:
        return [p for p in self.paths() if kind_for(p) is FileKind.TOPIC]

    def resolve_pointer(self, doc: Document, target: str) -> Path | None:
        """Where a pointer in ``doc`` leads, if that file exists (relative to doc, then root)."""
        for candidate in (doc.path.parent / target, self.root / target):
            if candidate.is_file() or self._norm(candidate) in self._overlays:
                return candidate
        return None

    def graph(self) -> LinkGraph:
        """The root's link graph (:mod:`memls.core.graph`), brought up to date on each call."""
        from memls.core.graph import graph_of

        return graph_of(self)


def roots_for(paths: Iterable[Path], explicit: Path | None = None) -> dict[Path, list[Path]]:
    """Group paths (files or folders) by their memory root."""
    grouped: dict[Path, list[Path]] = {}
    for path in paths:
        root = discover_root(path, explicit)
        if root is None:
            root = (path if path.is_dir() else path.parent).resolve()
        grouped.setdefault(root, []).append(path)
    return grouped
