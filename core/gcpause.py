"""Pausing the cyclic garbage collector around work that makes many small acyclic objects."""

from __future__ import annotations

import atexit
import contextlib
import gc
from collections.abc import Iterator

_freeze_registered: list[bool] = []


@contextlib.contextmanager
def no_gc(*, freeze_at_exit: bool = False) -> Iterator[None]:
    """Pause the cyclic garbage collector while many small acyclic objects are made.

    Parsing a 20 MB file makes millions of tuples; every collection pass would walk all
    of them again (issue 15, item 5: that, not the work, made big files slow). Nothing is
    lost: these objects are freed by reference counting, and collection resumes after, so
    code run inside a longer process (a test, the notebook, the language server) leaves the
    collector as it found it. Usable as a decorator too (``@no_gc()``).

    ``freeze_at_exit``: a short command also skips the collector's last pass at interpreter
    exit (``gc.freeze`` then; nothing is finalised differently from any other object alive
    at exit).
    """
    enabled = gc.isenabled()
    if enabled:
        gc.disable()
    if freeze_at_exit and not _freeze_registered:
        atexit.register(gc.freeze)
        _freeze_registered.append(True)
    try:
        yield
    finally:
        if enabled:
            gc.enable()
