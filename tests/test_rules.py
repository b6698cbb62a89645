"""Data-driven rule tests: one folder per case under tests/rule_cases/ (snapshot style).

A case folder is a memory root plus ``expected.txt``::

    # select: CP001,CP002          <- the codes under test (findings of other codes are ignored)
    checkpoint-x.md:1:1 CP001 checkpoint has no `# Checkpoint: x` title: add it as the first line
      fix: Insert title `# Checkpoint: x`

Each finding is ``path:line:column CODE message`` (1-based; a line break in a message is
written ``\\n``), followed by ``  fix: TITLE`` when it carries a fix. Every file with a fix
has ``fixed/<file>``: the file's text after every safe fix. Fixes must be idempotent and
leave a file the rules then accept. Clock: 2026-11-30 12:00; no git unless asked.

More directives build cases that are repositories, or roots too large to keep as files::

    # repo                         <- the case folder is a repository (a `.git` folder is made)
    # git: main feat/a             <- the case folder is a real git repository: every file
                                      committed on the first branch (checked out), the other
                                      branches made at that commit
    # run: git merge -q feat/a     <- after that first commit, a git command (in order; each
                                      command's commits one minute after the last)
    # root: .claude/memory         <- the memory root inside the case folder (paths in the
                                      expected lines are relative to it)
    # grow: notes.md 70000         <- the file is padded with filler lines to that many bytes
    # copies: topic.md 70          <- that many copies of the file (topic-1.md, topic-2.md, …)

With ``# git:``, files under ``after/`` then overwrite the committed ones: the working
copy that differs from the last commit. Commit times are fixed, so commit ids in messages
are the same on every run.

``MEMLS_UPDATE_CASES=1 pytest tests/test_rules.py`` rewrites every ``expected.txt`` (keeping
its directives and comments) and every ``fixed/`` file from what the rules report now:
review the diff (``git diff tests/rule_cases``) before keeping it.
"""

from __future__ import annotations

import datetime as dt
import os
import shlex
import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from memls.core.config import load_config
from memls.core.fixes import fix_text
from memls.core.gitfacade import run_git
from memls.core.model import Diagnostic
from memls.core.rules import check_document, registry
from memls.core.workspace import Workspace

from .conftest import NOW

CASES = Path(__file__).parent / "rule_cases"
UPDATE = os.environ.get("MEMLS_UPDATE_CASES") == "1"

_SECRETS = (
    "test_secrets.py",
    "test_each_kind_is_found_with_its_code_and_never_printed_whole",
    "a key-shaped value is generated at random in the test: a repository must not hold one",
)
NAMED_TESTS: dict[str, tuple[str, str, str]] = {
    "CP024": (
        "test_rules_stale_git.py",
        "test_commits_since_a_recent_checkpoint_and_not_twice_for_an_old_one",
        "twenty commits after the save",
    ),
    "HO006": (
        "test_rules_stale_git.py",
        "test_commits_since_with_a_threshold",
        "twenty commits after the handoff",
    ),
    "MB003": (
        "test_cli_check_discovery.py",
        "test_memory_bank_activecontext_stale_in_git",
        "twenty commits that change the project",
    ),
    "SC001": _SECRETS,
    "SC002": (
        "test_secrets.py",
        "test_private_key_block_is_one_finding_and_its_body_is_replaced",
        "a private key block is generated in the test: a repository must not hold one",
    ),
    "SC003": _SECRETS,
    "SC004": _SECRETS,
    "SZ006": (
        "test_lsp_robustness.py",
        "test_ten_megabyte_document",
        "the note comes from the language server only, which checks a large open document "
        "with the SZ rules; `memls check` never reports it",
    ),
}
"""Rules a case folder does not express, each with the test (file, function) that pins it
instead and why."""

_GIT_ENV = {
    "GIT_AUTHOR_NAME": "memls test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "memls test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}
_FIX_PREFIX = "  fix: "


def _git_env(when: dt.datetime) -> dict[str, str]:
    """Fixed commit times (UTC, around noon, so the day in a message is the same in every
    time zone from UTC-11 to UTC+11): the same commit ids on every run."""
    stamp = f"@{int(when.replace(tzinfo=dt.UTC).timestamp())} +0000"
    return {**_GIT_ENV, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}


def _cases() -> list[Path]:
    return sorted(p for p in CASES.iterdir() if (p / "expected.txt").is_file())


@dataclass
class Case:
    folder: Path
    select: tuple[str, ...] = ()
    repo: bool = False
    git: tuple[str, ...] = ()
    run: list[list[str]] = field(default_factory=list)
    root: str = ""
    grow: list[tuple[str, int]] = field(default_factory=list)
    copies: list[tuple[str, int]] = field(default_factory=list)
    expected: set[str] = field(default_factory=set)
    """Each expected finding: its line, and its fix line when it has one."""


