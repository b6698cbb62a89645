"""Shared fixtures: paths to project data and to the read-only ../shared material."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]
SHARED = PROJECT.parent / "shared"
NOW = dt.datetime(2026, 11, 30, 12, 0)


@pytest.fixture
def shared_dir() -> Path:
    """../shared, or skip with the reason when this checkout has none beside it."""
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent (fresh clone without ../shared)")
    return SHARED
