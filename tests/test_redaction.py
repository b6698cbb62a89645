"""memls never spreads a secret: every copy it makes (LOG.md, the handoff, the recall index,
search results, the SessionStart context) holds ``[redacted KIND]`` where the secret was.

The secrets are fakes made at test time (random, never a real key). The hooks and recall
commands run as Claude Code and a user run them: ``memls`` in a child process.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import sqlite3
import string
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from memls.core.recall import api, backfill, chunking
from memls.core.recall.chunking import chunk_markdown, redact_text
from memls.core.secrets import find_secrets, fingerprint
from tests.agent_fixtures import make_project, memls_json, payload, run_hook, write_turns

_ALNUM = string.ascii_letters + string.digits


def _random(n: int, alphabet: str = _ALNUM) -> str:
    while True:  # a key of letters only (or digits only) does not look like one
        value = "".join(secrets.choice(alphabet) for _ in range(n))
        if any(c.isdigit() for c in value) and any(c.isalpha() for c in value):
            return value


@dataclass(frozen=True)
class Fakes:
    openai: str
    nvidia: str
    jwt: str
    db_password: str

    @property
    def jwt_line(self) -> str:
        return f"JWT_SECRET={self.jwt}"

    @property
    def db_url(self) -> str:
        return f"postgres://admin:{self.db_password}@db.example.com/app"

    def values(self) -> list[str]:
        return [self.openai, self.nvidia, self.jwt, self.db_password]


def make_fakes() -> Fakes:
    while True:
        fakes = Fakes(
            openai="sk-proj-" + _random(48),
            nvidia="nvapi-" + _random(60),
            jwt=secrets.token_urlsafe(24),
            db_password=_random(20),
        )
        # each one is something memls takes for a secret (else the test would prove nothing)
        if all(
            len(find_secrets(line)) == 1
            for line in (
                f"key {fakes.openai} here",
                f"key {fakes.nvidia} here",
                fakes.jwt_line,
                f"at {fakes.db_url} now",
            )
        ):
            return fakes


@pytest.fixture
def fakes() -> Fakes:
    return make_fakes()


def _traces(value: str) -> list[bytes]:
    """Byte strings that would show ``value`` is stored: itself, and the lowercased middle of
    each long letter-and-digit run (what an FTS5 ``porter unicode61`` index keeps as a term,
    prefix-compressed at the front and stemmed at the end)."""
    out = [value.encode()]
    for run in re.findall(r"[A-Za-z0-9]{16,}", value):
        out.append(run.lower()[4:-4].encode())
    return out


def assert_nowhere(values: list[str], where: dict[str, bytes]) -> None:
    for name, data in where.items():
        for value in values:
            for trace in _traces(value):
                assert trace not in data, f"{value[:8]}… is in {name}"


def state_files(root: Path) -> dict[str, bytes]:
    """Every file under ``.memls/`` (the recall database, its -wal, vector files, caches)."""
    state = root / ".memls"
    files = {
        p.relative_to(root).as_posix(): p.read_bytes() for p in state.rglob("*") if p.is_file()
    }
    assert any(name.endswith("recall.db") for name in files), sorted(files)
    return files


def _context(stdout: str) -> str:
    text = json.loads(stdout)["hookSpecificOutput"]["additionalContext"]
    assert isinstance(text, str)
    return text


def _search(root: Path, query: str) -> str:
    proc = memls_json_raw(root, "recall", "search", query, "--json", "-n", "20")
    data = json.loads(proc)
    assert data["results"], (query, data)
    return proc


def memls_json_raw(cwd: Path, *args: str) -> str:
    """``memls ARGS --root CWD`` in a child process; its stdout (exit status 0)."""
    proc = subprocess.run(
        [sys.executable, "-m", "memls", *args, "--root", str(cwd)],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


# --- a project with secrets in its memory and its session ------------------------------------------


def _project(tmp_path: Path, fakes: Fakes, config: str = "") -> tuple[Path, Path]:
    """A memory root whose checkpoint and topic file hold fakes, and a session that does."""
    project = make_project(tmp_path)
    if config:
        with (project / "memls.toml").open("a", encoding="utf-8") as handle:
            handle.write(config)
    out = memls_json(
        project,
        "checkpoint",
        "save",
        "--root",
        str(project),
        "--json",
        "--next",
        "Ship the billing export",
    )
    assert out["changed"], out
    checkpoint = next(project.glob("checkpoint-*.md"))
    text = checkpoint.read_text(encoding="utf-8")
    heading = next(ln for ln in text.splitlines() if ln.startswith("## Next Action"))
    text = text.replace(
        heading,
        f"{heading}\nThe export job authenticates with the nvidia key {fakes.nvidia} for now.",
    )
    checkpoint.write_text(text, encoding="utf-8")
    (project / "MEMORY.md").write_text(
        "# Memory\n\n- [Deploy notes](deploy-notes.md) — how staging is deployed\n",
        encoding="utf-8",
    )
    (project / "deploy-notes.md").write_text(
        "---\nname: deploy-notes\ndescription: How the staging stack is deployed\n---\n"
        "# Deploy notes\n\n## Staging stack\n"
        f"The quokka service signs sessions with {fakes.jwt_line} in its env file.\n"
        f"Its database is {fakes.db_url} behind the bastion.\n",
        encoding="utf-8",
    )
    sessions = tmp_path / "claude-sessions"
    sessions.mkdir()
    transcript = sessions / "0f3c2a.jsonl"
    write_turns(
        transcript,
        [
            (
                f"Here is the staging key {fakes.openai} for the wombat deploy.",
                "Stored it in the wombat env; the deploy ran green.",
            ),
            (
                f"And the database? {fakes.db_url}",
                f"Migrated the numbat tables; {fakes.jwt_line} is set for the signer.",
            ),
        ],
    )
    return project, transcript


def test_no_copy_memls_makes_holds_a_secret(tmp_path: Path, fakes: Fakes) -> None:
    project, transcript = _project(tmp_path, fakes)
    memls_json(project, "handoff", "new", "--json")
    handoff = project / ".handoff.md"

    # the session is archived and indexed for text search (the pre-compact hook)
    data = payload("PreCompact", project, transcript, trigger="auto", custom_instructions="")
    proc = run_hook("pre-compact", data, cwd=project)
    assert proc.returncode == 0, proc.stderr

    # the compaction summary quotes what the session saw
    os.utime(handoff, (time.time() - 3600, time.time() - 3600))  # older than the session
    summary = (
        "# Summary\n"
        f"The user gave the staging key {fakes.openai} for the wombat deploy.\n"
        f"The signer reads {fakes.jwt_line} from the env.\n"
        f"Database: {fakes.db_url} (numbat tables migrated).\n"
    )
    data = payload("PostCompact", project, transcript, trigger="auto", compact_summary=summary)
    proc = run_hook("post-compact", data, cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""

    log = (project / "LOG.md").read_text(encoding="utf-8")
    state = handoff.read_text(encoding="utf-8")
    (kept_file,) = (project / "transcripts").glob("*.compact-*.md")  # the summary, kept once
    kept = kept_file.read_text(encoding="utf-8")
    assert "staging key [redacted OpenAI-style API key] for the wombat deploy" in kept
    assert "JWT_SECRET=[redacted" in kept
    assert "postgres://admin:[redacted password in a URL]@db.example.com/app" in kept
    assert "numbat tables migrated" in kept
    for text in (log, state):  # they point at it
        assert f"transcripts/{kept_file.name}" in text
    assert_nowhere(
        [fakes.openai, fakes.jwt, fakes.db_password],
        {"LOG.md": log.encode(), ".handoff.md": state.encode(), kept_file.name: kept.encode()},
    )

    # the next session starts with the checkpoint (and, after a compaction, the handoff)
    data = payload("SessionStart", project, transcript, source="compact")
    proc = run_hook("session-start", data, cwd=project)
    assert proc.returncode == 0, proc.stderr
    context = _context(proc.stdout)
    assert "Next Action: Ship the billing export" in context
    assert "authenticates with the nvidia key [redacted NVIDIA API key] for now" in context
    assert context.count("[redacted NVIDIA API key]") == 1  # the handoff's copy is not repeated
    assert_nowhere(fakes.values(), {"session-start stdout": proc.stdout.encode()})

    # recall: memory files and the archived transcript, embedded with memls-hash; a reader
    # kept open meanwhile keeps the -wal file (the last connection to close removes it)
    reader = sqlite3.connect(project / ".memls" / "recall.db")
    try:
        reader.execute("select count(*) from memls_chunks").fetchone()
        out = memls_json_raw(project, "recall", "backfill")
        assert "embedded" in out
        found = {
            query: _search(project, query)
            for query in ("wombat deploy staging key", "quokka signs sessions", "numbat database")
        }
        joined = "\n".join(found.values())
        assert "wombat" in joined
        assert "quokka" in joined
        assert "numbat" in joined
        assert "[redacted" in joined
        assert_nowhere(fakes.values(), {f"search {q!r}": out.encode() for q, out in found.items()})
        stored = state_files(project)
        assert ".memls/recall.db-wal" in stored
        assert any(name.endswith(".npy") for name in stored)  # the saved vector matrix
        assert_nowhere(fakes.values(), stored)
    finally:
        reader.close()


def test_a_fingerprint_in_allow_secrets_keeps_that_fake(tmp_path: Path) -> None:
    known, other = make_fakes(), make_fakes()
    config = f'allow_secrets = ["{fingerprint(known.openai)}"]\n'
    project, transcript = _project(tmp_path, other, config)
    checkpoint = next(project.glob("checkpoint-*.md"))
    with checkpoint.open("a", encoding="utf-8") as handle:
        handle.write(f"\n## Notes\n- The docs' sample key is {known.openai}.\n")
    memls_json(project, "handoff", "new", "--json")
    handoff = project / ".handoff.md"
    os.utime(handoff, (time.time() - 3600, time.time() - 3600))
    summary = f"Sample key {known.openai}; the real one is {other.openai}.\n"
    data = payload("PostCompact", project, transcript, trigger="auto", compact_summary=summary)
    assert run_hook("post-compact", data, cwd=project).returncode == 0
    (kept,) = (project / "transcripts").glob("*.compact-*.md")
    text = kept.read_text(encoding="utf-8")
    assert f"Sample key {known.openai}; the real one is [redacted OpenAI-style API key]." in text
    for name in ("LOG.md", ".handoff.md"):
        assert other.openai not in (project / name).read_text(encoding="utf-8")

    write_turns(transcript, [(f"Use {known.openai} in the docs", "Done: the wallaby docs.")], 2)
    proc = run_hook("pre-compact", payload("PreCompact", project, transcript), cwd=project)
    assert proc.returncode == 0, proc.stderr
    memls_json_raw(project, "recall", "backfill")
    out = _search(project, "wallaby docs")
    assert known.openai in out

    data = payload("SessionStart", project, transcript, source="startup")
    proc = run_hook("session-start", data, cwd=project)
    assert "nvidia key [redacted NVIDIA API key]" in _context(proc.stdout)
    assert other.nvidia not in proc.stdout

    # in-process, where a caller passes ``allowed``
    text = f"known {known.openai} and other {other.openai}"
    assert redact_text(text, frozenset({fingerprint(known.openai)})) == (
        f"known {known.openai} and other [redacted OpenAI-style API key]"
    )


# --- the recall index: ids, line numbers, incremental backfill, upgrade ---------------------------


PRIVATE_KEY = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    + "\n".join(_random(64, _ALNUM + "+/") for _ in range(5))
    + "\n-----END OPENSSH PRIVATE KEY-----"
)


def test_markdown_chunks_are_redacted_with_their_lines_and_ids_kept(fakes: Fakes) -> None:
    text = (
        "# Ops\n\n"
        "## Deploy key\n"
        f"{PRIVATE_KEY}\n\n"
        f"## Token {fakes.openai}\n"
        "Rotate it monthly.\n\n"
        "## Database\n"
        f"Reach it at {fakes.db_url} from the bastion.\n"
    )
    plain = (
        text.replace(fakes.openai, "sk-proj-...")
        .replace(fakes.db_url, "postgres://db")
        .replace(PRIVATE_KEY, "\n".join(["(the deploy key is in the vault)"] * 7))
    )
    chunks = chunk_markdown("ops.md", text, "topic")
    before = chunk_markdown("ops.md", plain, "topic")
    assert [(c.start_line, c.end_line) for c in chunks] == [
        (c.start_line, c.end_line) for c in before
    ]
    ids = [c.id for c in chunks]
    assert ids[0] == "ops.md#deploy-key"
    assert ids[2] == "ops.md#database"
    for chunk in chunks:
        stored = " ".join([chunk.id, chunk.text, chunk.header, chunk.heading or ""])
        assert_nowhere([*fakes.values(), PRIVATE_KEY.splitlines()[2]], {chunk.id: stored.encode()})
    assert "[redacted private key]" in chunks[0].text
    assert chunks[1].heading == "Token [redacted OpenAI-style API key]"
    assert "Rotate it monthly." in chunks[1].text
    assert "Reach it at postgres://admin:[redacted password in a URL]@db" in chunks[2].text
    assert redact_text(PRIVATE_KEY).count("\n") == PRIVATE_KEY.count("\n")
    assert redact_text(plain) is plain  # nothing to redact: the same text, no copy


def _root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "transcripts").mkdir(parents=True)
    (root / "memls.toml").write_text('recall_model = "memls-hash"\n', encoding="utf-8")
    (root / "LOG.md").write_text("# Log\n", encoding="utf-8")
    return root


def _rows(root: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(root / ".memls" / "recall.db")
    try:
        return list(conn.execute(sql).fetchall())
    finally:
        conn.close()


def test_incremental_transcript_backfill_keeps_its_offsets_and_redacts_the_context(
    tmp_path: Path, fakes: Fakes
) -> None:
    root = _root(tmp_path)
    session = root / "transcripts" / "s1.jsonl"
    write_turns(session, [(f"The key is {fakes.openai} ok", "Noted, the dingo key is set.")])
    first = api.backfill(root)
    assert first["changed"] == 2  # LOG.md and the session
    write_turns(session, [("What next for the dingo?", "Deploy the dingo service.")], start=1)
    second = api.backfill(root)
    assert second["changed"] == 1
    rows = _rows(root, "select id, text, context from memls_chunks where kind = 'transcript'")
    by_id = {str(r[0]): (str(r[1]), str(r[2])) for r in rows}
    assert sorted(by_id) == ["transcripts/s1.jsonl#turn-0", "transcripts/s1.jsonl#turn-1"]
    assert (
        "The key is [redacted OpenAI-style API key] ok" in by_id["transcripts/s1.jsonl#turn-0"][0]
    )
    assert "[redacted OpenAI-style API key]" in by_id["transcripts/s1.jsonl#turn-1"][1]  # context
    state = _rows(root, "select byte_offset, turns from memls_files where kind = 'transcript'")
    assert state == [(session.stat().st_size, 2)]
    again = api.backfill(root)
    assert again["changed"] == 0
    assert again["embedded"] == 0
    assert_nowhere(fakes.values(), state_files(root))


def test_a_store_indexed_before_redaction_forgets_the_secrets(
    tmp_path: Path, fakes: Fakes, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _root(tmp_path)
    (root / "notes.md").write_text(
        f"# Notes\n\n## Signer\nThe emu signer reads {fakes.jwt_line} at start.\n",
        encoding="utf-8",
    )
    (root / "MEMORY.md").write_text("# Memory\n\n- [notes](notes.md)\n", encoding="utf-8")
    write_turns(
        root / "transcripts" / "s1.jsonl",
        [(f"The key is {fakes.openai} for the emu deploy", "Deployed the emu stack.")],
    )
    with monkeypatch.context() as old:  # what memls before redaction stored
        old.setattr(chunking, "redact_text", lambda text, *a, **k: text)
        old.setattr(backfill, "redact_text", lambda text, *a, **k: text)
        old.setattr(backfill, "CHUNKER_REVISION", 4)
        api.backfill(root)
    stored = b"".join(state_files(root).values())
    assert fakes.openai.encode() in stored
    assert fakes.jwt.encode() in stored

    result = api.backfill(root)  # the upgraded memls: re-chunked, deleted text purged
    assert result["changed"] >= 2
    assert_nowhere([fakes.openai, fakes.jwt], state_files(root))
    found = json.dumps(api.search(root, "emu signer key", mode="text").to_dict())
    assert "emu" in found
    assert "[redacted" in found


def test_a_new_allow_secrets_re_reads_the_files(tmp_path: Path, fakes: Fakes) -> None:
    root = _root(tmp_path)
    (root / "notes.md").write_text(
        f"# Notes\n\n## Docs sample\nThe docs show {fakes.openai} as the sample key.\n",
        encoding="utf-8",
    )
    (root / "MEMORY.md").write_text("# Memory\n\n- [notes](notes.md)\n", encoding="utf-8")
    api.backfill(root)

    def texts() -> str:
        return " ".join(str(r[0]) for r in _rows(root, "select text from memls_chunks"))

    assert "[redacted OpenAI-style API key] as the sample key" in texts()
    with (root / "memls.toml").open("a", encoding="utf-8") as handle:
        handle.write(f'allow_secrets = ["{fingerprint(fakes.openai)}"]\n')
    assert api.backfill(root)["changed"] >= 1  # no file changed, what is redacted did
    assert f"{fakes.openai} as the sample key" in texts()
    (root / "memls.toml").write_text('recall_model = "memls-hash"\n', encoding="utf-8")
    api.backfill(root)  # the fake is a secret again: redacted, and purged from the file
    assert "[redacted OpenAI-style API key] as the sample key" in texts()
    assert_nowhere([fakes.openai], state_files(root))


def test_a_handoff_refresh_does_not_copy_a_checkpoints_secret(tmp_path: Path, fakes: Fakes) -> None:
    project, _ = _project(tmp_path, fakes)
    memls_json(project, "handoff", "new", "--json")
    assert fakes.nvidia not in (project / ".handoff.md").read_text(encoding="utf-8")
    memls_json(project, "handoff", "refresh", "--json")
    handoff = (project / ".handoff.md").read_text(encoding="utf-8")
    assert fakes.nvidia not in handoff
    assert "[redacted NVIDIA API key]" in handoff
