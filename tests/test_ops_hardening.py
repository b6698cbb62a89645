"""Regression tests for issue 15's defects 1-4 and 8, and --json refusals, through the CLI.

Each test is named after the defect it pins (``test_defectN_…``) and first builds the
situation that reproduced it.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from memls.cli import main
from memls.core.fixes import fix_text
from memls.core.fsutil import TEMP_PREFIX
from memls.core.workspace import Workspace

EMOJI_NAME = "\U0001f600" * 99  # 99 characters, 396 bytes: the name


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=True)
    return proc.stdout.decode().strip()


def init_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "Test User")
    git(path, "config", "user.email", "test@example.com")
    git(path, "config", "commit.gpgsign", "false")
    (path / "MEMORY.md").write_text("# Memory\n\n- [notes](notes.md)\n")
    (path / "notes.md").write_text("# Notes\n\ntext\n")
    git(path, "add", ".")
    git(path, "commit", "-q", "-m", "init")
    return path


def files(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (outside .git) with its bytes."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


@pytest.fixture
def in_root(tmp_path: Path) -> Iterator[Path]:
    """A memory root that is also the current directory (for commands without --root)."""
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(old)


# -- defect 1 ------------------------------------------------------------------------
def test_defect1_name_too_long_exit2(tmp_path: Path) -> None:
    before = files(tmp_path)
    result = run("checkpoint", "save", EMOJI_NAME, "--next", "x", "--root", str(tmp_path))
    assert result.exit_code == 2, result.output
    assert "396 bytes" in result.stderr
    assert "limit is 100 bytes" in result.stderr
    assert "Traceback" not in result.output
    assert files(tmp_path) == before  # nothing written, not even MEMORY.md

    # Bytes, not characters: 25 four-byte characters fit (100 bytes); 51 two-byte ones do not.
    ok = run("checkpoint", "save", "\U0001f600" * 25, "--next", "x", "--root", str(tmp_path))
    assert ok.exit_code == 0, ok.output
    too_long = run("checkpoint", "save", "é" * 51, "--next", "x", "--root", str(tmp_path))
    assert too_long.exit_code == 2
    assert "102 bytes in UTF-8 (51 characters)" in too_long.stderr

    as_json = run(
        "checkpoint", "save", EMOJI_NAME, "--next", "x", "--json", "--root", str(tmp_path)
    )
    assert as_json.exit_code == 2
    body = json.loads(as_json.stdout)
    assert body["exit_code"] == 2
    assert "limit is 100 bytes" in body["error"]


def test_defect1_snapshot_item_name_over_255_bytes_is_refused(tmp_path: Path) -> None:
    root = init_repo(tmp_path / "repo")
    result = run("snapshot", "save", "--root", str(root), "--initial", "a" * 256 + ".md")
    assert result.exit_code == 2
    assert "limited to 255 bytes" in result.stderr


# -- defect 2 ------------------------------------------------------------------------
def test_defect2_snapshot_never_writes_a_branch_or_tag(tmp_path: Path) -> None:
    root = init_repo(tmp_path / "repo")
    head = git(root, "rev-parse", "HEAD")
    refs_before = git(root, "for-each-ref")
    for ref in ("refs/heads/main", "refs/tags/v1", "refs/remotes/origin/main", "refs/notes/x"):
        result = run("snapshot", "save", "--root", str(root), "--expect", head, "--ref", ref)
        assert result.exit_code == 2, (ref, result.output)
        assert "outside the snapshot namespace refs/memls/" in result.stderr
    # A symbolic ref inside the namespace that points at the branch is not followed.
    git(root, "symbolic-ref", "refs/memls/evil", "refs/heads/main")
    result = run("snapshot", "save", "--root", str(root), "--expect", head, "--ref", "evil")
    assert result.exit_code == 2
    assert "symbolic ref to refs/heads/main" in result.stderr
    git(root, "symbolic-ref", "-d", "refs/memls/evil")
    assert git(root, "for-each-ref") == refs_before
    assert git(root, "rev-parse", "HEAD") == head
    assert git(root, "status", "--porcelain") == ""
    # Reading a branch as if it were snapshots is refused too.
    listed = run("snapshot", "log", "--root", str(root), "--ref", "refs/heads/main", "--json")
    assert listed.exit_code == 2
    assert "outside the snapshot namespace" in json.loads(listed.stdout)["error"]


def test_defect2_configured_namespace_is_used_and_never_a_branch(tmp_path: Path) -> None:
    root = init_repo(tmp_path / "repo")
    (root / "memls.toml").write_text('instance = "team"\nsnapshot_namespace = "refs/heads/"\n')
    result = run("snapshot", "save", "--root", str(root), "--initial")
    assert result.exit_code == 2
    assert f"{root / 'memls.toml'}:2:" in result.stderr
    assert "snapshot_namespace" in result.stderr
    (root / "memls.toml").write_text('instance = "team"\nsnapshot_namespace = "refs/team-memory"\n')
    result = run("snapshot", "save", "--root", str(root), "--initial", "MEMORY.md")
    assert result.exit_code == 0, result.output
    assert git(root, "for-each-ref", "--format=%(refname)", "refs/team-memory/") == (
        "refs/team-memory/team"
    )
    outside = run("snapshot", "save", "--root", str(root), "--initial", "--ref", "refs/memls/x")
    assert outside.exit_code == 2
    assert "outside the snapshot namespace refs/team-memory/" in outside.stderr


# -- defect 3 ------------------------------------------------------------------------
BROKEN = 'stale_days = 3\nselect = ["CP",\n'

COMMANDS = [
    ("checkpoint", "save", "t", "--next", "x"),
    ("checkpoint", "resume", "t"),
    ("checkpoint", "list"),
    ("checkpoint", "clear", "t"),
    ("index", "migrate"),
    ("bundle", "approve"),
    ("bundle", "status"),
    ("log", "append", "--title", "x"),
    ("handoff", "new"),
    ("handoff", "refresh"),
    ("snapshot", "save", "--initial"),
    ("snapshot", "log"),
    ("snapshot", "read", "HEAD"),
    ("snapshot", "diff", "HEAD", "HEAD"),
    ("snapshot", "restore", "HEAD"),
    ("recall", "status"),
    ("recall", "backfill"),
    ("mv", "notes.md", "topics.md"),
    ("check",),
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
@pytest.mark.parametrize("where", ["memls.toml", "pyproject.toml"])
def test_defect3_broken_config_is_refused_by_every_command(
    tmp_path: Path, command: tuple[str, ...], where: str
) -> None:
    root = init_repo(tmp_path / "repo")
    if where == "memls.toml":
        (root / "memls.toml").write_text(BROKEN)
        line = f"{root / 'memls.toml'}:2:"
    else:
        (root / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.memls]\n' + BROKEN)
        line = f"{root / 'pyproject.toml'}:6:"
    before = files(root)
    refs = git(root, "for-each-ref")
    result = run(*command, "--root", str(root))
    assert result.exit_code == 2, result.output
    assert line in result.stderr, result.stderr
    assert files(root) == before
    assert git(root, "for-each-ref") == refs


def test_defect3_broken_config_found_by_discovery_is_refused(in_root: Path) -> None:
    """Without --root, the memls.toml that discovery reads on the way up counts too."""
    sub = in_root / "project" / "deep"
    sub.mkdir(parents=True)
    (in_root / "memls.toml").write_text('roots = ["memory"\n')
    os.chdir(sub)
    result = run("checkpoint", "save", "t", "--next", "x")
    assert result.exit_code == 2
    assert f"{in_root / 'memls.toml'}:1:" in result.stderr
    assert not list(in_root.rglob("checkpoint-*.md"))


def test_defect3_check_refuses_a_broken_config_found_by_discovery(in_root: Path) -> None:
    (in_root / ".git").mkdir()
    (in_root / "memls.toml").write_text('roots = ["sub"\n')
    (in_root / "sub").mkdir()
    (in_root / "sub" / "MEMORY.md").write_text("# Memory\n")
    os.chdir(in_root / "sub")
    result = run("check")
    assert result.exit_code == 2
    assert f"{in_root / 'memls.toml'}:1:" in result.stderr


def test_defect3_bad_setting_names_its_line(tmp_path: Path) -> None:
    (tmp_path / "memls.toml").write_text('instance = "x"\n\nstale_days = "soon"\n')
    result = run("checkpoint", "save", "t", "--next", "x", "--root", str(tmp_path))
    assert result.exit_code == 2
    assert f"{tmp_path / 'memls.toml'}:3: bad value for 'stale_days'" in result.stderr


def test_defect3_broken_pyproject_without_memls_is_not_memls_config(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text("[project\nname = 1\n")
    result = run("checkpoint", "save", "t", "--next", "x", "--root", str(tmp_path))
    assert result.exit_code == 0, result.output


# -- defect 4 ------------------------------------------------------------------------
def test_defect4_check_fix_keeps_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    run("checkpoint", "save", "t", "--next", "go", "--root", str(tmp_path))
    index = tmp_path / "MEMORY.md"
    original = b"\xef\xbb\xbf# Memory\n\nCaf\xe9 notes \xff\xfe\r\n\nmore\n"
    index.write_bytes(original)  # BOM, Latin-1 byte, junk bytes, a CRLF line; no bullet
    result = run("check", "--fix", "--exit-zero", "--root", str(tmp_path))
    assert "Fixed" in result.stdout, result.output
    new = index.read_bytes()
    assert b"- **t**" in new  # the fix (the missing bullet) was applied after the title …
    assert new.startswith(b"\xef\xbb\xbf# Memory")  # … the BOM kept …
    assert new.endswith(b"\n\nCaf\xe9 notes \xff\xfe\r\n\nmore\n")  # … and every other byte
    assert b"\xef\xbf\xbd" not in new


def test_defect4_checkpoint_save_keeps_a_binary_checkpoint_bytes(tmp_path: Path) -> None:
    blob = bytes(range(256)).replace(b"\n", b"").replace(b"\r", b"") * 400  # ~100 KB
    path = tmp_path / "checkpoint-x.md"
    path.write_bytes(
        b"# Checkpoint: x\n\n- **Branch:** `b`\n\nCaf\xe9 preamble\n\n## Notes\n" + blob + b"\n"
    )
    result = run("checkpoint", "save", "x", "--next", "New", "--root", str(tmp_path))
    assert result.exit_code == 0, result.output
    new = path.read_bytes()
    assert b"\nCaf\xe9 preamble\n" in new
    assert b"\n## Notes\n" + blob + b"\n" in new
    assert b"\xef\xbf\xbd" not in new
    assert b"## Next Action: New" in new


def test_defect4_checkpoint_save_keeps_crlf_line_endings(tmp_path: Path) -> None:
    """Found by the chaos round trip: a CRLF checkpoint's kept sections came back as LF."""
    path = tmp_path / "checkpoint-w.md"
    path.write_bytes(b"# Checkpoint: w\r\n\r\n## Notes\r\nkeep \xe9 this\r\n")
    result = run("checkpoint", "save", "w", "--next", "Go", "--root", str(tmp_path))
    assert result.exit_code == 0, result.output
    new = path.read_bytes()
    assert b"\r\n## Notes\r\nkeep \xe9 this\r\n" in new
    assert b"\n" not in new.replace(b"\r\n", b"")


