"""Chaos at the byte level of the language server, without a process: the framing reader
(``memls.lsp.transport.FrameReader``) and incremental text sync (``memls.lsp.textsync``).

- Well-framed messages come out whole and in order however the stream is cut into reads.
- Garbage between messages (bad or missing headers, stray bytes, bodies shorter or longer
  than announced) costs at most the message it corrupts: every message after it that is
  well framed still comes out.
- An incremental edit lands exactly where the core's ``LineIndex`` says the position is,
  for any text, any position (past the end of a line or of the document included) and the
  UTF-16, UTF-8 and UTF-32 position encodings.
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.workspace import TextDocument

from memls.core.text import LineIndex
from memls.lsp.convert import PositionCodec
from memls.lsp.textsync import apply_change
from memls.lsp.transport import Body, FrameReader


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


bodies = st.builds(
    lambda n, text: json.dumps(
        {"jsonrpc": "2.0", "id": n, "method": "m", "params": {"t": text}}
    ).encode(),
    st.integers(0, 10**6),
    st.text(max_size=80),
)


def feed_in_pieces(data: bytes, cuts: list[int]) -> list[bytes]:
    reader = FrameReader()
    out: list[bytes] = []
    last = 0
    for cut in sorted({min(len(data), c) for c in cuts} | {len(data)}):
        for item in reader.feed(data[last:cut]):
            if isinstance(item, Body):
                out.append(item.data)
        last = cut
    return out


@settings(max_examples=150, deadline=None)
@given(messages=st.lists(bodies, max_size=8), cuts=st.lists(st.integers(0, 4000), max_size=12))
def test_well_framed_messages_come_out_whole_however_the_stream_is_cut(
    messages: list[bytes], cuts: list[int]
) -> None:
    assert feed_in_pieces(b"".join(frame(m) for m in messages), cuts) == messages


garbage = st.one_of(
    st.binary(max_size=40).filter(lambda b: b"Content-Length" not in b),
    st.sampled_from(
        [
            b"Content-Length: abc\r\n\r\n{}",
            b'{"jsonrpc": "2.0", "id": 1, "method": "x"}',
            b"Content-Length: 3\r\n\r\n" + b'{"jsonrpc": "2.0"}',
            b"Content-Length: 500\r\n\r\n{",
            b"\r\n\r\n",
            b"X-Other: 1\r\n\r\n",
            b"Content-Length: 99999999999\r\n\r\n",
        ]
    ),
)


@settings(max_examples=150, deadline=None)
@given(
    parts=st.lists(st.tuples(st.booleans(), bodies, garbage), min_size=1, max_size=8),
    cuts=st.lists(st.integers(0, 4000), max_size=8),
)
def test_garbage_costs_at_most_the_message_it_corrupts(
    parts: list[tuple[bool, bytes, bytes]], cuts: list[int]
) -> None:
    stream = b""
    sent: list[bytes] = []
    for corrupt, body, junk in parts:
        if corrupt:
            stream += junk
        stream += frame(body)
        sent.append(body)
    received = feed_in_pieces(stream, cuts)
    # Each message comes out at most once and in order; one lost only right after garbage.
    lost = [b for b in sent if b not in received]
    assert [b for b in received if b in sent] == [b for b in sent if b in received]
    assert len(lost) <= sum(1 for corrupt, _, _ in parts if corrupt)
    assert sent[-1] in received or parts[-1][0]


def reference_apply(text: str, rng: types.Range, new: str, codec: PositionCodec) -> str:
    index = LineIndex(text)
    lines = index.lines

    def offset(pos: types.Position) -> int:
        if pos.line >= len(lines):
            return len(text)
        return index.offset(pos.line, codec.column_from_client(lines[pos.line], pos.character))

    start = offset(rng.start)
    end = max(start, offset(rng.end))
    return text[:start] + new + text[end:]


texts = st.text(alphabet=st.sampled_from(list("ab \n\r\n\té😀\u2028\x0c")), max_size=60)
positions = st.builds(types.Position, st.integers(0, 12), st.integers(0, 20))


@settings(max_examples=300, deadline=None)
@given(
    text=texts,
    start=positions,
    end=positions,
    new=texts,
    encoding=st.sampled_from(["utf-16", "utf-8", "utf-32"]),
)
def test_incremental_edits_land_where_the_core_says(
    text: str, start: types.Position, end: types.Position, new: str, encoding: str
) -> None:
    codec = PositionCodec(encoding)
    document = TextDocument("file:///x.md", text)
    rng = types.Range(start, end)
    apply_change(document, types.TextDocumentContentChangePartial(range=rng, text=new), codec)
    assert document.source == reference_apply(text, rng, new, codec)


def test_an_edit_deep_in_a_large_buffer() -> None:
    text = "".join(f"line {n} é😀\n" for n in range(200_000))
    document = TextDocument("file:///x.md", text)
    codec = PositionCodec("utf-16")
    pos = types.Position(150_000, len("line 150000 é😀"))
    apply_change(
        document,
        types.TextDocumentContentChangePartial(range=types.Range(pos, pos), text="!"),
        codec,
    )
    assert document.source.splitlines()[150_000] == "line 150000 é😀!"
    assert document.source.count("\n") == 200_000
