"""The bearer token of ``memls mcp --http``: made at start, kept in ``<root>/.memls/http-token``.

The file is written the way Jupyter writes its runtime files: mode 0600 in a directory the
current user owns, atomically (a temporary file renamed over the old one), never through a
symbolic link and never outside the memory root. Everything goes through file descriptors
of the directories checked, so swapping ``.memls`` for a link between the check and the
write changes nothing. Where the platform has no ``dir_fd=`` and no ``O_NOFOLLOW``
(Windows), the same checks are made by ``lstat`` on the paths just before each step, and
the rename is :func:`~memls.core.fsutil.replace_file` (retried while Windows holds the file).
"""

from __future__ import annotations

import contextlib
import hmac
import os
import secrets
import stat
from pathlib import Path

from memls.core.fsutil import (
    O_BINARY,
    O_CLOEXEC,
    O_DIRECTORY,
    O_NOFOLLOW,
    is_link,
    replace_file,
)

STATE_DIR = ".memls"
TOKEN_NAME = "http-token"
TOKEN_ENV = "MEMLS_MCP_TOKEN"
"""Environment variable that supplies the token instead of a random one (a stable token)."""
MIN_TOKEN_LENGTH = 16
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/=")


class TokenFileError(ValueError):
    """The token file cannot be written safely: the message says why, in one line."""


def token_path(root: Path) -> Path:
    return root / STATE_DIR / TOKEN_NAME


def new_token(environ: dict[str, str] | None = None) -> str:
    """``MEMLS_MCP_TOKEN`` when set (checked), else ``secrets.token_urlsafe(32)``."""
    env = os.environ if environ is None else environ
    given = env.get(TOKEN_ENV)
    if given is None or given == "":
        return secrets.token_urlsafe(32)
    if len(given) < MIN_TOKEN_LENGTH or not set(given) <= _TOKEN_CHARS:
        raise TokenFileError(
            f"{TOKEN_ENV} must be at least {MIN_TOKEN_LENGTH} characters of A-Z a-z 0-9 -._~+/="
        )
    return given


def token_matches(given: bytes, token: str) -> bool:
    """Constant-time comparison of a presented token with ours."""
    return hmac.compare_digest(given, token.encode("ascii"))


_BY_DIR_FD = bool(O_NOFOLLOW and O_DIRECTORY) and os.open in os.supports_dir_fd
"""Whether the token is written through directory descriptors (POSIX) or by path (Windows)."""


def _open_dir(name: str, *, dir_fd: int, what: str) -> int:
    try:
        fd = os.open(name, os.O_RDONLY | O_DIRECTORY | O_NOFOLLOW, dir_fd=dir_fd)
    except OSError as exc:
        if _is_link(name, dir_fd):
            raise TokenFileError(
                f"{what} is a symbolic link: refusing to write through it"
            ) from exc
        raise TokenFileError(f"{what} is not a directory ({exc.strerror})") from exc
    return fd


