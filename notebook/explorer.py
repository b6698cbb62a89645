"""RecallExplorer: search a memory root from a notebook and read what was found.

The widget gathers input (query, mode, kind, top-k, dates), calls
:mod:`memls.core.recall.api`, and renders what comes back. Ranking, degraded mode, model
choice and date parsing are all core's: the widget only shows core's messages.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ipywidgets as w

from memls.core.config import load_config
from memls.core.recall import api
from memls.core.recall.chunking import KINDS
from memls.core.recall.store import db_path_for, open_existing
from memls.core.text import decode
from memls.notebook import render as r

ANY_KIND = "any kind"
PREVIEW_LINES = 200


class RecallExplorer:
    """Query box, filters, ranked results, a preview pane, status and backfill.

    ``debounce`` is how long typing must pause before a search runs (seconds); 0 searches
    on every change, synchronously, which is what tests use.
    """

    def __init__(
        self, root: Path | str | None = None, *, model: str | None = None, debounce: float = 0.35
    ) -> None:
        self.model = model
        self.debounce = debounce
        self.root: Path | None = None
        self.response: api.SearchResponse | None = None
        self.selected: api.SearchResult | None = None
        self.last_backfill: dict[str, Any] | None = None
        self.backfill_listeners: list[Callable[[dict[str, Any]], None]] = []
        self._timer: threading.Timer | None = None
        self._search_seq = 0
        self._render_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._cancel = threading.Event()

        self.messages = r.Messages()
        self.title = w.HTML(r.title_html("Recall explorer"))
        self.status_line = w.HTML("")
        self.status_line.add_class("memls-box")
        self.banner = w.HTML("", layout=w.Layout(display="none"))
        self.banner.add_class("memls-box")

        self.query = w.Text(
            placeholder="Search memory: words or a question, Enter to search",
            continuous_update=True,
            layout=w.Layout(flex="1 1 auto", width="auto"),
        )
        self.query.add_class("memls-query")
        self.search_button = w.Button(
            description="Search", icon="search", layout=w.Layout(width="auto")
        )
        self.mode = w.ToggleButtons(
            options=list(api.MODES), value="hybrid", style={"button_width": "auto"}
        )
        self.kind = w.Dropdown(
            options=[ANY_KIND, *KINDS], value=ANY_KIND, layout=w.Layout(width="130px")
        )
        self.limit = w.BoundedIntText(
            value=10, min=1, max=100, description="top", layout=w.Layout(width="120px")
        )
        self.limit.style.description_width = "28px"
        self.since = w.Text(placeholder="since: 2026-11-01 or 7d", layout=w.Layout(width="170px"))
        self.until = w.Text(placeholder="until", layout=w.Layout(width="120px"))

        self.results = w.VBox(
            [], layout=w.Layout(max_height="460px", overflow="auto", flex="1 1 50%")
        )
        self.results.add_class("memls-results")
        self.summary = w.HTML("")
        self.summary.add_class("memls-box")
        self.preview = w.HTML("")
        self.preview.add_class("memls-box")
        self.preview_box = w.VBox(
            [self.preview], layout=w.Layout(flex="1 1 50%", min_width="280px")
        )

        self.backfill_button = w.Button(
            description="Backfill", icon="database", tooltip="Index and embed what changed"
        )
        self.cancel_button = w.Button(description="Cancel", icon="stop", disabled=True)
        self.verify_button = w.Button(
            description="Verify", icon="check", tooltip="Check semantic recall finds a probe"
        )
        self.progress = w.IntProgress(value=0, min=0, max=1, layout=w.Layout(width="220px"))
        self.progress_label = w.HTML("")
        self.progress_label.add_class("memls-box")

        controls = w.HBox([self.query, self.search_button], layout=w.Layout(width="100%"))
        filters = w.HBox(
            [self.mode, self.kind, self.limit, self.since, self.until],
            layout=w.Layout(flex_flow="row wrap"),
        )
        backfill_row = w.HBox(
            [
                self.backfill_button,
                self.cancel_button,
                self.verify_button,
                self.progress,
                self.progress_label,
            ],
            layout=w.Layout(align_items="center", flex_flow="row wrap"),
        )
        body = w.HBox(
            [self.results, self.preview_box],
            layout=w.Layout(width="100%", align_items="flex-start"),
        )
        self.widget = w.VBox(
            [
                r.css(),
                self.title,
                self.status_line,
                self.banner,
                *self.messages.children,
                controls,
                filters,
                self.summary,
                body,
                backfill_row,
            ]
        )
        self.widget.add_class("memls-box")
        self.widget.add_class("memls-explorer")
        self._controls: list[w.Widget] = [
            self.query, self.search_button, self.mode, self.kind, self.limit, self.since,
            self.until, self.backfill_button, self.verify_button,
        ]  # fmt: skip

        self.query.observe(self._on_typing, names="value")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            # Enter: the frontend sends a "submit" event; there is no non-deprecated hook for it
            self.query.on_submit(lambda _widget: self.search())
        self.search_button.on_click(lambda _b: self.search())
        for control in (self.mode, self.kind, self.limit):
            control.observe(self._on_filter, names="value")
        for control in (self.since, self.until):
            control.continuous_update = False
            control.observe(self._on_filter, names="value")
        self.backfill_button.on_click(lambda _b: self.start_backfill())
        self.cancel_button.on_click(lambda _b: self.cancel_backfill())
        self.verify_button.on_click(lambda _b: self.verify())
        self._open(root)

    # --- display -------------------------------------------------------------------------

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    @r.guarded(lambda self: self.messages)
    def _open(self, root: Path | str | None) -> None:
        self.root = r.open_root(root, self._controls)
        self.title.value = r.title_html("Recall explorer", self.root)
        self.refresh_status()

    # --- status --------------------------------------------------------------------------

    @r.guarded(lambda self: self.messages)
    def refresh_status(self) -> dict[str, Any] | None:
        """Ask core where recall stands; show it in the status line and, if degraded, the banner."""
        if self.root is None:
            return None
        info = api.status(self.root, model=self.model)
        counts = info.get("chunks") or {}
        per_kind = " · ".join(f"{k} {n}" for k, n in sorted(counts.items()))
        backfill = info.get("last_backfill")
        verification = info.get("last_verification")
        parts = [
            f"<b>mode</b> {r.esc(info.get('mode'))}",
            f"<b>model</b> {r.esc(info.get('model') or 'none')}",
            f"<b>chunks</b> {r.esc(info.get('chunks_total', 0))}"
            + (f" ({r.esc(per_kind)})" if per_kind else ""),
            f"<b>embedded</b> {r.esc(info.get('embedded', 0))}",
            "<b>last backfill</b> "
            + (r.esc(backfill.get("time", "?")) if isinstance(backfill, dict) else "never"),
            "<b>verification</b> " + _verification_text(verification),
        ]
        self.status_line.value = f'<div class="memls-status">{" &nbsp;·&nbsp; ".join(parts)}</div>'
        self._set_banner(info["message"] if info.get("mode") != "semantic" else None)
        return info

    def _set_banner(self, message: str | None) -> None:
        if message:
            self.banner.value = r.note_html(message, "banner")
            r.hidden(self.banner, False)
        else:
            self.banner.value = ""
            r.hidden(self.banner, True)

    @property
    def banner_visible(self) -> bool:
        return bool(self.banner.layout.display != "none")

    # --- search --------------------------------------------------------------------------

    def _on_typing(self, change: dict[str, Any]) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if self.debounce <= 0:
            self.search()
            return
        self._timer = threading.Timer(self.debounce, self.search)
        self._timer.daemon = True
        self._timer.start()

    def _on_filter(self, change: dict[str, Any]) -> None:
        if self.query.value.strip():
            self.search()

    @r.guarded(lambda self: self.messages)
    def search(self) -> api.SearchResponse | None:
        """Run the query with the current filters and show the ranked results."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self.root is None:
            return None
        with self._render_lock:
            self._search_seq += 1
            seq = self._search_seq
        query = self.query.value
        if not query.strip():
            with self._render_lock:
                self.response = None
                self.results.children = ()
                self.summary.value = ""
                self.messages.clear()
            return None
        kinds = () if self.kind.value == ANY_KIND else (self.kind.value,)
        response = api.search(
            self.root,
            query,
            mode=self.mode.value,
            kinds=kinds,
            since=self.since.value.strip() or None,
            until=self.until.value.strip() or None,
            limit=int(self.limit.value),
            model=self.model,
        )
        with self._render_lock:
            if seq != self._search_seq:
                return response  # a newer search is showing its own results
            self.messages.clear()
            self.response = response
            self._render_results(response, query)
        return response

    def _render_results(self, response: api.SearchResponse, query: str) -> None:
        top = max((res.score for res in response.results), default=0.0)
        rows: list[w.Widget] = []
        for rank, result in enumerate(response.results, start=1):
            fraction = (
                result.score / top if top > 0 else 1.0 - (rank - 1) / max(1, len(response.results))
            )
            card = w.HTML(
                _card_html(rank, result, fraction, query),
                layout=w.Layout(flex="1 1 auto", width="auto"),
            )
            button = w.Button(
                description="Preview", icon="eye", layout=w.Layout(width="auto", min_width="90px")
            )
            button.on_click(lambda _b, res=result: self.show(res))
            row = w.HBox(
                [card, button], layout=w.Layout(width="100%", align_items="center", flex="0 0 auto")
            )
            row.add_class("memls-row")
            rows.append(row)
        self.results.children = tuple(rows)
        count = len(response.results)
        found = f"{count} result{'s' if count != 1 else ''}" if count else "No results"
        self.summary.value = f'<div class="memls-status">{found} · {r.esc(response.message)}</div>'
        if response.degraded:
            self._set_banner(response.message)
        self.selected = None
        self.preview.value = ""
        if response.results:
            self.show(response.results[0])

    # --- preview -------------------------------------------------------------------------

    @r.guarded(lambda self: self.messages)
    def show(self, result: api.SearchResult) -> None:
        """Render the result's source section in the preview pane, the match marked."""
        assert self.root is not None
        self.selected = result
        if self.response is not None:
            for row, res in zip(self.results.children, self.response.results, strict=False):
                if res.id == result.id:
                    row.add_class("memls-selected")
                else:
                    row.remove_class("memls-selected")
        text = self.source_text(
            result.path, result.start_line, result.end_line, result.id, result.kind
        )
        query = self.query.value
        body = (
            r.highlight_html(r.markdown(text), query)
            if text is not None
            else r.note_html(
                "The source of this result is gone: run Backfill to bring the index up to date.",
                "banner",
            )
        )
        head = (
            f'<div class="memls-line1">{r.badge(result.kind)}'
            f'<span class="memls-path">{r.esc(result.path)}:{result.start_line}–{result.end_line}</span></div>'
        )
        self.preview.value = f'<div class="memls-preview">{head}{body}</div>'

    def source_text(
        self, path: str, start: int, end: int, chunk_id: str | None, kind: str
    ) -> str | None:
        """The current text of a section: from the file, or the indexed turn for transcripts."""
        assert self.root is not None
        if kind == "transcript" and chunk_id:
            return self._chunk_text(chunk_id)
        file = self.root / path
        if not file.is_file():
            return self._chunk_text(chunk_id) if chunk_id else None
        piece = decode(file.read_bytes()).text.splitlines()[max(0, start - 1) : max(start, end)]
        if kind == "transcript":  # raw JSON lines: show them as code, not markdown
            fence = "`" * 4
            return f"{fence}json\n" + "\n".join(piece[:PREVIEW_LINES]) + f"\n{fence}"
        return "\n".join(piece)

    def _chunk_text(self, chunk_id: str) -> str | None:
        assert self.root is not None
        store = open_existing(db_path_for(self.root, load_config(self.root)))
        if store is None:
            return None
        try:
            row = store.db.execute(
                "select text from memls_chunks where id = ?", [chunk_id]
            ).fetchone()
        finally:
            store.close()
        return str(row[0]) if row else None

    def show_chunk(
        self, chunk_id: str, path: str, start: int, end: int, kind: str, heading: str | None = None
    ) -> None:
        """Preview a chunk picked elsewhere (the memory map), as if it were a result."""
        self.show(api.SearchResult(chunk_id, 0.0, kind, path, start, end, heading, ""))

    def show_file(self, path: str, kind: str) -> None:
        """Preview a whole memory file (the treemap's pick)."""
        assert self.root is not None
        lines = len(decode((self.root / path).read_bytes()).text.splitlines())
        self.show(api.SearchResult("", 0.0, kind, path, 1, max(1, lines), None, ""))

    # --- backfill and verify -------------------------------------------------------------

    @r.guarded(lambda self: self.messages)
    def start_backfill(self, *, full: bool = False) -> None:
        """Backfill in a thread with a progress bar; Cancel stops between files and batches."""
        if self.root is None or (self._thread is not None and self._thread.is_alive()):
            return
        self.messages.clear()
        self._cancel = threading.Event()
        self.progress.value = 0
        self.progress.max = 1
        self.progress.bar_style = ""
        self.progress_label.value = "starting…"
        self.backfill_button.disabled = True
        self.cancel_button.disabled = False
        self._thread = threading.Thread(
            target=self._run_backfill, args=(self.root, full), daemon=True
        )
        self._thread.start()

    def _progress(self, done: int, total: int, stage: str) -> None:
        self.progress.max = max(1, total)
        self.progress.value = min(done, max(1, total))
        self.progress_label.value = (
            f'<span class="memls-status">{r.esc(stage)} {done}/{total}</span>'
        )

    @r.guarded(lambda self: self.messages)
    def _run_backfill(self, root: Path, full: bool) -> None:
        try:
            result = api.backfill(
                root, model=self.model, full=full, progress=self._progress, cancel=self._cancel
            )
        finally:
            self.backfill_button.disabled = False
            self.cancel_button.disabled = True
        self.last_backfill = result
        self.progress.bar_style = "warning" if result.get("cancelled") else "success"
        if not result.get("cancelled"):
            self.progress.value = self.progress.max
        state = "cancelled" if result.get("cancelled") else "done"
        self.progress_label.value = (
            f'<span class="memls-status">{state}: {r.esc(result.get("message", ""))}</span>'
        )
        self.refresh_status()
        for listener in self.backfill_listeners:
            listener(result)
        if self.query.value.strip():
            self.search()

    def cancel_backfill(self) -> None:
        self._cancel.set()
        self.cancel_button.disabled = True
        self.progress_label.value = '<span class="memls-status">cancelling…</span>'

    def wait(self, timeout: float | None = None) -> bool:
        """Block until a running backfill finishes; False on timeout. For scripts and tests."""
        thread = self._thread
        if thread is None:
            return True
        thread.join(timeout)
        return not thread.is_alive()

    @property
    def backfill_running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @r.guarded(lambda self: self.messages)
    def verify(self) -> dict[str, Any] | None:
        """Ask core to prove semantic recall works; show its verdict."""
        if self.root is None:
            return None
        outcome = api.verify(self.root, model=self.model)
        if outcome.get("ok"):
            self.messages.show_note(str(outcome.get("message", "")))
        else:
            self.messages.show_error(str(outcome.get("message", "")))
        self.refresh_status()
        return outcome


def _verification_text(record: object) -> str:
    if not isinstance(record, dict):
        return "never"
    verdict = "ok" if record.get("ok") else "FAILED"
    return f"{verdict} {r.esc(record.get('time', ''))}"


def _card_html(rank: int, result: api.SearchResult, fraction: float, query: str) -> str:
    heading = f'<div class="memls-heading">{r.esc(result.heading)}</div>' if result.heading else ""
    return (
        '<div class="memls-result">'
        f'<div class="memls-line1"><span class="memls-rank">{rank}</span>{r.badge(result.kind)}'
        f'<span class="memls-path">{r.esc(result.path)}:{result.start_line}–{result.end_line}</span>'
        f'{r.score_bar(fraction)}<span class="memls-score">{result.score:.3g}</span></div>'
        f'{heading}<div class="memls-snippet">{r.highlight(result.snippet, query)}</div>'
        "</div>"
    )
