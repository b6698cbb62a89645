"""core/formats/links.py: what counts as a file link, and where it leads (like a reader would)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memls.core.config import Config
from memls.core.formats.links import (
    Link,
    LinkResolver,
    distinct_links,
    extract_links,
    find_repo_root,
    link_key,
)
from memls.core.parse import parse_text
from memls.core.rules import check_document
from memls.core.workspace import Workspace

from .conftest import NOW


def _links(text: str, path: Path) -> list[Link]:
    return extract_links(parse_text(text, path))


def _repo(tmp_path: Path) -> tuple[Path, Path]:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    mem = repo / ".claude" / "memory"
    mem.mkdir(parents=True)
    (repo / "docs").mkdir()
    (repo / "CLAUDE.md").write_text("x")
    (repo / "docs" / "api.md").write_text("x")
    (mem / "topic-a.md").write_text("x")
    (mem / "notes").mkdir()
    (mem / "notes" / "Deep Note.md").write_text("x")
    return repo, mem


def test_extract_kinds_ranges_and_anchors(tmp_path: Path) -> None:
    text = (
        "# Memory\n"
        "- [Topic A](topic-a.md#intro) — about a\n"
        "- [[topic-a|A]] and [[#local]] and ![[Deep Note#Part]]\n"
        "- topic-a.md — a bullet pointer\n"
        "[ref]: <docs/api.md> 'title'\n"
        "- `docs/api.md` and `src/app.py:42` and `self.method` and `not a path.md`\n"
        "- [web](https://example.com) [mail](mailto:a@b.c) [anchor](#x) ![img](pic.png)\n"
        "- `[inside](code.md)` and [tmpl]({name}.md)\n"
        "```\n[fenced](fenced.md)\n```\n"
    )
    path = tmp_path / "MEMORY.md"
    links = _links(text, path)
    got = [(lk.kind, lk.target, lk.anchor, lk.text) for lk in links]
    assert got == [
        ("markdown", "topic-a.md", "intro", ""),
        ("wikilink", "topic-a", None, "A"),
        ("wikilink", "Deep Note", "Part", ""),
        ("bullet", "topic-a.md", None, ""),
        ("reference", "docs/api.md", None, "ref"),
        ("code", "docs/api.md", None, ""),
        ("code", "src/app.py", None, ""),
    ]
    lines = text.splitlines()
    for lk in links:
        line = lines[lk.range.start.line]
        assert line[lk.range.start.character : lk.range.end.character] == lk.target
        assert lk.source == path


def test_frontmatter_is_not_scanned(tmp_path: Path) -> None:
    text = "---\nname: x\ndescription: see [a](gone.md)\n---\n[b](b.md)\n"
    assert [lk.target for lk in _links(text, tmp_path / "t.md")] == ["b.md"]


def test_resolution_like_a_reader(tmp_path: Path) -> None:
    repo, mem = _repo(tmp_path)
    assert find_repo_root(mem) == repo
    text = (
        "- [a](topic-a.md) [claude](../../CLAUDE.md) [abs](/docs/api.md)\n"
        "- `docs/api.md` and `api.md` in `docs/`\n"
        "- [[topic-a]] [[deep note]] [[notes/Deep Note]] [[missing note]]\n"
        "- [gone](gone.md) `memory/gone.md`\n"
    )
    resolver = LinkResolver(mem, repo)
    got = {(lk.kind, lk.target): resolver.resolve(lk) for lk in _links(text, mem / "MEMORY.md")}
    assert got == {
        ("markdown", "topic-a.md"): mem / "topic-a.md",
        ("markdown", "../../CLAUDE.md"): repo / "CLAUDE.md",
        ("markdown", "/docs/api.md"): repo / "docs" / "api.md",
        ("code", "docs/api.md"): repo / "docs" / "api.md",
        ("code", "api.md"): repo / "docs" / "api.md",
        ("wikilink", "topic-a"): mem / "topic-a.md",
        ("wikilink", "deep note"): mem / "notes" / "Deep Note.md",
        ("wikilink", "notes/Deep Note"): mem / "notes" / "Deep Note.md",
        ("wikilink", "missing note"): None,
        ("markdown", "gone.md"): None,
        ("code", "memory/gone.md"): None,
    }


def test_resolver_caches_and_invalidates(tmp_path: Path) -> None:
    _, mem = _repo(tmp_path)
    resolver = LinkResolver(mem, None)
    text = "".join("- [x](new.md)\n" for _ in range(500))
    links = _links(text, mem / "MEMORY.md")
    assert all(resolver.resolve(lk) is None for lk in links)
    calls = resolver.stat_calls
    assert calls <= 3  # one per candidate base, not one per link
    (mem / "new.md").write_text("x")
    assert resolver.resolve(links[0]) is None  # cached until told
    resolver.invalidate(mem / "new.md")
    assert resolver.resolve(links[0]) == mem / "new.md"


def test_issue15_defect5_pointer_resolution_is_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 15, defect 5: `memls check` on a MEMORY.md of many pointer bullets resolved
    (realpath/stat) every pointer again. Resolution now costs one stat per distinct
    candidate path: counted here, not timed (bench/links.py has the timing)."""
    topics = 40
    for i in range(topics):
        (tmp_path / f"topic-{i}.md").write_text(f"# Topic {i}\n")
    bullets = "".join(f"- [Topic {i % topics}](topic-{i % topics}.md) — {i}\n" for i in range(4000))
    (tmp_path / "MEMORY.md").write_text("# Project Memory\n\n## Memory Files\n" + bullets)
    ws = Workspace(tmp_path, Config())
    calls = {"n": 0}
    real_stat, real_lstat = os.stat, os.lstat

    def counting_stat(*args: Any, **kwargs: Any) -> os.stat_result:
        calls["n"] += 1
        return real_stat(*args, **kwargs)

    def counting_lstat(*args: Any, **kwargs: Any) -> os.stat_result:
        calls["n"] += 1
        return real_lstat(*args, **kwargs)

    monkeypatch.setattr(os, "stat", counting_stat)
    monkeypatch.setattr(os, "lstat", counting_lstat)
    found = [d for p in ws.paths() if (doc := ws.document(p)) for d in check_document(ws, doc, NOW)]
    monkeypatch.undo()
    assert not [d for d in found if d.code in ("IX009", "IX010")]
    # Before the fix: two candidates and a realpath for each of the 4,000 pointers (> 8,000).
    assert calls["n"] < 1000, calls["n"]
    assert ws.links.stat_calls <= 3 * topics + 10
    # Every pointer resolves, so the check made one link per distinct target, not 4,000.
    import memls.core.formats.links as links_module

    index = ws.document(tmp_path / "MEMORY.md")
    assert index is not None
    assert len(distinct_links(index)) == topics
    assert links_module._CACHE_KEY not in index.extra


