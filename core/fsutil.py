"""Safe file writes for every operation: atomic, inside the root, under a lock.

Every write goes to a temporary file in the target's directory, is fsynced, then renamed
over the target, so a reader (or a crash) sees the old or the new file, never a mix.

memls's own state — ``<root>/.memls/`` and the transcript archive — is written only into a
real folder of the user's (:func:`private_dir`, :func:`state_dir`: mode 0700, never a
symlink) and only into files opened without following a link (:func:`open_private`,
:func:`write_private`: mode 0600); anything else is refused with :class:`UnsafeStateError`.

It is also where memls meets the platform, so that the rest of the core is the same on
POSIX and on Windows: the inter-process lock (:func:`lock_fd`: ``flock`` where ``fcntl``
exists, ``msvcrt.locking`` on Windows), the ``os.open`` flags Windows lacks (``0`` there:
:data:`O_NOFOLLOW`, :data:`O_NONBLOCK`, …, and :data:`O_BINARY`, which only Windows needs),
:func:`pread`, :func:`replace_file` and :func:`process_alive`. Where ``O_NOFOLLOW`` or
``O_DIRECTORY`` is missing, a link is refused by ``lstat`` before the open and the file
opened is checked to be the one ``lstat`` saw.
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import os
import stat
import sys
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from pathlib import Path
from types import ModuleType
from typing import BinaryIO

try:
    import fcntl as _fcntl
except ImportError:  # Windows
    _fcntl = None  # type: ignore[assignment]
_msvcrt: ModuleType | None = importlib.import_module("msvcrt") if _fcntl is None else None

O_NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)
"""``os.O_NOFOLLOW``, or 0 where the platform has none (Windows: links are refused by lstat)."""
O_DIRECTORY: int = getattr(os, "O_DIRECTORY", 0)
O_CLOEXEC: int = getattr(os, "O_CLOEXEC", 0)
"""0 on Windows, where a descriptor ``os.open`` makes is not inherited anyway (PEP 446)."""
O_NONBLOCK: int = getattr(os, "O_NONBLOCK", 0)
"""0 on Windows, which has no FIFOs for an open to block on."""
O_BINARY: int = getattr(os, "O_BINARY", 0)
"""Windows only: without it ``os.read``/``os.write`` translate line endings."""
_OPEN_NO_LINK = bool(O_NOFOLLOW and O_DIRECTORY)
"""Whether ``os.open`` refuses links itself; else :func:`_lstat_checked` does, before it."""

TEMP_PREFIX = ".memls-tmp-"
STATE_DIR = ".memls"
"""memls's own folder in a root: the recall store, locks, the health cache, the worker's pid and log."""
PRIVATE_FILE_MODE = 0o600
PRIVATE_DIR_MODE = 0o700
STATE_IGNORE = "*\n"
"""``.memls/.gitignore``: everything in it, the ignore file too, stays out of git."""
NAME_MAX = 255
"""Longest file name (one path segment) in bytes on the file systems memls writes to."""
# Test-only: seconds to sleep between writing the temp file and renaming it, so crash
# tests can kill a writer mid-write. Unset in normal use.
_DELAY_ENV = "MEMLS_TEST_WRITE_DELAY"
_CONTROL = {chr(c) for c in range(32)} | {"\x7f"}


class UnsafePathError(ValueError):
    """A name or path that would leave the memory root or is not a plain relative path."""


class UnsafeStateError(UnsafePathError):
    """memls's own files (``.memls/``, the transcript archive) would go through a symlink,
    into something that is not a plain directory or file, or into another user's folder.
    Nothing was written; the message is one line naming the path. The CLI exits 2 on it,
    a hook reports it on stderr and exits 0."""


def _unsafe(path: Path, why: str) -> UnsafeStateError:
    return UnsafeStateError(
        f"refusing to use {path} for memls's own files: {why} "
        "(memls keeps them only in plain files and folders of yours; remove or fix it)"
    )


_PRIVATE_NEW: ContextVar[bool] = ContextVar("memls_private_new_files", default=False)


@contextlib.contextmanager
def private_new_files() -> Iterator[None]:
    """Within this context, a file :func:`atomic_write` creates is mode 0600 (an existing
    file keeps its mode). The hooks write LOG.md and the handoff this way: what they put
    there comes from the session."""
    token = _PRIVATE_NEW.set(True)
    try:
        yield
    finally:
        _PRIVATE_NEW.reset(token)


def refuse_link(path: Path) -> os.stat_result | None:
    """``path``'s lstat, or None when nothing is there; a symlink (dangling or not) or
    anything but a regular file is refused with :class:`UnsafeStateError`."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        raise _unsafe(path, "it is a symbolic link")
    if not stat.S_ISREG(st.st_mode):
        raise _unsafe(path, "it is not a regular file")
    return st


