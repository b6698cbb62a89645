"""Golden tests for bundle approve/status, log append and handoff new/refresh."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from memls.core.gitfacade import Git
from memls.core.ops import OpError
from memls.core.ops.bundle import approve_bundle, bundle_status
from memls.core.ops.checkpoint import save_checkpoint
from memls.core.ops.handoff import AUTO_END, AUTO_START, write_handoff
from memls.core.ops.log import append_log
from memls.core.parse import parse_file
from memls.core.rules import check_document
from memls.core.workspace import Workspace
from tests.cli_helpers import memls_on

NOW = dt.datetime(2026, 11, 30, 12, 0)
LATER = dt.datetime(2026, 11, 30, 14, 5)

BUNDLE = (
    "\n## Checkpoint Bundle\n"
    "- [x] memory: `memory/feedback-testing.md`\n"
    "- [ ] index: `MEMORY.md` pointer for feedback-testing\n"
    '- [ ] log: LOG.md entry "Recall fallback decision"\n'
    "- [ ] transcript: archive + backfill session 2026-11-30\n"
)


def _codes(root: Path, name: str) -> list[str]:
    ws = Workspace(root)
    doc = ws.document(root / name)
    assert doc is not None
    return [d.code for d in check_document(ws, doc, now=LATER)]


@pytest.fixture
def bundled(tmp_path: Path) -> Path:
    save_checkpoint(tmp_path, "work", next_action="Ship it", now=NOW, git=Git(tmp_path))
    cp = tmp_path / "checkpoint-work.md"
    cp.write_text(cp.read_text() + BUNDLE)
    return cp


def test_bundle_status_then_approve(bundled: Path) -> None:
    root = bundled.parent
    status = bundle_status(root)
    assert status.message == (
        "Bundle in checkpoint-work.md:18 — not approved\n"
        "  ✓ memory: `memory/feedback-testing.md`\n"
        "  ☐ index: `MEMORY.md` pointer for feedback-testing\n"
        '  ☐ log: LOG.md entry "Recall fallback decision"\n'
        "  ☐ transcript: archive + backfill session 2026-11-30\n"
        "  ✗ recall: missing (add `- [ ] recall: …`)\n"
        "Open: index, log, transcript, recall"
    )
    assert status.data["steps"] == {
        "memory": "done",
        "index": "open",
        "log": "open",
        "transcript": "open",
        "recall": "missing",
    }
    assert "BN001" in _codes(root, bundled.name)
    before = bundled.read_text()
    result = approve_bundle(root, now=LATER)
    assert result.message == (
        "Approved the bundle in checkpoint-work.md:18: ticked 3 items, "
        "stamped Approved: 2026-11-30 14:05."
    )
    assert bundled.read_text() == before.replace("- [ ]", "- [x]").replace(
        "## Checkpoint Bundle\n", "## Checkpoint Bundle\nApproved: 2026-11-30 14:05\n"
    )
    assert "BN001" not in _codes(root, bundled.name)
    again = approve_bundle(root, now=LATER)
    assert not again.changed
    assert "already approved" in again.message


def test_bundle_cli_and_ambiguity(bundled: Path) -> None:
    root = bundled.parent
    other = root / "checkpoint-other.md"
    other.write_text(bundled.read_text().replace("# Checkpoint: work", "# Checkpoint: other"))
    proc = memls_on(root, "bundle", "approve")
    assert proc.returncode == 2
    assert "Several open bundles" in proc.stderr
    proc = memls_on(root, "bundle", "approve", str(other))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Approved the bundle in checkpoint-other.md:18")
    status = memls_on(root, "bundle", "status", "--json")
    assert '"transcript": "open"' in status.stdout  # the remaining open bundle is work's


def test_approve_refuses_files_outside_root(
    bundled: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "x.md"
    elsewhere.write_text(BUNDLE)
    with pytest.raises(ValueError, match="outside the memory root"):
        approve_bundle(bundled.parent, elsewhere)


# -- log -----------------------------------------------------------------------
def test_log_append_keeps_every_existing_byte(tmp_path: Path) -> None:
    log = tmp_path / "LOG.md"
    original = "# Log\r\n\r\n## 2026-11-29 · first entry\r\nbody  with trailing space  "
    log.write_bytes(original.encode())
    body = tmp_path / "body.md"
    body.write_text("Scope: recall.\n\n### Decisions\n- hybrid by default\n")
    proc = memls_on(
        tmp_path, "log", "append", "--title", "Recall fallback", "--body-file", str(body)
    )
    assert proc.returncode == 0, proc.stderr
    data = log.read_bytes()
    assert data.startswith(original.encode())
    added = data[len(original.encode()) :].decode()
    assert added.startswith("\r\n\r\n## ")
    assert added.endswith(
        " — Recall fallback\r\n\r\nScope: recall.\r\n\r\n### Decisions\r\n- hybrid by default\r\n"
    )
    second = append_log(tmp_path, "Second", now=LATER)
    assert log.read_bytes() == data + b"\r\n## 2026-11-30 14:05 \xe2\x80\x94 Second\r\n"
    assert second.message == "Appended to LOG.md: ## 2026-11-30 14:05 — Second"


def test_log_created_and_checked(tmp_path: Path) -> None:
    append_log(tmp_path, "First", "did a thing", now=NOW)
    append_log(tmp_path, "Second", now=LATER)
    assert (tmp_path / "LOG.md").read_text() == (
        "# Log\n\n## 2026-11-30 12:00 — First\n\ndid a thing\n\n## 2026-11-30 14:05 — Second\n"
    )
    assert [c for c in _codes(tmp_path, "LOG.md") if c.startswith("LG")] == []


@pytest.mark.parametrize(
    ("title", "body", "message"),
    [
        ("", "", "needs a title"),
        ("two\nlines", "", "one line"),
        ("ok", "text\n## sneaky entry\n", "would split the entry"),
    ],
)
def test_log_refusals(tmp_path: Path, title: str, body: str, message: str) -> None:
    with pytest.raises(OpError, match=message):
        append_log(tmp_path, title, body, now=NOW)
    assert not (tmp_path / "LOG.md").exists()


# -- handoff -------------------------------------------------------------------
def test_handoff_new_prefills_every_section(bundled: Path) -> None:
    root = bundled.parent
    save_checkpoint(
        root,
        "work",
        next_action="Ship it",
        failed=["vendoring the model — no weights offline"],
        now=LATER,
        git=Git(root),
    )
    append_log(root, "Chose hybrid recall", now=NOW)
    result = write_handoff(root, now=LATER, git=Git(root))
    assert result.message == "Wrote .handoff.md; 5 section(s) wait for the author."
    text = (root / ".handoff.md").read_text()
    auto, author = AUTO_START, AUTO_END
    assert text == (
        "# Handoff\n\n- **Updated:** 2026-11-30 14:05\n\n"
        f"## Current State\n{auto}\n- Branch: (not in a git repository)\n"
        "- Newest checkpoint: `work` (branch `no-branch`, saved 2026-11-30 14:05)\n"
        f"{author}\n\n"
        f"## Decisions\n{auto}\n- Latest LOG.md entry: 2026-11-30 12:00 — Chose hybrid recall\n"
        f"{author}\n- (author: record the decisions made and why, so they are not reopened)\n\n"
        f"## Open Work\n{auto}\n"
        "- Bundle (checkpoint-work.md): index: `MEMORY.md` pointer for feedback-testing\n"
        '- Bundle (checkpoint-work.md): log: LOG.md entry "Recall fallback decision"\n'
        "- Bundle (checkpoint-work.md): transcript: archive + backfill session 2026-11-30\n"
        f"{author}\n- (author: add unfinished threads and open questions)\n\n"
        "## Verified Commands\n"
        "- (author: add each command you ran and saw pass, as a code span)\n\n"
        "## Non-Claims\n- (author: list what was NOT verified or tested)\n\n"
        "## Drift / Risk Flags\n"
        "- (author: list drift from the plan, risks, anything that looks wrong)\n\n"
        f"## Next Steps\n{auto}\n- Ship it\n"
        "  - (author: 1-3 lines on what to do next, with file paths)\n"
        "- Resume with: `memls checkpoint resume work`\n"
        "- Do not repeat (failed before): vendoring the model — no weights offline\n"
        f"{author}\n"
    )
    codes = _codes(root, ".handoff.md")
    assert "HO001" not in codes
    assert "HO002" not in codes
    with pytest.raises(OpError, match="exists"):
        write_handoff(root, now=LATER, git=Git(root))
    proc = memls_on(root, "handoff", "new")
    assert proc.returncode == 2


def test_handoff_refresh_keeps_author_text(tmp_path: Path) -> None:
    save_checkpoint(tmp_path, "one", next_action="First", now=NOW, git=Git(tmp_path))
    write_handoff(tmp_path, now=NOW, git=Git(tmp_path))
    path = tmp_path / ".handoff.md"
    text = path.read_text()
    text = text.replace(
        "- (author: add each command you ran and saw pass, as a code span)",
        "- `pytest -q tests/test_ops_checkpoint.py` (passed)",
    )
    text = text.replace(
        "- (author: list what was NOT verified or tested)", "- Never ran on Windows.  "
    )
    text = text.replace("## Next Steps\n", "## Next Steps\nMy own first line.\n")
    # The author deletes Drift entirely and adds a section of their own.
    start = text.index("## Drift / Risk Flags")
    end = text.index("## Next Steps")
    text = text[:start] + "## Author Notes\nanything\n\n" + text[end:]
    path.write_text(text)
    save_checkpoint(tmp_path, "two", next_action="Second", now=LATER, git=Git(tmp_path))
    result = write_handoff(tmp_path, refresh=True, now=LATER, git=Git(tmp_path))
    assert result.message.startswith("Refreshed .handoff.md")
    new = path.read_text()
    for line in (
        "- `pytest -q tests/test_ops_checkpoint.py` (passed)",
        "- Never ran on Windows.  ",
        "My own first line.",
        "## Author Notes\nanything\n",
    ):
        assert line in new
    assert "- **Updated:** 2026-11-30 14:05\n" in new
    assert "- Newest checkpoint: `two`" in new
    assert "- Checkpoint `one`: First" in new
    assert "- Newest checkpoint: `one`" not in new
    assert "## Drift / Risk Flags\n" in new  # missing section restored, before Next Steps
    assert new.index("## Drift / Risk Flags") < new.index("## Next Steps")
    again = write_handoff(tmp_path, refresh=True, now=LATER, git=Git(tmp_path))
    assert not again.changed
    doc = parse_file(path)
    assert doc.lines[-1] == ""


def test_handoff_new_force_carries_verified_commands(tmp_path: Path) -> None:
    write_handoff(tmp_path, now=NOW, git=Git(tmp_path))
    path = tmp_path / ".handoff.md"
    path.write_text(
        path.read_text().replace(
            "- (author: add each command you ran and saw pass, as a code span)", "- `make test`"
        )
    )
    write_handoff(tmp_path, now=LATER, git=Git(tmp_path), force=True)
    assert "## Verified Commands\n- `make test`\n\n" in path.read_text()
