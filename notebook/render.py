"""Shared look and HTML helpers for the widgets: escaping, highlighting, badges, markdown.

Everything here turns core results into HTML strings; nothing here decides anything about
memory. All text from files goes through :func:`esc` (or mistune with ``escape=True``) so a
memory file can never inject markup into the notebook.
"""

from __future__ import annotations

import html
import re
import traceback
from collections.abc import Callable, Iterable
from functools import wraps
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import ipywidgets as w
import mistune

from memls.core.workspace import discover_root

P = ParamSpec("P")
R = TypeVar("R")

KIND_COLORS: dict[str, str] = {
    "topic": "#4c78a8",
    "checkpoint": "#f58518",
    "handoff": "#54a24b",
    "log": "#b279a2",
    "transcript": "#e45756",
    "index": "#9d755d",
    "identity": "#72b7b2",
}
OTHER_COLOR = "#8c8c8c"

CSS = """
<style>
.memls-box { font-family: var(--jp-ui-font-family, system-ui, sans-serif); font-size: 13px;
  color: var(--jp-ui-font-color1, inherit); }
.memls-title { font-weight: 600; font-size: 15px; margin: 2px 0 4px 0; }
.memls-status { color: var(--jp-ui-font-color2, #666); font-size: 12px; line-height: 1.5; }
.memls-banner { border-left: 4px solid #d9822b; background: rgba(217,130,43,.14); padding: 6px 10px;
  border-radius: 3px; margin: 4px 0; }
.memls-error { border-left: 4px solid #d13438; background: rgba(209,52,56,.12); padding: 6px 10px;
  border-radius: 3px; margin: 4px 0; white-space: pre-wrap; }
.memls-note { border-left: 4px solid #4c78a8; background: rgba(76,120,168,.10); padding: 6px 10px;
  border-radius: 3px; margin: 4px 0; white-space: pre-wrap; }
.memls-result { padding: 6px 8px; border: 1px solid rgba(127,127,127,.25); border-radius: 4px;
  margin: 2px 0; }
.memls-selected .memls-result { border-color: #4c78a8; background: rgba(76,120,168,.08); }
.memls-line1 { display: flex; align-items: center; gap: 8px; flex-wrap: wrap; }
.memls-rank { color: var(--jp-ui-font-color2, #666); min-width: 1.5em; }
.memls-badge { display: inline-block; padding: 0 6px; border-radius: 8px; color: #fff;
  font-size: 11px; line-height: 17px; }
.memls-flag { display: inline-block; padding: 0 6px; border-radius: 8px; font-size: 11px;
  line-height: 17px; border: 1px solid #d9822b; color: #d9822b; margin-right: 3px; }
.memls-path { font-family: var(--jp-code-font-family, monospace); font-size: 12px; }
.memls-bar { display: inline-block; width: 70px; height: 7px; background: rgba(127,127,127,.2);
  border-radius: 4px; overflow: hidden; vertical-align: middle; }
.memls-bar > span { display: block; height: 100%; background: #4c78a8; }
.memls-score { font-size: 11px; color: var(--jp-ui-font-color2, #666); }
.memls-heading { font-weight: 600; margin-top: 2px; }
.memls-snippet { color: var(--jp-ui-font-color1, inherit); margin-top: 2px; }
.memls-box mark, .memls-preview mark { background: #ffe066; color: #000; padding: 0 1px; }
.memls-preview { border: 1px solid rgba(127,127,127,.25); border-radius: 4px; padding: 4px 12px;
  max-height: 420px; overflow: auto; }
.memls-preview pre { white-space: pre-wrap; }
.memls-preview h1 { font-size: 1.35em; margin: 8px 0 4px 0; }
.memls-preview h2 { font-size: 1.2em; margin: 8px 0 4px 0; }
.memls-preview h3, .memls-preview h4 { font-size: 1.05em; margin: 6px 0 3px 0; }
.memls-table { border-collapse: collapse; }
.memls-cell { padding: 3px 8px; border-bottom: 1px solid rgba(127,127,127,.2); }
.memls-head { font-weight: 600; }
.memls-diag { font-family: var(--jp-code-font-family, monospace); font-size: 12px; }
.memls-sev-error { color: #d13438; } .memls-sev-warning { color: #d9822b; }
.memls-sev-info, .memls-sev-hint { color: #4c78a8; }
.memls-legend span { margin-right: 10px; }
.memls-map svg { max-width: 100%; height: auto; }
</style>
"""

