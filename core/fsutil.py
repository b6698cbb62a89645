"""Safe file writes for every operation: atomic, inside the root, under a lock.

Every write goes to a temporary file in the target's directory, is fsynced, then renamed
over the target, so a reader (or a crash) sees the old or the new file, never a mix.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

TEMP_PREFIX = ".memls-tmp-"
NAME_MAX = 255
"""Longest file name (one path segment) in bytes on the file systems memls writes to."""
# Test-only: seconds to sleep between writing the temp file and renaming it, so crash
# tests can kill a writer mid-write. Unset in normal use.
_DELAY_ENV = "MEMLS_TEST_WRITE_DELAY"
_CONTROL = {chr(c) for c in range(32)} | {"\x7f"}


class UnsafePathError(ValueError):
    """A name or path that would leave the memory root or is not a plain relative path."""


def check_relative(rel: str, what: str = "path") -> str:
    """Validate a canonical relative POSIX path; return it, or raise naming the problem."""
    if not rel:
        raise UnsafePathError(f"{what} is empty")
    if any(ch in _CONTROL for ch in rel):
        raise UnsafePathError(f"{what} {rel!r} contains a control character or NUL")
    if "\\" in rel:
        raise UnsafePathError(f"{what} {rel!r} contains a backslash; use / separators")
    if rel.startswith("/") or (len(rel) > 1 and rel[1] == ":"):
        raise UnsafePathError(f"{what} {rel!r} is absolute; give a path relative to the root")
    parts = rel.split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise UnsafePathError(f"{what} {rel!r} is not canonical (empty, '.' or '..' segment)")
    for part in parts:
        try:
            size = len(os.fsencode(part))
        except UnicodeEncodeError as exc:
            raise UnsafePathError(f"{what} {rel!r} is not a valid file name") from exc
        if size > NAME_MAX:
            raise UnsafePathError(
                f"{what} {rel!r}: the name {part[:20]!r}… is {size} bytes; "
                f"file names are limited to {NAME_MAX} bytes"
            )
    return rel


def inside(root: Path, path: Path) -> bool:
    """Whether ``path`` (symlinks resolved) stays inside ``root``."""
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True


def safe_join(root: Path, rel: str, what: str = "path") -> Path:
    """``root / rel`` after checking ``rel`` and that no symlink leads out of the root."""
    check_relative(rel, what)
    target = root / rel
    if not inside(root, target):
        raise UnsafePathError(f"{what} {rel!r} resolves outside the memory root {root}")
    return target


def atomic_write(path: Path, content: str | bytes, *, root: Path | None = None) -> bool:
    """Write ``content`` atomically. Returns False (and writes nothing) when unchanged.

    Text is encoded as UTF-8 with ``surrogateescape``, so text read with that handler
    (bytes that are not UTF-8 as lone surrogates) is written back byte for byte.
    """
    data = content.encode("utf-8", "surrogateescape") if isinstance(content, str) else content
    if root is not None and not inside(root, path):
        raise UnsafePathError(
            f"refusing to write {path}: it resolves outside the memory root {root}"
        )
    if path.is_symlink():
        raise UnsafePathError(f"refusing to write through the symlink {path}")
    try:
        if path.read_bytes() == data:
            return False
    except FileNotFoundError:
        pass
    except IsADirectoryError as exc:
        raise UnsafePathError(f"{path} is a directory") from exc
    directory = path.parent
    directory.mkdir(parents=True, exist_ok=True)
    mode = _mode_for(path)
    fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        crash_point()
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(directory)
    return True


def crash_point() -> None:
    """Test-only: sleep ``MEMLS_TEST_WRITE_DELAY`` seconds at a commit point (between a temp
    file and its rename, between a snapshot commit and its ref move, at a recall backfill's
    batch and embedding steps), so crash tests can kill a writer there. Does nothing when the variable is unset."""
    delay = os.environ.get(_DELAY_ENV)
    if delay:
        time.sleep(float(delay))


def atomic_delete(path: Path, *, root: Path | None = None) -> bool:
    """Delete a file inside the root; False when it was not there."""
    if root is not None and not inside(root, path.parent):
        raise UnsafePathError(f"refusing to delete {path}: outside the memory root {root}")
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    _fsync_dir(path.parent)
    return True


def _mode_for(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def root_lock(root: Path) -> Iterator[None]:
    """An exclusive inter-process lock on the memory root (flock on the directory itself).

    Locking the directory needs no lock file, so nothing is left behind.
    """
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
