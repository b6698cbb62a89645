"""`memls recall status|backfill|search|verify` — the recall store from a shell."""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Concatenate, NoReturn, ParamSpec, TypeVar

import click

from memls.cli.common import (
    json_requested,
    resolve_root,
    root_option,
    without_cyclic_gc,
)
from memls.core.config import ConfigError
from memls.core.fsutil import UnsafePathError
from memls.core.recall.chunking import KINDS

P = ParamSpec("P")
T = TypeVar("T")

_MODEL_HELP = "Embedding model id (any llm embedding model; overrides recall_model in the config)."


@click.group()
def recall() -> None:
    """Index memory files and transcripts, and search them (semantic, text or hybrid)."""


def _fail(message: str) -> NoReturn:
    """A refusal: exit 2, one line (with --json the reason is inside the JSON too)."""
    from memls.cli.opsutil import fail
    from memls.core.ops import OpError

    fail(OpError(message), json_requested(), prefix="memls recall: ")


def _on_root(
    call: Callable[Concatenate[Path, P], T], root: Path | None, *args: P.args, **kwargs: P.kwargs
) -> T:
    """Run a recall API call on the command's root; a bad config, or memls state it refuses
    to write through (``UnsafeStateError``: a link at ``.memls`` or in it), ends the command
    (status 2, one line)."""
    try:
        return call(resolve_root(root), *args, **kwargs)
    except (ConfigError, UnsafePathError) as exc:
        _fail(str(exc))


def _when(record: Any) -> str:
    if not isinstance(record, dict):
        return "never"
    return str(record.get("time", "?"))


def _mode_line(info: dict[str, Any]) -> str:
    """The mode, and for semantic whether it was verified: nothing claims unverified recall."""
    mode = str(info["mode"])
    if mode != "semantic":
        return mode
    verification = info["last_verification"]
    if info["verified"] and isinstance(verification, dict):
        return f"semantic (verified {verification.get('time', '?')})"
    current = isinstance(verification, dict) and verification.get("model") == info.get(
        "stored_model"
    )
    if current and isinstance(verification, dict) and not verification.get("ok"):
        return f"semantic (verification FAILED {verification.get('time', '?')})"
    return "semantic (not verified yet)"