_markdown = mistune.create_markdown(escape=True, plugins=["strikethrough", "table"])
_WORD = re.compile(r"\w+", re.UNICODE)
_TAG_OR_ENTITY = re.compile(r"(<[^>]*>|&[#\w]+;)")
_FTS_MARK = re.compile(r"\[([^\[\]\n]{1,80})\]")


def esc(value: object) -> str:
    """HTML-escape any value (quotes too, so it is safe inside attributes)."""
    return html.escape(str(value), quote=True)


def css() -> w.HTML:
    """The stylesheet as a widget; each top-level widget carries one."""
    return w.HTML(CSS, layout=w.Layout(margin="0", height="0px"))


def kind_color(kind: str) -> str:
    return KIND_COLORS.get(kind, OTHER_COLOR)


def badge(kind: str) -> str:
    return f'<span class="memls-badge" style="background:{kind_color(kind)}">{esc(kind)}</span>'


def flag(text: str) -> str:
    return f'<span class="memls-flag">{esc(text)}</span>'


def score_bar(fraction: float) -> str:
    """A small horizontal bar, ``fraction`` of full width (clamped to 0..1)."""
    pct = max(0.0, min(1.0, fraction)) * 100
    return f'<span class="memls-bar"><span style="width:{pct:.0f}%"></span></span>'


def query_terms(query: str) -> list[str]:
    """The distinct words of a query, longest first (so longer matches win)."""
    seen: dict[str, str] = {}
    for word in _WORD.findall(query):
        seen.setdefault(word.casefold(), word)
    return sorted(seen, key=len, reverse=True)


def _matches(token: str, terms: Iterable[str]) -> bool:
    """Whether a word of text shows a query word: equal, or sharing a stem-length prefix."""
    folded = token.casefold()
    for term in terms:
        if len(term) < 4:
            if folded == term:
                return True
        elif folded.startswith(term[: max(4, len(term) - 3)]):
            return True
    return False


def _mark_words(escaped: str, terms: list[str]) -> str:
    """Wrap matching words of already-escaped text (no tags inside) in ``<mark>``."""
    if not terms:
        return escaped
    parts = _TAG_OR_ENTITY.split(escaped)
    out: list[str] = []
    for part in parts:
        if _TAG_OR_ENTITY.fullmatch(part or " "):
            out.append(part)
            continue
        out.append(
            _WORD.sub(
                lambda m: (
                    f"<mark>{m.group(0)}</mark>" if _matches(m.group(0), terms) else m.group(0)
                ),
                part,
            )
        )
    return "".join(out)


def highlight(text: str, query: str) -> str:
    """Escape ``text`` and mark the query's words in it.

    Full-text snippets from core arrive with matched tokens in ``[ ]``; a bracketed token
    that shows a query word loses its brackets (the mark replaces them), any other
    bracketed text is left as written.
    """
    terms = query_terms(query)

    def unbracket(match: re.Match[str]) -> str:
        inner = match.group(1)
        words = _WORD.findall(inner)
        return inner if words and all(_matches(x, terms) for x in words) else match.group(0)

    return _mark_words(esc(_FTS_MARK.sub(unbracket, text)), terms)


def highlight_html(rendered: str, query: str) -> str:
    """Mark the query's words in rendered HTML, touching text only (never tags or entities)."""
    terms = query_terms(query)
    if not terms:
        return rendered
    return "".join(
        part if part.startswith(("<", "&")) else _mark_words(part, terms)
        for part in _TAG_OR_ENTITY.split(rendered)
    )


def markdown(text: str) -> str:
    """Markdown to HTML with raw HTML escaped (memory files are data, not markup)."""
    return str(_markdown(text))


