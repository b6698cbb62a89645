"""memls's core on Windows, checked here: the core tests run with ``fcntl`` made unavailable.

Windows has no ``fcntl`` and none of ``os.O_NOFOLLOW``, ``O_DIRECTORY``, ``O_NONBLOCK``,
``O_CLOEXEC``, ``geteuid``, ``pread``, ``pwrite``, ``dir_fd=``. A child interpreter whose
``sitecustomize`` runs :func:`tests.windows_sim.install` lacks them too (and has a stand-in
``msvcrt``); every memls module must import there, and the core tests must pass there — the
hooks and CLI commands those tests start run in the same simulated Windows.

A checkout without symlink support (``core.symlinks`` false) leaves ``memls/core`` as a text
file holding ``../core``: installing it and importing it must say what to do.
"""

from __future__ import annotations

import errno
import importlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import memls
from memls.core import fsutil
from tests.windows_sim import MARKER_ENV, SITECUSTOMIZE

REPO = Path(__file__).resolve().parents[1]

CORE_TESTS = [
    "tests/test_hook_bounded.py",
    "tests/test_recall_concurrency.py",
    "tests/test_state_safety.py",
    "tests/test_ops_paths.py",
    "tests/test_ops_hardening.py",
    "tests/test_ops_checkpoint.py",
    "tests/test_ops_records.py",
    "tests/test_ops_move_safety.py",
    "tests/test_ops_import_safety.py",
]
"""Tests of core/ (and of the hooks and CLI commands over it) that run in simulated Windows."""

NOT_ON_WINDOWS = "not fifo and not another_user"
"""Deselected there: Windows has no FIFOs (``os.mkfifo``) and no uids to hand a folder to."""

