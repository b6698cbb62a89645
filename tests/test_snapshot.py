"""Snapshot contract tests on real temporary git repositories.

Every save is followed by a check that the work tree, the user's index and HEAD are
exactly as before: snapshots live only in objects and ``refs/memls/*``.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memls.cli import main
from memls.core.snapshot import (
    MAX_ITEM_BYTES,
    MAX_ITEMS,
    RestoreRefusedError,
    SnapshotError,
    SnapshotResult,
    diff_snapshots,
    load_snapshot,
    read_item,
    restore_snapshot,
    sanitize_instance,
    save_snapshot,
    snapshot_head,
    snapshot_log,
)

PROJECT = Path(__file__).resolve().parents[1]


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        check=True,
        env={**os.environ, **(env or {})},
    )
    return proc.stdout.decode().strip()


def init_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "Test User")
    git(path, "config", "user.email", "test@example.com")
    git(path, "config", "commit.gpgsign", "false")
    return path


class Repo:
    """A repository with a committed file, a staged change and a memory root inside."""

    def __init__(self, base: Path) -> None:
        self.top = init_repo(base / "repo")
        (self.top / "README.md").write_text("project\n")
        git(self.top, "add", "README.md")
        git(self.top, "commit", "-q", "-m", "init")
        # A staged and an unstaged change, so "index unchanged" means something.
        (self.top / "README.md").write_text("project\nstaged\n")
        git(self.top, "add", "README.md")
        (self.top / "README.md").write_text("project\nstaged\nunstaged\n")
        self.root = self.top / "agent-mem"
        self.root.mkdir()
        (self.root / "MEMORY.md").write_text("# Memory\n\n- [Plan](plan.md)\n")
        (self.root / "plan.md").write_text("# Plan\n\nStep one.\n")

    def state(self, *pathspec: str) -> tuple[str, str, str, str]:
        """Status, HEAD, the index file's hash and the hash of every work-tree file."""
        index = hashlib.sha256((self.top / ".git" / "index").read_bytes()).hexdigest()
        status = git(self.top, "status", "--porcelain", "--untracked-files=all", "--", *pathspec)
        files = hashlib.sha256()
        for path in sorted(self.top.rglob("*")):
            if ".git" not in path.relative_to(self.top).parts and path.is_file():
                files.update(str(path).encode() + b"\0" + path.read_bytes())
        return status, git(self.top, "rev-parse", "HEAD"), index, files.hexdigest()

    def save(self, **kwargs: Any) -> SnapshotResult:
        """save_snapshot on the memory root, asserting it left the work tree, index and HEAD alone."""
        before = self.state()
        result = save_snapshot(self.root, **kwargs)
        assert self.state() == before, (
            f"save ({result.status}) touched the work tree, index or HEAD"
        )
        return result

    def objects(self) -> str:
        return git(self.top, "count-objects", "-v")

    def ref(self, name: str = "refs/memls/agent-mem") -> str | None:
        proc = subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", name],
            cwd=self.top,
            capture_output=True,
            check=False,
        )
        return proc.stdout.decode().strip() or None


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Repo]:
    r = Repo(tmp_path)
    before = r.state(".", ":(exclude)agent-mem")[:3]
    yield r
    after = r.state(".", ":(exclude)agent-mem")[:3]
    assert after == before, "a snapshot operation touched the work tree, index or HEAD"


def first(repo: Repo) -> SnapshotResult:
    result = repo.save(initial=True)
    assert result.status == "saved", result.message
    return result


def assert_conflict_changes_nothing(
    repo: Repo, result: SnapshotResult, current: str | None, objects: str
) -> None:
    """A conflict names the commit the ref holds and leaves the ref and the object store alone."""
    assert result.status == "conflict"
    assert result.commit == current
    assert current
    assert current in result.message
    assert repo.ref() == current
    assert repo.objects() == objects


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


# --------------------------------------------------------------------------- saving


