"""``workspace/executeCommand``: the operations (core ops), recall and snapshots.

Each command takes one optional JSON object argument (see ``memls.lsp.commands``), picks
the memory root from its ``uri`` (else the first root), runs the core function off the event
loop, brings open editor buffers up to date through ``workspace/applyEdit``, and tells the
user the outcome with ``window/showMessage``. Write operations refuse to run while a buffer
of the root holds unsaved changes, so a save never overwrites what the user typed.

An operation's argument keys, and their types, come from the table of operations
(:mod:`memls.core.ops.table`: :meth:`Commands.args`); its result is
:func:`memls.core.ops.result_json`. A refusal (:class:`memls.core.ops.OpError`, or what
:func:`memls.core.ops.as_refusal` counts as one) is shown to the user and answered as a
JSON-RPC "invalid params" error whose ``data`` is the refusal's JSON, in the command's
argument names; anything else is a bug: an internal error, its traceback in the log.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as _dt
import threading
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcRequestCancelled

from memls.core.ops import OpError, as_refusal, result_json
from memls.core.ops.table import operation, respell, spelling
from memls.core.workspace import discover_root
from memls.lsp import convert
from memls.lsp.features import LanguageFeature

if TYPE_CHECKING:
    from memls.core.ops import OpResult
    from memls.lsp.server import MemlsServer

Handler = Callable[["MemlsServer", types.ExecuteCommandParams], Awaitable[Any]]


def jsonable(value: Any) -> Any:
    """Paths, datetimes and dataclasses as JSON values."""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, _dt.datetime | _dt.date):
        return value.isoformat()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return jsonable(dataclasses.asdict(value))
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [jsonable(v) for v in value]
    return value


class Refusal(JsonRpcInvalidParams):
    """A command refused (invalid params): the user is shown why; not a server error, so
    no traceback reaches the log."""

    quiet = True


class Commands(LanguageFeature):
    def handler(self, name: str) -> Handler:
        method = getattr(self, "cmd_" + name.removeprefix("memls.").replace(".", "_"))

        async def run(ls: MemlsServer, params: types.ExecuteCommandParams) -> Any:
            raw = params.arguments[0] if params.arguments else {}
            if raw is None:
                raw = {}
            if not isinstance(raw, dict):
                raise JsonRpcInvalidParams(message=f"{name}: the argument must be a JSON object")
            try:
                return jsonable(await method(raw, params))
            except JsonRpcRequestCancelled:
                raise
            except Exception as exc:
                refusal = as_refusal(exc)
                if refusal is None:
                    raise  # a bug: an internal error, with its traceback in the log
                self.refuse(name, refusal)

        run.__name__ = name.replace(".", "_")
        return run

    def refuse(self, command: str, refusal: OpError) -> None:
        """Show a refusal to the user and answer with it: JSON-RPC "invalid params", whose
        ``data`` is the refusal's JSON; parameters named as the command's argument keys."""
        op = command.removeprefix("memls.")
        body = jsonable(refusal.to_json(spelling(op, "lsp")))
        body = {k: respell(op, "lsp", v) if isinstance(v, str) else v for k, v in body.items()}
        self.tell(f"memls: {body['error']}", types.MessageType.Error)
        raise Refusal(message=body["error"], data=body) from refusal

    # -- helpers -------------------------------------------------------------
    def tell(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        """Show a command's outcome, unless the client shows the returned message itself."""
        if self.server.client_shows_command_results:
            self.server.log_info(message)
        else:
            self.server.show(message, kind)

    async def root_for(self, args: dict[str, Any]) -> Path:
        memory = self.server.memory
        uri = args.get("uri")

        def find() -> Path | None:
            if isinstance(uri, str) and (path := convert.uri_to_path(uri)) is not None:
                ws = memory.workspace_for(path)
                if ws is not None:
                    return ws.root
                found = discover_root(path)
                if found is not None:
                    return found
                return path if path.is_dir() else path.parent
            if memory.workspaces:
                return next(iter(memory.workspaces))
            return memory.folders[0] if memory.folders else None

        root = await memory.run(find)
        if root is None:
            raise OpError("no memory root: open a memory file or a folder first")
        return root

    def _dirty(self, root: Path) -> list[Path]:
        """Open buffers under ``root`` whose text differs from the file on disk."""
        out = []
        for uri in self.server.open_uris():
            path = self.server.path_of(uri)
            if path is None or not (path.parent == root or root in path.parents):
                continue
            try:
                disk = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                disk = None
            if disk != self.server.open_text(uri) and not (
                disk is None and not self.server.open_text(uri)
            ):
                out.append(path)
        return out

    async def write_op(
        self, root: Path, op: Callable[[], OpResult], *, show: bool = True
    ) -> OpResult:
        """Run a writing operation, then sync open buffers and re-check what it touched."""
        dirty = await asyncio.to_thread(self._dirty, root)
        if dirty:
            names = ", ".join(p.name for p in dirty)
            raise OpError(f"save {names} first: memls will not write over unsaved changes")
        result = await asyncio.to_thread(op)
        await self.after_write(root, result.paths)
        if show:
            self.tell(f"memls: {result.message}")
        return result

    async def after_write(self, root: Path, paths: tuple[Path, ...] | list[Path]) -> None:
        memory = self.server.memory
        touched = {Path(p) for p in paths}

        def invalidate() -> set[Path]:
            affected: set[Path] = set()
            ws = memory.workspace_for(root / "MEMORY.md")
            if ws is not None:
                touched.add(ws.index_path)
            for p in touched:
                affected |= memory.invalidate(p)
            return affected

        affected = await memory.run(invalidate)
        await self.sync_buffers(touched)
        await self.server.fan_out(lambda f: f.affected(affected))

    async def sync_buffers(self, paths: set[Path]) -> None:
        """Make open buffers of changed files show the new file content (workspace/applyEdit)."""
        if not get_capability(self.server.client_capabilities, "workspace.apply_edit", False):
            return
        changes: dict[str, list[types.TextEdit]] = {}
        for uri in self.server.open_uris():
            path = self.server.path_of(uri)
            if path is None or path not in paths:
                continue
            old = self.server.open_text(uri) or ""
            try:
                new = path.read_text(encoding="utf-8") if path.exists() else None
            except (OSError, UnicodeDecodeError):
                continue
            if new is not None and new != old:
                changes[uri] = [convert.whole_document_edit(old, new, self.server.codec)]
        if changes:
            result = await self.server.workspace_apply_edit_async(
                types.ApplyWorkspaceEditParams(
                    edit=types.WorkspaceEdit(changes=changes), label="memls"
                )
            )
            if not result.applied:
                self.server.log_info(
                    f"memls: the client did not apply the edit ({result.failure_reason})"
                )

    async def show_document(self, path: Path) -> None:
        if get_capability(self.server.client_capabilities, "window.show_document.support", False):
            await self.server.window_show_document_async(
                types.ShowDocumentParams(uri=convert.path_to_uri(path), take_focus=True)
            )

    @staticmethod
    def _text(args: dict[str, Any], key: str) -> str | None:
        value = args.get(key)
        if value is None or value == "":
            return None
        if not isinstance(value, str):
            raise OpError(f"{key!r} must be a string")
        return value

    def args(self, op: str, raw: dict[str, Any], **defaults: Any) -> dict[str, Any]:
        """The parameters of operation ``op`` from a command's JSON argument, by parameter
        name: each read from its key (the table's LSP spelling) as the table's type says
        (``defaults``: this front's own, where it differs from the operation's)."""
        out: dict[str, Any] = {}
        for p in operation(op).params():
            key = p.spell("lsp")
            if key is None:
                continue
            if p.kind == "list":
                out[p.name] = self._strings(raw, key)
            elif p.kind == "bool":
                out[p.name] = bool(raw.get(key))
            elif p.kind == "int":
                value = raw.get(key, defaults.get(p.name, p.default))
                if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                    raise OpError(f"{key!r} must be a positive integer")
                out[p.name] = value
            else:
                text = self._text(raw, key)
                out[p.name] = text if text is not None else defaults.get(p.name, p.default)
        return out

    def _result(self, result: OpResult, **extra: Any) -> dict[str, Any]:
        """An operation's result as the command returns it (what every front returns)."""
        return {**result_json(result), **extra}

    # -- checkpoints ---------------------------------------------------------
    def _name_for(self, args: dict[str, Any]) -> str | None:
        name = self._text(args, "name")
        uri = self._text(args, "uri")
        if name is None and uri is not None and (path := convert.uri_to_path(uri)) is not None:
            from memls.core.workspace import checkpoint_name

            name = checkpoint_name(path)
        return name

    @staticmethod
    def _strings(args: dict[str, Any], key: str) -> list[str]:
        value = args.get(key)
        if value is None:
            return []
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise OpError(f"{key!r} must be a list of strings")
        out = []
        for v in value:
            path = convert.uri_to_path(v) if v.startswith("file:") else None
            text = str(path) if path is not None else ("" if v.startswith("file:") else v)
            if text.strip():
                out.append(text.strip())
        return out

    async def cmd_checkpoint_suggest(
        self, args: dict[str, Any], params: types.ExecuteCommandParams
    ) -> Any:
        """What an editor prefills before asking for the next action (writes nothing)."""
        from memls.core.formats.checkpoint import sanitize_name
        from memls.core.gitfacade import Git
        from memls.core.ops.checkpoint import checkpoint_path, default_name, session_status
        from memls.lsp import save_flow

        root = await self.root_for(args)
        given = self._name_for(args)
        files = self._strings(args, "files")

        def compute() -> dict[str, Any]:
            git = Git(root)
            name = sanitize_name(given) if given is not None else default_name(git)
            branch = git.current_branch()
            status = session_status(git, root) if git.is_repo else []
            edited = save_flow.relative_files(root, git, files, status)
            old = save_flow.existing(checkpoint_path(root, name)) if name else None
            commits = save_flow.commits_since(git, old.saved if old else None)
            next_text = (old.next_action if old else None) or save_flow.suggested_next(
                name, branch, edited
            )
            return {
                "name": name,
                "branch": branch,
                "exists": old is not None,
                "next": next_text,
                "done": save_flow.suggested_done(commits, edited),
                "files": edited,
            }

        return await asyncio.to_thread(compute)

    async def cmd_checkpoint_save(
        self, args: dict[str, Any], params: types.ExecuteCommandParams
    ) -> Any:
        """Save a checkpoint. ``next`` (the next action: a title line, optionally a body) is
        needed unless the checkpoint already has one; ``done``/``failed`` are lists; ``files``
        are the editor's recently edited files, named in a one-line next action's body."""
        from memls.core.formats.checkpoint import sanitize_name
        from memls.core.gitfacade import Git
        from memls.core.ops._text import memory_index, read_text
        from memls.core.ops.checkpoint import (
            checkpoint_path,
            default_name,
            save_checkpoint,
            session_status,
        )
        from memls.lsp import save_flow

        root = await self.root_for(args)
        given = self.args("checkpoint.save", args)
        name = self._name_for(args)
        next_action = given["next_action"]
        summary, done, failed = given["summary"], given["done"], given["failed"]
        files = self._strings(args, "files")

        def prepare() -> tuple[str | None, Path, str | None]:
            git = Git(root)
            target = sanitize_name(name) if name is not None else default_name(git)
            index = memory_index(root)
            composed = None
            if next_action is not None:
                status = session_status(git, root) if git.is_repo else []
                edited = save_flow.relative_files(root, git, files, status)
                composed = save_flow.compose_next(next_action, edited)
            elif target is not None:
                old = save_flow.existing(checkpoint_path(root, target))
                if old is None or old.next_action is None:
                    raise OpError(
                        f'checkpoint "{target}" needs its next action: pass "next" (the first '
                        "concrete step, with file paths) — memls writes no placeholder"
                    )
            return composed, index, read_text(index)

        composed, index, before = await asyncio.to_thread(prepare)
        result = await self.write_op(
            root,
            lambda: save_checkpoint(
                root, name, next_action=composed, summary=summary, done=done, failed=failed
            ),
        )
        checkpoint = result.data.get("checkpoint")
        if checkpoint:
            await self.show_document(Path(checkpoint))
        after = await asyncio.to_thread(read_text, index)
        change = save_flow.index_change(before, after, index.name)
        return self._result(result, index=str(index), **change)

    async def cmd_checkpoint_resume(
        self, args: dict[str, Any], params: types.ExecuteCommandParams
    ) -> Any:
        from memls.core.ops.checkpoint import resume_checkpoint

        root = await self.root_for(args)
        name = self.args("checkpoint.resume", args)["name"]
        result = await self.write_op(root, lambda: resume_checkpoint(root, name))
        picked = result.data.get("name")
        if result.data.get("status") == "one" and isinstance(picked, str):
            await self.show_document(root / f"checkpoint-{picked}.md")
        return self._result(result)

    async def cmd_checkpoint_clear(
        self, args: dict[str, Any], params: types.ExecuteCommandParams
    ) -> Any:
        from memls.core.ops.checkpoint import clear_checkpoint

        root = await self.root_for(args)
        given = self.args("checkpoint.clear", args)
        name, clear_all = given["name"], given["all"]
        if name is None and not clear_all:
            raise OpError("name a checkpoint to clear, or pass all: true")
        result = await self.write_op(root, lambda: clear_checkpoint(root, name, all=clear_all))
        return self._result(result)

    async def cmd_checkpoint_list(
        self, args: dict[str, Any], params: types.ExecuteCommandParams
    ) -> Any:
        from memls.core.ops.checkpoint import list_checkpoints

        root = await self.root_for(args)
        infos = await asyncio.to_thread(list_checkpoints, root)
        if infos:
            rows = [
                f"{i.name} ({i.branch or '?'}, {i.saved:%Y-%m-%d %H:%M})"
                if i.saved
                else f"{i.name} ({i.branch or '?'})"
                for i in infos
            ]
            message = "Checkpoints: " + "; ".join(rows)
        else:
            message = "No checkpoints found."
        self.tell(f"memls: {message}")
        return {"message": message, "checkpoints": infos}

    # -- index, bundle, log, handoff -----------------------------------------
    async def cmd_index_migrate(
        self, args: dict[str, Any], params: types.ExecuteCommandParams
    ) -> Any:
        from memls.core.ops.index import migrate_index

        root = await self.root_for(args)
        name = self.args("index.migrate", args)["name"]
        result = await self.write_op(root, lambda: migrate_index(root, name))
        checkpoint = result.data.get("checkpoint")
        if checkpoint:
            await self.show_document(Path(checkpoint))
        return self._result(result)

    async def cmd_bundle_approve(
        self, args: dict[str, Any], params: types.ExecuteCommandParams
    ) -> Any:
        from memls.core.ops.bundle import approve_bundle

        root = await self.root_for(args)
        path = self.args("bundle.approve", args)["path"]
        uri = self._text(args, "uri")  # the editor's file, when no path is given
        target: Path | None = None
        if path is not None:
            target = root / path
        elif uri is not None:
            target = convert.uri_to_path(uri)
        if target is not None and (target.is_dir() or target.name == "MEMORY.md"):
            target = None
        result = await self.write_op(root, lambda: approve_bundle(root, target))
        return self._result(result)

    async def cmd_log_append(self, args: dict[str, Any], params: types.ExecuteCommandParams) -> Any:
        from memls.core.ops.log import append_log

        root = await self.root_for(args)
        given = self.args("log.append", args)
        title, body = given["title"], given["body"]
        if title is None:
            raise OpError("a log entry needs a {title}", param="title")
        result = await self.write_op(root, lambda: append_log(root, title, body))
        return self._result(result)

    async def cmd_handoff_new(
        self, args: dict[str, Any], params: types.ExecuteCommandParams
    ) -> Any:
        from memls.core.ops.handoff import write_handoff

        root = await self.root_for(args)
        refresh = bool(args.get("refresh"))
        result = await self.write_op(root, lambda: write_handoff(root, refresh=refresh))
        for path in result.paths:
            await self.show_document(Path(path))
        return self._result(result)

    # -- recall --------------------------------------------------------------
    def _model(self) -> str | None:
        return self.server.memory.settings.recall_model

    async def cmd_recall_search(
        self, args: dict[str, Any], params: types.ExecuteCommandParams
    ) -> Any:
        from memls.core.recall.api import search

        root = await self.root_for(args)
        # ``kind`` is read below: an editor may pass one kind or a list of them
        given = self.args("recall.search", {**args, "kind": None}, limit=10)
        query, mode, limit = given["query"], given["mode"], given["limit"]
        if query is None or not query.strip():
            raise OpError("recall search needs a {query}", param="query")
        kind = args.get("kind")
        kinds = [kind] if isinstance(kind, str) else [k for k in kind or [] if isinstance(k, str)]
        response = await asyncio.to_thread(
            lambda: search(root, query, mode=mode, kinds=kinds, limit=limit, model=self._model())
        )
        results = []
        for r in response.results:
            item = r.to_dict()
            item["path"] = str((root / r.path).resolve())
            item["start_line"] = max(0, r.start_line - 1)
            item["end_line"] = max(0, r.end_line - 1)
            results.append(item)
        return {
            "results": results,
            "mode": response.mode,
            "degraded": response.degraded,
            "model": response.model,
            "message": response.message,
        }

    async def cmd_recall_backfill(
        self, args: dict[str, Any], params: types.ExecuteCommandParams
    ) -> Any:
        """Backfill with work-done progress on the client's token (else one the server
        creates). Cancelling the progress or the request stops it between files/batches."""
        from memls.core.recall.api import backfill

        root = await self.root_for(args)
        progress = self.server.work_done_progress
        cancel = threading.Event()
        request_id = self.server.protocol.msg_id
        unregister = (
            self.server.memls_protocol.on_cancel(request_id, cancel.set)
            if request_id is not None
            else None
        )
        token = params.work_done_token
        if token is None and get_capability(
            self.server.client_capabilities, "window.work_done_progress", False
        ):
            token = f"memls-backfill-{uuid.uuid4().hex}"
            try:
                await progress.create_async(token)
            except Exception:
                token = None
        loop = asyncio.get_running_loop()
        if token is not None:
            progress.begin(
                token,
                types.WorkDoneProgressBegin(
                    title="memls: recall backfill", cancellable=True, percentage=0
                ),
            )
            future = progress.tokens.get(token)
            if future is not None:
                future.add_done_callback(lambda f: cancel.set() if f.cancelled() else None)
        last: list[tuple[int, str]] = []

        def report(done: int, total: int, message: str) -> None:
            """Forward a step when its percentage or phase changed (not one per file)."""
            if token is None:
                return
            pct = int(100 * done / total) if total else 0
            step = (pct, message.split(" ", 1)[0])
            if last and last[0] == step:
                return
            last[:] = [step]
            loop.call_soon_threadsafe(
                progress.report,
                token,
                types.WorkDoneProgressReport(message=message, percentage=pct, cancellable=True),
            )

        full = self.args("recall.backfill", args)["full"]
        try:
            summary = await asyncio.to_thread(
                lambda: backfill(
                    root, model=self._model(), full=full, progress=report, cancel=cancel
                )
            )
        except asyncio.CancelledError:
            cancel.set()  # the server is shutting down: let the worker thread stop too
            raise
        finally:
            if unregister is not None:
                unregister()
            if token is not None:
                progress.end(
                    token,
                    types.WorkDoneProgressEnd(message="cancelled" if cancel.is_set() else "done"),
                )
                progress.tokens.pop(token, None)
        cancelled = bool(summary.get("cancelled")) or cancel.is_set()
        message = str(
            summary.get("message") or ("Backfill cancelled." if cancelled else "Backfill done.")
        )
        self.tell(f"memls: {message}")
        return {"message": message, **summary, "cancelled": cancelled}

    async def cmd_recall_status(
        self, args: dict[str, Any], params: types.ExecuteCommandParams
    ) -> Any:
        from memls.core.recall.api import status

        root = await self.root_for(args)
        info = await asyncio.to_thread(lambda: status(root, model=self._model()))
        message = str(info.get("message") or f"recall mode: {info.get('mode')}")
        self.tell(f"memls: {message}")
        return {**info, "message": message}

    async def cmd_recall_verify(
        self, args: dict[str, Any], params: types.ExecuteCommandParams
    ) -> Any:
        from memls.core.recall.api import verify

        root = await self.root_for(args)
        info = await asyncio.to_thread(lambda: verify(root, model=self._model()))
        message = str(
            info.get("message") or ("verified" if info.get("ok") else "verification failed")
        )
        kind = types.MessageType.Info if info.get("ok") else types.MessageType.Warning
        self.tell(f"memls: {message}", kind)
        return {**info, "message": message}

    # -- snapshots -------------------------------------------------------------
    async def cmd_snapshot_save(
        self, args: dict[str, Any], params: types.ExecuteCommandParams
    ) -> Any:
        from memls.core.snapshot import SnapshotError, save_snapshot, snapshot_head

        root = await self.root_for(args)
        given = self.args("snapshot.save", args)
        ref, expect, initial = given["ref"], given["expect"], given["initial"]

        def save() -> Any:
            nonlocal expect, initial
            if expect is None and not initial:
                # From an editor "save" means "on top of what the ref holds now" — the
                # snapshot ref memls writes (a bare name is under refs/memls/, not a branch).
                try:
                    current = snapshot_head(root, ref)
                except (SnapshotError, ValueError):
                    current = None  # save_snapshot names what is wrong with the request
                expect, initial = (current, False) if current else (None, True)
            return save_snapshot(root, ref=ref, expect=expect, initial=initial)

        result = await asyncio.to_thread(save)
        ok = result.status in ("saved", "unchanged")
        self.tell(
            f"memls: {result.message}", types.MessageType.Info if ok else types.MessageType.Error
        )
        return {"message": result.message, **result.to_json()}