def test_defect4_fix_text_refuses_disk_text_it_could_not_decode(tmp_path: Path) -> None:
    """The language server's fixes go through fix_text: on a document read from disk with
    bytes that are not UTF-8 it offers nothing rather than an edit that would lose them."""
    run("checkpoint", "save", "t", "--next", "go", "--root", str(tmp_path))
    (tmp_path / "MEMORY.md").write_bytes(b"# Memory\n\nCaf\xe9\n")  # the bullet is missing
    ws = Workspace(tmp_path)
    text, applied = fix_text(ws, tmp_path / "MEMORY.md")
    assert applied == 0
    assert text == "# Memory\n\nCaf\ufffd\n"
    ws.set_text(tmp_path / "MEMORY.md", "# Memory\n\nCafé\n")  # an editor buffer: fine
    text, applied = fix_text(ws, tmp_path / "MEMORY.md")
    assert applied >= 1
    assert "Café" in text


# -- defect 8 ------------------------------------------------------------------------
def test_defect8_modified_files_never_lists_temp_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = init_repo(tmp_path / "repo")
    monkeypatch.chdir(root)  # the branch and status come from where the command runs
    (root / f"{TEMP_PREFIX}abc123").touch()
    (root / "src").mkdir()
    (root / "src" / f"{TEMP_PREFIX}zz9").touch()
    (root / "src" / "work.py").write_text("x = 1\n")
    result = run("checkpoint", "save", "t1", "--next", "go", "--root", str(root))
    assert result.exit_code == 0, result.output
    text = (root / "checkpoint-t1.md").read_text()
    modified = text.split("## Modified Files\n", 1)[1]
    assert TEMP_PREFIX not in modified
    assert "src/" in modified  # the real work still shows