def test_initial_save_commits_items_and_manifest(repo: Repo) -> None:
    result = first(repo)
    assert result.changed
    assert result.ref == "refs/memls/agent-mem"
    assert result.previous is None
    assert repo.ref() == result.commit
    tree = git(repo.top, "ls-tree", "-r", "--name-only", result.commit or "").splitlines()
    assert tree == ["memory.json", "memory/MEMORY.md", "memory/plan.md"]
    manifest = json.loads(git(repo.top, "show", f"{result.commit}:memory.json"))
    paths = [i["path"] for i in manifest["items"]]
    assert paths == sorted(paths) == ["MEMORY.md", "plan.md"]
    data = (repo.root / "plan.md").read_bytes()
    plan = manifest["items"][1]
    assert plan["sha256"] == hashlib.sha256(data).hexdigest()
    assert plan["bytes"] == len(data)
    assert plan["blob"] == git(repo.top, "rev-parse", f"{result.commit}:memory/plan.md")
    assert git(repo.top, "show", f"{result.commit}:memory/plan.md") == data.decode().strip()
    message = git(repo.top, "log", "-1", "--format=%B", result.commit or "")
    assert "Instance: agent-mem" in message
    assert "Saved: " in message
    assert git(repo.top, "log", "-1", "--format=%P", result.commit or "") == ""
    assert result.to_json()["items"] == manifest["items"]


def test_initial_save_requires_absent_ref(repo: Repo) -> None:
    done = first(repo)
    objects = repo.objects()
    again = repo.save(initial=True)
    assert_conflict_changes_nothing(repo, again, done.commit, objects)


def test_later_save_must_name_prior_commit(repo: Repo) -> None:
    done = first(repo)
    result = repo.save()
    assert result.status == "invalid"
    assert done.commit
    assert done.commit in result.message
    assert "--expect" in result.message


def test_save_without_initial_on_absent_ref_is_invalid(repo: Repo) -> None:
    result = repo.save()
    assert result.status == "invalid"
    assert "--initial" in result.message
    assert repo.ref() is None


def test_expect_mismatch_conflicts_naming_current_and_changes_nothing(repo: Repo) -> None:
    one = first(repo)
    (repo.root / "plan.md").write_text("# Plan\n\nStep two.\n")
    two = repo.save(expect=one.commit)
    assert two.status == "saved"
    (repo.root / "plan.md").write_text("# Plan\n\nStep three.\n")
    objects = repo.objects()
    stale = repo.save(expect=one.commit)
    assert_conflict_changes_nothing(repo, stale, two.commit, objects)
    assert not stale.changed
    assert stale.previous == one.commit


def test_expect_on_absent_ref_conflicts(repo: Repo) -> None:
    result = repo.save(expect="0123456789abcdef0123456789abcdef01234567")
    assert result.status == "conflict"
    assert "does not exist" in result.message
    assert repo.ref() is None


def test_later_save_links_parent_and_accepts_abbreviated_expect(repo: Repo) -> None:
    one = first(repo)
    (repo.root / "notes.md").write_text("# Notes\n")
    assert one.commit
    two = repo.save(expect=one.commit[:10])
    assert two.status == "saved", two.message
    assert two.previous == one.commit
    assert git(repo.top, "log", "-1", "--format=%P", two.commit or "") == one.commit
    assert [i.path for i in two.items] == ["MEMORY.md", "notes.md", "plan.md"]


def test_equivalent_content_is_unchanged_and_makes_no_commit(repo: Repo) -> None:
    one = first(repo)
    objects = repo.objects()
    again = repo.save(expect=one.commit)
    assert again.status == "unchanged"
    assert again.changed is False
    assert again.commit == one.commit
    assert again.to_json()["changed"] is False
    assert repo.ref() == one.commit
    assert repo.objects() == objects
    assert len(snapshot_log(repo.root)) == 1


def test_both_initial_and_expect_is_invalid(repo: Repo) -> None:
    result = repo.save(initial=True, expect="abcd1234")
    assert result.status == "invalid"


def test_root_outside_git_is_invalid(tmp_path: Path) -> None:
    root = tmp_path / "loose"
    root.mkdir()
    (root / "MEMORY.md").write_text("# Memory\n")
    result = save_snapshot(root, initial=True)
    assert result.status == "invalid"
    assert "not inside a git repository" in result.message