def test_whole_text_extraction_equals_the_line_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Big documents find inline links in the whole text at once; the links (kinds, ranges,
    order) must be exactly those the line scan finds."""
    import memls.core.formats.links as links_module

    block = (
        "- [Topic](topic.md#intro) — a pointer\n"
        "- notes.md — a bare path bullet, see [x](x.md)\n"
        'Prose with [a [nested] label](a.md) and [t](<b c.md> "title") and ![i](p.png)\n'
        "- `code/path.md` and [[wiki|alias]] and [y](y.md)\n"
        "[ref]: docs/ref.md\n"
        "```\n[fenced](fenced.md)\n```\n"
        "\r\n"
        "A [web](https://example.com) [anchor](#x) [q](q.md?raw=1) [t]({name}.md)\n"
        "[split](\nnot-a-link.md)\n"
    )
    text = "---\nname: x\n---\n[fm](fm.md)\n" + block * 40
    path = tmp_path / "MEMORY.md"
    monkeypatch.setattr(links_module, "WHOLE_TEXT_LINES", 10**9)
    by_line = extract_links(parse_text(text, path))
    monkeypatch.setattr(links_module, "WHOLE_TEXT_LINES", 0)
    whole = extract_links(parse_text(text, path))
    assert whole == by_line
    assert len(whole) > 40 * 8


def test_whole_text_extraction_edges_equal_the_line_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole-text path's edges: a bare-path bullet on the first line and after blank
    or CRLF lines, a very long line, a link right after a fence, escaped and image links,
    an angled target, and a numbered bare-path bullet."""
    import memls.core.formats.links as links_module

    block = (
        "\n"
        "- after-blank.md — a bare path after a blank line\r\n"
        "1. numbered.md: and [n](n.md)\r\n"
        "```\n[f](f.md)\n```\n"
        "[after](fence.md) \\[esc](e.md) ![img](i.md) x[glued](g.md)\n"
        + "- [long](long.md) "
        + "x" * 20_001
        + "\n"
        "- [[wiki]] and [z](<z z.md>)\n"
    )
    cases = [
        (head, body)
        for head in ("- first.md — a bare path on line one\n", "[first](one.md)\n")
        for body in (block, block.replace("\r\n", "\n"))  # line offsets: with and without CR
    ]
    for head, body in cases:
        text = head + body * 30
        path = tmp_path / "MEMORY.md"
        monkeypatch.setattr(links_module, "WHOLE_TEXT_LINES", 10**9)
        by_line = extract_links(parse_text(text, path))
        monkeypatch.setattr(links_module, "WHOLE_TEXT_LINES", 0)
        whole = extract_links(parse_text(text, path))
        assert whole == by_line
        assert {link.target for link in whole} >= {"after-blank.md", "numbered.md", "z z.md"}
        assert not [link for link in whole if link.target in ("f.md", "i.md", "e.md")]
        assert whole[0].target == ("first.md" if head.startswith("-") else "one.md")


