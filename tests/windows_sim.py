"""Make this interpreter look like Windows to memls: no ``fcntl``, no POSIX-only ``os`` names.

``tests/test_windows_core.py`` runs the core tests in a child interpreter whose
``sitecustomize`` calls :func:`install` before anything else is imported, so the child and
every process it starts (a hook, the CLI) see:

- ``import fcntl`` fail with :class:`ImportError`, as it does on Windows;
- a stand-in ``msvcrt`` whose ``locking`` behaves like Windows' (an exclusive lock per open
  file, ``LK_NBLCK`` failing at once with :class:`PermissionError`), built on the real
  ``flock`` taken before ``fcntl`` is hidden (``subprocess``, which takes the presence of
  ``msvcrt`` for Windows, is imported first);
- no ``os.O_NOFOLLOW``, ``O_DIRECTORY``, ``O_NONBLOCK``, ``O_CLOEXEC``, ``os.geteuid``,
  ``os.pread``, ``os.pwrite``, ``os.mkfifo``, and an empty ``os.supports_dir_fd``.

It cannot make Linux behave like NTFS (a file open elsewhere can still be renamed over);
:func:`memls.core.fsutil.replace_file`'s retry is tested on its own.
"""

from __future__ import annotations

import errno
import importlib.abc
import importlib.machinery
import os
import sys
import types
from collections.abc import Sequence

HIDDEN_MODULES = ("fcntl",)
REMOVED_OS_NAMES = (
    "O_NOFOLLOW",
    "O_DIRECTORY",
    "O_NONBLOCK",
    "O_CLOEXEC",
    "geteuid",
    "pread",
    "pwrite",
    "mkfifo",
)
MARKER_ENV = "MEMLS_TEST_WINDOWS_SIM"


class _Refuse(importlib.abc.MetaPathFinder):
    """A finder that answers ``import fcntl`` with the ImportError Windows gives."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: types.ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname in HIDDEN_MODULES:
            raise ImportError(f"No module named {fullname!r} (simulated Windows)", name=fullname)
        return None


def _fake_msvcrt(flock: object, lock_ex: int, lock_nb: int, lock_un: int) -> types.ModuleType:
    module = types.ModuleType("msvcrt", "Stand-in for Windows' msvcrt (simulated Windows).")
    module.LK_UNLCK = 0  # type: ignore[attr-defined]
    module.LK_LOCK = 1  # type: ignore[attr-defined]
    module.LK_NBLCK = 2  # type: ignore[attr-defined]
    module.LK_RLCK = 3  # type: ignore[attr-defined]
    module.LK_NBRLCK = 4  # type: ignore[attr-defined]

    def locking(fd: int, mode: int, nbytes: int) -> None:
        assert callable(flock)
        if nbytes <= 0:
            raise OSError(errno.EINVAL, "nbytes must be positive")
        if mode == 0:
            flock(fd, lock_un)
            return
        try:
            flock(fd, lock_ex | (lock_nb if mode in (2, 4) else 0))
        except BlockingIOError:
            raise PermissionError(errno.EACCES, "Permission denied") from None

    module.locking = locking  # type: ignore[attr-defined]
    return module


def install() -> None:
    """Hide ``fcntl`` and the POSIX-only ``os`` names from everything imported after this."""
    import fcntl
    import subprocess  # noqa: F401  (it tells Windows by `import msvcrt`: first, then the stand-in)

    os.environ[MARKER_ENV] = "1"
    sys.modules["msvcrt"] = _fake_msvcrt(fcntl.flock, fcntl.LOCK_EX, fcntl.LOCK_NB, fcntl.LOCK_UN)
    for name in HIDDEN_MODULES:
        sys.modules.pop(name, None)
    sys.meta_path.insert(0, _Refuse())
    for name in REMOVED_OS_NAMES:
        if hasattr(os, name):
            delattr(os, name)
    os.supports_dir_fd = set()


SITECUSTOMIZE = "import tests.windows_sim\ntests.windows_sim.install()\n"
"""The ``sitecustomize.py`` a child interpreter gets (with the repository on its path)."""