PIP_DRY_RUN = [sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps"]
PIP_DRY_RUN += ["--no-build-isolation", "--no-index"]

OPTIONAL = {"mcp", "ipywidgets", "anywidget", "IPython", "traitlets"}
"""Extras a module may need; a module that fails only for one of them is skipped."""


def _simulated_env(tmp_path: Path) -> dict[str, str]:
    site = tmp_path / "windows-site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(REPO)])
    return env


def _run(args: list[str], env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


IMPORT_ALL = """
import importlib, os, pkgutil, sys
assert os.environ.get({marker!r}) == "1", "the simulation did not load"
try:
    import fcntl
except ImportError:
    pass
else:
    raise SystemExit("fcntl is still importable")
assert not hasattr(os, "O_NOFOLLOW") and not hasattr(os, "geteuid")
import memls
optional = {optional!r}
failed = []
names = ["memls.cli", "memls.cli.hook", "memls.lsp.server", "memls.lsp.__main__"]
packages = [f"memls.{{m.name}}" for m in pkgutil.iter_modules(memls.__path__) if m.ispkg]
assert {{"memls.core", "memls.cli", "memls.lsp", "memls.notebook"}} <= set(packages), packages
for package in packages:
    module = importlib.import_module(package)
    names += [m.name for m in pkgutil.walk_packages(module.__path__, package + ".")]
for name in names:
    if name.endswith("__main__") and name != "memls.lsp.__main__":
        continue
    try:
        importlib.import_module(name)
    except ImportError as exc:
        if (exc.name or "").split(".")[0] in optional:
            continue
        failed.append(f"{{name}}: {{exc!r}}")
    except Exception as exc:
        failed.append(f"{{name}}: {{exc!r}}")
if failed:
    raise SystemExit("\\n".join(failed))
print("imported", len(names))
"""


def test_every_memls_module_imports_without_fcntl(tmp_path: Path) -> None:
    code = IMPORT_ALL.format(marker=MARKER_ENV, optional=OPTIONAL)
    proc = _run(["-c", code], _simulated_env(tmp_path), timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("imported ")


SMOKE = """
import os, sys, threading
from pathlib import Path
from memls.core import fsutil
from memls.core.recall.lock import backfill_lock, RecallBusyError
from memls.core.agent.archive import archive_transcript
from memls.core.httptoken import write_token_file, remove_token_file

root = Path(sys.argv[1])
with fsutil.root_lock(root):
    try:
        with fsutil.root_lock(root, timeout=0.2):
            raise SystemExit("a second root lock was granted")
    except fsutil.LockTimeoutError:
        pass
with fsutil.root_lock(root, timeout=0.2):
    pass
db = root / ".memls" / "recall.db"
with backfill_lock(db, timeout=1):
    try:
        with backfill_lock(db, timeout=0.2):
            raise SystemExit("a second backfill lock was granted")
    except RecallBusyError as exc:
        assert f"pid {os.getpid()}" in str(exc), exc
fsutil.atomic_write(root / "MEMORY.md", "# Project Memory\\n")
assert (root / "MEMORY.md").read_bytes() == b"# Project Memory\\n"
session = root.parent / "session.jsonl"
session.write_bytes(b'{"a": 1}\\n{"b": 2}\\npartial')
result = archive_transcript(root, session)
assert result.appended_lines == 2, result
assert (root / "transcripts" / "session.jsonl").read_bytes() == b'{"a": 1}\\n{"b": 2}\\n'
path = write_token_file(root, "t" * 32)
assert path.read_text() == "t" * 32
assert remove_token_file(root, "t" * 32)
os.symlink(root.parent / "elsewhere", root / ".memls" / "http-token")
try:
    write_token_file(root, "u" * 32)
except ValueError as exc:
    assert "symbolic link" in str(exc), exc
else:
    raise SystemExit("the token was written through a link")
print("ok")
"""


def test_locks_archive_and_token_work_without_fcntl(tmp_path: Path) -> None:
    root = tmp_path / "root"
    proc = _run(["-c", SMOKE, str(root)], _simulated_env(tmp_path), timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == "ok"


@pytest.mark.slow
def test_core_tests_pass_without_fcntl(tmp_path: Path) -> None:
    args = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", "-k", NOT_ON_WINDOWS]
    proc = _run([*args, *CORE_TESTS], _simulated_env(tmp_path), timeout=600)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert " passed" in proc.stdout


def test_replace_file_retries_while_windows_holds_the_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source, target = tmp_path / "new", tmp_path / "old"
    source.write_text("new", encoding="utf-8")
    target.write_text("old", encoding="utf-8")
    real = os.replace
    calls: list[int] = []

    def busy(src: object, dst: object) -> None:
        calls.append(1)
        if len(calls) < 3:
            raise PermissionError(errno.EACCES, "used by another process")
        real(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(fsutil, "_REPLACE_RETRIES", True)
    monkeypatch.setattr(os, "replace", busy)
    fsutil.replace_file(source, target)
    assert len(calls) == 3
    assert target.read_text(encoding="utf-8") == "new"


def test_replace_file_gives_up_after_a_bounded_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def always_busy(src: object, dst: object) -> None:
        raise PermissionError(errno.EACCES, "used by another process")

    monkeypatch.setattr(fsutil, "_REPLACE_RETRIES", True)
    monkeypatch.setattr(fsutil, "_REPLACE_WAIT", 0.2)
    monkeypatch.setattr(os, "replace", always_busy)
    with pytest.raises(PermissionError):
        fsutil.replace_file(tmp_path / "a", tmp_path / "b")


def test_replace_file_does_not_retry_on_posix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []

    def denied(src: object, dst: object) -> None:
        calls.append(1)
        raise PermissionError(errno.EACCES, "denied")

    monkeypatch.setattr(fsutil, "_REPLACE_RETRIES", False)
    monkeypatch.setattr(os, "replace", denied)
    with pytest.raises(PermissionError):
        fsutil.replace_file(tmp_path / "a", tmp_path / "b")
    assert calls == [1]


PLATFORM_ONLY = re.compile(
    r"\bimport (fcntl|msvcrt)\b|\bos\.O_(NOFOLLOW|DIRECTORY|NONBLOCK|CLOEXEC)\b"
    r"|\bos\.(pread|pwrite|kill)\("
)


def test_only_fsutil_touches_what_windows_lacks() -> None:
    found = []
    for folder in ("core", "lsp", "cli", "notebook", "mcpserver"):
        for path in sorted((REPO / folder).rglob("*.py")):
            if path == REPO / "core" / "fsutil.py":
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if PLATFORM_ONLY.search(line.split("#", 1)[0]):
                    found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert not found, "use memls.core.fsutil's helpers instead:\n" + "\n".join(found)


def test_pread_and_pwrite_without_os_pread_keep_the_position(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "data"
    path.write_bytes(b"0123456789")
    monkeypatch.delattr(os, "pread")
    monkeypatch.delattr(os, "pwrite")
    fd = os.open(path, os.O_RDWR)
    try:
        os.lseek(fd, 2, os.SEEK_SET)
        assert fsutil.pread(fd, 3, 5) == b"567"
        assert fsutil.pread(fd, 99, 8) == b"89"
        assert fsutil.pwrite(fd, b"ab", 0) == 2
        assert os.lseek(fd, 0, os.SEEK_CUR) == 2
    finally:
        os.close(fd)
    assert path.read_bytes() == b"ab23456789"


def test_a_lock_is_held_per_open_file(tmp_path: Path) -> None:
    path = tmp_path / "lock"
    path.touch()
    first, second = os.open(path, os.O_RDWR), os.open(path, os.O_RDWR)
    try:
        assert fsutil.try_lock_fd(first)
        assert not fsutil.try_lock_fd(second)
        fsutil.unlock_fd(first)
        assert fsutil.try_lock_fd(second)
        fsutil.unlock_fd(second)
    finally:
        os.close(first)
        os.close(second)


# --- a checkout without symlinks ---------------------------------------------------------


def _links() -> list[str]:
    package = Path(memls.__file__).parent
    return sorted(p.name for p in package.iterdir() if p.is_symlink())


def _flattened_checkout(tmp_path: Path, name: str) -> Path:
    """pyproject.toml, setup.py and memls/ as Git leaves them with ``core.symlinks`` false:
    the link ``memls/<name>`` a text file holding its target."""
    copy = tmp_path / "checkout"
    copy.mkdir()
    for file in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(REPO / file, copy / file)
    shutil.copytree(REPO / "memls", copy / "memls", symlinks=True)
    link = copy / "memls" / name
    target = os.readlink(link)
    link.unlink()
    link.write_text(target, encoding="utf-8")  # no newline, as Git writes it
    return copy


def test_the_package_links_are_the_top_level_folders() -> None:
    links = _links()
    assert {"core", "lsp", "cli", "notebook"} <= set(links)
    package = Path(memls.__file__).parent
    for name in links:
        assert (package / name).resolve() == REPO / name
    assert memls.checkout_problem(package) is None


@pytest.mark.parametrize("name", ["core", "notebook"])
def test_a_flattened_link_is_named_with_the_fix(tmp_path: Path, name: str) -> None:
    copy = _flattened_checkout(tmp_path, name)
    problem = memls.checkout_problem(copy / "memls")
    assert problem is not None
    assert f"memls/{name}" in problem
    assert "git config core.symlinks true" in problem


def test_importing_a_flattened_checkout_says_what_to_do(tmp_path: Path) -> None:
    copy = _flattened_checkout(tmp_path, "core")
    env = {**os.environ, "PYTHONPATH": str(copy)}
    proc = subprocess.run(
        [sys.executable, "-S", "-c", "import memls"],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode != 0
    assert "ImportError" in proc.stderr
    assert "git config core.symlinks true" in proc.stderr
    assert "memls/core" in proc.stderr


def test_installing_a_flattened_checkout_fails_with_the_fix(tmp_path: Path) -> None:
    copy = _flattened_checkout(tmp_path, "core")
    proc = subprocess.run(
        [sys.executable, "setup.py", "--name"],
        cwd=copy,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode != 0
    assert "git config core.symlinks true" in proc.stderr
    pip = subprocess.run(
        [*PIP_DRY_RUN, "-e", str(copy)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert pip.returncode != 0
    assert "git config core.symlinks true" in pip.stdout + pip.stderr


def test_setup_py_accepts_this_checkout() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", "import runpy; runpy.run_path('setup.py', run_name='check')"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr


def test_importlib_sees_every_package_link() -> None:
    for name in _links():
        module = importlib.import_module(f"memls.{name}")
        assert Path(module.__file__ or "").parent.resolve() == REPO / name