_FRAGMENTS = [
    "- [T](t.md) — a pointer",
    "- [T](t.md) and [U](u%20v.md#x) twice",
    "- bare.md — a bare path",
    "1. [n](<n n.md>)",
    "```",
    "~~~",
    "---",
    "name: x",
    "",
    "\r",
    "  - [indented](i.md)",
    "[ref]: r.md",
    "see `code/p.md` and [[w]]",
    "![img](i.png) \\[e](e.md) x[g](g.md)",
    "[web](https://x.y) [a](#b) [t]({t}.md)",
    "- [L](l.md) " + "y" * 20_001,
    "# Heading [h](h.md)",
    "<!-- [c](c.md) -->",
    "[same target, angled](<t.md>) and [again](t.md)",
]


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(_FRAGMENTS), min_size=1, max_size=40))
def test_whole_text_extraction_equals_the_line_scan_on_any_mix(lines: list[str]) -> None:
    """Any mix of link lines, fences, front matter, blank and CR lines: the whole-text
    path finds exactly the links the line scan finds."""
    import memls.core.formats.links as links_module

    text = "\n".join(lines)
    path = Path("/memory/MEMORY.md")
    saved = links_module.WHOLE_TEXT_LINES
    try:
        links_module.WHOLE_TEXT_LINES = 10**9
        by_line = extract_links(parse_text(text, path))
        distinct_by_line = distinct_links(parse_text(text, path))
        links_module.WHOLE_TEXT_LINES = 0
        whole = extract_links(parse_text(text, path))
        distinct_whole = distinct_links(parse_text(text, path))
        after_full = parse_text(text, path)
        extract_links(after_full)
        distinct_after_full = distinct_links(after_full)  # derived from the cached links
    finally:
        links_module.WHOLE_TEXT_LINES = saved
    assert whole == by_line
    first: dict[tuple[str, str, tuple[str, ...]], Link] = {}
    for link in by_line:
        first.setdefault(link_key(link), link)
    expected = list(first.values())
    assert distinct_by_line == expected
    assert distinct_whole == expected
    assert distinct_after_full == expected


def test_document_links_skip_front_matter_fences_and_html() -> None:
    """The links of a document (once the parser's own ``doc.links``, now the one extractor)
    are read from the lines the line scan reads: not front matter, fenced code, HTML
    blocks or overlong lines."""
    text = (
        "---\nsee: [fm](fm.md)\n---\n"
        "- [a](a.md) and `b.md`\n"
        "```\n[fenced](f.md)\n```\n"
        "<div>\n[html](h.md)\n</div>\n\n"
        "- [long](long.md) " + "z" * 20_001 + "\n"
        "[c](c.md)\n"
    )
    doc = parse_text(text, Path("/memory/MEMORY.md"))
    assert [(link.target, link.kind, link.line) for link in extract_links(doc)] == [
        ("a.md", "markdown", 3),
        ("b.md", "code", 3),
        ("c.md", "markdown", 12),
    ]