# -- --json refusals -----------------------------------------------------------------
def test_json_refusal_reason_is_inside_the_json(tmp_path: Path) -> None:
    root = init_repo(tmp_path / "repo")
    (root / "nul.md").write_bytes(b"a\0b\n")
    cases = [
        (("snapshot", "save", "--initial", "--json", "nul.md"), "NUL byte"),
        (("snapshot", "read", "--json", "nosuchcommit"), "not a commit"),
        (("snapshot", "log", "--json", "--ref", "refs/tags/x"), "outside the snapshot"),
        (("checkpoint", "save", "../x", "--json"), "'..'"),
        (("checkpoint", "resume", "nope", "--json"), "not found"),
        (("checkpoint", "clear", "nope", "--json"), "No checkpoint"),
        (("log", "append", "--title", "a\tb", "--json"), "control characters"),
        (("handoff", "refresh", "--json", "--bogus"), "No such option"),
        (("bundle", "approve", "--json"), "Checkpoint Bundle"),
        (("recall", "search", "x", "--since", "someday", "--json"), "someday"),
        (("mv", "nosuch.md", "other.md", "--json"), "not a memory file"),
    ]
    for args, reason in cases:
        result = run(*args, "--root", str(root))
        assert result.exit_code in (2, 3), (args, result.output)
        body = json.loads(result.stdout)
        assert reason in body["error"], (args, body)
        assert body["exit_code"] == result.exit_code
    (root / "memls.toml").write_text(BROKEN)
    for args in (("checkpoint", "list", "--json"), ("check", "--format", "json")):
        result = run(*args, "--root", str(root))
        assert result.exit_code == 2
        assert "memls.toml:2:" in json.loads(result.stdout)["error"]