@pytest.mark.parametrize(
    ("rel", "words"),
    [
        ("/etc/passwd", "absolute"),
        ("../outside.md", "not canonical"),
        ("a/../plan.md", "not canonical"),
        ("./plan.md", "not canonical"),
        ("sub\\plan.md", "backslash"),
        ("plan\x01.md", "control character"),
        ("missing.md", "does not exist"),
    ],
)
def test_bad_paths_are_invalid_and_named(repo: Repo, rel: str, words: str) -> None:
    result = repo.save(initial=True, paths=["MEMORY.md", rel])
    assert result.status == "invalid"
    assert words in result.message
    assert repr(rel) in result.message
    assert repo.ref() is None


def test_symlink_out_of_root_is_invalid(repo: Repo, tmp_path: Path) -> None:
    outside = tmp_path / "secret.md"
    outside.write_text("secret\n")
    (repo.root / "link.md").symlink_to(outside)
    result = repo.save(initial=True, paths=["link.md"])
    assert result.status == "invalid"
    assert "'link.md'" in result.message
    (repo.root / "link.md").unlink()


def test_nul_and_non_utf8_content_rejected_naming_item(repo: Repo) -> None:
    (repo.root / "bin.md").write_bytes(b"text\x00more\n")
    result = repo.save(initial=True)
    assert result.status == "invalid"
    assert "'bin.md'" in result.message
    assert "NUL" in result.message
    (repo.root / "bin.md").write_bytes(b"caf\xe9\n")
    result = repo.save(initial=True)
    assert result.status == "invalid"
    assert "'bin.md'" in result.message
    assert "UTF-8" in result.message
    (repo.root / "bin.md").unlink()


def test_item_size_limit_is_exact(repo: Repo) -> None:
    (repo.root / "big.md").write_bytes(b"x" * MAX_ITEM_BYTES)
    assert repo.save(initial=True, paths=["big.md"]).status == "saved"
    (repo.root / "big.md").write_bytes(b"x" * (MAX_ITEM_BYTES + 1))
    result = repo.save(initial=True, paths=["big.md"])
    assert result.status == "invalid"
    assert "'big.md'" in result.message
    assert "65,537" in result.message
    (repo.root / "big.md").unlink()


def test_total_size_limit(repo: Repo) -> None:
    names = [f"part{i}.md" for i in range(5)]
    for name in names:
        (repo.root / name).write_bytes(b"y" * 60_000)
    assert repo.save(initial=True, paths=names[:4]).status == "saved"
    result = repo.save(initial=True, ref="refs/memls/other", paths=names)
    assert result.status == "invalid"
    assert "300,000 bytes" in result.message
    assert "262,144" in result.message
    for name in names:
        (repo.root / name).unlink()


def test_item_count_limit(repo: Repo) -> None:
    sub = repo.root / "many"
    sub.mkdir()
    names = []
    for i in range(MAX_ITEMS + 1):
        (sub / f"n{i:02}.md").write_text(f"{i}\n")
        names.append(f"many/n{i:02}.md")
    ok = repo.save(initial=True, paths=names[:MAX_ITEMS])
    assert ok.status == "saved"
    assert len(ok.items) == MAX_ITEMS
    tree = git(repo.top, "ls-tree", "-r", "--name-only", ok.commit or "").splitlines()
    assert "memory/many/n63.md" in tree
    result = repo.save(initial=True, ref="refs/memls/more", paths=names)
    assert result.status == "invalid"
    assert "65 items" in result.message
    for i in range(MAX_ITEMS + 1):
        (sub / f"n{i:02}.md").unlink()
    sub.rmdir()


def test_duplicate_item_is_invalid(repo: Repo) -> None:
    result = repo.save(initial=True, paths=["plan.md", "plan.md"])
    assert result.status == "invalid"
    assert "'plan.md'" in result.message


