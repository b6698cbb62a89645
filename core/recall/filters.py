"""What a search may be restricted to: chunk kinds, a path glob, a time window.

Every mode applies one :class:`Filters` the same way: semantic search as boolean masks over
the matrix's metadata (:meth:`vectorindex.VectorIndex.mask`), full-text search as SQL
conditions (:func:`fulltext.search`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from fnmatch import fnmatchcase

from memls.core.recall.chunking import normalize_timestamp

_RELATIVE = re.compile(r"^(\d+)\s*([hdwm])$")
_GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True)
class Filters:
    """Restrictions every search mode applies the same way."""

    kinds: tuple[str, ...] = ()
    path_glob: str | None = None
    since: str | None = None  # normalised timestamp, inclusive
    until: str | None = None  # normalised timestamp, inclusive


NO_FILTERS = Filters()
"""The default of every search function: nothing restricted."""


def parse_time(value: str | None, *, end: bool = False, now: datetime | None = None) -> str | None:
    """``since``/``until`` to a normalised timestamp: ISO date or datetime, or ``7d``/``12h``/``2w``.

    A bare date as ``until`` means the end of that day. Raises ValueError for anything else.
    """
    if value is None or not value.strip():
        return None
    text = value.strip()
    relative = _RELATIVE.match(text.lower())
    if relative:
        amount, unit = int(relative.group(1)), relative.group(2)
        span = {
            "h": timedelta(hours=amount),
            "d": timedelta(days=amount),
            "w": timedelta(weeks=amount),
            "m": timedelta(days=30 * amount),
        }[unit]
        moment = (now or datetime.now(UTC)).astimezone(UTC).replace(tzinfo=None) - span
        return moment.strftime("%Y-%m-%dT%H:%M:%S")
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        datetime.fromisoformat(text)  # validates
        return f"{text}T23:59:59" if end else f"{text}T00:00:00"
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise ValueError(
            f"cannot read {value!r} as a time: use YYYY-MM-DD, an ISO datetime, or 7d / 12h / 2w"
        ) from exc
    stamp = normalize_timestamp(text)
    assert stamp is not None
    return stamp


def path_matcher(glob: str | None) -> Callable[[str], bool] | None:
    """A path filter: a glob (``*`` crosses ``/``), or a plain prefix/folder when no wildcard."""
    if not glob:
        return None
    pattern = glob.strip().removeprefix("./")
    if not (_GLOB_CHARS & set(pattern)):
        folder = pattern.rstrip("/")

        def prefix(path: str) -> bool:
            return path == folder or path.startswith(folder + "/")

        return prefix
    return lambda path: fnmatchcase(path, pattern)