@recall.command()
@root_option
@click.option("--model", metavar="ID", help=_MODEL_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
def status(root: Path | None, model: str | None, as_json: bool) -> None:
    """Show the recall mode (semantic, text or unavailable), model, chunk counts and last runs."""
    from memls.core.recall import api

    info = _on_root(api.status, root, model=model)
    if as_json:
        click.echo(json.dumps(info, indent=2, sort_keys=True))
        return
    chunks = info["chunks"]
    counts = ", ".join(f"{k} {v}" for k, v in sorted(chunks.items())) or "none"
    verification = info["last_verification"]
    verdict = ""
    if isinstance(verification, dict):
        verdict = " (ok)" if verification.get("ok") else " (FAILED)"
    click.echo(f"mode:              {_mode_line(info)}")
    click.echo(f"model:             {info['model']} ({info['model_source']})")
    click.echo(f"chunks:            {info['chunks_total']} ({counts}); {info['embedded']} embedded")
    click.echo(f"db:                {info['db']} ({info['db_bytes']} bytes)")
    click.echo(f"last backfill:     {_when(info['last_backfill'])}")
    click.echo(f"last verification: {_when(verification)}{verdict}")
    click.echo(info["message"])


class _Bar:
    """One click progress bar per phase ("index", "embed"), fed by the backfill callback."""

    def __init__(self) -> None:
        self.phase: str | None = None
        self.bar: Any = None
        self.done = 0

    def __call__(self, done: int, total: int, label: str) -> None:
        phase = label.split(" ", 1)[0]
        if phase != self.phase:
            self.close()
            self.phase = phase
            verb = "Indexing files" if phase == "index" else "Embedding chunks"
            self.bar = click.progressbar(length=max(total, 1), label=verb, file=sys.stderr)
            self.bar.__enter__()
            self.done = 0
        if self.bar is not None and done > self.done:
            self.bar.update(done - self.done)
            self.done = done

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None


@recall.command()
@root_option
@click.option("--model", metavar="ID", help=_MODEL_HELP)
@click.option("--full", is_flag=True, help="Forget the index and rebuild it from scratch.")
@click.option(
    "--wait",
    "wait",
    type=click.FloatRange(min=0),
    metavar="SECONDS",
    help="How long to wait for another backfill of the same store (default 600).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def backfill(
    root: Path | None, model: str | None, full: bool, wait: float | None, as_json: bool
) -> None:
    """Index topic files, checkpoints, the handoff, LOG entries and transcripts.

    Only new or changed content is embedded; removed content leaves no rows. Without a
    working embedding model the full-text index is still updated (degraded text mode).
    Ctrl-C stops cleanly: what was done stays, the next run finishes the rest. A second
    backfill of the same store waits for the first (up to --wait seconds), then continues.
    """
    from memls.core.recall import api
    from memls.core.recall.lock import RecallBusyError

    bar = _Bar()
    cancel = threading.Event()

    def waiting(message: str) -> None:
        click.echo(message, err=True)

    try:
        result = _on_root(
            api.backfill,
            root,
            model=model,
            full=full,
            progress=bar,
            cancel=cancel,
            lock_timeout=wait,
            on_wait=waiting,
        )
    except RecallBusyError as exc:
        bar.close()
        if as_json:
            click.echo(json.dumps({"status": "busy", "message": str(exc)}, indent=2))
            sys.exit(2)
        _fail(str(exc))
    except KeyboardInterrupt:
        bar.close()
        click.echo("Backfill interrupted; finished files and batches are kept.", err=True)
        sys.exit(130)
    finally:
        bar.close()
    if as_json:
        click.echo(json.dumps(result, indent=2, sort_keys=True))
    else:
        click.echo(result["message"])
    if result["degraded"]:
        sys.exit(1)


@recall.command()
@click.argument("query")
@root_option
@click.option(
    "--mode",
    type=click.Choice(["hybrid", "semantic", "text"]),
    default="hybrid",
    show_default=True,
    help="hybrid fuses semantic and BM25 text rankings by normalised score.",
)
@click.option(
    "--kind",
    "kinds",
    multiple=True,
    type=click.Choice(KINDS),
    help="Only chunks of this kind (repeatable).",
)
@click.option(
    "--path", "path_glob", metavar="GLOB", help="Only files matching GLOB (or under a folder)."
)
@click.option(
    "--since",
    metavar="WHEN",
    help="Only chunks dated at or after WHEN (YYYY-MM-DD, ISO time, 7d, 12h).",
)
@click.option(
    "--until",
    metavar="WHEN",
    help="Only chunks dated at or before WHEN (a bare date includes that day).",
)
@click.option(
    "-n",
    "--limit",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="Number of results.",
)
@click.option(
    "--model", metavar="ID", help="Expected embedding model of the store (must match it)."
)
@click.option("--mmr", is_flag=True, help="Diversify results with maximal marginal relevance.")
@click.option(
    "--json", "as_json", is_flag=True, help="Print the response (results, mode, degraded) as JSON."
)
@without_cyclic_gc()
def search(
    query: str,
    root: Path | None,
    mode: str,
    kinds: tuple[str, ...],
    path_glob: str | None,
    since: str | None,
    until: str | None,
    limit: int,
    model: str | None,
    mmr: bool,
    as_json: bool,
) -> None:
    """Search the recall index for QUERY; says plainly when it fell back to text mode."""
    if "numpy" not in sys.modules:
        # one query gains nothing from BLAS threads, which spin on a busy machine
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from memls.core.recall.search import search as run_search  # not api: no backfill imports

    try:
        response = run_search(
            resolve_root(root),
            query,
            mode=mode,
            kinds=kinds,
            path_glob=path_glob,
            since=since,
            until=until,
            limit=limit,
            model=model,
            mmr=mmr,
        )
    except (ValueError, ConfigError) as exc:
        _fail(str(exc))
    if as_json:
        click.echo(json.dumps(response.to_dict(), indent=2))
        return
    click.echo(response.message, err=True)
    if not response.results:
        click.echo("No results.", err=True)
    for number, hit in enumerate(response.results, start=1):
        where = f"{hit.path}:{hit.start_line}-{hit.end_line}"
        title = f"  {hit.heading}" if hit.heading else ""
        click.echo(f"{number:2}. {where}  [{hit.kind}] {hit.score:.4f}{title}")
        click.echo(f"    {hit.snippet}")


@recall.command()
@root_option
@click.option(
    "--model", metavar="ID", help="Expected embedding model of the store (must match it)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the outcome as JSON.")
def verify(root: Path | None, model: str | None, as_json: bool) -> None:
    """Embed a probe drawn from the index and check its chunk comes back first.

    The outcome is recorded (time, model) and shown by `memls recall status`; this is step 5
    of the checkpoint bundle. Exit status 1 when verification fails.
    """
    from memls.core.recall import api

    outcome = _on_root(api.verify, root, model=model)
    if as_json:
        click.echo(json.dumps(outcome, indent=2, sort_keys=True))
    else:
        click.echo(outcome["message"])
    if not outcome["ok"]:
        sys.exit(1)
