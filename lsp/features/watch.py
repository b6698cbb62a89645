"""Files created, changed or deleted on disk, and ``git checkout``.

Where the client can register file watchers dynamically, the server asks it to watch
Markdown files, memls configuration and the repository's ``.git/HEAD`` and refs
(``workspace/didChangeWatchedFiles``). Where it cannot (Neovim on Linux by default), the
server watches its roots and git directories itself with ``watchfiles``.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.capabilities import get_capability

from memls.lsp import convert
from memls.lsp.features import LanguageFeature

if TYPE_CHECKING:
    from memls.lsp.server import MemlsServer

GLOBS = (
    "**/*.md",
    "**/memls.toml",
    "**/pyproject.toml",
    "**/.git/HEAD",
    "**/.git/refs/**",
    "**/.git/packed-refs",
)


def is_git_path(path: Path) -> bool:
    return ".git" in path.parts or path.name in ("HEAD", "packed-refs")


class Watch(LanguageFeature):
    def __init__(self, server: MemlsServer) -> None:
        super().__init__(server)
        self._tasks: list[asyncio.Task[None]] = []
        self._stop: asyncio.Event | None = None
        self._watched: tuple[tuple[Path, ...], tuple[Path, ...]] = ((), ())
        self.client_watches = False

    async def initialized(self) -> None:
        caps = self.server.client_capabilities
        if get_capability(caps, "workspace.did_change_watched_files.dynamic_registration", False):
            try:
                await self.server.client_register_capability_async(
                    types.RegistrationParams(
                        registrations=[
                            types.Registration(
                                id="memls-watch",
                                method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                                register_options=types.DidChangeWatchedFilesRegistrationOptions(
                                    watchers=[
                                        types.FileSystemWatcher(glob_pattern=g) for g in GLOBS
                                    ]
                                ),
                            )
                        ]
                    )
                )
                self.client_watches = True
                return
            except Exception as exc:
                self.server.log_info(
                    f"memls: client refused file watchers ({exc}); watching myself"
                )
        await self.restart()

    async def document_open(self, uri: str) -> None:
        if not self.client_watches:
            await self.restart()  # the document may have brought a new root

    async def restart(self) -> None:
        """(Re)start the server-side watcher over every root and its git directory."""
        if self.client_watches:
            return
        memory = self.server.memory

        def targets() -> tuple[tuple[Path, ...], tuple[Path, ...]]:
            flat: set[Path] = set()
            deep: set[Path] = set()
            for root, ws in memory.workspaces.items():
                flat.update((root, root / "memory", root / "transcripts"))
                git_dir = ws.git.git_dir
                if git_dir is not None:
                    flat.add(git_dir)
                    deep.add(git_dir / "refs")
            return (
                tuple(sorted(p for p in flat if p.is_dir())),
                tuple(sorted(p for p in deep if p.is_dir())),
            )

        wanted = await memory.run(targets)
        if wanted == self._watched and self._tasks and not any(t.done() for t in self._tasks):
            return
        await self.stop()
        self._watched = wanted
        self._stop = asyncio.Event()
        flat, deep = wanted
        for paths, recursive in ((flat, False), (deep, True)):
            if paths:
                self._tasks.append(asyncio.ensure_future(self._watch(paths, recursive, self._stop)))
        # One loop turn runs each task up to its first await, by which point watchfiles has
        # created its native watcher: changes made after restart() returns are seen.
        await asyncio.sleep(0)

    async def shutdown(self) -> None:
        await self.stop()

    async def stop(self) -> None:
        if self._stop is not None:
            self._stop.set()
        for task in self._tasks:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await task
        self._tasks = []

    async def _watch(self, paths: tuple[Path, ...], recursive: bool, stop: asyncio.Event) -> None:
        from watchfiles import Change, awatch

        kinds = {
            Change.added: types.FileChangeType.Created,
            Change.modified: types.FileChangeType.Changed,
            Change.deleted: types.FileChangeType.Deleted,
        }

        def wanted(change: Change, raw: str) -> bool:
            path = Path(raw)
            if ".git" in path.parts:
                return path.name in ("HEAD", "packed-refs") or "refs" in path.parts
            return path.suffix == ".md" or path.name in ("memls.toml", "pyproject.toml")

        try:
            async for batch in awatch(
                *paths,
                watch_filter=wanted,
                stop_event=stop,
                debounce=400,
                step=30,
                recursive=recursive,
            ):
                await self.files_changed([(Path(p), kinds[c]) for c, p in batch])
        except Exception as exc:
            self.server.report_server_error(exc, Watch)

    async def did_change_watched_files(self, params: types.DidChangeWatchedFilesParams) -> None:
        changes = []
        for event in params.changes:
            path = convert.uri_to_path(event.uri)
            if path is not None:
                changes.append((path, event.type))
        await self.files_changed(changes)

    async def files_changed(self, changes: list[tuple[Path, types.FileChangeType]]) -> None:
        """Update the workspaces and re-check what the changes affect."""
        memory = self.server.memory
        git = any(is_git_path(p) for p, _ in changes)
        files = [p for p, _ in changes if not is_git_path(p)]

        def apply() -> set[Path]:
            affected: set[Path] = set()
            if git:
                memory.git_changed()
                affected.update(memory.all_paths())
            affected |= memory.invalidate_many(files)
            return affected

        affected = await memory.run(apply)
        if affected:
            await self.server.fan_out(lambda f: f.affected(affected))