def note_html(message: str, kind: str = "note") -> str:
    """A coloured message block: ``note``, ``banner`` (degraded) or ``error``."""
    return f'<div class="memls-{kind}">{esc(message)}</div>'


def age_text(days: float | None) -> str:
    if days is None:
        return "?"
    if days < 1 / 24:
        return f"{max(0, round(days * 24 * 60))} min"
    if days < 1:
        return f"{days * 24:.0f} h"
    return f"{days:.0f} d" if days < 60 else f"{days / 30:.0f} mo"


def human_bytes(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"


class Messages:
    """An error area and a note area that every widget shows above its content."""

    def __init__(self) -> None:
        self.error = w.HTML("", layout=w.Layout(display="none"))
        self.note = w.HTML("", layout=w.Layout(display="none"))
        self.error.add_class("memls-box")
        self.note.add_class("memls-box")

    @property
    def children(self) -> tuple[w.HTML, w.HTML]:
        return (self.error, self.note)

    @property
    def error_text(self) -> str:
        """The error shown now (plain text), or ``""``."""
        return html.unescape(re.sub(r"<[^>]+>", "", self.error.value))

    @property
    def note_text(self) -> str:
        """The note shown now (plain text), or ``""``."""
        return html.unescape(re.sub(r"<[^>]+>", "", self.note.value))

    def show_error(self, message: str) -> None:
        self.error.value = note_html(message, "error")
        self.error.layout.display = None

    def show_note(self, message: str) -> None:
        self.note.value = note_html(message, "note")
        self.note.layout.display = None

    def clear(self) -> None:
        self.error.value = ""
        self.error.layout.display = "none"
        self.note.value = ""
        self.note.layout.display = "none"


def describe_error(exc: BaseException) -> str:
    """One line for people: the message, with the exception type when it adds something."""
    text = str(exc).strip()
    name = type(exc).__name__
    if not text:
        return name
    return text if isinstance(exc, ValueError | OSError) else f"{name}: {text}"


def guarded(
    messages: Callable[[Any], Messages],
) -> Callable[[Callable[P, R]], Callable[P, R | None]]:
    """Run a widget callback so any exception lands in the widget's error area.

    ``messages`` picks the :class:`Messages` from the callback's ``self``. The traceback's
    last frame is appended so a bug is still findable, but nothing reaches the cell output.
    """

    def wrap(func: Callable[P, R]) -> Callable[P, R | None]:
        @wraps(func)
        def run(*args: P.args, **kwargs: P.kwargs) -> R | None:
            target = messages(args[0])
            try:
                return func(*args, **kwargs)
            except Exception as exc:  # shown in the widget instead of the cell
                frame = traceback.extract_tb(exc.__traceback__)[-1]
                where = f"{Path(frame.filename).name}:{frame.lineno}"
                target.show_error(f"{describe_error(exc)}  ({where})")
                return None

        return run

    return wrap


def find_root(root: Path | str | None) -> Path:
    """The root to show: the one given, else the one around the current directory."""
    if root is not None:
        path = Path(root).expanduser()
        if not path.is_dir():
            raise FileNotFoundError(f"Memory root {path} is not a directory.")
        return path.resolve()
    found = discover_root(Path.cwd())
    if found is None:
        raise FileNotFoundError(
            f"No memory root found at or above {Path.cwd()}: pass root=<folder with MEMORY.md>."
        )
    return found


def open_root(root: Path | str | None, controls: Iterable[w.Widget]) -> Path:
    """Find the root; without one, disable the controls that would need it, then re-raise."""
    try:
        return find_root(root)
    except FileNotFoundError:
        for control in controls:
            control.disabled = True
        raise


def title_html(label: str, root: Path | None = None) -> str:
    """A widget's heading, naming the root once one is open."""
    if root is None:
        return f'<div class="memls-title">{label}</div>'
    return f'<div class="memls-title">{label} — <span class="memls-path">{esc(root)}</span></div>'


def hidden(widget: w.Widget, hide: bool) -> None:
    """Show or hide a widget without removing it from its box."""
    widget.layout.display = "none" if hide else None
