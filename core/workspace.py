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
from memls.core.links import LinkResolver, distinct_links, find_repo_root, no_gc
from memls.core.model import Document, FileKind
from memls.core.parse import kind_for, parse_bytes, parse_text

# re-exported: finding a root lives in roots.py, so it stays light (no parser, git, links)
from memls.core.roots import ROOT_MARKERS as ROOT_MARKERS  # noqa: PLC0414
from memls.core.roots import claude_memory_dir as claude_memory_dir  # noqa: PLC0414
from memls.core.roots import discover_root as discover_root  # noqa: PLC0414
from memls.core.roots import enclosing_root as enclosing_root  # noqa: PLC0414
from memls.core.roots import is_root as is_root  # noqa: PLC0414

if TYPE_CHECKING:
    from memls.core.graph import LinkGraph

T = TypeVar("T")

_VOLATILE = Path("\0volatile")
"""Marks a memo that depends on something other than documents (disk, git)."""
_SKIP_DIRS = {".git", ".memls", "node_modules", ".venv", "__pycache__"}
MAX_FILE_BYTES = 20 * 1024 * 1024
CHECKPOINT_RE = re.compile(r"^checkpoint-(?P<name>.+)\.md$")


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
    sampled = typed = 0
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return 0, 0
    for entry in entries:
        if sampled >= limit:
            break
        name = entry.name
        if not name.endswith(".md") or name in ("MEMORY.md", "LOG.md") or name.startswith("."):
            continue
        path = Path(entry.path)
        if kind_for(path) is not FileKind.TOPIC or is_dated(path):
            continue
        sampled += 1
        fm = _frontmatter_head(path)
        if fm is not None and ("description" in fm or _FM_TYPE.search(fm)):
            typed += 1
    return sampled, typed


def _is_project_folder(root: Path) -> bool:
    return any(os.path.lexists(root / m) for m in PROJECT_MARKERS) or (root / "src").is_dir()


