"""memls's own files — ``.memls/`` and the transcript archive — never go through a symlink,
are private (files 0600, folders 0700) and stay out of git.

Every test drives the real command line: ``memls hook EVENT`` with Claude Code's JSON on
stdin, and ``memls recall backfill``. The session text is made up at test time.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.agent_fixtures import git, make_project, payload, run_hook, write_turns

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SESSION = "5f1e2d3c-4b5a-4697-8899-aabbccddeeff.jsonl"


@pytest.fixture(autouse=True)
def _usual_umask() -> Iterator[None]:
    """The modes below are memls's doing, not a strict umask's: run with the common 022."""
    before = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(before)


def _transcript(folder: Path) -> Path:
    """A session file outside the root holding a made-up secret."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / SESSION
    token = secrets.token_hex(16)
    write_turns(
        path,
        [
            ("Which key signs the releases?", f"The release key is sk-test-{token}."),
            ("And the staging one?", "Rotated every month, kept in the vault."),
        ],
    )
    return path


def _memls(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memls", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def _pre_compact(
    project: Path, transcript: Path, mode: str = "inline"
) -> subprocess.CompletedProcess[str]:
    data = payload("PreCompact", project, transcript, trigger="auto", custom_instructions="")
    return run_hook("pre-compact", data, cwd=project, env={"MEMLS_HOOK_BACKFILL": mode})