def private_dir(path: Path) -> Path:
    """``path`` ready for memls's own files: created with mode 0700 when missing (its parent
    must exist); an existing folder of the user's is tightened to 0700. A symlink (dangling
    or not), anything but a directory, or another user's folder is refused
    (:class:`UnsafeStateError`)."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, PRIVATE_DIR_MODE)
    if not _OPEN_NO_LINK:  # Windows: a directory cannot be opened; lstat it
        st = _lstat_checked(path, directory=True)
        if st is None:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(path))
        _check_owner(path, st)
        if stat.S_IMODE(st.st_mode) != PRIVATE_DIR_MODE:
            with contextlib.suppress(OSError):
                os.chmod(path, PRIVATE_DIR_MODE)
        return path
    try:
        fd = os.open(path, os.O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise _unsafe(
                path, "it is a symbolic link" if path.is_symlink() else "it is not a directory"
            ) from None
        raise
    try:
        st = os.fstat(fd)
        _check_owner(path, st)
        if stat.S_IMODE(st.st_mode) != PRIVATE_DIR_MODE:
            _fchmod(fd, PRIVATE_DIR_MODE)
    finally:
        os.close(fd)
    return path


def _check_owner(path: Path, st: os.stat_result) -> None:
    """Refuse another user's folder (POSIX; Windows has no uids here: its ACLs decide)."""
    if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        raise _unsafe(path, f"it belongs to another user (uid {st.st_uid})")


_LINK_TAGS = (0xA000000C, 0xA0000003)
"""``IO_REPARSE_TAG_SYMLINK`` and ``_MOUNT_POINT``: the reparse points ``lstat`` does not
follow on Windows (links and junctions; ``stat`` names them on Windows only)."""


def is_link(st: os.stat_result) -> bool:
    """Whether the lstat ``st`` is a symlink, or on Windows a junction (a directory link
    ``S_ISLNK`` does not show)."""
    tag: int = getattr(st, "st_reparse_tag", 0)  # Windows; OneDrive's files are not links
    return stat.S_ISLNK(st.st_mode) or tag in _LINK_TAGS


