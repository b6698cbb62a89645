"""Split memory files and transcripts into recall chunks with stable ids.

Markdown is cut on ``## `` sections (a ``### `` stays inside its ``## `` parent); the text
before the first ``## `` is its own chunk when it says more than the title. Every chunk of a
file carries a short *header* (title, frontmatter description and tags) that is prefixed to
the text that gets embedded, so a section read out of context still says what it is about.
LOG.md is cut per entry: an undated ``## `` heading (``## Checkpoint Bundle``) stays with the
dated entry above it. Transcripts become one chunk per user+assistant turn.

Ids are ``<relative path>#<anchor>``: the heading slug (``-2``, ``-3`` … for repeated
headings) or ``turn-<n>``; a chunk cut for size adds ``.2``, ``.3`` … to its anchor. Ids do
not depend on line numbers, so editing one section leaves the others' ids and hashes alone.

Nothing secret is indexed: every secret value (:mod:`memls.core.secrets`) becomes
``[redacted KIND]`` before anything is derived from the text (:func:`redact_text`) — a
Markdown file's whole text before it is parsed, so its ids, headings, header, text and
content hash are all of the redacted text; a transcript turn's text as it comes out of the
transcript parser (``backfill.py``), before its heading, parts and neighbours' context are cut
from it. Fingerprints in ``allow_secrets`` mark known fakes, which stay.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memls.core.model import Document, FileKind

CHUNKER_REVISION = 6
"""Bumped when chunking changes (2, 3: transcript turns carry their neighbours as context;
4: turns are embedded without header and role labels; 5: secrets are redacted; 6: turns
carry the file line of each text line);
a store indexed by another revision re-reads every file on the next backfill (chunks whose
id and embedded text did not change keep their vectors)."""
MAX_CHUNK_CHARS = 3000
"""Longest chunk text; longer sections and turns are cut at line boundaries into parts."""
MAX_HEADER_CHARS = 300
"""Longest file header prefixed to embedded text."""

KINDS = ("topic", "checkpoint", "handoff", "log", "transcript")
"""The chunk kinds recall indexes (the ``--kind`` filter values)."""

_DATE_RE = re.compile(r"(\d{4}-\d{2}-\d{2})(?:[ T](\d{1,2}:\d{2}(?::\d{2})?))?")
_SLUG_DROP = re.compile(r"[^\w\s-]")
_SLUG_SPACE = re.compile(r"[\s_-]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


@dataclass(frozen=True)
class Chunk:
    """One searchable unit: a section, a LOG entry or a transcript turn."""

    id: str
    kind: str
    path: str  # POSIX, relative to the root
    start_line: int  # 1-based
    end_line: int  # 1-based, inclusive
    heading: str | None
    text: str
    header: str
    timestamp: str | None = None
    session_id: str | None = None
    branch: str | None = None
    context: str = ""
    """Neighbouring text (a turn's previous and next turns) that full-text search weighs in
    at a lower weight; it is not shown and not part of the line range."""
    line_map: str = ""
    """A transcript chunk's file line per text line (:func:`encode_line_map`): how a search
    names the JSONL lines of the messages that matched, not the whole turn."""

    @property
    def embed_text(self) -> str:
        """What the embedding model sees (:func:`chunk_embed_text`), never the context: on
        the LoCoMo development split embedding the neighbours too cost semantic recall@5
        0.64 -> 0.58."""
        return chunk_embed_text(self.kind, self.header, self.text)

    @property
    def content_hash(self) -> str:
        """Hash of the embedded text: equal hashes never need embedding again."""
        import hashlib  # here, not at import: a search loads no OpenSSL for it

        return hashlib.sha256(self.embed_text.encode("utf-8")).hexdigest()[:32]


def embed_text(header: str, text: str) -> str:
    """Header and text as one string for the embedding model."""
    return f"{header}\n\n{text}" if header else text


_ROLE_LABEL = re.compile(r"(?:^|(?<=\n\n))(?:User|Assistant): ")


def chunk_embed_text(kind: str, header: str, text: str) -> str:
    """What the model embeds for a chunk of ``kind``: a transcript turn's words alone —
    without its header (file and session id) and without the ``User:``/``Assistant:`` labels
    the rendering puts before each paragraph, noise beside a short turn (on the LoCoMo
    development split: hybrid recall@5 0.844 -> 0.870+) — any other chunk after its file
    header."""
    if kind == "transcript":
        return _ROLE_LABEL.sub("", text)
    return embed_text(header, text)


def redact_text(
    text: str,
    allowed: frozenset[str] = frozenset(),
    *,
    fences: Sequence[tuple[int, int]] = (),
) -> str:
    """``text`` with every secret value replaced by ``[redacted KIND]``, its lines kept.

    What :func:`memls.core.secrets.redact` does, except that a value spanning lines (a
    private key's body) leaves as many line breaks as it had, so the lines after it keep
    their numbers. ``fences`` are the document's fenced code blocks, as the SC rules pass
    them (a random-looking string in a code block is not taken for a secret there either);
    ``allowed`` holds the fingerprints of known fakes (``allow_secrets``), which stay.
    Text without a secret comes back as the same object.
    """
    if not text:
        return text
    from memls.core.secrets import find_secrets, fingerprint, redaction  # not at import

    found = find_secrets(text, fences=fences)
    if not found:
        return text
    parts: list[str] = []
    last = 0
    for secret in found:
        value = secret.value(text)
        if allowed and fingerprint(value) in allowed:
            continue
        breaks = value.count("\n")
        lead = "\n" if breaks and value.startswith("\n") else ""
        parts += [text[last : secret.start], lead, redaction(secret), "\n" * (breaks - len(lead))]
        last = secret.end
    if not parts:
        return text
    parts.append(text[last:])
    return "".join(parts)


def slugify(text: str) -> str:
    """A GitHub-style heading anchor (lowercase, punctuation dropped, spaces to ``-``)."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _SLUG_DROP.sub("", text)
    slug = _SLUG_SPACE.sub("-", text).strip("-")
    return slug or "section"


def normalize_timestamp(value: str | None) -> str | None:
    """``YYYY-MM-DDTHH:MM:SS`` (UTC when the input has a zone), so strings sort by time."""
    if not value:
        return None
    text = value.strip()
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        match = _DATE_RE.search(text)
        if not match:
            return None
        day, clock = match.group(1), match.group(2) or "00:00"
        try:
            parsed = datetime.fromisoformat(f"{day}T{clock}")
        except ValueError:
            return None
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(UTC).replace(tzinfo=None)
    return parsed.strftime("%Y-%m-%dT%H:%M:%S")


def mtime_timestamp(mtime_ns: int) -> str:
    """A file modification time as a normalised UTC timestamp (the fallback chunk time)."""
    moment = datetime.fromtimestamp(mtime_ns / 1e9, tz=UTC).replace(tzinfo=None)
    return moment.strftime("%Y-%m-%dT%H:%M:%S")


def first_sentence(text: str, limit: int = 200) -> str:
    """The first sentence of a chunk's first body line (headings skipped), at most ``limit`` chars."""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or line == "---":
            continue
        line = line.lstrip("-*>0123456789. ").strip() or line
        sentence = _SENTENCE_END.split(line, maxsplit=1)[0]
        return sentence[:limit].strip()
    return ""


def kind_name(kind: FileKind) -> str | None:
    """The recall kind for a file kind, or None when recall does not index that kind."""
    name = kind.value
    return name if name in KINDS else None


def file_header(doc: Document, rel: str) -> str:
    """Title, frontmatter description/type/tags and the path, capped at MAX_HEADER_CHARS."""
    title = next((h.title for h in doc.headings if h.level == 1), None)
    parts = [title or rel]
    fm = doc.frontmatter
    extras: list[str] = []
    if fm is not None:
        for key in ("description", "type", "tags"):
            entry = fm.get(key)
            if entry is None:
                continue
            value = ", ".join(entry.value) if isinstance(entry.value, list) else entry.value
            value = value.strip().strip("[]").strip()
            if not value:
                continue
            if key == "description":
                parts.append(value)
            else:
                extras.append(f"{key}: {value}")
    header = " — ".join(parts)
    if extras:
        header += f" ({'; '.join(extras)})"
    if title:
        header += f" [{rel}]"
    return header[:MAX_HEADER_CHARS]


def _split_for_size(lines: Sequence[str], first_line: int) -> list[tuple[int, int, str]]:
    """Cut lines into parts of at most MAX_CHUNK_CHARS: (start_line, end_line, text), 1-based."""
    return [
        (a, b, "\n".join(p for p, _ in pieces)) for a, b, pieces in _split_pieces(lines, first_line)
    ]


def _split_pieces(
    lines: Sequence[str], first_line: int
) -> list[tuple[int, int, list[tuple[str, int]]]]:
    """:func:`_split_for_size` keeping, for each line of a part's text, the input line it
    was cut from: (start_line, end_line, [(piece, line)])."""
    parts: list[tuple[int, int, list[tuple[str, int]]]] = []
    buf: list[tuple[str, int]] = []
    size = 0
    start = last = first_line
    for offset, line in enumerate(lines):
        lineno = first_line + offset
        pieces = [line[i : i + MAX_CHUNK_CHARS] for i in range(0, len(line), MAX_CHUNK_CHARS)]
        for piece in pieces or [""]:
            if buf and size + len(piece) + 1 > MAX_CHUNK_CHARS:
                parts.append((start, last, buf))
                buf, size, start = [], 0, lineno
            buf.append((piece, lineno))
            size += len(piece) + 1
            last = lineno
    if buf:
        parts.append((start, last, buf))
    out: list[tuple[int, int, list[tuple[str, int]]]] = []
    for a, b, found in parts:
        if not "\n".join(p for p, _ in found).strip():
            continue
        # what text.strip("\n") drops: the empty pieces at either end
        first = next(i for i, (p, _) in enumerate(found) if p)
        last = max(i for i, (p, _) in enumerate(found) if p)
        out.append((a, max(a, b), found[first : last + 1]))
    return out


def _trim_blank(lines: list[str], start: int) -> tuple[list[str], int]:
    """Drop leading and trailing blank lines; return the rest and its new first line index."""
    while lines and not lines[0].strip():
        lines = lines[1:]
        start += 1
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines, start


def chunk_markdown(
    rel: str,
    text: str,
    kind: str,
    *,
    fallback_timestamp: str | None = None,
    allowed: frozenset[str] = frozenset(),
) -> list[Chunk]:
    """Chunks of one Markdown memory file (``kind`` is a recall kind, e.g. ``"topic"``).

    The file's text is redacted first (:func:`redact_text`; ``allowed``: fingerprints of
    known fakes), and parsed again when that changed it, so no chunk field holds a secret.
    """
    from memls.core.parse import parse_text  # not at import: a search needs no Markdown parser

    doc = parse_text(text, Path(rel))
    redacted = redact_text(text, allowed, fences=doc.fences)
    if redacted is not text:
        doc = parse_text(redacted, Path(rel))  # same lines: ids and line numbers hold
    header = file_header(doc, rel)
    branch_field = doc.field("Branch")
    branch = branch_field.value if branch_field else None
    file_time = fallback_timestamp
    if kind == "checkpoint":
        saved = doc.field("Saved")
        file_time = normalize_timestamp(saved.value if saved else None) or file_time
    elif doc.frontmatter is not None:
        for key in ("last_applied", "created"):
            entry = doc.frontmatter.get(key)
            if entry is not None and isinstance(entry.value, str):
                stamp = normalize_timestamp(entry.value)
                if stamp:
                    file_time = stamp
                    break

    body_start = doc.frontmatter.end_line + 1 if doc.frontmatter else 0
    sections = [s for s in doc.sections if s.level == 2]
    # (heading or None, first line 0-based, end line exclusive, timestamp)
    spans: list[tuple[str | None, int, int, str | None]] = []
    first = sections[0].start_line if sections else len(doc.lines)
    spans.append((None, body_start, first, file_time))
    for section in sections:
        stamp = file_time
        if kind == "log":
            match = _DATE_RE.match(section.title.strip())
            if match is None and len(spans) > 1:
                title, start, _end, prev_stamp = spans[-1]
                spans[-1] = (title, start, section.end_line, prev_stamp)
                continue
            if match is not None:
                stamp = normalize_timestamp(match.group(0)) or file_time
        spans.append((section.title, section.start_line, section.end_line, stamp))

    chunks: list[Chunk] = []
    seen: dict[str, int] = {}
    for heading, span_start, span_end, stamp in spans:
        lines, start = _trim_blank(list(doc.lines[span_start:span_end]), span_start)
        if heading is None:
            meaningful = [ln for ln in lines if ln.strip() and not ln.startswith("# ")]
            if not meaningful:
                continue
            base = "top"
        else:
            base = slugify(heading)
            if not any(ln.strip() for ln in lines[1:]):
                continue  # a heading with nothing under it says nothing to search for
        count = seen.get(base, 0) + 1
        seen[base] = count
        anchor = base if count == 1 else f"{base}-{count}"
        parts = _split_for_size(lines, start + 1)
        for number, (a, b, part) in enumerate(parts, start=1):
            chunks.append(
                Chunk(
                    id=f"{rel}#{anchor}" if number == 1 else f"{rel}#{anchor}.{number}",
                    kind=kind,
                    path=rel,
                    start_line=a,
                    end_line=b,
                    heading=heading,
                    text=part,
                    header=header,
                    timestamp=stamp,
                    branch=branch,
                )
            )
    return chunks


def chunk_turn(
    rel: str,
    turn_number: int,
    text: str,
    start_line: int,
    end_line: int,
    *,
    header: str,
    timestamp: str | None,
    session_id: str | None,
    branch: str | None,
    context: str = "",
    line_map: Sequence[tuple[int, bool]] = (),
) -> list[Chunk]:
    """Chunks of one transcript turn (lines 0-based inclusive in, 1-based out).

    ``text`` and ``context`` are stored as given: the caller passes them redacted
    (:func:`redact_text` on each turn's text before the context is cut from its neighbours,
    as ``backfill.py`` does; it keeps the text's lines). ``context`` (see :func:`turn_context`)
    goes to every part for full-text search. ``line_map`` (``Turn.line_map``: per line of
    ``text``, the 0-based file line of its message and whether it is conversation) becomes
    each part's :attr:`Chunk.line_map`.
    """
    lines = text.splitlines()
    parts = _split_pieces(lines, 1)
    mapped = len(line_map) == len(lines)
    heading = first_sentence(text, 80) or None
    out: list[Chunk] = []
    for number, (_a, _b, pieces) in enumerate(parts, start=1):
        part = "\n".join(p for p, _ in pieces)
        anchor = f"turn-{turn_number}" if number == 1 else f"turn-{turn_number}.{number}"
        encoded = encode_line_map([line_map[i - 1] for _, i in pieces]) if mapped else ""
        out.append(
            Chunk(
                id=f"{rel}#{anchor}",
                kind="transcript",
                path=rel,
                start_line=start_line + 1,
                end_line=end_line + 1,
                heading=heading,
                text=part,
                header=header,
                timestamp=normalize_timestamp(timestamp),
                session_id=session_id,
                branch=branch,
                context=context,
                line_map=encoded,
            )
        )
    return out


def encode_line_map(rows: Sequence[tuple[int, bool]]) -> str:
    """Per text line (0-based file line, conversation?) as runs: ``"761,3 -765,2"`` — 1-based
    file line, negative for tool traffic or injected text, then how many text lines."""
    runs: list[list[int]] = []
    for line, spoken in rows:
        value = line + 1 if spoken else -(line + 1)
        if runs and runs[-1][0] == value:
            runs[-1][1] += 1
        else:
            runs.append([value, 1])
    return " ".join(f"{value},{count}" for value, count in runs)


def decode_line_map(encoded: str) -> list[tuple[int, bool]]:
    """:func:`encode_line_map` read back: per text line, (1-based file line, conversation?);
    empty for a chunk stored without a map (or a map that cannot be read)."""
    out: list[tuple[int, bool]] = []
    try:
        for run in encoded.split():
            value, count = (int(x) for x in run.split(","))
            out.extend([(abs(value), value > 0)] * count)
    except ValueError:
        return []
    return out


CONTEXT_CHARS = 600
"""How much of each neighbouring turn a turn's search context keeps."""


def turn_context(previous: str | None, following: str | None) -> str:
    """A turn's neighbours for BM25: the end of the turn before and the start of the next."""
    parts: list[str] = []
    if previous:
        tail = previous[-CONTEXT_CHARS:]
        cut = tail.find(" ") if len(previous) > CONTEXT_CHARS else -1
        parts.append(tail[cut + 1 :] if 0 <= cut < 40 else tail)
    if following:
        head = following[:CONTEXT_CHARS]
        cut = head.rfind(" ") if len(following) > CONTEXT_CHARS else -1
        parts.append(head[:cut] if cut > CONTEXT_CHARS - 40 else head)
    return "\n\n".join(parts)


def transcript_header(rel: str, session_id: str | None, branch: str | None) -> str:
    """The header of every turn of a session: file, session and branch."""
    bits = [f"Session transcript {rel}"]
    if session_id:
        bits.append(f"session {session_id}")
    if branch:
        bits.append(f"branch {branch}")
    return ", ".join(bits)[:MAX_HEADER_CHARS]