def _parse(case: Path) -> Case:
    out = Case(case)
    lines = (case / "expected.txt").read_text(encoding="utf-8").splitlines()
    for raw in lines:
        line = raw.strip()
        if line.startswith("# select:"):
            out.select = tuple(c.strip() for c in line.split(":", 1)[1].split(",") if c.strip())
        elif line == "# repo":
            out.repo = True
        elif line.startswith("# git:"):
            out.git = tuple(line.split(":", 1)[1].split())
        elif line.startswith("# run:"):
            command = shlex.split(line.split(":", 1)[1])
            assert command[:1] == ["git"], f"{case.name}: `# run:` runs git only"
            out.run.append(command[1:])
        elif line.startswith("# root:"):
            out.root = line.split(":", 1)[1].strip()
        elif line.startswith("# grow:"):
            path, size = line.split(":", 1)[1].split()
            out.grow.append((path, int(size)))
        elif line.startswith("# copies:"):
            path, count = line.split(":", 1)[1].split()
            out.copies.append((path, int(count)))
    out.expected = set(_entries(lines))
    assert out.select, f"{case.name}: expected.txt needs a '# select:' line"
    return out


def _entries(lines: list[str]) -> list[str]:
    """The findings of an expected.txt: each line with its ``  fix:`` line, if any."""
    out: list[str] = []
    for raw in lines:
        if raw.startswith(_FIX_PREFIX) and out:
            out[-1] += "\n" + raw.rstrip()
        elif raw.strip() and not raw.lstrip().startswith("#"):
            out.append(raw.strip())
    return out


def _build(case: Case, tmp_path: Path) -> Workspace:
    copy = tmp_path / "root"
    ignore = shutil.ignore_patterns("expected.txt", "fixed", "after")
    shutil.copytree(case.folder, copy, ignore=ignore)
    for rel, size in case.grow:
        path = copy / rel
        data = path.read_bytes()
        parts = [data if data.endswith(b"\n") else data + b"\n"]
        total, n = len(parts[0]), 0
        while total < size:
            parts.append(b"- filler line %06d of a large memory file\n" % n)
            total, n = total + len(parts[-1]), n + 1
        path.write_bytes(b"".join(parts))
    for rel, count in case.copies:
        path = copy / rel
        for n in range(1, count + 1):
            shutil.copyfile(path, path.with_name(f"{path.stem}-{n}{path.suffix}"))
    if case.repo:
        (copy / ".git").mkdir()
    if case.git:
        if shutil.which("git") is None:
            pytest.skip("git is not installed")
        when = dt.datetime(2026, 11, 30, 11, 0)
        env = _git_env(when)
        run_git(copy, "init", "-q", "-b", case.git[0], env=env)
        run_git(copy, "add", "-A", env=env)
        run_git(copy, "commit", "-q", "-m", "case", env=env)
        for branch in case.git[1:]:
            run_git(copy, "branch", branch, env=env)
        for command in case.run:
            when += dt.timedelta(minutes=1)
            run_git(copy, *command, env=_git_env(when))
        after = case.folder / "after"
        if after.is_dir():
            shutil.copytree(after, copy, dirs_exist_ok=True)
    root = copy / case.root if case.root else copy
    config = replace(load_config(root), select=case.select)  # a case's memls.toml applies
    return Workspace(root, config)


def _entry(rel: str, d: Diagnostic) -> str:
    message = d.message.replace("\n", "\\n")
    line = f"{rel}:{d.range.start.line + 1}:{d.range.start.character + 1} {d.code} {message}"
    return line + (f"\n{_FIX_PREFIX}{d.fix.title}" if d.fix is not None else "")


def _report(ws: Workspace) -> tuple[list[str], set[str]]:
    """Every finding as an expected.txt entry (in file order), and the files with a fix."""
    out: list[str] = []
    with_fix: set[str] = set()
    for path in sorted(ws.paths()):
        doc = ws.document(path)
        assert doc is not None
        rel = path.relative_to(ws.root).as_posix()
        for d in check_document(ws, doc, NOW):
            out.append(_entry(rel, d))
            if d.fix is not None:
                with_fix.add(rel)
    return out, with_fix


def _key(entry: str) -> str:
    return " ".join(entry.split(" ", 2)[:2])


