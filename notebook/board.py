"""CheckpointBoard: the root's checkpoints at a glance, with save, resume and clear.

Ages, staleness, branch checks and diagnostics come from core (``list_checkpoints`` and the
rule engine); the buttons call the core operations and show their messages verbatim.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import ipywidgets as w

from memls.core.model import Diagnostic
from memls.core.ops.checkpoint import (
    CheckpointInfo,
    clear_checkpoint,
    list_checkpoints,
    resume_checkpoint,
    save_checkpoint,
)
from memls.core.rules import check_document
from memls.core.text import decode
from memls.core.workspace import Workspace
from memls.notebook import render as r

COLUMNS = ("checkpoint", "branch", "saved", "age", "flags", "diagnostics")


class CheckpointBoard:
    """A table of checkpoints; pick one to read it with its diagnostics, then act on it.

    ``now`` pins the clock (ages, staleness) for reproducible output; default: real time.
    """

    def __init__(self, root: Path | str | None = None, *, now: dt.datetime | None = None) -> None:
        self.now = now
        self.root: Path | None = None
        self.infos: list[CheckpointInfo] = []
        self.diagnostics: dict[str, list[Diagnostic]] = {}
        self.selected: str | None = None
        self.last_result: Any = None
        self._name_buttons: dict[str, w.Button] = {}

        self.messages = r.Messages()
        self.title = w.HTML(r.title_html("Checkpoints"))
        self.table = w.GridBox(
            [],
            layout=w.Layout(
                grid_template_columns=f"repeat({len(COLUMNS)}, auto)", grid_gap="0px 4px"
            ),
        )
        self.table.add_class("memls-table")
        self.empty = w.HTML("")
        self.empty.add_class("memls-box")
        self.detail = w.HTML("")
        self.detail.add_class("memls-box")

        self.refresh_button = w.Button(description="Refresh", icon="refresh")
        self.resume_button = w.Button(description="Resume", icon="play", disabled=True)
        self.clear_button = w.Button(
            description="Clear", icon="trash", disabled=True, button_style=""
        )
        self.confirm_button = w.Button(description="Yes, clear it", button_style="danger")
        self.keep_button = w.Button(description="Keep")
        self.confirm_row = w.HBox(
            [w.HTML(""), self.confirm_button, self.keep_button],
            layout=w.Layout(display="none", align_items="center"),
        )

        self.save_name = w.Text(
            placeholder="name (default: the git branch)", layout=w.Layout(width="220px")
        )
        self.save_next = w.Text(placeholder="next action", layout=w.Layout(width="260px"))
        self.save_summary = w.Text(
            placeholder="one-line summary for MEMORY.md", layout=w.Layout(width="260px")
        )
        self.save_button = w.Button(description="Save", icon="save", button_style="primary")

        actions = w.HBox([self.refresh_button, self.resume_button, self.clear_button])
        save_row = w.HBox(
            [self.save_name, self.save_next, self.save_summary, self.save_button],
            layout=w.Layout(flex_flow="row wrap"),
        )
        self.widget = w.VBox(
            [
                r.css(),
                self.title,
                *self.messages.children,
                self.table,
                self.empty,
                actions,
                self.confirm_row,
                self.detail,
                save_row,
            ]
        )
        self.widget.add_class("memls-box")
        self.widget.add_class("memls-board")

        self.refresh_button.on_click(lambda _b: self.refresh())
        self.resume_button.on_click(lambda _b: self.resume())
        self.clear_button.on_click(lambda _b: self.ask_clear())
        self.confirm_button.on_click(lambda _b: self.clear())
        self.keep_button.on_click(lambda _b: r.hidden(self.confirm_row, True))
        self.save_button.on_click(lambda _b: self.save())
        self._open(root)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    @r.guarded(lambda self: self.messages)
    def _open(self, root: Path | str | None) -> None:
        self.root = r.open_root(root, (self.refresh_button, self.save_button))
        self.title.value = r.title_html("Checkpoints", self.root)
        self.refresh()

    # --- table ---------------------------------------------------------------------------

    @r.guarded(lambda self: self.messages)
    def refresh(self) -> None:
        """Re-read checkpoints and their diagnostics; keep the selection if it still exists."""
        assert self.root is not None
        self.infos = list_checkpoints(self.root, now=self.now)
        workspace = Workspace(self.root)
        self.diagnostics = {}
        for info in self.infos:
            doc = workspace.document(info.path)
            self.diagnostics[info.name] = (
                check_document(workspace, doc, self.now) if doc is not None else []
            )
        cells: list[w.Widget] = [_cell(f"<b>{name}</b>", head=True) for name in COLUMNS]
        self._name_buttons = {}
        for info in self.infos:
            button = w.Button(
                description=info.name,
                tooltip=f"Show {info.path.name}",
                layout=w.Layout(width="auto"),
            )
            button.on_click(lambda _b, name=info.name: self.select(name))
            self._name_buttons[info.name] = button
            flags = (r.flag("stale") if info.stale else "") + (
                r.flag("other branch") if info.branch_mismatch else ""
            )
            diags = self.diagnostics[info.name]
            worst = min((d.severity for d in diags), default=None)
            count = (
                f'<span class="memls-sev-{worst.name.lower()}">{len(diags)}</span>'
                if worst is not None
                else "0"
            )
            saved = info.saved.strftime("%Y-%m-%d %H:%M") if info.saved else "?"
            cells += [
                button,
                _cell(r.esc(info.branch or "—")),
                _cell(r.esc(saved)),
                _cell(r.esc(r.age_text(info.age_days))),
                _cell(flags or "—"),
                _cell(count),
            ]
        self.table.children = tuple(cells)
        r.hidden(self.table, not self.infos)
        self.empty.value = (
            "" if self.infos else r.note_html("No checkpoints in this root yet. Save one below.")
        )
        names = [info.name for info in self.infos]
        if self.selected in names:
            self.select(self.selected)
        else:
            self.selected = None
            self.detail.value = ""
            self._sync_buttons()

    @property
    def names(self) -> list[str]:
        return [info.name for info in self.infos]

    def _sync_buttons(self) -> None:
        for name, button in self._name_buttons.items():
            button.button_style = "info" if name == self.selected else ""
        self.resume_button.disabled = self.selected is None
        self.clear_button.disabled = self.selected is None
        r.hidden(self.confirm_row, True)

    @r.guarded(lambda self: self.messages)
    def select(self, name: str) -> None:
        """Show one checkpoint rendered, with the rules' findings listed under it."""
        info = next((i for i in self.infos if i.name == name), None)
        if info is None:
            raise ValueError(f'No checkpoint "{name}" in {self.root}.')
        self.selected = name
        self._sync_buttons()
        text = decode(info.path.read_bytes()).text
        diags = self.diagnostics.get(name, [])
        if diags:
            items = "".join(
                f'<li class="memls-diag"><span class="memls-sev-{d.severity.name.lower()}">'
                f"{r.esc(d.severity.name.lower())}</span> {r.esc(d.code)} line {d.range.start.line + 1}: "
                f"{r.esc(d.message)}</li>"
                for d in diags
            )
            found = f"<div><b>{len(diags)} diagnostic{'s' if len(diags) != 1 else ''}</b><ul>{items}</ul></div>"
        else:
            found = '<div class="memls-status">No diagnostics.</div>'
        flags = (r.flag("stale") if info.stale else "") + (
            r.flag("other branch") if info.branch_mismatch else ""
        )
        head = f'<div class="memls-line1"><span class="memls-path">{r.esc(info.path.name)}</span>{flags}</div>'
        self.detail.value = f'<div class="memls-preview">{head}{found}{r.markdown(text)}</div>'

    # --- operations ----------------------------------------------------------------------

    @r.guarded(lambda self: self.messages)
    def save(self) -> None:
        """Save (or update) a checkpoint through core; the name defaults to the branch."""
        assert self.root is not None
        self.messages.clear()
        result = save_checkpoint(
            self.root,
            self.save_name.value.strip() or None,
            next_action=self.save_next.value.strip() or None,
            summary=self.save_summary.value.strip() or None,
        )
        self.last_result = result
        self.messages.show_note(result.message)
        self.selected = str(result.data.get("name") or self.selected)
        self.refresh()

    @r.guarded(lambda self: self.messages)
    def resume(self) -> None:
        """Show core's resume presentation for the selected checkpoint (failed approaches first)."""
        assert self.root is not None
        if self.selected is None:
            raise ValueError("Pick a checkpoint first.")
        self.messages.clear()
        result = resume_checkpoint(self.root, self.selected)
        self.last_result = result
        self.messages.show_note(result.message)
        if result.changed:
            self.refresh()

    def ask_clear(self) -> None:
        if self.selected is None:
            return
        label = self.confirm_row.children[0]
        label.value = f'<span class="memls-box">Delete checkpoint-{r.esc(self.selected)}.md and its index bullet?</span>'
        r.hidden(self.confirm_row, False)

    @r.guarded(lambda self: self.messages)
    def clear(self) -> None:
        """Delete the selected checkpoint and its MEMORY.md bullet through core."""
        assert self.root is not None
        r.hidden(self.confirm_row, True)
        if self.selected is None:
            raise ValueError("Pick a checkpoint first.")
        self.messages.clear()
        result = clear_checkpoint(self.root, self.selected)
        self.last_result = result
        self.messages.show_note(result.message)
        self.selected = None
        self.refresh()


def _cell(content: str, *, head: bool = False) -> w.HTML:
    cell = w.HTML(content)
    cell.add_class("memls-cell")
    if head:
        cell.add_class("memls-head")
    return cell