def _is_link(name: str, dir_fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def write_token_file(root: Path, token: str) -> Path:
    """Write ``token`` to ``<root>/.memls/http-token`` (0600; ``.memls`` made 0700 if missing).

    Refused (:class:`TokenFileError`) when the root is not a directory, ``.memls`` or the
    token file is a symbolic link, ``.memls`` is not a directory, or it is not owned by the
    current user. A missing ``.memls`` also gets a ``.gitignore`` of ``*``, as recall's does.
    """
    target = token_path(root)
    if not _BY_DIR_FD:
        return _write_token_by_path(root, token)
    try:
        root_fd = os.open(root, os.O_RDONLY | O_DIRECTORY)
    except OSError as exc:
        raise TokenFileError(
            f"memory root {root} is not a directory ({exc.strerror}): nowhere to put the token"
        ) from exc
    try:
        state = root / STATE_DIR
        try:
            os.mkdir(STATE_DIR, 0o700, dir_fd=root_fd)
            created = True
        except FileExistsError:
            created = False
        except OSError as exc:
            raise TokenFileError(f"cannot create {state}: {exc.strerror}") from exc
        dir_fd = _open_dir(STATE_DIR, dir_fd=root_fd, what=str(state))
    finally:
        os.close(root_fd)
    try:
        info = os.fstat(dir_fd)
        if info.st_uid != os.geteuid():
            raise TokenFileError(
                f"{state} is owned by uid {info.st_uid}, not by you (uid {os.geteuid()}): "
                "refusing to write the token there"
            )
        if created:
            os.fchmod(dir_fd, 0o700)
            _write_new(dir_fd, ".gitignore", b"*\n", 0o644)
        try:
            old = os.stat(TOKEN_NAME, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            pass
        else:
            if stat.S_ISLNK(old.st_mode):
                raise TokenFileError(f"{target} is a symbolic link: refusing to write through it")
            if not stat.S_ISREG(old.st_mode):
                raise TokenFileError(f"{target} is not a regular file")
        temp = f".{TOKEN_NAME}.{os.getpid()}.{secrets.token_hex(4)}"
        try:
            _write_new(dir_fd, temp, token.encode("ascii"), 0o600)
            os.replace(temp, TOKEN_NAME, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=dir_fd)
            raise TokenFileError(f"cannot write {target}: {exc.strerror}") from exc
        with contextlib.suppress(OSError):
            os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return target


def _write_new(dir_fd: int, name: str, data: bytes, mode: int) -> None:
    """Create ``name`` (never an existing file or link), write, fsync; mode set exactly."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_CLOEXEC
    fd = os.open(name, flags, mode, dir_fd=dir_fd)
    try:
        os.fchmod(fd, mode)
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def remove_token_file(root: Path, token: str) -> bool:
    """Delete the token file if it still holds ``token`` (a newer server's is left alone)."""
    if not _BY_DIR_FD:
        return _remove_token_by_path(root, token)
    flags = os.O_RDONLY | O_DIRECTORY | O_NOFOLLOW
    try:
        dir_fd = os.open(root / STATE_DIR, flags)
    except OSError:
        return False
    try:
        try:
            fd = os.open(TOKEN_NAME, os.O_RDONLY | O_NOFOLLOW, dir_fd=dir_fd)
        except OSError:
            return False
        if not _holds(fd, token):
            return False
        try:
            os.unlink(TOKEN_NAME, dir_fd=dir_fd)
        except OSError:
            return False
        return True
    finally:
        os.close(dir_fd)


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def _write_token_by_path(root: Path, token: str) -> Path:
    """:func:`write_token_file` where there is no ``dir_fd=`` (Windows): the same refusals,
    made by ``lstat`` on each path before it is used."""
    target = token_path(root)
    state = root / STATE_DIR
    if not root.is_dir():
        raise TokenFileError(f"memory root {root} is not a directory: nowhere to put the token")
    try:
        os.mkdir(state, 0o700)
        created = True
    except FileExistsError:
        created = False
    except OSError as exc:
        raise TokenFileError(f"cannot create {state}: {exc.strerror}") from exc
    info = _lstat(state)
    if info is None or is_link(info):
        raise TokenFileError(f"{state} is a symbolic link: refusing to write through it")
    if not stat.S_ISDIR(info.st_mode):
        raise TokenFileError(f"{state} is not a directory")
    if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        raise TokenFileError(
            f"{state} is owned by uid {info.st_uid}, not by you (uid {os.geteuid()}): "
            "refusing to write the token there"
        )
    if created:
        _write_new_by_path(state / ".gitignore", b"*\n", 0o644)
    old = _lstat(target)
    if old is not None and is_link(old):
        raise TokenFileError(f"{target} is a symbolic link: refusing to write through it")
    if old is not None and not stat.S_ISREG(old.st_mode):
        raise TokenFileError(f"{target} is not a regular file")
    temp = state / f".{TOKEN_NAME}.{os.getpid()}.{secrets.token_hex(4)}"
    try:
        _write_new_by_path(temp, token.encode("ascii"), 0o600)
        replace_file(temp, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise TokenFileError(f"cannot write {target}: {exc.strerror}") from exc
    return target


def _write_new_by_path(path: Path, data: bytes, mode: int) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_BINARY
    fd = os.open(path, flags, mode)
    try:
        with contextlib.suppress(OSError):
            os.chmod(path, mode)
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def _holds(fd: int, token: str) -> bool:
    """Whether the open token file ``fd`` holds ``token`` (``fd`` is closed either way)."""
    try:
        held = os.read(fd, 4096)
    finally:
        os.close(fd)
    return token_matches(held.strip(), token)


def _remove_token_by_path(root: Path, token: str) -> bool:
    """:func:`remove_token_file` where there is no ``dir_fd=`` (Windows)."""
    state, target = root / STATE_DIR, token_path(root)
    for path in (state, target):
        info = _lstat(path)
        if info is None or is_link(info):
            return False
    try:
        fd = os.open(target, os.O_RDONLY | O_NOFOLLOW | O_BINARY)
    except OSError:
        return False
    if not _holds(fd, token):
        return False
    try:
        os.unlink(target)
    except OSError:
        return False
    return True