# -- found by the chaos suite ----------------------------------------------------------
def test_chaos_checkpoint_cleared_while_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkpoint cleared by another process between listing the folder and reading the
    file made `checkpoint list`, `resume` and `handoff refresh` die with FileNotFoundError."""
    from memls.core.ops import checkpoint as ops

    run("checkpoint", "save", "kept", "--next", "x", "--root", str(tmp_path))
    real = ops._checkpoint_files

    def listed_then_cleared(root: Path) -> dict[str, Path]:
        return {**real(root), "gone": root / "checkpoint-gone.md"}

    monkeypatch.setattr(ops, "_checkpoint_files", listed_then_cleared)
    listed = run("checkpoint", "list", "--json", "--root", str(tmp_path))
    assert listed.exit_code == 0
    assert [c["name"] for c in json.loads(listed.stdout)] == ["kept"]
    resumed = run("checkpoint", "resume", "gone", "--root", str(tmp_path))
    assert resumed.exit_code == 2
    assert 'Checkpoint "gone" not found' in resumed.stderr
    handoff = run("handoff", "new", "--root", str(tmp_path))
    assert handoff.exit_code == 0, handoff.output


def test_chaos_resume_keeps_a_bullet_saved_while_it_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`resume` dropped the bullet of a checkpoint another process saved between its listing
    of the folder and its orphan clean-up (it judged orphans by the stale listing)."""
    from memls.core.ops import checkpoint as ops

    run("checkpoint", "save", "first", "--next", "x", "--root", str(tmp_path))
    run("checkpoint", "save", "second", "--next", "y", "--root", str(tmp_path))
    real = ops._checkpoint_files
    calls = {"n": 0}

    def listed_before_second_was_saved(root: Path) -> dict[str, Path]:
        calls["n"] += 1
        files = real(root)
        return {k: v for k, v in files.items() if k != "second"} if calls["n"] == 1 else files

    monkeypatch.setattr(ops, "_checkpoint_files", listed_before_second_was_saved)
    result = run("checkpoint", "resume", "first", "--root", str(tmp_path))
    assert result.exit_code == 0, result.output
    index = (tmp_path / "MEMORY.md").read_text()
    assert "- **second**" in index
    assert "orphaned" not in result.output


def test_save_sweeps_temp_files_a_killed_writer_left(tmp_path: Path) -> None:
    """README Guarantees: temp files older than 10 minutes are nobody's and go; new ones stay."""
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "MEMORY.md").write_text("# Memory\n")
    (tmp_path / "LOG.md").write_text("# Log\n")  # the orchestrator layout: index in memory/
    old = [tmp_path / f"{TEMP_PREFIX}old1", tmp_path / "memory" / f"{TEMP_PREFIX}old2"]
    fresh = tmp_path / f"{TEMP_PREFIX}fresh"
    for path in [*old, fresh]:
        path.write_bytes(b"half a file")
    for path in old:
        os.utime(path, (1_700_000_000, 1_700_000_000))
    result = run("checkpoint", "save", "t", "--next", "x", "--root", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert not any(p.exists() for p in old)
    assert fresh.exists()  # maybe another writer's, mid-write