def _lstat_checked(path: Path, *, directory: bool = False) -> os.stat_result | None:
    """``path``'s lstat (None when absent), refused when it is a link or not a directory /
    not a regular file: the check ``O_NOFOLLOW`` makes where the platform has none."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if is_link(st):
        raise _unsafe(path, "it is a symbolic link")
    if directory and not stat.S_ISDIR(st.st_mode):
        raise _unsafe(path, "it is not a directory")
    if not directory and not stat.S_ISREG(st.st_mode):
        raise _unsafe(path, "it is not a regular file")
    return st


def _fchmod(fd: int, mode: int) -> None:
    """``os.fchmod`` where there is one (Windows before 3.13 has none; its ACLs decide)."""
    fchmod = getattr(os, "fchmod", None)
    if fchmod is not None:
        fchmod(fd, mode)


def state_dir(root: Path) -> Path:
    """``<root>/.memls``, checked and ready (:func:`private_dir`) and git-ignored: its
    ``.gitignore`` (``*``) is written when missing, and refused when it is a link."""
    folder = private_dir(root / STATE_DIR)
    ignore = folder / ".gitignore"
    if refuse_link(ignore) is None:
        create_private(ignore, STATE_IGNORE.encode("ascii"))
    return folder


def state_parent(path: Path) -> Path:
    """Make ready the folder a state file ``path`` goes in: ``<root>/.memls`` through
    :func:`state_dir`; another folder (a configured ``recall_db``) is created as before."""
    parent = path.parent
    if parent.name == STATE_DIR:
        return state_dir(parent.parent)
    parent.mkdir(parents=True, exist_ok=True)
    return parent


def open_private(path: Path, flags: int) -> int:
    """A file descriptor on the regular file ``path``, opened with ``O_NOFOLLOW``: a symlink
    there (dangling or not) is refused, and so is anything but a regular file (a FIFO does
    not block: the open is non-blocking until checked). A file created is mode 0600; an
    existing one of the user's wider than that is tightened to 0600."""
    before = None if O_NOFOLLOW else _lstat_checked(path)
    try:
        fd = os.open(
            path, flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_BINARY, PRIVATE_FILE_MODE
        )
    except OSError as exc:
        if exc.errno == errno.ELOOP or (exc.errno == errno.EEXIST and path.is_symlink()):
            raise _unsafe(path, "it is a symbolic link") from None
        if exc.errno in (errno.ENXIO, errno.EISDIR):
            raise _unsafe(path, "it is not a regular file") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _unsafe(path, "it is not a regular file")
        if not O_NOFOLLOW:
            _same_file(path, before, st)
        owned = not hasattr(os, "geteuid") or st.st_uid == os.geteuid()
        if owned and stat.S_IMODE(st.st_mode) & 0o077:
            _fchmod(fd, stat.S_IMODE(st.st_mode) & ~0o077 & 0o777)
        set_blocking(fd)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _same_file(path: Path, before: os.stat_result | None, opened: os.stat_result) -> None:
    """Without ``O_NOFOLLOW``: the file opened is the one lstat checked (or, for a file the
    open created, what lstat sees now), not a link put there in between."""
    after = _lstat_checked(path) if before is None else before
    if after is None or (after.st_dev, after.st_ino) != (opened.st_dev, opened.st_ino):
        raise _unsafe(path, "it is a symbolic link")


def set_blocking(fd: int) -> None:
    """Clear the ``O_NONBLOCK`` an open used so that a FIFO could not block it (nothing to
    clear where the platform has no ``O_NONBLOCK``)."""
    if O_NONBLOCK:
        os.set_blocking(fd, True)


