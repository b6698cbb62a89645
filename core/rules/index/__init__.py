"""IX: the MEMORY.md index — its heading, Active Checkpoints bullets, pointers and load limits.

MEMORY.md is loaded at every session start, so it must stay a thin, correct index: one
bullet per checkpoint file, pointers that lead somewhere, nothing volatile, nothing past
the part Claude Code actually loads.

The family is split along its seams: :mod:`.structure` (IX001–IX008: title, bullets, resume
line, volatile sections), :mod:`.pointers` (IX009, IX010, IX012: pointers and links) and
:mod:`.limits` (IX011: what is loaded at session start). The index format itself is
:mod:`memls.core.formats.index`.
"""

from __future__ import annotations

from collections.abc import Iterator

from memls.core.model import Diagnostic, FileKind, Severity
from memls.core.rules import Rule, RuleContext
from memls.core.rules.index.limits import check_limits
from memls.core.rules.index.pointers import check_pointers, check_topic_links, check_unreferenced
from memls.core.rules.index.pointers import reachable as reachable  # re-exported
from memls.core.rules.index.structure import MAX_LISTED_MISSING as MAX_LISTED_MISSING  # re-exported
from memls.core.rules.index.structure import check_structure

RULES = (
    Rule(
        "IX001",
        "index-heading",
        Severity.WARNING,
        "MEMORY.md does not start with a `# ` heading (memls's index: one with Active "
        "Checkpoints or checkpoints beside it; another tool's index only for a `#` written "
        "without its space)",
        fixable=True,
        rationale="warning: format; Claude Code's own headingless index is not reported",
        doc="""
        MEMORY.md's first line (after front matter and a leading `<!-- … -->` note) must
        be a `# ` heading. memls's index operations and resume find the Active Checkpoints
        section under it. The headingless list of pointers Claude Code writes itself is
        not reported, nor is the MEMORY.md another tool writes and rewrites (nanobot's
        consolidated memory, an agent's notes: no Active Checkpoints, no checkpoints in
        the root) — there only `#Title`, a heading written without its space, is.

        Wrong: `#Project Memory` (no space), blank lines before the heading, or prose first.
        Right: `# Project Memory` as line 1.

        Fix: add the space after `#`, remove the leading blank lines, or insert
        `# Project Memory` (the quick fix does each).
        """,
    ),
    Rule(
        "IX002",
        "index-orphan-bullet",
        Severity.WARNING,
        "Active Checkpoints bullet names a checkpoint whose file is missing (orphan)",
        fixable=True,
        rationale="warning: a bullet to a missing checkpoint misleads resume; no memory is lost",
        doc="""
        A bullet `- **name** …` under `## Active Checkpoints` names a checkpoint, but
        `checkpoint-name.md` does not exist in the memory root. Resume offers a checkpoint
        it cannot load.

        Wrong: `- **auth** (main, Mar 3 10:00) — wire login` with no checkpoint-auth.md.
        Right: the bullet is gone, or the file is back.

        Fix: delete the bullet (the quick fix), or restore the checkpoint file from git.
        """,
    ),
    Rule(
        "IX003",
        "index-missing-bullet",
        Severity.WARNING,
        "a checkpoint file exists but has no bullet",
        fixable=True,
        rationale="warning: the checkpoint exists but resume lists do not show it",
        doc="""
        A `checkpoint-NAME.md` of the root has no bullet under `## Active Checkpoints`, so
        the list the agent reads at session start does not show it. Another tool's
        checkpoints (CP050) are not counted. Past 25 missing checkpoints the rest share one
        diagnostic.

        Wrong: checkpoint-auth.md exists; MEMORY.md lists only `**billing**`.
        Right: `- **auth** (main, Mar 3 10:00) — wire login` beside it.

        Fix: add the bullet (the quick fix writes it from the checkpoint's Branch, Saved
        and Next Action, creating the section when there is none), or clear the checkpoint
        with `memls checkpoint clear NAME`.
        """,
    ),
    Rule(
        "IX004",
        "index-bullet-form",
        Severity.WARNING,
        "bullet not in the `- **name** (branch, Mon DD HH:MM) — summary` form",
        fixable=True,
        rationale="warning: format of a bullet; resume may not read it",
        doc="""
        Every top-level bullet of Active Checkpoints must read
        `- **name** (branch, Mon DD HH:MM) — summary`, the form resume and `memls` parse.

        Wrong: `- **auth**: wire login` or `- old-experiment: see notes`.
        Right: `- **auth** (main, Mar 3 10:00) — wire login`.

        Fix: rewrite the bullet; the quick fix does it when branch, date and summary can be
        read from the bullet or its checkpoint. A bullet that names no checkpoint belongs
        outside the section.
        """,
    ),
    Rule(
        "IX005",
        "index-bullet-stale",
        Severity.WARNING,
        "bullet's branch or date disagrees with its checkpoint file (stale index)",
        fixable=True,
        rationale="warning: a stale bullet; the checkpoint file has the truth",
        doc="""
        The branch or save time in a bullet's parentheses differs from the checkpoint's own
        `Branch:` and `Saved:` lines: the checkpoint was saved again without the index.

        Wrong: `- **auth** (main, Mar 3 10:00) — …` when checkpoint-auth.md says
        `Branch: feat/auth` and `Saved: 2026-03-05 09:30`.
        Right: `- **auth** (feat/auth, Mar 5 09:30) — …`.

        Fix: rewrite the parentheses from the checkpoint (the quick fix).
        """,
    ),
    Rule(
        "IX006",
        "index-layout",
        Severity.WARNING,
        "resume line missing or not right after the bullets; section not right after the "
        "first heading",
        fixable=True,
        rationale="warning: layout of the resume section; style",
        doc="""
        `## Active Checkpoints` should be the first section under the `# ` title, hold the
        bullets, then the line `Resume any: `continue` or `continue {name}``. A second
        Active Checkpoints section is reported too: only the first is read.

        Wrong: the resume line missing, above the bullets, or separated by other text.
        Right: the bullets, a blank line, the resume line.

        Fix: add or move the resume line (quick fixes); move the section under the title;
        merge a second section into the first.
        """,
    ),
    Rule(
        "IX007",
        "index-volatile-section",
        Severity.WARNING,
        "legacy volatile section in MEMORY.md (fix: `memls index migrate`)",
        operation="index.migrate",
        rationale="warning: volatile state in the index; it still loads",
        doc="""
        A `## Current State`, `## Next Action…`, `## Session Checkpoint` or
        `## Session … Summary` section in MEMORY.md holds session state. The index is
        loaded at every session start and should stay a thin list of pointers; session
        state belongs in a checkpoint file, which resume reads by name.

        Wrong: `## Current State` with this week's progress in MEMORY.md.
        Right: that text in checkpoint-NAME.md, a bullet for it in the index.

        Fix: `memls index migrate` moves such sections into a checkpoint.

        Not judged: a Claude Code memory folder (`.claude/memory/`, a subagent's, the auto
        memory) that keeps no checkpoints and no Active Checkpoints section: there the
        index is where Claude Code keeps the current state.
        """,
    ),
    Rule(
        "IX008",
        "index-duplicate-bullet",
        Severity.WARNING,
        "duplicate bullets for one name",
        fixable=True,
        rationale="warning: duplicate bullets; nothing is lost",
        doc="""
        Two Active Checkpoints bullets name the same checkpoint; they can disagree.

        Wrong: `- **auth** (main, …)` twice.
        Right: one bullet per checkpoint.

        Fix: keep the first, delete the later one (the quick fix).
        """,
    ),
    Rule(
        "IX009",
        "index-broken-pointer",
        Severity.ERROR,
        "pointer/link in the index (a Markdown link, a wikilink, a path opening a list "
        "item; a path named in passing is IX013) to a file that exists nowhere (not beside "
        "the index, in the root, the repository, or by wikilink name); not a line that records the "
        "file went (`Deleted the duplicate x.md`, `` `y.md` (archived) ``), a date's "
        "pattern (`memory/2026-MM-DD.md`), or a path into a folder committed as a symlink"
        " to its owner's machine",
        rationale="error: the agent's entry point points at nothing — that memory is lost",
        doc="""
        A link or pointer in MEMORY.md (`[deploy](deploy.md)`, `[[deploy]]`, a backticked
        path opening an item of a pointer list) resolves to no file: not beside the index, in the memory
        root, in the repository, or by wikilink name. Placeholders in examples are not
        reported. The agent follows the index to its memory; a dead pointer is memory it
        will not find.

        Wrong: `- [Deploy notes](deploy-notes.md)` after deploy-notes.md was renamed.
        Right: the pointer names the file's current path.

        Fix: correct the path, create the file, or remove the pointer.
        """,
    ),
    Rule(
        "IX010",
        "index-unreferenced-topic",
        Severity.WARNING,
        "topic file that no link reaches, from the index or through the topic files it links",
        rationale="warning: the file exists but no link leads the agent to it",
        doc="""
        A topic file of the root is reached by no link from the index, directly or through
        the topic files it links (agent instruction files count as starting points).
        Daily logs, README.md/AGENTS.md, agent workspaces and an index that links to no
        file at all are not reported. The agent finds topic files by following links.

        Wrong: `deploy.md` in the root, no line in MEMORY.md leads to it.
        Right: `- [deploy](deploy.md)` in MEMORY.md or in a topic file it links.

        Fix: add a pointer, or delete the file if it is no longer needed.
        """,
    ),
    Rule(
        "IX011",
        "index-past-load-limit",
        Severity.ERROR,
        "content past line 200 or 25 KB (Claude Code), or past 20,000 characters (an agent "
        "workspace): not loaded at session start",
        rationale="error: the agent never loads what is past the limit — that memory is lost",
        doc="""
        Claude Code loads only the first 200 lines / 25 KB of its MEMORY.md (limits set by
        `index_max_lines` / `index_max_bytes`); an agent workspace injects up to 20,000
        characters. Non-blank content past the cut is never seen at session start. A
        MEMORY.md in a docs folder, or in a repository folder that is not a Claude memory
        root, is read whole and not reported.

        Wrong: a 320-line MEMORY.md with notes after line 200.
        Right: a short index of pointers; the detail in topic files.

        Fix: move detail into topic files and keep only pointers in the index.
        """,
    ),
    Rule(
        "IX012",
        "broken-link",
        Severity.WARNING,
        "link in a topic file (Markdown or `[[wikilink]]`) to a file that exists nowhere;"
        " a wikilink may name a note by its frontmatter `name`, a folder of notes "
        "(`[[machines/gpu1]]`), a note kept as YAML (`[[adapters/v3/lineage]]`) or a "
        "relation first (`[[works_at:ACME]]`); a dead link to a folder says where a "
        "folder of that path is; one finding per dead target per file, naming its other "
        "lines; not a source path under a top folder the repository never had "
        "(`browser_use/dom/service.py` in notes on another project's code)",
        rationale="warning: a topic file links to nothing; the index itself is intact",
        doc="""
        A Markdown link or `[[wikilink]]` in a topic file resolves to no file (the same
        resolution as IX009; a cited line range, `app.py:12-40` or `app.py#L3-L9`, names
        the file). It is a warning, not an error: the index, the entry point, is intact.
        A note kept as a record — dated by its name, or in an archive folder — is not
        judged: the files it linked then have moved on.

        Wrong: `see [[deploy-notes]]` after deploy-notes.md was deleted.
        Right: the link names an existing file.

        Fix: correct the link, create the file, or remove the link.
        """,
    ),
    Rule(
        "IX013",
        "index-missing-path",
        Severity.WARNING,
        "a path the index names in passing — in a sentence or a table cell, in backticks — "
        "that exists nowhere (IX009's resolution): maybe this memory's file gone missing, "
        "maybe a file of another repository or the owner's vault; not a capitalised "
        "document name (`CLAUDE.md`, `SKILL.md`: a kind of file any repository has), a "
        "pattern (`_WEEK-NN.md`) or a name cut short (`2026…x.md`)",
        rationale=(
            "warning: a link or a pointer bullet that leads nowhere is IX009, an error; a "
            "path written in passing may name a file kept elsewhere"
        ),
        doc="""
        A backticked path in a sentence or a table of MEMORY.md ("the fix is in
        `deploy.md` now", a row `| scripts/sync.md | … |`) resolves to no file, by the same
        resolution as IX009. Unlike a link or a pointer bullet, such a path is not always
        a pointer: agent workspaces write the names of files in other repositories ("the
        `README.md` of the API repo") into the journal they keep as an index.

        Wrong: "the runbook is `ops/runbook.md`" after ops/runbook.md was renamed.
        Right: a link to the file's current path, or words saying which repository holds it.

        Fix: correct the path or create the file; for another repository's file, name it.
        """,
    ),
)


def check(ctx: RuleContext) -> Iterator[Diagnostic]:
    doc = ctx.doc
    if doc.kind is FileKind.TOPIC:
        from memls.core.rules.memoryfile import not_memory

        if not_memory(ctx.workspace, doc) is not None:
            return  # an Agent Skill or a project document: not memory
        yield from check_unreferenced(ctx)
        yield from check_topic_links(ctx)
        return
    if doc.kind is not FileKind.INDEX:
        return
    yield from check_structure(ctx)
    yield from check_pointers(ctx)
    limit = check_limits(ctx)
    if limit is not None:
        yield limit
