"""Notebook widgets (ipywidgets 8) over memls core: recall explorer, checkpoint board, memory map.

Install with the ``notebook`` extra from a clone: ``pip install '/path/to/memls[notebook]'``. Each widget displays itself when it is the
last expression of a cell; its parts are attributes, so scripts and tests can drive it.
"""

from __future__ import annotations

from memls.notebook.board import CheckpointBoard
from memls.notebook.explorer import RecallExplorer
from memls.notebook.memorymap import MemoryMap

__all__ = ["CheckpointBoard", "MemoryMap", "RecallExplorer"]
