"""Issue 25, item 2: one link model (core half). One ``Link`` type, one extractor and one
resolver serve the rules, the link graph and the language server; these pin where the
consumers that once had their own policy (the graph, definitions, bundle targets) now agree
with the resolver the IX rules use."""

from __future__ import annotations

import subprocess
from pathlib import Path

from memls.core.config import Config
from memls.core.formats.links import Link, extract_links, link_at
from memls.core.graph import graph_of
from memls.core.model import Position
from memls.core.parse import parse_text
from memls.core.workspace import Workspace


def _repo(tmp_path: Path) -> tuple[Path, Path]:
    project = tmp_path / "repo"
    memory = project / ".claude" / "memory"
    memory.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    (project / "docs").mkdir()
    (project / "docs" / "deploy.md").write_text("# Deploy\n", encoding="utf-8")
    (memory / "auth.md").write_text("# Auth\n", encoding="utf-8")
    return project, memory


def test_one_link_type() -> None:
    import memls.core.graph as graph
    import memls.core.model as model

    assert not hasattr(model, "Link")
    assert vars(graph)["Link"] is Link  # the graph uses the one type, no alias


def test_graph_edges_lead_where_the_resolver_does(tmp_path: Path) -> None:
    project, memory = _repo(tmp_path)
    (memory / "MEMORY.md").write_text(
        "# Project Memory\n\n## Memory Files\n"
        "- [deploy](docs/deploy.md)\n- [[deploy]]\n- [[auth]]\n- [auth](auth.md)\n"
        "- [gone](gone.md)\n",
        encoding="utf-8",
    )
    ws = Workspace(memory, Config())
    doc = ws.document(memory / "MEMORY.md")
    assert doc is not None
    edges = {(r.line, r.range.start.character): r for r in graph_of(ws).refs_from(doc.path)}
    for link in extract_links(doc):
        edge = edges[(link.line, link.start)]
        found = ws.links.resolve(link)
        if found is not None:
            assert edge.target == found, link
            assert edge.exists == (found in ws.paths()), link
        else:
            assert not edge.exists, link
    assert edges[(3, 11)].target == project / "docs" / "deploy.md"
    assert edges[(4, 4)].target == project / "docs" / "deploy.md"  # [[deploy]]


def test_link_at_covers_the_whole_written_link() -> None:
    text = "- see [the notes](notes.md#top), [[deploy|how]] and `src/app.py:3` here\n"
    doc = parse_text(text, Path("/m/MEMORY.md"))
    line = text.rstrip("\n")

    def target_at(column: int) -> str | None:
        link = link_at(doc, Position(0, column))
        return link.target if link is not None else None

    assert target_at(line.index("[the")) == "notes.md"  # on the text
    assert target_at(line.index("notes.md") + 2) == "notes.md"
    assert target_at(line.index("top")) == "notes.md"  # on the anchor
    assert target_at(line.index("[[")) == "deploy"
    assert target_at(line.index("how")) == "deploy"  # on the alias
    assert target_at(line.index("`src")) == "src/app.py"
    assert target_at(line.index("here")) is None
    assert target_at(1) is None


def test_links_in_html_blocks_are_text() -> None:
    doc = parse_text(
        "# T\n\n<details>\n[hidden](h.md)\n</details>\n\n[shown](s.md)\n", Path("/m/x.md")
    )
    assert [link.target for link in extract_links(doc)] == ["s.md"]


def test_a_backslash_path_in_backticks_is_a_link_for_sz005() -> None:
    doc = parse_text("- `memory\\win.md` — notes\n", Path("/m/MEMORY.md"))
    assert [(link.target, link.kind) for link in extract_links(doc)] == [("memory\\win.md", "code")]


def test_a_written_path_resolves_like_a_link_to_it(tmp_path: Path) -> None:
    project, memory = _repo(tmp_path)
    ws = Workspace(memory, Config())
    source = memory / "checkpoint-main.md"
    assert ws.links.resolve_written(source, "auth.md") == memory / "auth.md"
    assert ws.links.resolve_written(source, "docs/deploy.md") == project / "docs" / "deploy.md"
    assert ws.links.resolve_written(source, "nowhere.md") is None