def test_instance_from_config_and_sanitised(repo: Repo) -> None:
    (repo.root / "memls.toml").write_text('instance = "team a/../x"\n')
    result = repo.save(initial=True)
    assert result.ref == "refs/memls/team-a-.-x"
    assert result.status == "saved", result.message
    git(repo.top, "check-ref-format", result.ref or "")
    (repo.root / "memls.toml").unlink()


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("memory", "memory"),
        ("my project", "my-project"),
        (".hidden", "hidden"),
        ("a..b", "a.b"),
        ("x.lock", "x"),
        ("~^:?*[", "memory"),
        ("", "memory"),
    ],
)
def test_sanitize_instance(raw: str, clean: str) -> None:
    assert sanitize_instance(raw) == clean


def test_custom_ref_bare_name_and_invalid_ref(repo: Repo) -> None:
    result = repo.save(initial=True, ref="alice")
    assert result.ref == "refs/memls/alice"
    assert repo.ref("refs/memls/alice") == result.commit
    bad = repo.save(initial=True, ref="refs/memls/a..b")
    assert bad.status == "invalid"
    assert "not a valid git ref" in bad.message


def test_identity_fallback_only_without_configured_identity(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "no-global"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for var in ("NAME", "EMAIL"):
        monkeypatch.delenv(f"GIT_AUTHOR_{var}", raising=False)
        monkeypatch.delenv(f"GIT_COMMITTER_{var}", raising=False)
    monkeypatch.delenv("EMAIL", raising=False)
    top = tmp_path / "bare-ci"
    top.mkdir()
    git(top, "init", "-q")
    (top / "MEMORY.md").write_text("# Memory\n")
    result = save_snapshot(top, initial=True)
    assert result.status == "saved", result.message
    who = git(top, "log", "-1", "--format=%an <%ae>|%cn <%ce>", result.commit or "")
    assert who == "memls <memls@localhost>|memls <memls@localhost>"
    git(top, "config", "user.name", "Real Person")
    git(top, "config", "user.email", "real@example.com")
    (top / "MEMORY.md").write_text("# Memory\n\nmore\n")
    second = save_snapshot(top, expect=result.commit)
    who = git(top, "log", "-1", "--format=%an <%ae>", second.commit or "")
    assert who == "Real Person <real@example.com>"


# ----------------------------------------------------------------- concurrent saves


def _spawn_save(root: Path, expect: str, item: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "memls",
            "snapshot",
            "save",
            "--root",
            str(root),
            "--expect",
            expect,
            "--json",
            item,
        ],
        cwd=PROJECT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def test_two_processes_with_same_expect_exactly_one_wins(repo: Repo) -> None:
    base = first(repo)
    expect = base.commit or ""
    for round_ in range(3):
        (repo.root / "a.md").write_text(f"# A {round_}\n")
        (repo.root / "b.md").write_text(f"# B {round_}\n")
        procs = [_spawn_save(repo.root, expect, "a.md"), _spawn_save(repo.root, expect, "b.md")]
        outcomes = []
        for proc in procs:
            out, err = proc.communicate(timeout=60)
            outcomes.append((proc.returncode, json.loads(out), err.decode()))
        statuses = sorted(o[1]["status"] for o in outcomes)
        assert statuses == ["conflict", "saved"], outcomes
        (win_code, winner, _), (lose_code, loser, lose_err) = sorted(
            outcomes, key=lambda o: o[1]["status"] != "saved"
        )
        assert (win_code, lose_code) == (0, 3)
        assert loser["commit"] == winner["commit"]
        assert winner["commit"] in lose_err
        assert loser["changed"] is False
        assert repo.ref() == winner["commit"]
        assert winner["previous"] == expect
        expect = winner["commit"]
    (repo.root / "a.md").unlink()
    (repo.root / "b.md").unlink()


# ------------------------------------------------------------------ read, log, diff


def test_read_exact_commit_after_ref_moved(repo: Repo) -> None:
    tricky = "# Plan\r\n\nUnicode: é ✓\n\ttab\nno newline at end".encode()
    (repo.root / "plan.md").write_bytes(tricky)
    one = first(repo)
    (repo.root / "plan.md").write_text("# Plan\n\nrewritten\n")
    two = repo.save(expect=one.commit)
    assert two.status == "saved"
    assert read_item(repo.root, one.commit or "", "plan.md") == tricky
    code, out, _ = cli("snapshot", "read", "--root", str(repo.root), one.commit or "", "plan.md")
    assert code == 0
    result = CliRunner().invoke(
        main, ["snapshot", "read", "--root", str(repo.root), one.commit or "", "plan.md"]
    )
    assert result.stdout_bytes == tricky
    code, out, _ = cli("snapshot", "read", "--root", str(repo.root), one.commit or "")
    assert code == 0
    assert "MEMORY.md" in out
    assert "plan.md" in out
    assert str(len(tricky)) in out
    code, out, _ = cli("snapshot", "read", "--root", str(repo.root), "--json", two.commit or "")
    assert json.loads(out)["items"] == two.to_json()["items"]


def test_read_errors(repo: Repo) -> None:
    one = first(repo)
    with pytest.raises(SnapshotError, match=r"'nope\.md' is not in snapshot"):
        read_item(repo.root, one.commit or "", "nope.md")
    with pytest.raises(SnapshotError, match="not a memls snapshot"):
        load_snapshot(repo.root, "HEAD")
    code, _, err = cli("snapshot", "read", "--root", str(repo.root), "deadbeef")
    assert code == 2
    assert "not a commit" in err


def test_log_lists_newest_first(repo: Repo) -> None:
    assert snapshot_log(repo.root) == []
    one = first(repo)
    (repo.root / "plan.md").write_text("changed\n")
    two = repo.save(expect=one.commit)
    entries = snapshot_log(repo.root)
    assert [e.commit for e in entries] == [two.commit, one.commit]
    assert "2 items" in entries[0].subject
    code, out, _ = cli("snapshot", "log", "--root", str(repo.root), "--ref", "refs/memls/agent-mem")
    assert code == 0
    assert out.splitlines()[0].startswith(two.commit or "")
    code, out, _ = cli("snapshot", "log", "--root", str(repo.root), "-n", "1", "--json")
    assert [e["commit"] for e in json.loads(out)] == [two.commit]


def test_message_is_the_subject_log_lists_and_a_bad_one_is_refused(repo: Repo) -> None:
    one = first(repo)
    (repo.root / "plan.md").write_text("changed\n")
    code, out, _ = cli(
        "snapshot", "save", "--root", str(repo.root), "--expect", one.commit or "",
        "-m", "before the schema migration", "--json",
    )  # fmt: skip
    assert code == 0
    saved = json.loads(out)
    entries = snapshot_log(repo.root)
    assert entries[0].commit == saved["commit"]
    assert entries[0].subject == "before the schema migration"
    body = git(repo.root, "log", "-1", "--format=%b", saved["commit"])
    assert "2 items" in body
    assert "Instance: agent-mem" in body
    (repo.root / "plan.md").write_text("changed again\n")
    code, out, _ = cli(
        "snapshot", "save", "--root", str(repo.root), "--expect", saved["commit"],
        "-m", "two\nlines", "--json",
    )  # fmt: skip
    assert code == 2
    assert "one line" in json.loads(out)["error"]
    assert snapshot_log(repo.root)[0].commit == saved["commit"]


def test_diff_added_removed_changed(repo: Repo) -> None:
    one = first(repo)
    (repo.root / "plan.md").write_text("# Plan\n\nStep two.\n")
    (repo.root / "MEMORY.md").unlink()
    (repo.root / "new.md").write_text("# New\n")
    two = repo.save(expect=one.commit)
    changes = {c.path: c for c in diff_snapshots(repo.root, one.commit or "", two.commit or "")}
    assert {p: c.change for p, c in changes.items()} == {
        "MEMORY.md": "removed",
        "new.md": "added",
        "plan.md": "changed",
    }
    assert "-Step one.\n+Step two.\n" in changes["plan.md"].diff
    assert "+++ b/new.md" in changes["new.md"].diff
    code, out, _ = cli(
        "snapshot", "diff", "--root", str(repo.root), one.commit or "", two.commit or ""
    )
    assert code == 0
    assert "changed: plan.md" in out
    assert "removed: MEMORY.md" in out
    code, out, _ = cli(
        "snapshot", "diff", "--root", str(repo.root), one.commit or "", one.commit or ""
    )
    assert out.strip() == "no differences"
    (repo.root / "MEMORY.md").write_text("# Memory\n\n- [Plan](plan.md)\n")
    (repo.root / "plan.md").write_text("# Plan\n\nStep one.\n")
    (repo.root / "new.md").unlink()


# -------------------------------------------------------------------------- restore


def test_restore_to_other_dir_and_refuses_local_changes(repo: Repo, tmp_path: Path) -> None:
    one = first(repo)
    target = tmp_path / "elsewhere"
    result = restore_snapshot(repo.root, one.commit or "", to=target)
    assert sorted(result.written) == ["MEMORY.md", "plan.md"]
    assert (target / "plan.md").read_bytes() == (repo.root / "plan.md").read_bytes()
    (target / "plan.md").write_text("local edit\n")
    with pytest.raises(RestoreRefusedError) as refused:
        restore_snapshot(repo.root, one.commit or "", to=target)
    assert refused.value.paths == ("plan.md",)
    assert (target / "plan.md").read_text() == "local edit\n"
    code, _, err = cli(
        "snapshot", "restore", "--root", str(repo.root), "--to", str(target), one.commit or ""
    )
    assert code == 3
    assert "plan.md" in err
    code, out, _ = cli(
        "snapshot",
        "restore",
        "--root",
        str(repo.root),
        "--to",
        str(target),
        "--force",
        one.commit or "",
    )
    assert code == 0
    assert "wrote plan.md" in out
    assert (target / "plan.md").read_text() == "# Plan\n\nStep one.\n"
    assert not list(target.glob(".memls-tmp-*"))


def test_restore_into_root_over_saved_state_needs_no_force(repo: Repo) -> None:
    one = first(repo)
    (repo.root / "plan.md").write_text("# Plan\n\nStep two.\n")
    two = repo.save(expect=one.commit)
    assert two.status == "saved"
    # plan.md equals the latest snapshot: going back loses nothing.
    result = restore_snapshot(repo.root, one.commit or "")
    assert result.written == ("plan.md",)
    assert result.unchanged == ("MEMORY.md",)
    assert (repo.root / "plan.md").read_text() == "# Plan\n\nStep one.\n"
    (repo.root / "plan.md").write_text("unsaved\n")
    with pytest.raises(RestoreRefusedError, match=r"plan\.md"):
        restore_snapshot(repo.root, two.commit or "")
    (repo.root / "plan.md").write_text("# Plan\n\nStep one.\n")


# ------------------------------------------------------------------------------ CLI


def test_cli_outcomes_exit_codes_and_json(repo: Repo) -> None:
    root = str(repo.root)
    code, out, err = cli("snapshot", "save", "--root", root)
    assert code == 2
    assert "invalid" in err
    code, out, _ = cli("snapshot", "save", "--root", root, "--initial", "--json")
    assert code == 0
    body = json.loads(out)
    assert set(body) == {
        "status",
        "changed",
        "commit",
        "ref",
        "previous",
        "items",
        "message",
        "exit_code",
    }
    assert body["status"] == "saved"
    assert body["changed"] is True
    commit = body["commit"]
    code, out, _ = cli("snapshot", "save", "--root", root, "--expect", commit)
    assert code == 0
    assert out.startswith("unchanged:")
    assert "no commit made" in out
    code, out, _ = cli("snapshot", "save", "--root", root, "--expect", commit, "--json")
    assert json.loads(out)["changed"] is False
    code, out, err = cli("snapshot", "save", "--root", root, "--initial")
    assert code == 3
    assert commit in err
    code, out, err = cli(
        "snapshot", "save", "--root", root, "--expect", commit, "--json", "../x.md"
    )
    assert code == 2
    assert json.loads(out)["status"] == "invalid"
    assert "'../x.md'" in json.loads(out)["error"]
    assert "'../x.md'" in err
    (repo.root / "plan.md").write_text("# Plan\n\nnext\n")
    code, out, _ = cli("snapshot", "save", "--root", root, "--expect", commit, "plan.md")
    assert code == 0
    assert out.startswith("saved 1 item ")
    (repo.root / "plan.md").write_text("# Plan\n\nStep one.\n")


def test_every_command_has_help_and_root() -> None:
    runner = CliRunner()
    group = runner.invoke(main, ["snapshot", "--help"])
    assert group.exit_code == 0
    assert "refs/memls/*:refs/memls/*" in group.stdout
    for name in ("save", "read", "log", "diff", "restore"):
        result = runner.invoke(main, ["snapshot", name, "--help"])
        assert result.exit_code == 0
        assert "--root" in result.stdout
        helptext = result.stdout.split("Options:")[0]
        assert len(helptext.split("\n", 2)[-1].strip()) > 20, name
    save_help = runner.invoke(main, ["snapshot", "save", "--help"]).stdout
    for words in ("saved", "unchanged", "conflict", "invalid", "git push", "git fetch"):
        assert words in save_help


# -------------------------------------------------------------------------- sharing


def test_push_fetch_and_read_in_second_clone(repo: Repo, tmp_path: Path) -> None:
    content = "# Plan\n\nShared across machines ✓\r\n".encode()
    (repo.root / "plan.md").write_bytes(content)
    one = first(repo)
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(repo.top, "remote", "add", "origin", str(bare))
    git(repo.top, "push", "-q", "origin", "main", "refs/memls/*:refs/memls/*")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(bare), str(clone))
    assert (
        subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", "refs/memls/agent-mem"],
            cwd=clone,
            capture_output=True,
            check=False,
        ).returncode
        != 0
    ), "a plain clone does not bring refs/memls/* along"
    git(clone, "fetch", "-q", "origin", "refs/memls/*:refs/memls/*")
    assert git(clone, "rev-parse", "refs/memls/agent-mem") == one.commit
    result = CliRunner().invoke(
        main, ["snapshot", "read", "--root", str(clone), one.commit or "", "plan.md"]
    )
    assert result.exit_code == 0
    assert result.stdout_bytes == content
    _code, out, _ = cli("snapshot", "log", "--root", str(clone), "--ref", "agent-mem")
    assert out.startswith(one.commit or "")
    # The clone can continue the chain and publish it back.
    init_repo(clone)
    (clone / "agent-mem").mkdir()
    restore_snapshot(clone, one.commit or "", to=clone / "agent-mem")
    (clone / "agent-mem" / "plan.md").write_text("# Plan\n\nfrom the clone\n")
    two = save_snapshot(clone / "agent-mem", expect=one.commit)
    assert two.status == "saved", two.message
    git(clone, "push", "-q", "origin", "refs/memls/*:refs/memls/*")
    git(repo.top, "fetch", "-q", "origin", "refs/memls/*:refs/memls/*")
    assert repo.ref() == two.commit
    assert read_item(repo.root, two.commit or "", "plan.md") == b"# Plan\n\nfrom the clone\n"


def test_sha256_repository(tmp_path: Path) -> None:
    top = tmp_path / "sha256"
    top.mkdir()
    git(top, "init", "-q", "--object-format=sha256")
    git(top, "config", "user.name", "Test User")
    git(top, "config", "user.email", "test@example.com")
    (top / "MEMORY.md").write_text("# Memory\n")
    one = save_snapshot(top, initial=True)
    assert one.status == "saved", one.message
    assert len(one.commit or "") == 64
    assert one.items[0].blob == git(top, "rev-parse", f"{one.commit}:memory/MEMORY.md")
    assert snapshot_head(top) == one.commit
    (top / "MEMORY.md").write_text("# Memory\n\nmore\n")
    stale = save_snapshot(top, initial=True)
    assert stale.status == "conflict"
    two = save_snapshot(top, expect=snapshot_head(top))
    assert two.status == "saved"
    assert read_item(top, one.commit or "", "MEMORY.md") == b"# Memory\n"