def create_private(path: Path, data: bytes) -> bool:
    """Create ``path`` (0600, ``O_EXCL``, never through a link) holding ``data``; False when
    a regular file is already there (left as it is)."""
    try:
        fd = open_private(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    except FileExistsError:
        refuse_link(path)
        return False
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    return True


def write_private(
    path: Path,
    data: bytes | Callable[[BinaryIO], object],
    *,
    sync: bool = True,
    temp_prefix: str = TEMP_PREFIX,
) -> None:
    """Replace ``path`` atomically with a 0600 file (``data``, or what ``data(handle)``
    writes); a symlink or anything but a regular file at ``path`` is refused. The folder
    must be ready already (:func:`state_dir`)."""
    import tempfile  # here: a search opening the store needs none of it

    refuse_link(path)
    fd, tmp = tempfile.mkstemp(prefix=temp_prefix, dir=path.parent)  # 0600, O_EXCL
    try:
        with os.fdopen(fd, "wb") as handle:
            if isinstance(data, bytes):
                handle.write(data)
            else:
                data(handle)
            handle.flush()
            if sync:
                os.fsync(handle.fileno())
        replace_file(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


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
    if _existing_bytes(path) == data:
        return False
    import tempfile

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
        replace_file(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(directory)
    return True


def _existing_bytes(path: Path) -> bytes | None:
    """What ``path`` holds now (None when absent), for :func:`atomic_write`'s unchanged check.

    Opened with ``O_NONBLOCK | O_NOFOLLOW``: a FIFO there does not block the writer and a
    link put there since the caller's check is not followed. Anything but a regular file
    is refused (the rename would replace a FIFO, a socket or a device with a file).
    Without ``O_NOFOLLOW`` (Windows) the caller's ``is_symlink`` check is the link check.
    """
    try:
        fd = os.open(path, os.O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_BINARY)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafePathError(f"refusing to write through the symlink {path}") from exc
        if exc.errno == errno.ENXIO:
            raise UnsafePathError(
                f"refusing to write {path}: it is not a regular file (a socket or a device)"
            ) from exc
        if exc.errno == errno.EACCES and path.is_dir():  # Windows opens no directory
            raise UnsafePathError(f"{path} is a directory") from exc
        raise
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise UnsafePathError(f"{path} is a directory")
        if not stat.S_ISREG(mode):
            kind = "a FIFO" if stat.S_ISFIFO(mode) else "a socket or a device"
            raise UnsafePathError(
                f"refusing to write {path}: it is not a regular file ({kind}); "
                "remove it and run the command again"
            )
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read()
    finally:
        os.close(fd)


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
        if _PRIVATE_NEW.get():
            return PRIVATE_FILE_MODE
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


class LockTimeoutError(TimeoutError):
    """The root lock was not free within the bounded wait (:func:`lock_wait`); nothing was
    written. The message is one line naming the root and the wait."""


_LOCK_WAIT: ContextVar[float | None] = ContextVar("memls_root_lock_wait", default=None)


@contextlib.contextmanager
def lock_wait(seconds: float | None) -> Iterator[None]:
    """Within this context, :func:`root_lock` waits at most ``seconds`` for another process
    holding the root, then raises :class:`LockTimeoutError` (``None``: wait as long as it
    takes, the default everywhere else). The hooks run in it: a hook never blocks."""
    token = _LOCK_WAIT.set(seconds)
    try:
        yield
    finally:
        _LOCK_WAIT.reset(token)


_LOCK_POLL = 0.05


LOCKS_DIR = "memls-locks"
"""Where ``fcntl`` is missing (Windows), :func:`root_lock` locks a file in this folder of
the user's temporary directory, named after the root (:func:`_root_lock_file`): a directory
cannot be opened, let alone locked, there, and the root gets no file of memls's for it."""


def _root_lock_file(root: Path) -> Path:
    import hashlib
    import tempfile

    key = os.path.normcase(str(root.resolve())).encode("utf-8", "surrogatepass")
    folder = private_dir(Path(tempfile.gettempdir()) / LOCKS_DIR)
    return folder / f"{hashlib.sha256(key).hexdigest()[:32]}.lock"


@contextlib.contextmanager
def root_lock(root: Path, *, timeout: float | None = None) -> Iterator[None]:
    """An exclusive inter-process lock on the memory root (flock on the directory itself).

    Locking the directory needs no lock file, so nothing is left behind (on Windows the
    lock is on a file named after the root in the temporary directory). Without
    ``timeout`` (and outside :func:`lock_wait`) it waits as long as another holder keeps
    it; with one, it gives up after that many seconds with :class:`LockTimeoutError`.
    """
    wait = timeout if timeout is not None else _LOCK_WAIT.get()
    root.mkdir(parents=True, exist_ok=True)
    if _fcntl is not None:
        fd = os.open(root, os.O_RDONLY)
    else:
        fd = open_private(_root_lock_file(root), os.O_RDWR | os.O_CREAT)
    try:
        if wait is None:
            lock_fd(fd)
        else:
            _flock_within(fd, root, wait)
        try:
            yield
        finally:
            unlock_fd(fd)
    finally:
        os.close(fd)


def _flock_within(fd: int, root: Path, wait: float) -> None:
    deadline = time.monotonic() + max(0.0, wait)
    while not try_lock_fd(fd):
        left = deadline - time.monotonic()
        if left <= 0:
            raise LockTimeoutError(
                f"another memls process holds the lock on {root}; "
                f"gave up after {wait:g} s (nothing written)"
            )
        time.sleep(min(_LOCK_POLL, left))


# --- the platform: one lock, positional reads, replace, process liveness -----------------

_MSVCRT_LOCK_OFFSET = 1 << 30
"""On Windows the lock is one byte this far into the file (locking a range past the end
is allowed): a Windows lock is mandatory, so a lock on byte 0 would keep a reader of the
holder's pid (:mod:`memls.core.recall.lock`) from reading it."""


def try_lock_fd(fd: int) -> bool:
    """Take the exclusive lock on the open file (or, on POSIX, directory) ``fd`` if it is
    free; False when another holder has it. Each open file is its own holder: a second
    ``open`` of the same file in this process does not get the lock either."""
    if _fcntl is not None:
        try:
            _fcntl.flock(fd, _fcntl.LOCK_EX | _fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True
    assert _msvcrt is not None
    try:
        _msvcrt_lock(fd, _msvcrt.LK_NBLCK)
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EDEADLK):
            return False
        raise
    return True


def lock_fd(fd: int) -> None:
    """Wait as long as it takes for the exclusive lock on ``fd`` (:func:`try_lock_fd`)."""
    if _fcntl is not None:
        _fcntl.flock(fd, _fcntl.LOCK_EX)
        return
    while not try_lock_fd(fd):  # msvcrt's own blocking lock gives up after 10 s
        time.sleep(_LOCK_POLL)


def unlock_fd(fd: int) -> None:
    """Release the lock :func:`try_lock_fd` or :func:`lock_fd` took on ``fd``."""
    if _fcntl is not None:
        _fcntl.flock(fd, _fcntl.LOCK_UN)
        return
    assert _msvcrt is not None
    _msvcrt_lock(fd, _msvcrt.LK_UNLCK)


def _msvcrt_lock(fd: int, mode: int) -> None:
    assert _msvcrt is not None
    position = os.lseek(fd, 0, os.SEEK_CUR)
    os.lseek(fd, _MSVCRT_LOCK_OFFSET, os.SEEK_SET)
    try:
        _msvcrt.locking(fd, mode, 1)
    finally:
        os.lseek(fd, position, os.SEEK_SET)


def pread(fd: int, size: int, offset: int) -> bytes:
    """``os.pread``; where there is none (Windows) a seek and a read, the position restored."""
    if hasattr(os, "pread"):
        return os.pread(fd, size, offset)
    position = os.lseek(fd, 0, os.SEEK_CUR)
    try:
        os.lseek(fd, offset, os.SEEK_SET)
        chunks: list[bytes] = []
        while size > 0:
            chunk = os.read(fd, size)
            if not chunk:
                break
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)
    finally:
        os.lseek(fd, position, os.SEEK_SET)


def pwrite(fd: int, data: bytes, offset: int) -> int:
    """``os.pwrite``; where there is none (Windows) a seek and a write, the position restored."""
    if hasattr(os, "pwrite"):
        return os.pwrite(fd, data, offset)
    position = os.lseek(fd, 0, os.SEEK_CUR)
    try:
        os.lseek(fd, offset, os.SEEK_SET)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        return len(data)
    finally:
        os.lseek(fd, position, os.SEEK_SET)


_REPLACE_RETRIES = sys.platform == "win32"
"""Windows refuses to rename over a file another process has open (an editor, a virus
scanner, a reader): :func:`replace_file` retries there for :data:`_REPLACE_WAIT` seconds."""
_REPLACE_WAIT = 2.0


def replace_file(source: str | Path, target: str | Path) -> None:
    """``os.replace``, atomic on both platforms; on Windows a :class:`PermissionError` (the
    target open elsewhere for a moment) is retried for a bounded time, then raised."""
    deadline = time.monotonic() + _REPLACE_WAIT
    delay = 0.01
    while True:
        try:
            os.replace(source, target)
            return
        except PermissionError:
            if not _REPLACE_RETRIES or time.monotonic() >= deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.2)


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` is running. POSIX: ``kill(pid, 0)``. Windows: never that —
    there ``os.kill`` terminates the process — but ``OpenProcess`` and its exit code."""
    if pid <= 0:
        return False
    if sys.platform != "win32":
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True
    import ctypes

    kernel32 = getattr(ctypes, "windll").kernel32  # noqa: B009  (windll: Windows only)
    handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
    if not handle:
        return False
    try:
        code = ctypes.c_ulong()
        if not kernel32.GetExitCodeProcess(handle, ctypes.byref(code)):
            return False
        return code.value == 259  # STILL_ACTIVE
    finally:
        kernel32.CloseHandle(handle)