def _one_line(stderr: str, prefix: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith(prefix), stderr
    assert "Traceback" not in stderr
    return lines[0]


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


# --- a symlink planted where memls writes ---------------------------------------------------------


class Outside:
    """A folder beside the root with a file and a folder a link can point to, and names
    that do not exist (dangling links); ``state()`` is everything in it, hashed."""

    def __init__(self, base: Path) -> None:
        self.base = base
        base.mkdir()
        self.file = base / "precious.txt"
        self.file.write_bytes(secrets.token_bytes(256))
        self.folder = base / "folder"
        self.folder.mkdir()
        (self.folder / "keep.txt").write_bytes(secrets.token_bytes(64))
        self.ghost = base / "ghost"
        self.ghost_folder = base / "ghost-folder"

    def state(self) -> dict[str, str]:
        found: dict[str, str] = {}
        for path in sorted(self.base.rglob("*")):
            rel = path.relative_to(self.base).as_posix()
            info = os.lstat(path)
            if stat.S_ISREG(info.st_mode):
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                found[rel] = f"{digest} {stat.S_IMODE(info.st_mode):o} {info.st_size}"
            else:
                found[rel] = f"{stat.filemode(info.st_mode)}"
        return found


def _plant(path: Path, target: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, path)


def _newest(project: Path, suffix: str) -> Path:
    found = sorted((project / ".memls").glob(f"recall.db.vectors-*{suffix}"))
    found = [p for p in found if p.name.endswith(suffix) and ".tmp" not in p.name]
    assert found, sorted(p.name for p in (project / ".memls").iterdir())
    return found[-1]


# (where, is a folder, prepared by a first hook run, the hook's backfill mode, backfill refuses)
CASES: list[tuple[str, bool, bool, str, bool]] = [
    (".memls", True, False, "inline", True),
    (".memls", True, True, "inline", True),
    (".memls/.gitignore", False, False, "inline", True),
    (".memls/recall.db", False, False, "inline", True),
    (".memls/recall.db", False, True, "inline", True),
    (".memls/recall.db-wal", False, True, "inline", True),
    (".memls/recall.db-shm", False, True, "inline", True),
    (".memls/recall.db-journal", False, False, "inline", True),
    (".memls/recall.db.lock", False, False, "inline", True),
    (".memls/recall.db.lock", False, True, "inline", True),
    (".memls/health.json", False, False, "inline", False),
    (".memls/health.json", False, True, "off", False),
    (".memls/backfill.pid", False, False, "detached", False),
    (".memls/backfill.log", False, False, "detached", False),
    (".memls/*.npy", False, True, "inline", True),
    (".memls/*.meta.npz", False, True, "inline", True),
    (".memls/*.rids", False, True, "inline", True),
    ("transcripts", True, False, "off", False),
    ("transcripts", True, True, "off", False),
    (f"transcripts/{SESSION}", False, False, "off", False),
    (f"transcripts/{SESSION}", False, True, "off", False),
    ("transcripts/.gitignore", False, False, "off", False),
]


@pytest.mark.parametrize("dangling", [False, True], ids=["to-outside", "dangling"])
@pytest.mark.parametrize(
    ("where", "folder", "prepared", "mode", "backfill_refuses"),
    CASES,
    ids=[f"{c[0]}{'-again' if c[2] else ''}" for c in CASES],
)
def test_a_symlink_where_memls_writes_is_refused_and_nothing_outside_changes(
    tmp_path: Path,
    where: str,
    folder: bool,
    prepared: bool,
    mode: str,
    backfill_refuses: bool,
    dangling: bool,
) -> None:
    project = make_project(tmp_path)
    transcript = _transcript(tmp_path / "sessions")
    outside = Outside(tmp_path / "outside")
    if prepared:  # the root as a first compaction leaves it (store, vectors, archive)
        first = _pre_compact(project, transcript, "inline")
        assert first.returncode == 0
        assert first.stderr == ""
        write_turns(transcript, [("One more question?", "One more answer.")], start=2)
    if where.startswith(".memls/*"):
        planted = _newest(project, where.removeprefix(".memls/*"))
    else:
        planted = project / where
    if dangling:
        target = outside.ghost_folder if folder else outside.ghost
    else:
        target = outside.folder if folder else outside.file
    _plant(planted, target)
    before = outside.state()

    proc = _pre_compact(project, transcript, mode)
    assert proc.returncode == 0
    line = _one_line(proc.stderr, "memls hook pre-compact: ")
    assert "refusing" in line
    assert planted.name in line
    assert outside.state() == before
    assert not outside.ghost.exists()
    assert not outside.ghost_folder.exists()
    assert planted.is_symlink()  # left as it was found

    backfill = _memls(project, "recall", "backfill", "--root", str(project))
    if backfill_refuses:
        assert backfill.returncode == 2, backfill.stderr
        line = _one_line(backfill.stderr, "memls recall: ")
        assert "refusing" in line
        assert planted.name in line
    else:
        assert backfill.returncode == 0, backfill.stderr
    assert outside.state() == before
    assert not outside.ghost.exists()
    assert not outside.ghost_folder.exists()
    if where == ".memls/backfill.log":
        assert not (project / ".memls" / "backfill.pid").exists()  # no worker started


def test_post_compact_and_session_start_report_a_linked_state_folder(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    transcript = _transcript(tmp_path / "sessions")
    outside = Outside(tmp_path / "outside")
    _plant(project / ".memls", outside.folder)
    before = outside.state()
    summary = payload(
        "PostCompact", project, transcript, trigger="auto", compact_summary="Kept the plan."
    )
    proc = run_hook("post-compact", summary, cwd=project)
    assert proc.returncode == 0
    assert "refusing" in _one_line(proc.stderr, "memls hook post-compact: ")
    assert "— Compaction summary" in (project / "LOG.md").read_text(encoding="utf-8")
    (kept,) = (project / "transcripts").glob("*.compact-*.md")  # still kept
    assert "Kept the plan." in kept.read_text(encoding="utf-8")
    start = run_hook(
        "session-start", payload("SessionStart", project, source="compact"), cwd=project
    )
    assert start.returncode == 0
    assert "additionalContext" in start.stdout  # the session still gets its context
    assert "refusing" in _one_line(start.stderr, "memls hook session-start: ")
    assert outside.state() == before


def test_a_state_folder_that_is_a_file_or_another_users_is_refused(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    transcript = _transcript(tmp_path / "sessions")
    (project / ".memls").write_text("not a folder\n", encoding="utf-8")
    proc = _pre_compact(project, transcript)
    assert proc.returncode == 0
    assert "not a directory" in _one_line(proc.stderr, "memls hook pre-compact: ")
    backfill = _memls(project, "recall", "backfill", "--root", str(project))
    assert backfill.returncode == 2
    assert "not a directory" in _one_line(backfill.stderr, "memls recall: ")
    if os.geteuid() != 0:
        return  # only root can hand a folder to another user
    (project / ".memls").unlink()
    (project / ".memls").mkdir()
    os.chown(project / ".memls", 54321, 54321)
    shutil.rmtree(project / "transcripts")  # archived above
    (project / "transcripts").mkdir()
    os.chown(project / "transcripts", 54321, 54321)
    proc = _pre_compact(project, transcript)
    assert proc.returncode == 0
    line = _one_line(proc.stderr, "memls hook pre-compact: ")
    assert "another user" in line
    assert "transcripts" in line
    assert ".memls" in line
    assert not (project / "transcripts" / SESSION).exists()
    backfill = _memls(project, "recall", "backfill", "--root", str(project))
    assert backfill.returncode == 2
    assert "another user" in _one_line(backfill.stderr, "memls recall: ")
    assert list((project / ".memls").iterdir()) == []


# --- modes ----------------------------------------------------------------------------------------


def _wait_for_worker(project: Path) -> None:
    pid = int((project / ".memls" / "backfill.pid").read_text())
    started = time.monotonic()
    while True:
        try:
            os.kill(pid, 0)
            with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
                if handle.read().split(") ")[1][:1] == "Z":
                    return
        except OSError:
            return
        assert time.monotonic() - started < 120, "the detached backfill did not finish"
        time.sleep(0.1)


def test_what_the_hooks_and_backfill_write_is_private(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    transcript = _transcript(tmp_path / "sessions")
    assert _pre_compact(project, transcript, "inline").returncode == 0
    summary = payload(
        "PostCompact", project, transcript, trigger="auto", compact_summary="Chose argon2id."
    )
    post = run_hook("post-compact", summary, cwd=project)
    assert post.returncode == 0
    assert post.stderr == ""
    backfill = _memls(project, "recall", "backfill", "--root", str(project))
    assert backfill.returncode == 0, backfill.stderr
    write_turns(transcript, [("Anything else?", "No.")], start=2)
    end = payload("SessionEnd", project, transcript, reason="logout")
    proc = run_hook("session-end", end, cwd=project, env={"MEMLS_HOOK_BACKFILL": "detached"})
    assert proc.returncode == 0
    assert proc.stderr == ""
    _wait_for_worker(project)

    archive = project / "transcripts" / SESSION
    assert archive.read_bytes() == transcript.read_bytes()  # byte for byte
    assert _mode(archive) == 0o600
    assert _mode(project / "transcripts") == 0o700
    state = project / ".memls"
    assert _mode(state) == 0o700
    assert _mode(state / "recall.db") == 0o600
    names = sorted(p.name for p in state.iterdir())
    for name in ("recall.db.lock", "health.json", "backfill.log", "backfill.pid", ".gitignore"):
        assert name in names
    assert any(n.startswith("recall.db.vectors-") for n in names)
    for path in state.iterdir():  # -wal / -shm too, when SQLite left them
        assert _mode(path) == 0o600, path.name
    # memory files the hooks created fresh: 0600 too (their text comes from the session)
    assert _mode(project / "LOG.md") == 0o600
    (kept,) = (project / "transcripts").glob("*.compact-*.md")  # the compaction summary
    assert _mode(kept) == 0o600
    assert _mode(project / "MEMORY.md") == 0o644  # the user's own file: untouched

    from memls.core.recall.store import RecallStore

    with RecallStore(state / "recall.db", create=False) as store:  # WAL: -wal and -shm
        store.db.execute("select count(*) from memls_chunks").fetchone()
        assert _mode(state / "recall.db-wal") == 0o600
        assert _mode(state / "recall.db-shm") == 0o600


def test_older_wider_modes_are_tightened_and_memory_files_keep_theirs(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    transcript = _transcript(tmp_path / "sessions")
    assert _pre_compact(project, transcript, "inline").returncode == 0
    # as an earlier memls (or a careless copy) left them
    state = project / ".memls"
    os.chmod(state, 0o755)
    os.chmod(state / "recall.db", 0o644)
    os.chmod(project / "transcripts", 0o755)
    os.chmod(project / "transcripts" / SESSION, 0o644)
    log = project / "LOG.md"
    log.write_text("# Log\n", encoding="utf-8")
    os.chmod(log, 0o644)
    assert _memls(project, "handoff", "new").returncode == 0  # the hooks refresh, never start one
    handoff = project / "transcripts" / ".handoff.md"
    os.chmod(handoff, 0o640)
    os.utime(handoff, (time.time() - 3600, time.time() - 3600))

    write_turns(transcript, [("Anything else?", "No.")], start=2)
    assert _pre_compact(project, transcript, "inline").returncode == 0
    summary = payload("PostCompact", project, transcript, trigger="auto", compact_summary="Done.")
    assert run_hook("post-compact", summary, cwd=project).returncode == 0
    assert _mode(state) == 0o700
    assert _mode(state / "recall.db") == 0o600
    assert _mode(project / "transcripts") == 0o700
    assert _mode(project / "transcripts" / SESSION) == 0o600
    assert "— Compaction summary" in log.read_text(encoding="utf-8")
    assert _mode(log) == 0o644  # an existing memory file keeps its mode
    assert _mode(handoff) == 0o640


# --- git ------------------------------------------------------------------------------------------


def _repo_from_example(tmp_path: Path, example: str) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(EXAMPLES / example, repo)
    (repo / "memls.toml").write_text('recall_model = "memls-hash"\n', encoding="utf-8")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "memory")
    return repo


def _porcelain(repo: Path, *extra: str) -> list[str]:
    out = subprocess.run(
        ["git", "status", "--porcelain", *extra],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return out.splitlines()


@pytest.mark.parametrize("example", ["flat", "orchestrator"])
def test_in_a_git_repository_memls_files_stay_out_of_git_status(
    tmp_path: Path, example: str
) -> None:
    repo = _repo_from_example(tmp_path, example)
    transcript = _transcript(tmp_path / "sessions")
    events: list[tuple[str, str, Callable[[], dict[str, str]]]] = [
        ("pre-compact", "PreCompact", lambda: {"trigger": "auto", "custom_instructions": ""}),
        ("post-compact", "PostCompact", lambda: {"trigger": "auto", "compact_summary": "Sum."}),
        ("session-end", "SessionEnd", lambda: {"reason": "logout"}),
    ]
    for event, name, extra in events:
        data = payload(name, repo, transcript, **extra())
        proc = run_hook(event, data, cwd=repo, env={"MEMLS_HOOK_BACKFILL": "inline"})
        assert proc.returncode == 0
        assert proc.stderr == "", (event, proc.stderr)
        write_turns(transcript, [(f"After {event}?", "Yes.")], start=5)
    assert (repo / "transcripts" / SESSION).is_file()
    assert (repo / ".memls" / "recall.db").is_file()

    lines = _porcelain(repo)
    assert not [x for x in lines if ".jsonl" in x or ".memls" in x or ".gitignore" in x], lines
    every = _porcelain(repo, "--untracked-files=all")
    assert all(line[3:].endswith(".md") for line in every), every  # memory files only
    assert not [x for x in every if x.startswith("??") and "transcripts/" in x], (
        every
    )  # no new file
    dry = subprocess.run(
        ["git", "add", "-A", "--dry-run"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout
    assert SESSION not in dry
    assert ".memls" not in dry

    # the work-in-progress listings: the handoff's, and a checkpoint's Modified Files
    (repo / "work.py").write_text("x = 1\n", encoding="utf-8")
    saved = _memls(repo, "checkpoint", "save", "wip", "--next", "Go on", "--json")
    assert saved.returncode == 0, saved.stderr
    checkpoint = next(repo.rglob("checkpoint-wip.md"))
    modified = checkpoint.read_text(encoding="utf-8").split("## Modified Files", 1)[1]
    assert "work.py" in modified
    assert "transcripts" not in modified
    assert ".memls" not in modified
    if example == "flat":  # the hooks refresh a handoff, they never start one
        assert _memls(repo, "handoff", "new").returncode == 0
    end = payload("SessionEnd", repo, transcript, reason="logout")
    assert run_hook("session-end", end, cwd=repo).returncode == 0
    handoff = next(
        p for p in (repo / ".handoff.md", repo / "transcripts" / ".handoff.md") if p.is_file()
    )
    text = handoff.read_text(encoding="utf-8")
    state = text[text.index("## Current State") : text.index("## Decisions")]
    if example == "flat":  # a handoff memls started lists git status (the example's does not)
        assert "`?? work.py`" in state
    assert "transcripts" not in state
    assert ".memls" not in state
    assert ".jsonl" not in state


def test_an_archive_folder_git_already_ignores_gets_no_ignore_file(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    (project / ".gitignore").write_text("transcripts/\n", encoding="utf-8")
    transcript = _transcript(tmp_path / "sessions")
    assert _pre_compact(project, transcript, "off").returncode == 0
    assert (project / "transcripts" / SESSION).is_file()
    assert not (project / "transcripts" / ".gitignore").exists()
    assert [line for line in _porcelain(project, "-uall") if "transcripts" in line] == []


def test_an_edited_archive_ignore_file_is_left_alone(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    (project / "transcripts").mkdir()
    mine = "# I commit my transcripts on purpose\n"
    (project / "transcripts" / ".gitignore").write_text(mine, encoding="utf-8")
    transcript = _transcript(tmp_path / "sessions")
    assert _pre_compact(project, transcript, "off").returncode == 0
    assert (project / "transcripts" / ".gitignore").read_text(encoding="utf-8") == mine
    assert f"?? transcripts/{SESSION}" in _porcelain(project, "--untracked-files=all")
