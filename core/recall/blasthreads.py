"""Run numpy work on several Python threads, each with a single-threaded OpenBLAS.

memls-minilm's forward pass is dense matmuls (BLAS) interleaved with elementwise numpy
(GELU, softmax, layer norm) that runs on one core. Letting OpenBLAS thread each matmul
leaves the second core idle during the elementwise part, and on a busy machine its worker
threads spin waiting for one another. Handing whole batches to one Python thread per core,
with OpenBLAS held to one thread meanwhile, keeps every core on useful work: numpy releases
the GIL inside matmuls and large ufuncs.

OpenBLAS's thread count is process-wide (numpy's bundled build has no per-thread setting
that works for its pthreads server), so ``single_threaded`` lowers it for the duration of
the outermost caller and restores it after. numpy builds that do not link OpenBLAS (MKL,
Accelerate) or whose library cannot be found report no threads here, and callers stay
serial, exactly as before.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

# (setter, getter) symbol names, numpy's scipy-openblas build first
_SYMBOLS = (
    ("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"),
    ("scipy_openblas_set_num_threads", "scipy_openblas_get_num_threads"),
    ("openblas_set_num_threads64_", "openblas_get_num_threads64_"),
    ("openblas_set_num_threads", "openblas_get_num_threads"),
)

_lock = threading.Lock()
_found: list[tuple[Callable[[int], object], Callable[[], int]] | None] = []
_users = 0
_saved = 1


def _library_paths() -> list[str]:
    """Paths of numpy's OpenBLAS: the one its wheel bundles first (another package, scipy
    say, may have loaded an OpenBLAS of its own), then any OpenBLAS the process mapped."""
    import glob
    import os

    import numpy as np

    package = os.path.dirname(np.__file__)
    paths: list[str] = []
    for pattern in ("../numpy.libs/*openblas*", ".dylibs/*openblas*"):
        paths.extend(sorted(glob.glob(os.path.join(package, pattern))))
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                path = line.rstrip("\n").partition("/")[2]
                if path and "openblas" in os.path.basename(path).lower():
                    paths.append("/" + path)
    except OSError:
        pass
    return list(dict.fromkeys(os.path.realpath(path) for path in paths))


def _controls() -> tuple[Callable[[int], object], Callable[[], int]] | None:
    """OpenBLAS's thread setter and getter, looked up once; None where there is none."""
    if not _found:
        import ctypes

        found = None
        for path in _library_paths():
            try:
                library = ctypes.CDLL(path)
            except OSError:
                continue
            for set_name, get_name in _SYMBOLS:
                setter = getattr(library, set_name, None)
                getter = getattr(library, get_name, None)
                if setter is not None and getter is not None:
                    setter.argtypes, setter.restype = [ctypes.c_int], None
                    getter.argtypes, getter.restype = [], ctypes.c_int
                    found = (setter, getter)
                    break
            if found is not None:
                break
        _found.append(found)
    return _found[0]


def blas_threads() -> int:
    """OpenBLAS's thread count outside ``single_threaded`` sections; 1 when unknown."""
    controls = _controls()
    if controls is None:
        return 1
    with _lock:
        return max(1, _saved if _users else int(controls[1]()))


@contextmanager
def single_threaded() -> Iterator[None]:
    """Hold OpenBLAS to one thread until the outermost such section ends."""
    global _users, _saved
    controls = _controls()
    if controls is None:
        yield
        return
    setter, getter = controls
    with _lock:
        if _users == 0:
            _saved = int(getter())
            setter(1)
        _users += 1
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if _users == 0:
                setter(_saved)
