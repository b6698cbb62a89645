"""The server's settings: the ``memls`` configuration section and initializationOptions.

Editors send the same object both ways (VS Code: ``memls.*`` settings; Neovim:
``settings = { memls = {...} }`` and/or ``init_options``). Settings override the root's
``memls.toml`` / ``[tool.memls]`` for the keys they set.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memls.core.config import Config


@dataclass(frozen=True)
class Settings:
    roots: tuple[str, ...] = ()
    """Extra memory roots; relative paths resolve against each workspace folder."""
    stale_days: int | None = None
    """CP022 threshold in days (None: the root's configuration, default 14)."""
    select: tuple[str, ...] = ()
    """Only these rule codes or prefixes (empty: the root's configuration)."""
    ignore: tuple[str, ...] = ()
    """Rule codes or prefixes to skip, on top of the root's configuration."""
    recall_model: str | None = None
    """Embedding model id for the recall commands."""
    debounce_ms: int = 0
    """Extra delay before re-checking an edited document; edits that arrive while a check
    runs are always coalesced into one follow-up check."""
    large_document_bytes: int | None = None
    """Documents over this many bytes get the SZ rules only (None: the root's
    ``large_document_bytes``, default 1 MiB; 0: no limit)."""

    @classmethod
    def from_object(cls, data: Any) -> Settings:
        """Read settings leniently: a value of the wrong type is ignored, never fatal."""
        if not isinstance(data, dict):
            return cls()
        nested = data.get("memls")
        if isinstance(nested, dict):
            data = nested
        recall = data.get("recall")
        model = recall.get("model") if isinstance(recall, dict) else data.get("recall.model")
        stale = data.get("staleDays", data.get("stale_days"))
        debounce = data.get("debounceMs", data.get("debounce_ms"))
        large = data.get("largeDocumentBytes", data.get("large_document_bytes"))
        return cls(
            roots=_strings(data.get("roots")),
            stale_days=int(stale)
            if isinstance(stale, int | float) and not isinstance(stale, bool) and stale >= 0
            else None,
            select=_strings(data.get("select")),
            ignore=_strings(data.get("ignore")),
            recall_model=model.strip() if isinstance(model, str) and model.strip() else None,
            debounce_ms=int(debounce)
            if isinstance(debounce, int | float)
            and not isinstance(debounce, bool)
            and debounce >= 0
            else 0,
            large_document_bytes=int(large)
            if isinstance(large, int | float) and not isinstance(large, bool) and large >= 0
            else None,
        )

    def root_paths(self, folders: list[Path]) -> list[Path]:
        """Configured roots as absolute paths (relative ones against every folder)."""
        out: list[Path] = []
        for raw in self.roots:
            path = Path(raw).expanduser()
            candidates = [path] if path.is_absolute() else [f / path for f in folders]
            out.extend(c.resolve() for c in candidates if c.is_dir())
        return out

    def apply(self, config: Config) -> Config:
        """The root's configuration with these settings on top."""
        overrides: dict[str, Any] = {}
        if self.select:
            overrides["select"] = list(self.select)
        if self.ignore:
            overrides["ignore"] = list(dict.fromkeys((*config.ignore, *self.ignore)))
        if self.stale_days is not None:
            overrides["stale_days"] = self.stale_days
        if self.recall_model:
            overrides["recall_model"] = self.recall_model
        if self.large_document_bytes is not None:
            overrides["large_document_bytes"] = self.large_document_bytes
        return config.merged(overrides) if overrides else config


def _strings(value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple):
        return ()
    return tuple(v.strip() for v in value if isinstance(v, str) and v.strip())
