"""Approve a checkpoint bundle (one approval covers it all) and report which steps are open.

Bundles live in checkpoint files or LOG entries (see :mod:`memls.core.bundle`). Approving
ticks every item and stamps ``Approved: YYYY-MM-DD HH:MM``. LOG.md is append-only, so a
bundle already in its committed text is not edited: record the approval in a new entry.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memls.core.bundle import STEPS, Bundle, find_bundles
from memls.core.formats.checkpoint import saved_stamp
from memls.core.fsutil import UnsafePathError, atomic_write, inside, root_lock
from memls.core.gitfacade import Git
from memls.core.model import Document
from memls.core.ops import OpError, OpResult
from memls.core.ops._text import (
    checked_file,
    now_minute,
    oversize,
    read_text,
    refuse_oversize,
    require_config,
)
from memls.core.text import Lines, encode_lossless
from memls.core.workspace import memory_files


@dataclass(frozen=True)
class _Found:
    path: Path
    doc: Document
    bundle: Bundle

    @property
    def is_open(self) -> bool:
        return not self.bundle.approved or bool(self.bundle.open_items())


def _in_file(root: Path, path: Path) -> list[_Found]:
    text = read_text(path)
    if text is None:
        raise OpError(f"{path} does not exist")
    if oversize(text):
        if "checkpoint bundle" not in text.casefold():
            return []  # no bundle anywhere in it, however far the parser reads
        refuse_oversize(path, text, "find its bundles")
    doc = Lines(text).doc(path)
    return [_Found(path, doc, b) for b in find_bundles(doc)]


def _resolve(root: Path, path: Path) -> Path:
    target = path if path.is_absolute() else root / path
    if not inside(root, target):
        raise UnsafePathError(f"{path} is outside the memory root {root}")
    return checked_file(root, target, "bundle file")


def _select(root: Path, path: Path | None) -> tuple[_Found | None, list[_Found]]:
    """The bundle meant (the last open one of FILE, or the one open bundle of the root)."""
    if path is not None:
        found = _in_file(root, _resolve(root, path))
        if not found:
            raise OpError(f"{path.name} has no `## Checkpoint Bundle` section")
        open_ = [f for f in found if f.is_open]
        return (open_ or found)[-1], found
    every = [f for p in memory_files(root) for f in _in_file(root, p)]
    open_ = [f for f in every if f.is_open]
    if len(open_) == 1:
        return open_[0], every
    if not open_ and every:
        newest = max(every, key=lambda f: (f.path.stat().st_mtime, f.bundle.section.start_line))
        return newest, every
    return None, every


def _where(root: Path, found: _Found) -> str:
    rel = found.path.relative_to(root).as_posix()
    return f"{rel}:{found.bundle.section.start_line + 1}"


def approve_bundle(
    root: Path, path: Path | None = None, *, now: dt.datetime | None = None
) -> OpResult:
    """Tick every item of a bundle and stamp ``Approved:`` — one approval for the whole bundle."""
    root = root.resolve()
    require_config(root)
    with root_lock(root):
        chosen, every = _select(root, path)
        if chosen is None:
            if not every:
                raise OpError("No `## Checkpoint Bundle` found in this memory root.")
            listing = ", ".join(_where(root, f) for f in every if f.is_open)
            raise OpError(f"Several open bundles ({listing}): name the file to approve.")
        where = _where(root, chosen)
        bundle = chosen.bundle
        if not chosen.is_open:
            return OpResult(
                f"Bundle in {where} is already approved ({bundle.approved}); nothing to do.",
                changed=False,
                data={"file": str(chosen.path), "approved": bundle.approved},
            )
        lines = Lines(read_text(chosen.path) or "")
        _refuse_committed_log(root, chosen, lines)
        stamp = f"Approved: {saved_stamp(now_minute(now))}"
        ticked = 0
        for item in bundle.open_items():
            plain = lines.plain(item.line)
            col = item.box.start.character
            if plain[col : col + 3] == "[ ]":
                lines.replace(item.line, item.line + 1, [plain[:col] + "[x]" + plain[col + 3 :]])
                ticked += 1
        if bundle.approved_line is not None:
            lines.replace(bundle.approved_line, bundle.approved_line + 1, [stamp])
        else:
            at = bundle.section.start_line + 1
            lines.replace(at, at, [stamp])
        changed = atomic_write(chosen.path, encode_lossless(lines.text()), root=root)
    noun = "item" if ticked == 1 else "items"
    return OpResult(
        f"Approved the bundle in {where}: ticked {ticked} {noun}, stamped {stamp}.",
        changed=changed,
        paths=(chosen.path,) if changed else (),
        data={"file": str(chosen.path), "ticked": ticked, "approved": stamp.split(": ", 1)[1]},
    )


def _refuse_committed_log(root: Path, found: _Found, lines: Lines) -> None:
    """LOG.md is append-only: never edit bundle lines that are already committed."""
    if found.path.name != "LOG.md":
        return
    committed = Git(root).committed_text(found.path)
    if committed is None:
        return
    committed_lines = set(committed.splitlines())
    if any(lines.plain(i.line) in committed_lines for i in found.bundle.open_items()):
        raise OpError(
            "This bundle is in LOG.md's committed text, which is append-only: append a new "
            "entry recording the approval (memls log append) instead of editing it."
        )


def bundle_status(root: Path, path: Path | None = None) -> OpResult:
    """Which of the five steps of a bundle are done, open or missing."""
    root = root.resolve()
    chosen, every = _select(root, path)
    targets = [chosen] if chosen is not None else [f for f in every if f.is_open]
    if not targets:
        return OpResult(
            "No `## Checkpoint Bundle` found in this memory root.",
            changed=False,
            data={"open": [], "steps": {}, "bundles": []},
        )
    pairs = [_report(root, f) for f in targets]
    message = "\n\n".join(text for text, _ in pairs)
    reports = [report for _, report in pairs]
    first = reports[0]
    return OpResult(
        message,
        changed=False,
        paths=tuple(f.path for f in targets),
        data={"open": first["open"], "steps": first["steps"], "bundles": reports},
    )


def _report(root: Path, found: _Found) -> tuple[str, dict[str, Any]]:
    bundle = found.bundle
    steps: dict[str, str] = {}
    lines = [
        f"Bundle in {_where(root, found)} — "
        + (f"approved {bundle.approved}" if bundle.approved else "not approved")
    ]
    for kind in STEPS:
        items = [i for i in bundle.items if i.kind == kind]
        if not items:
            steps[kind] = "missing"
            lines.append(f"  ✗ {kind}: missing (add `- [ ] {kind}: …`)")
        elif all(i.checked for i in items):
            steps[kind] = "done"
            lines.append(f"  ✓ {items[0].text}")
        else:
            steps[kind] = "open"
            lines.extend(f"  ☐ {i.text}" for i in items if not i.checked)
    open_items = [i.text for i in bundle.open_items()]
    open_steps = [k for k, v in steps.items() if v != "done"]
    lines.append("Open: " + (", ".join(open_steps) if open_steps else "nothing — complete"))
    return "\n".join(lines), {
        "file": str(found.path),
        "line": bundle.section.start_line + 1,
        "approved": bundle.approved,
        "open": open_items,
        "steps": steps,
    }