def layout_choice(root: Path) -> LayoutChoice:
    """Pick the layout by weighing several signals, never by one file name alone."""
    found: dict[Layout, list[tuple[int, str]]] = {layout: [] for layout in Layout}

    def add(layout: Layout, weight: int, why: str) -> None:
        found[layout].append((weight, why))

    def isfile(rel: str) -> bool:
        return (root / rel).is_file()

    memory = root / "memory"
    has_memory_dir = memory.is_dir()
    # Claude Code memory
    if is_claude_memory_dir(root):
        add(Layout.CLAUDE, 3, "the folder is Claude Code's ~/.claude/projects/<slug>/memory")
    elif root.name in ("memory", "memories") and root.parent.name == ".claude":
        add(Layout.CLAUDE, 3, f"the folder is a project's .claude/{root.name}")
    sampled, typed = typed_memories(root)
    if typed and isfile("MEMORY.md"):
        add(Layout.CLAUDE, 2, f"{typed} of {sampled} topic files carry name/description/type")
    # Orchestrator (MS4PI)
    if has_memory_dir:
        if isfile("LOG.md"):
            add(Layout.ORCHESTRATOR, 2, "LOG.md")
        if isfile("memory/MEMORY.md"):
            add(Layout.ORCHESTRATOR, 2, "memory/MEMORY.md")
        if (root / "transcripts").is_dir():
            add(Layout.ORCHESTRATOR, 1, "transcripts/")
        m_sampled, m_typed = typed_memories(memory)
        if m_typed:
            add(Layout.ORCHESTRATOR, 1, f"{m_typed} of {m_sampled} memory/*.md carry frontmatter")
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
    layout = layout or detect_layout(root)
    if not (root / "MEMORY.md").is_file() and (
        layout is Layout.ORCHESTRATOR or (root / "memory" / "MEMORY.md").is_file()
    ):
        return root / "memory" / "MEMORY.md"  # the index is where it is
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
        self.layout_choice = layout_choice(self.root)
        self.layout = self.layout_choice.layout
        self.repo_root = repo_root_for(self.root)
        self.links = LinkResolver(self.root, self.repo_root, extra_exists=self._is_overlay)
        """Resolves links of every document of the root (cached; see core/links.py)."""
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

    # -- files -------------------------------------------------------------
    def paths(self) -> list[Path]:
        if self._paths is None:
            on_disk = memory_files(self.root)
            extra = [p for p in self._overlays if p not in on_disk and self.contains(p)]
            listed = sorted(set(on_disk) | set(extra))
            if self.layout_choice.project_folder:
                listed = self._memory_in_project(listed)
            self._paths = listed
        return list(self._paths)

    def _memory_in_project(self, listed: list[Path]) -> list[Path]:
        """In a project folder, a root-level ``*.md`` is memory only by name or when the index
        reaches it; README.md, CONTRIBUTING.md and docs are the project's, not memory."""
        keep = [
            p
            for p in listed
            if p.parent != self.root or kind_for(p) not in (FileKind.TOPIC, FileKind.OTHER)
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
            doc = parse_text(self._overlays[path], path)
        else:
            try:
                if path.stat().st_size > MAX_FILE_BYTES:
                    data = path.open("rb").read(MAX_FILE_BYTES)
                else:
                    data = path.read_bytes()
            except OSError:
                return None
            with no_gc():
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
        self._size_sum = None
        self._paths = None
        self._forget_memos(None)
        self.generation += 1
        for listener in self.listeners:
            listener(None)
        self.layout_choice = layout_choice(self.root)
        self.layout = self.layout_choice.layout
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
            groups.setdefault(kind_for(p), []).append(p)
        self._kinds = (self._paths, groups, set(self._paths or ()))
        return groups, self._kinds[2]

    def affected_by(self, path: Path) -> set[Path]:
        """Documents whose diagnostics may change when ``path`` changes."""
        affected = {path}
        kind = kind_for(path)
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
        for target in {link.target for link in doc.links}:  # a realpath per target, not link
            for candidate in (base / target, self.root / target):
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


def repo_root_for(root: Path) -> Path | None:
    """The repository a memory root belongs to: the nearest parent with ``.git``; for
    Claude Code's auto-memory folder, the project its ``<slug>`` names (when it exists)."""
    if is_claude_memory_dir(root):
        project = project_for_slug(root.parent.name)
        return find_repo_root(project) or project if project is not None else None
    return find_repo_root(root)


def project_for_slug(slug: str, limit: int = 5000) -> Path | None:
    """The existing folder a Claude Code project slug stands for (``-home-me-my-app`` →
    ``/home/me/my-app``): ``/``, ``-``, ``.``, ``_`` and spaces all became ``-``."""
    parts = slug.lstrip("-").split("-")
    if not parts or not parts[0]:
        return None
    budget = [limit]

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
            if joiner != "/" and i + 1 == len(parts) and not os.path.isdir(candidate):
                continue
            found = walk(candidate, i + 1)
            if found is not None:
                return found
        return None

    return walk("/" + parts[0], 1)


SUBROOT_CANDIDATES = (
    ".claude/memory",
    ".claude/memories",
    "memory",
    "memories",
    ".memory",
    "docs/memory",
    ".agent/memory",
    ".agents/memory",
)
"""Folders of a project that hold memory of their own (checked by ``find_roots``)."""


def _looks_like_memory_folder(folder: Path) -> bool:
    if is_root(folder) or (folder / ".handoff.md").is_file():
        return True
    sampled, typed = typed_memories(folder)
    return typed > 0 or (_dated_count(folder) > 0 and sampled == 0)


def find_roots(folder: Path, *, home: Path | None = None) -> list[Path]:
    """Every memory root a folder holds: itself (MEMORY.md, LOG.md, checkpoints, a
    handoff), memory folders below it (``.claude/memory``, ``memory/`` …) and Claude Code's
    auto-memory folder for the project. Used when ``memls check`` is given a folder."""
    folder = folder.resolve()
    found: list[Path] = []
    choice = layout_choice(folder)
    own = is_root(folder) or (folder / ".handoff.md").is_file()
    whole = choice.layout in (Layout.ORCHESTRATOR, Layout.WORKSPACE)
    if own or whole:
        found.append(folder)
    for rel in SUBROOT_CANDIDATES:
        sub = folder / rel
        if whole and rel == "memory":
            continue  # part of the folder's own layout
        if sub.is_dir() and _looks_like_memory_folder(sub):
            found.append(sub.resolve())
    if (folder / "transcripts" / ".handoff.md").is_file() and folder not in found:
        found.append(folder)
    auto = claude_memory_dir(folder, home)
    if auto.is_dir():
        found.append(auto)
    return list(dict.fromkeys(found))


def roots_for(paths: Iterable[Path], explicit: Path | None = None) -> dict[Path, list[Path]]:
    """Group paths (files or folders) by their memory root."""
    grouped: dict[Path, list[Path]] = {}
    for path in paths:
        root = discover_root(path, explicit)
        if root is None:
            root = (path if path.is_dir() else path.parent).resolve()
        grouped.setdefault(root, []).append(path)
    return grouped
