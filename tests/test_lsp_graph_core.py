"""The link graph in core and `memls mv`: edges, rename plans, moves on disk, refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memls.core.fsutil import UnsafePathError
from memls.core.graph import ANCHOR, CONTINUE, INDEX_BULLET, MARKDOWN, PLAN, WIKILINK, slug
from memls.core.model import Position
from memls.core.ops import OpError
from memls.core.ops.move import move, plan_checkpoint_rename
from memls.core.workspace import Workspace
from tests.cli_helpers import memls_on

CHECKPOINT = (
    "# Checkpoint: feat-login\n\n"
    "- **Branch:** `feat/login`\n"
    "- **Saved:** 2026-11-30 11:00\n"
    "- **Plan:** `plan.md` (step 1 of 2)\n\n"
    "## Next Action: Wire the form\nSee [deploy](deploy.md#staging).\n\n"
    "## Done This Session\n- None recorded\n\n"
    "## Failed Approaches\n- None\n\n"
    "## Modified Files\n- None\n"
)
INDEX = (
    "# Project Memory\n\n"
    "## Active Checkpoints\n"
    "- **feat-login** (feat/login, Nov 30 11:00) — Wire the form\n\n"
    "Resume any: `continue` or `continue {name}`\n\n"
    "## Memory Files\n"
    "- [Deploying](deploy.md) — how we ship\n"
    "- [Testing](testing.md)\n"
    "- `plan.md`\n"
)
DEPLOY = (
    "# Deploying\n\n"
    "Contents: [staging](#staging)\n\n"
    "## Staging\nPush, then continue feat-login.\n\n"
    "## Production\nSee [[testing#Unit tests]] first.\n"
)
TESTING = "# Testing\n\n## Unit tests\nRun `pytest`; deploys: [deploy](./deploy.md#staging).\n"


def make_root(base: Path) -> Path:
    root = base / "mem"
    root.mkdir()
    (root / "checkpoint-feat-login.md").write_text(CHECKPOINT, encoding="utf-8")
    (root / "MEMORY.md").write_text(INDEX, encoding="utf-8")
    (root / "deploy.md").write_text(DEPLOY, encoding="utf-8")
    (root / "testing.md").write_text(TESTING, encoding="utf-8")
    (root / "plan.md").write_text("# Plan\n\n1. login\n2. deploy\n", encoding="utf-8")
    return root


def test_edges_of_every_kind(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    ws = Workspace(root)
    graph = ws.graph()
    cp = root / "checkpoint-feat-login.md"
    to_cp = graph.refs_to(cp)
    assert {(r.source.name, r.kind) for r in to_cp} == {
        ("MEMORY.md", INDEX_BULLET),
        ("deploy.md", CONTINUE),
    }
    to_deploy = graph.refs_to(root / "deploy.md")
    kinds = sorted((r.source.name, r.kind) for r in to_deploy)
    assert kinds == [
        ("MEMORY.md", MARKDOWN),
        ("checkpoint-feat-login.md", MARKDOWN),
        ("deploy.md", ANCHOR),
        ("testing.md", MARKDOWN),
    ]
    assert graph.count(root / "deploy.md") == 3  # its own table of contents does not count
    staging = graph.refs_to(root / "deploy.md", "Staging")
    assert sorted(r.source.name for r in staging) == [
        "checkpoint-feat-login.md",
        "deploy.md",
        "testing.md",
    ]
    wiki = graph.refs_to(root / "testing.md", "unit-tests")
    assert [(r.source.name, r.kind) for r in wiki] == [("deploy.md", WIKILINK)]
    plans = [r for r in graph.refs_to(root / "plan.md") if r.kind == PLAN]
    assert [r.source.name for r in plans] == ["checkpoint-feat-login.md"]
    assert slug("Unit tests!") == "unit-tests" == slug(slug("Unit tests"))


def test_graph_follows_one_edit_and_bumps_version_only_when_edges_change(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    ws = Workspace(root)
    graph = ws.graph()
    version = graph.version
    ws.set_text(root / "testing.md", TESTING + "\nMore prose.\n")
    assert ws.graph().version == version
    ws.set_text(root / "testing.md", TESTING.replace("./deploy.md#staging", "plan.md"))
    assert ws.graph().version > version
    assert graph.count(root / "deploy.md") == 2
    ref = graph.ref_at(root / "MEMORY.md", Position(3, 0))  # anywhere on a bullet's line
    assert ref is not None
    assert ref.kind == INDEX_BULLET
    assert ref.text == "feat-login"


def test_mv_checkpoint_moves_the_file_and_rewrites_every_reference(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    result = move(root, "feat-login", "Auth Login")
    assert result.changed
    assert not (root / "checkpoint-feat-login.md").exists()
    moved = (root / "checkpoint-auth-login.md").read_text(encoding="utf-8")
    assert moved.startswith("# Checkpoint: auth-login\n")
    assert moved.replace("auth-login", "feat-login") == CHECKPOINT
    assert "- **auth-login** (feat/login, Nov 30 11:00)" in (root / "MEMORY.md").read_text()
    assert "continue auth-login." in (root / "deploy.md").read_text()
    assert "sanitised" in result.message


@pytest.mark.parametrize("bad", ["../escape", "/abs/name", "a\\b", "bold*name", "x\x00y", "  "])
def test_unsafe_checkpoint_names_are_refused_without_a_write(tmp_path: Path, bad: str) -> None:
    root = make_root(tmp_path)
    before = {p.name: p.read_bytes() for p in root.iterdir()}
    with pytest.raises(UnsafePathError):
        plan_checkpoint_rename(Workspace(root), "feat-login", bad)
    with pytest.raises(UnsafePathError):
        move(root, "feat-login", bad)
    assert {p.name: p.read_bytes() for p in root.iterdir()} == before


def test_mv_file_into_memory_folder_rewrites_links_both_ways(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    move(root, "testing.md", "memory/unit-testing.md")
    assert not (root / "testing.md").exists()
    moved = (root / "memory" / "unit-testing.md").read_text()
    # its own relative link now climbs out of memory/ (the ./ style is kept)
    assert "[deploy](./../deploy.md#staging)" in moved or "[deploy](../deploy.md#staging)" in moved
    assert "- [Testing](memory/unit-testing.md)" in (root / "MEMORY.md").read_text()
    assert "[[unit-testing#Unit tests]]" in (root / "deploy.md").read_text()
    ws = Workspace(root)
    assert not [r for r in ws.graph().broken() if r.kind != PLAN or r.text != "plan.md"]


def test_mv_heading_rewrites_anchors_everywhere(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    move(root, "deploy.md#staging", "Staging and canary")
    deploy = (root / "deploy.md").read_text()
    assert "## Staging and canary\n" in deploy
    assert "[staging](#staging-and-canary)" in deploy
    assert "(deploy.md#staging-and-canary)" in (root / "checkpoint-feat-login.md").read_text()
    assert "(./deploy.md#staging-and-canary)" in (root / "testing.md").read_text()


def test_mv_refuses_to_overwrite_or_leave_the_root(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    with pytest.raises(OpError, match="never overwrites"):
        move(root, "testing.md", "deploy.md")
    with pytest.raises(UnsafePathError):
        move(root, "testing.md", "../outside.md")
    with pytest.raises(UnsafePathError):
        move(root, "testing.md", "sub/dir/testing.md")
    assert (root / "testing.md").read_text() == TESTING


def test_cli_mv_dry_run_json_and_refusal(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    done = memls_on(root, "mv", "feat-login", "auth-login", "--dry-run", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["dry_run"] is True
    assert data["changed"] is False
    assert data["moves"] == [
        [
            str(root.resolve() / "checkpoint-feat-login.md"),
            str(root.resolve() / "checkpoint-auth-login.md"),
        ]
    ]
    assert sorted(Path(p).name for p in data["edits"]) == [
        "MEMORY.md",
        "checkpoint-auth-login.md",
        "deploy.md",
    ]
    assert (root / "checkpoint-feat-login.md").exists()
    refused = memls_on(root, "mv", "feat-login", "../x", "--json")
    assert refused.returncode == 2
    assert "'..'" in json.loads(refused.stdout)["error"]
    done = memls_on(root, "mv", "feat-login", "auth-login")
    assert done.returncode == 0, done.stderr
    assert 'Renamed checkpoint "feat-login" → "auth-login"' in done.stdout
    assert (root / "checkpoint-auth-login.md").exists()


def test_moving_a_checkpoint_file_in_the_editor_is_a_checkpoint_rename(tmp_path: Path) -> None:
    """willRenameFiles plans with strict=False: checkpoint-a.md -> checkpoint-b.md also
    rewrites the bullet, the title and the continue lines."""
    from memls.core.ops.move import plan_file_move

    root = make_root(tmp_path)
    ws = Workspace(root)
    plan = plan_file_move(
        ws, root / "checkpoint-feat-login.md", root / "checkpoint-auth.md", strict=False
    )
    assert plan.kind == "checkpoint"
    edited = {p.name: [e.new_text for e in edits] for p, edits in plan.edits.items()}
    assert edited == {
        "MEMORY.md": ["auth"],
        "deploy.md": ["auth"],
        "checkpoint-feat-login.md": ["auth"],
    }


def test_missing_files_from_links_and_bullets_only(tmp_path: Path) -> None:
    from memls.core.templates import missing_files

    root = make_root(tmp_path)
    (root / "deploy.md").write_text(
        DEPLOY + "\nSee [Runbook](runbook.md), `notes.md` and [[on-call|On call]].\n",
        encoding="utf-8",
    )
    ws = Workspace(root)
    doc = ws.document(root / "deploy.md")
    assert doc is not None
    found = {f.path.name: f for f in missing_files(ws, doc, 0, len(doc.lines))}
    assert sorted(found) == ["on-call.md", "runbook.md"]  # a code span may name a project file
    assert "# Runbook\n" in found["runbook.md"].content
    assert "description: On call\n" in found["on-call.md"].content