def _rewrite(case: Path, found: list[str]) -> None:
    """expected.txt with its directives and comments kept and its findings as ``found``."""
    left: dict[str, list[str]] = {}
    for entry in found:
        left.setdefault(_key(entry), []).append(entry)
    out: list[str] = []
    for raw in (case / "expected.txt").read_text(encoding="utf-8").splitlines():
        if raw.startswith(_FIX_PREFIX):
            continue
        if not raw.strip() or raw.lstrip().startswith("#"):
            out.append(raw)
            continue
        out.extend(left.pop(_key(raw.strip()), []))  # every finding at that place and code
    out.extend(entry for entries in left.values() for entry in entries)
    (case / "expected.txt").write_text("\n".join(out) + "\n", encoding="utf-8")


def _fixed(case: Path) -> set[str]:
    fixed = case / "fixed"
    if not fixed.is_dir():
        return set()
    return {p.relative_to(fixed).as_posix() for p in fixed.rglob("*") if p.is_file()}


@pytest.mark.parametrize("case", _cases(), ids=lambda p: p.name)
def test_rule_case(case: Path, tmp_path: Path) -> None:
    """The case's findings, messages and fix titles are the pinned ones; every file with a
    fix has its fixed text pinned."""
    spec = _parse(case)
    ws = _build(spec, tmp_path)
    found, with_fix = _report(ws)
    if UPDATE:
        if set(found) != spec.expected:
            _rewrite(case, found)
        for rel in sorted(with_fix - _fixed(case)):
            target = case / "fixed" / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(fix_text(ws, ws.root / rel, NOW)[0], encoding="utf-8")
        spec = _parse(case)
    assert set(found) == spec.expected
    assert with_fix == _fixed(case), "every file with a fix has its fixed/ text, and only those"


@pytest.mark.parametrize(
    "case", [c for c in _cases() if (c / "fixed").is_dir()], ids=lambda p: p.name
)
def test_rule_fix(case: Path, tmp_path: Path) -> None:
    ws = _build(_parse(case), tmp_path)
    for fixed in sorted((case / "fixed").rglob("*")):
        if not fixed.is_file():
            continue
        rel = fixed.relative_to(case / "fixed")
        path = ws.root / rel
        text, applied = fix_text(ws, path, NOW)
        assert applied > 0, f"{rel}: no fix applied"
        if UPDATE and text != fixed.read_text(encoding="utf-8"):
            fixed.write_text(text, encoding="utf-8")
        assert text == fixed.read_text(encoding="utf-8"), f"{rel}: unexpected text after fixes"
        path.write_text(text, encoding="utf-8")
        ws.invalidate(path)
        again, applied_again = fix_text(ws, path, NOW)
        assert applied_again == 0, f"{rel}: fixes are not idempotent"
        assert again == text
        doc = ws.document(path)
        assert doc is not None
        remaining = [d for d in check_document(ws, doc, NOW) if d.fix is not None]
        assert not remaining, f"{rel}: fixable findings remain after fixing: {remaining}"


def _pinned() -> dict[str, list[tuple[str, bool]]]:
    """Per rule code, the cases that pin one of its findings, and whether it had a fix."""
    out: dict[str, list[tuple[str, bool]]] = {}
    for case in _cases():
        for entry in _parse(case).expected:
            code = entry.split(" ", 2)[1]
            out.setdefault(code, []).append((case.name, f"\n{_FIX_PREFIX}" in entry))
    return out


def test_every_rule_has_a_case() -> None:
    """Each rule of the registry fires in a case folder, or is pinned by a named test."""
    pinned = _pinned()
    missing = [code for code in registry() if code not in pinned and code not in NAMED_TESTS]
    assert not missing, f"rules with no case folder under tests/rule_cases: {missing}"
    assert not set(NAMED_TESTS) & set(pinned), "a rule with a case needs no named test"
    assert set(NAMED_TESTS) <= set(registry())
    for code, (file, test, _why) in NAMED_TESTS.items():
        text = (Path(__file__).parent / file).read_text(encoding="utf-8")
        assert f"def {test}(" in text, f"{code}: no test {file}::{test}"
    assert set(pinned) <= set(registry()), "a case pins a code that is no rule"


def test_fixable_matches_what_the_rules_do() -> None:
    """A rule declared fixable emits a fix in at least one case; a rule not declared
    fixable never emits one."""
    pinned = _pinned()
    for code, rule in registry().items():
        fixes = [name for name, fixed in pinned.get(code, []) if fixed]
        if rule.fixable:
            assert fixes or code in NAMED_TESTS, f"{code} is declared fixable; no case shows a fix"
        else:
            assert not fixes, f"{code} is not declared fixable but emits a fix in {fixes}"


def test_operations_named_by_rules_are_server_commands() -> None:
    """``Rule.operation`` names an operation the editor can run (code actions offer it)."""
    from memls.lsp.commands import SERVER_COMMANDS

    for code, rule in registry().items():
        if rule.operation:
            assert f"memls.{rule.operation}" in SERVER_COMMANDS, code
