"""Recall on small generated conversations (issue 13): the behaviour the LoCoMo tuning chose.

Each session is a Claude Code JSONL file of one line per turn (two speakers as user and
assistant), the shape bench/locomo.py builds. Pinned here: a paraphrased question finds its
turn through the embedding model; a question naming a person and a date finds its turn by
full text; hybrid fusion never ranks the answer below the better single mode when the
other mode is blind; adjacent turns come back as one result of at most four lines.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import llm
import pytest
from llm.models import EmbeddingModel

from memls.core.recall import api, fulltext, ranking
from memls.core.recall.hits import Hit
from tests.recall_fixtures.weights import needs_minilm

SESSIONS: list[tuple[str, list[tuple[str, str]]]] = [
    (
        "2024-03-02T10:00:00Z",
        [
            ("Priya", "Morning! The quarterly report finally went out yesterday."),
            ("Tomas", "Congrats. Did finance sign off on the numbers?"),
            ("Priya", "They did. Next up is the trip: I fly to Lisbon on 14 March 2024."),
            ("Tomas", "Nice, is that for the robotics conference?"),
            ("Priya", "Yes, I am giving a talk on warehouse drones."),
            ("Tomas", "Send me the slides when they are ready."),
        ],
    ),
    (
        "2024-03-20T18:30:00Z",
        [
            ("Tomas", "Big news at home: we adopted a little beagle puppy last weekend."),
            ("Priya", "Oh lovely, what did you name him?"),
            ("Tomas", "Biscuit. He chews every shoe he can reach."),
            ("Priya", "Classic. My sister started a pottery class on Thursdays."),
            ("Tomas", "Does she make mugs or bowls?"),
            ("Priya", "Mostly lopsided vases so far, she loves it."),
        ],
    ),
    (
        "2024-04-05T09:15:00Z",
        [
            ("Priya", "The garden is a mess; the tomato seedlings all wilted."),
            ("Tomas", "Was it the heat or did the watering timer fail?"),
            ("Priya", "The timer battery died, so the drip line stopped."),
            ("Tomas", "Put a battery check on the monthly chores list."),
            ("Priya", "Good idea. I also switched my commute to cycling."),
            ("Tomas", "Brave, the hill on Elm Street is brutal."),
        ],
    ),
]


def write_conversation(root: Path) -> dict[str, tuple[str, int]]:
    """The sessions as JSONL files (one line per turn); ``{turn text: (path, line)}``."""
    (root / "transcripts").mkdir(parents=True)
    where: dict[str, tuple[str, int]] = {}
    for number, (stamp, turns) in enumerate(SESSIONS, start=1):
        rel = f"transcripts/session_{number}.jsonl"
        lines = []
        for index, (speaker, text) in enumerate(turns):
            role = "user" if speaker == "Priya" else "assistant"
            content: object = f"{speaker}: {text}"
            if role == "assistant":
                content = [{"type": "text", "text": f"{speaker}: {text}"}]
            lines.append(
                json.dumps(
                    {
                        "type": role,
                        "uuid": f"s{number}-{index}",
                        "parentUuid": f"s{number}-{index - 1}" if index else None,
                        "sessionId": f"session-{number}",
                        "timestamp": stamp,
                        "message": {"role": role, "content": content},
                    }
                )
            )
            where[text] = (rel, index + 1)
        (root / rel).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return where


def rank_of(response: api.SearchResponse, spot: tuple[str, int]) -> int | None:
    """1-based rank of the first result whose range covers ``spot`` (at most 4 lines)."""
    path, line = spot
    for rank, result in enumerate(response.results, start=1):
        if (
            result.path == path
            and result.start_line <= line <= result.end_line
            and result.end_line - result.start_line < 4
        ):
            return rank
    return None


@needs_minilm
def test_paraphrased_question_finds_its_turn_semantically(tmp_path: Path) -> None:
    where = write_conversation(tmp_path)
    api.backfill(tmp_path, model="memls-minilm")
    question = "Which animal joined someone's family recently?"
    target = where["Big news at home: we adopted a little beagle puppy last weekend."]
    semantic = api.search(tmp_path, question, mode="semantic", limit=3)
    assert semantic.mode == "semantic"
    assert not semantic.degraded
    assert rank_of(semantic, target) == 1
    # no word of the question is in that turn: full text cannot be what found it
    assert rank_of(api.search(tmp_path, question, mode="text", limit=3), target) is None
    assert rank_of(api.search(tmp_path, question, mode="hybrid", limit=3), target) is not None


def test_name_and_date_question_finds_its_turn_by_text(tmp_path: Path) -> None:
    where = write_conversation(tmp_path)
    api.backfill(tmp_path, model="memls-hash")
    target = where["They did. Next up is the trip: I fly to Lisbon on 14 March 2024."]
    for question in ("When did Priya fly to Lisbon?", "What happens on 14 March 2024?"):
        response = api.search(tmp_path, question, mode="text", limit=5)
        assert rank_of(response, target) == 1, question
        # the snippet shows the matched words
        assert "[" in response.results[0].snippet


def test_question_words_alone_do_not_drive_text_ranking() -> None:
    assert fulltext.query_words("When did Priya fly to Lisbon?") == ["Priya", "fly", "to", "Lisbon"]
    assert fulltext.query_words("What did what do?") == ["What", "did", "do"]  # nothing else left


class _Blind(EmbeddingModel):
    """An embedding model that cannot tell texts apart: every vector is the same."""

    model_id = "blind-embed"
    batch_size = 16

    def embed_batch(
        self, items: Iterable[str | bytes], *, key: str | None = None
    ) -> Iterator[list[float]]:
        for _ in items:
            yield [1.0, 0.0, 0.0, 0.0]


class _BlindPlugin:
    @llm.hookimpl
    def register_embedding_models(self, register: Callable[[EmbeddingModel], None]) -> None:
        register(_Blind())


@pytest.fixture(name="blind_model")
def blind_model_fixture() -> Iterator[str]:
    from llm.plugins import pm

    pm.register(_BlindPlugin(), name="memls-test-blind-embed")
    try:
        yield _Blind.model_id
    finally:
        pm.unregister(name="memls-test-blind-embed")


def test_fusion_never_ranks_below_the_better_mode_when_one_is_blind(
    tmp_path: Path, blind_model: str
) -> None:
    """Semantic is blind (all vectors equal), so hybrid must follow text exactly; with
    rank fusion the blind side's arbitrary order would reshuffle text's ranking."""
    where = write_conversation(tmp_path)
    api.backfill(tmp_path, model=blind_model)
    questions = {
        "Why did the tomato seedlings wilt?": "The garden is a mess; the tomato seedlings all wilted.",
        "What did the drip line battery do?": "The timer battery died, so the drip line stopped.",
        "Who is giving a talk on drones?": "Yes, I am giving a talk on warehouse drones.",
        "pottery class sister": "Classic. My sister started a pottery class on Thursdays.",
    }
    for question, turn in questions.items():
        text = api.search(tmp_path, question, mode="text", limit=10, merge=False)
        semantic = api.search(tmp_path, question, mode="semantic", limit=10, merge=False)
        hybrid = api.search(tmp_path, question, mode="hybrid", limit=10, merge=False)
        assert hybrid.mode == "hybrid"
        ranks = [r for r in (rank_of(text, where[turn]), rank_of(semantic, where[turn])) if r]
        best = min(ranks)
        found = rank_of(hybrid, where[turn])
        assert found is not None, question
        assert found <= best, question
        # text's ranking is kept as is; the blind side only adds chunks after it
        ids = [r.id for r in text.results]
        assert [r.id for r in hybrid.results][: len(ids)] == ids


def test_fusion_follows_semantic_when_text_finds_nothing() -> None:
    def hit(rid: int, score: float) -> Hit:
        return Hit(rid, f"c{rid}", score, "transcript", "t.jsonl", rid, rid, None, "")

    semantic = [hit(3, 0.9), hit(1, 0.5), hit(2, 0.4)]
    assert [h.rid for h in ranking.fuse([], semantic)] == [3, 1, 2]
    # a sure text hit (far above its other candidates) stays first against a vague semantic
    text = [hit(2, 9.0), hit(5, 1.0), hit(6, 0.9), hit(7, 0.8)]
    vague = [hit(1, 0.31), hit(3, 0.30), hit(2, 0.29), hit(4, 0.28)]
    assert ranking.fuse(text, vague)[0].rid == 2


def test_adjacent_turns_come_back_as_one_result_of_at_most_four_lines(tmp_path: Path) -> None:
    where = write_conversation(tmp_path)
    api.backfill(tmp_path, model="memls-hash")
    question = "timer battery drip line watering"
    merged = api.search(tmp_path, question, mode="text", limit=5)
    apart = api.search(tmp_path, question, mode="text", limit=5, merge=False)
    first = merged.results[0]
    assert first.end_line - first.start_line + 1 <= 4
    battery = where["The timer battery died, so the drip line stopped."]
    timer = where["Was it the heat or did the watering timer fail?"]
    assert first.path == battery[0]
    assert first.start_line <= min(battery[1], timer[1])
    assert first.end_line >= max(battery[1], timer[1])
    # merging frees places: results of one file that touch could not be joined in 4 lines
    for a in merged.results:
        for b in merged.results:
            if a is not b and a.path == b.path and a.end_line + 1 == b.start_line:
                assert b.end_line - a.start_line + 1 > 4
    assert len(apart.results) >= len(merged.results)


@pytest.mark.parametrize("mode", ["text", "semantic"])
def test_a_result_merges_the_same_neighbours_whatever_the_limit(tmp_path: Path, mode: str) -> None:
    """Neighbours join a result from the mode's whole candidate pool, so asking for one
    result gives the same first result (and range) as asking for ten."""
    write_conversation(tmp_path)
    api.backfill(tmp_path, model="memls-hash")
    questions = [
        "timer battery drip line watering",
        "what did the drip line do when the timer battery died",
        "heat or watering timer",
        "tomatoes compost shed",
    ]
    merged_any = False
    for question in questions:
        one = api.search(tmp_path, question, mode=mode, limit=1).results
        ten = api.search(tmp_path, question, mode=mode, limit=10).results
        assert [(r.path, r.start_line, r.end_line) for r in one] == [
            (r.path, r.start_line, r.end_line) for r in ten[:1]
        ], question
        merged_any = merged_any or any(r.end_line > r.start_line for r in one)
    assert merged_any  # the fixture does exercise merging
