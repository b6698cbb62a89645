"""Change notifications: who listens (sessions, subscriptions) and a watcher that tells them
when memory files appear, disappear or change (``notifications/resources/list_changed`` and
``notifications/resources/updated``, and the SDK's subscription bus)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memls.mcpserver.resources import stats

if TYPE_CHECKING:
    import anyio
    import mcp_types as types
    from mcp.server import ServerRequestContext
    from mcp.server.session import ServerSession

    from memls.mcpserver.server import McpFront


@dataclass
class WatchState:
    """What the resource watcher knows: the resources last listed and who listens."""

    listed: dict[str, tuple[int, int]] = field(default_factory=dict)  # uri -> (size, mtime)
    sessions: list[ServerSession] = field(default_factory=list)
    subscribed: set[str] = field(default_factory=set)


class Watcher:
    """resources/subscribe and resources/unsubscribe, and the watch that notifies."""

    def __init__(self, front: McpFront) -> None:
        self.front = front
        self.state = WatchState()

    async def subscribe(
        self, ctx: ServerRequestContext[Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        import mcp_types as types

        self.remember(ctx)
        self.state.subscribed.add(str(params.uri))
        return types.EmptyResult()

    async def unsubscribe(
        self, ctx: ServerRequestContext[Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        import mcp_types as types

        self.state.subscribed.discard(str(params.uri))
        return types.EmptyResult()

    def remember(self, ctx: ServerRequestContext[Any]) -> None:
        session = getattr(ctx, "session", None)
        if session is not None and all(s is not session for s in self.state.sessions):
            self.state.sessions.append(session)

    async def watch(self, stop: anyio.Event | None = None) -> None:
        """Tell clients when memory files appear, disappear or change (until ``stop`` is set)."""
        import watchfiles

        base = self.front.root
        if base is None or not base.is_dir():
            return
        self.state.listed = stats(self.front.resources.listed())
        # The folders resources live in, not the tree below (a root may be a whole repository).
        places = [p for p in (base, base / "transcripts", base / "memory") if p.is_dir()]
        places += sorted({p.parent for p in self.front.resources.listed().values()} - set(places))
        async for _ in watchfiles.awatch(
            *places,
            watch_filter=lambda _, p: p.endswith(".md"),
            recursive=False,
            debounce=200,
            step=50,
            stop_event=stop,
        ):
            await self.check()

    async def check(self) -> None:
        from mcp.server.subscriptions import ResourcesListChanged, ResourceUpdated

        now = stats(self.front.resources.listed())
        before = self.state.listed
        self.state.listed = now
        changed = [u for u in now if u in before and now[u] != before[u]]
        if set(now) != set(before):
            await self.front.bus.publish(ResourcesListChanged())
            for session in list(self.state.sessions):
                await self._tell(session, session.send_resource_list_changed())
        for uri in changed:
            await self.front.bus.publish(ResourceUpdated(uri=uri))
            if uri in self.state.subscribed:
                for session in list(self.state.sessions):
                    await self._tell(session, session.send_resource_updated(uri))

    async def _tell(self, session: ServerSession, call: Any) -> None:
        """Send one notification; a session that cannot take it any more is forgotten."""
        try:
            await call
        except Exception:
            self.state.sessions = [s for s in self.state.sessions if s is not session]

    # -- prompts ----------------------------------------------------------------------------------
