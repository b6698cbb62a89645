"""The memory files as MCP resources: listed (MEMORY.md, the checkpoints, the handoff,
LOG.md and the topic files MEMORY.md links to), read through two templates (a checkpoint by
name, any memory file by path), with completions for both. Secrets are redacted on the way
out; what changes is told by :mod:`memls.mcpserver.watcher`.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import mcp_types as types
    from mcp.server import ServerRequestContext

    from memls.mcpserver.server import McpFront

CHECKPOINT_TEMPLATE = "memls://memory/checkpoint-{name}.md"
MEMORY_TEMPLATE = "memls://memory/{path}"
RESOURCE_NOT_FOUND = -32002
"""The MCP specification's error code for a resource URI that names nothing."""


class Resources:
    """resources/list, resources/templates/list, resources/read and completion/complete."""

    def __init__(self, front: McpFront) -> None:
        self.front = front
        self._topics: tuple[tuple[str, int, int], list[Path]] | None = None

    def listed(self) -> dict[str, Path]:
        """URI → file for MEMORY.md, each checkpoint, the handoff, LOG.md and the topic
        files MEMORY.md links to (inside the root)."""
        from memls.core.ops.handoff import handoff_path
        from memls.core.workspace import CHECKPOINT_RE, index_path

        base = self.front.root
        if base is None or not base.is_dir():
            return {}
        index = index_path(base)
        found: list[Path] = [index]
        with contextlib.suppress(OSError):
            found += sorted(p for p in base.iterdir() if CHECKPOINT_RE.match(p.name))
        with contextlib.suppress(ValueError):
            found.append(handoff_path(base))
        found.append(base / "LOG.md")
        found += self._linked_topics(base, index)
        out: dict[str, Path] = {}
        for path in found:
            if path.is_file() and not path.is_symlink():
                out.setdefault(_uri(base, path), path)
        return out

    def _linked_topics(self, base: Path, index: Path) -> list[Path]:
        """Markdown files inside the root that MEMORY.md links to, in link order (cached
        while MEMORY.md's size and modification time stay the same)."""
        from memls.core.formats.links import LinkResolver, distinct_links
        from memls.core.fsutil import inside
        from memls.core.parse import parse_file
        from memls.core.workspace import repo_root_for

        try:
            st = index.stat()
        except OSError:
            return []
        key = (str(index), st.st_size, st.st_mtime_ns)
        if self._topics is not None and self._topics[0] == key:
            return self._topics[1]
        topics: list[Path] = []
        try:
            doc = parse_file(index)
            resolver = LinkResolver(base, repo_root_for(base))
            for _link, target in resolver.resolve_all(distinct_links(doc)):
                if target is None or target.suffix.lower() != ".md" or target == index:
                    continue
                if target.is_relative_to(base) and inside(base, target) and target not in topics:
                    topics.append(target)
        except (OSError, ValueError):
            topics = []
        self._topics = (key, topics)
        return topics

    def readable(self) -> dict[str, Path]:
        """What resources/read serves: the listed resources, and every other Markdown memory
        file of the root by its path (the ``memls://memory/{path}`` template)."""
        from memls.core.workspace import memory_files

        found = self.listed()
        base = self.front.root
        if base is None or not base.is_dir():
            return found
        for path in memory_files(base):
            if path.is_file() and not path.is_symlink():
                found.setdefault(_uri(base, path), path)
        return found

    async def list(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        import mcp_types as types

        self.front.watcher.remember(ctx)
        found = self.listed()
        base = self.front.root
        self.front.watcher.state.listed = stats(found)
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=uri,
                    name=path.relative_to(base).as_posix() if base else path.name,
                    title=_title(path),
                    mime_type="text/markdown",
                    size=self.front.watcher.state.listed.get(uri, (None, 0))[0],
                )
                for uri, path in found.items()
            ]
        )

    async def templates(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        import mcp_types as types

        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    name="checkpoint",
                    title="A checkpoint by name",
                    uri_template=CHECKPOINT_TEMPLATE,
                    description="checkpoint-{name}.md of the memory root (checkpoint_list "
                    "names them).",
                    mime_type="text/markdown",
                ),
                types.ResourceTemplate(
                    name="memory-file",
                    title="A memory file by path",
                    uri_template=MEMORY_TEMPLATE,
                    description="Any Markdown memory file of the root by its path relative "
                    "to the root (MEMORY.md, LOG.md, memory/topic.md, transcripts/.handoff.md, "
                    "a topic file MEMORY.md links to); URL-encoded, '/' kept.",
                    mime_type="text/markdown",
                ),
            ]
        )

    async def read(
        self, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        import mcp_types as types
        from mcp.shared.exceptions import MCPError

        path = self.readable().get(_normal_uri(str(params.uri)))
        if path is None:
            raise MCPError(
                RESOURCE_NOT_FOUND,
                f"no memory file {params.uri} (resources/list and "
                "resources/templates/list show what there is)",
            )
        text = self.front.redact(path.read_bytes().decode("utf-8", "replace"))
        return types.ReadResourceResult(
            contents=[
                types.TextResourceContents(
                    uri=str(params.uri), mime_type="text/markdown", text=text
                )
            ]
        )

    async def complete(
        self, ctx: ServerRequestContext[Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        """Completions for the templates' ``name`` and ``path`` and the prompts' ``name``:
        the checkpoints and memory files there are, by prefix."""
        import mcp_types as types

        from memls.core.workspace import CHECKPOINT_RE

        ref, argument = params.ref, params.argument
        prefix = argument.value or ""
        base = self.front.root
        values: list[str] = []
        if base is not None and base.is_dir():
            files = self.readable()
            paths = sorted(p.relative_to(base).as_posix() for p in files.values())
            names = sorted(
                m["name"]
                for m in (CHECKPOINT_RE.match(Path(p).name) for p in paths if "/" not in p)
                if m
            )
            wants_names = argument.name == "name" and (
                isinstance(ref, types.PromptReference)
                or getattr(ref, "uri", None) == CHECKPOINT_TEMPLATE
            )
            if wants_names:
                values = [n for n in names if n.startswith(prefix)]
            elif argument.name == "path" and getattr(ref, "uri", None) == MEMORY_TEMPLATE:
                values = [p for p in paths if p.startswith(prefix)]
        return types.CompleteResult(
            completion=types.Completion(
                values=values[:100], total=len(values), has_more=len(values) > 100
            )
        )


def _uri(root: Path, path: Path) -> str:
    from urllib.parse import quote

    return "memls://memory/" + quote(path.relative_to(root).as_posix())


def _normal_uri(uri: str) -> str:
    """A resource URI as :func:`_uri` spells it (a client may encode more or fewer
    characters when it fills in a template); anything that is not a plain relative path
    inside ``memls://memory/`` stays as it is and so names nothing."""
    from urllib.parse import quote, unquote

    prefix = "memls://memory/"
    if not uri.startswith(prefix):
        return uri
    rel = unquote(uri[len(prefix) :])
    parts = rel.split("/")
    if not rel or any(p in ("", ".", "..") for p in parts) or "\\" in rel or "\x00" in rel:
        return uri
    return prefix + quote(rel)


def _title(path: Path) -> str:
    if path.name.startswith("checkpoint-"):
        return f"Checkpoint {path.name[len('checkpoint-') : -len('.md')]}"
    return {"MEMORY.md": "Memory index", "LOG.md": "Log", ".handoff.md": "Handoff"}.get(
        path.name, path.name
    )


def stats(found: dict[str, Path]) -> dict[str, tuple[int, int]]:
    out = {}
    for uri, path in found.items():
        try:
            st = path.stat()
        except OSError:
            continue
        out[uri] = (st.st_size, st.st_mtime_ns)
    return out
