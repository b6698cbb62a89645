"""The SC rules: secrets written into memory are findings that never print the secret.

Every value here is a fake generated at test time in the shape of the real kind (a random
tail after the provider's prefix); none is, or was ever, a live credential.
"""

from __future__ import annotations

import base64
import json
import re
import secrets
import string
import subprocess
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from memls.core.secrets import find_secrets, fingerprint, redact
from tests.cli_helpers import memls_on, run_memls
from tests.lsp_helpers import (
    apply_lsp_edits,
    change_all,
    open_params,
    root_of,
    uri,
    wait_for_diagnostics,
)

ALNUM = string.ascii_letters + string.digits


def rand(n: int, alphabet: str = ALNUM) -> str:
    while True:
        value = "".join(secrets.choice(alphabet) for _ in range(n))
        mixed = any(c.isdigit() for c in alphabet) and any(c.isalpha() for c in alphabet)
        if not mixed or (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)):
            return value


def jwt_secret() -> str:
    """A random secret of a JWT_SECRET line; its first letters are no provider's prefix
    (a bare ``AKC…`` or ``AP1…`` after ``=`` is an Artifactory key: SC001, not SC003)."""
    return "jw" + secrets.token_urlsafe(24)


def fake_jwt(**claims: object) -> str:
    def part(data: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")

    body = claims or {"sub": rand(12)}
    return f"{part({'alg': 'HS256', 'typ': 'JWT'})}.{part(body)}.{rand(43)}"


def positives() -> list[tuple[str, str, str]]:
    """(code, line of memory holding the fake, the fake value), one per detector kind."""
    out: list[tuple[str, str, str]] = []

    def add(code: str, template: str, value: str) -> None:
        out.append((code, template.format(v=value), value))

    add("SC001", "- eval ran with {v} from the shell", "sk-proj-" + rand(48))
    add("SC001", "ANTHROPIC_API_KEY={v}", "sk-ant-api03-" + rand(93, ALNUM + "-_"))
    add("SC001", "- the NVIDIA key: {v}", "nvapi-" + rand(64, ALNUM + "-_"))
    add("SC001", "gateway uses {v}", "fmcp_" + rand(40))
    add("SC001", "HF download token {v}", "hf_" + rand(34))
    add("SC001", "maps key {v}", "AIza" + rand(35, ALNUM + "-_"))
    add("SC001", "pushed with {v}", "ghp_" + rand(36))
    add("SC001", "ci token {v}", "glpat-" + rand(20))
    add("SC001", "bot {v}", f"xoxb-{rand(12, string.digits)}-{rand(12, string.digits)}-{rand(24)}")
    add("SC001", "stripe {v}", "sk_live_" + rand(24))
    add("SC001", "aws id {v}", "AKIA" + rand(16, string.ascii_uppercase + string.digits))
    add("SC001", "session cookie {v}", fake_jwt())
    add("SC003", "JWT_SECRET={v}", jwt_secret())
    add("SC003", "- AUTH_PASSWORD: {v}", rand(14) + "!")
    add("SC003", "- **Password:** {v}", rand(12) + "#")
    add("SC003", "WEBHOOK_SECRET={v}", f"https://hooks.example.com/services/{rand(32)}")
    add("SC004", "ssh root@203.0.113.7 password {v}", rand(10) + "9%")
    add("SC004", "db at postgres://admin:{v}@db.example.com:5432/app", rand(16))
    return out


NEGATIVES = [
    "JWT_SECRET is read from the environment at start-up",
    "- rotate the gateway token before Friday",
    "Put `OPENAI_API_KEY=sk-...` in `.env` (never commit it).",
    "- Set ANTHROPIC_API_KEY=<your key> in the shell",
    "commit 3f9a2c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39 fixed the parser",
    "- **Token:** rotated on Monday",
    "password: <ask the owner>",
    "API_KEY=${API_KEY}",
    "token = os.environ['GITHUB_TOKEN']",
    "- key decision: keep the index under 200 lines",
    "api_key: Optional[str] = None",
    "see docs/auth.md for the token flow",
    "https://user@example.com/repo.git",
    "OPENAI_API_KEY=sk-xxxxxxxxxxxxxxxxxxxxxxxx",
    "the sk-your-key-here placeholder in the README",
    "- Tokens: 12k in, 3k out",
    "id 550e8400-e29b-41d4-a716-446655440000 of the run",
    "branch feature/recall-fallback-v2 merged",
    '      "botToken": "123456:ABCDEF",',
    "Telegram token:    config/env or channels.telegram.tokenFile",
    "DATABASE_URL=postgresql://devuser:devuser@localhost:5432/app",
    "- [OpenClaw config](~/.openclaw/openclaw.json) - the main config",
    "  -e ADMIN_PASSWORD=secure_password_123 \\",  # plain words with a stand-in word
    "- **Password:** my-demo-token",
    "- **Credentials**: Base64 encoding (in the keychain) → read at start",
    "2. Create a Read token: https://huggingface.co/settings/tokens",  # a page, no value
    "- API key: https://console.example.com/account/api-keys (create one there)",
    "TOKEN_URL=https://auth.example.com/oauth2/v1/token",
    "- shop.example.com is password-protected (a storefront password page)",
    "DIRECT_URL=postgresql://postgres.abcdefgh:{password}@aws-0-eu.pooler.example.com:5432/db",
    "ssh to the host with the password [REDACTED]@backup.example.com",
    '  "mongo.uri": "mongodb+srv://[MONGO_USER:MONGO_PASS]@db-cluster.example.net/",',  # redacted
    "- load it with `RsaPrivateKey::from_pkcs8_pem(&pem)` at start-up",  # a Rust path
    "      const token = sessionData?.session?.access_token",  # optional chaining: code
    "LoadCredential=anthropic-default:/etc/app/credentials/anthropic-default",  # id:file
]


def test_each_kind_is_found_with_its_code_and_never_printed_whole() -> None:
    cases = [case for _ in range(25) for case in positives()]  # many random tails per shape
    for code, line, value in cases:
        found = find_secrets(line)
        assert [s.code for s in found] == [code], (code, line.replace(value, "<fake>"))
        assert found[0].value(line) == value
        assert value not in redact(line)


def test_what_people_write_all_the_time_is_not_a_secret() -> None:
    for line in NEGATIVES:
        assert find_secrets(line) == [], line
    fenced = '```\nDATA = "' + base64.b64encode(secrets.token_bytes(48)).decode() + '"\n```\n'
    assert find_secrets(fenced, fences=[(0, 2)]) == []


def test_keys_counted_out_are_examples_and_a_random_tail_is_still_a_key(tmp_path: Path) -> None:
    """`sk-proj-` then one unit said over and over, or runs counted along the alphabet and
    the digits (`abc123def456…`): a scanner's test string, not a key; the same prefix with
    a random tail is one. Built here: no key-shaped literal in the repository."""
    letters, digits = string.ascii_lowercase, string.digits
    counted = "".join(
        letters[i * 3 : i * 3 + 3] + (digits * 3)[i * 3 + 1 : i * 3 + 4] for i in range(8)
    )
    repeated = "abc123" * 8 + "xy"
    real = rand(48)
    (tmp_path / "MEMORY.md").write_text(
        "# Memory\n\n"
        f'- The scanner\'s test strings: `"My key is sk-proj-{repeated}"`, `sk-proj-{counted}`\n'
        f"- Deploy key: sk-proj-{real}\n"
    )
    result = run_memls("check", ".", "--format", "json", "--exit-zero", cwd=tmp_path)
    found = [d for d in json.loads(result.stdout)["diagnostics"] if d["code"] == "SC001"]
    assert [d["line"] for d in found] == [4], found
    assert real not in result.stdout


def test_private_key_block_is_one_finding_and_its_body_is_replaced() -> None:
    body = "\n".join(rand(64, ALNUM + "+/") for _ in range(6))
    text = (
        f"notes\n-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----\n"
    )
    (found,) = find_secrets(text)
    assert found.code == "SC002"
    assert body.splitlines()[2] not in redact(text)
    assert "BEGIN OPENSSH PRIVATE KEY" in redact(text)


def plant(root: Path) -> dict[Path, list[tuple[str, str]]]:
    """One fake in every kind of memory file a root holds; path → [(code, value)]."""
    cases = positives()
    planted: dict[Path, list[tuple[str, str]]] = {}

    def put(rel: str, header: str, n: int, jsonl: bool = False) -> None:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        chosen = [cases[(len(planted) * 3 + i) % len(cases)] for i in range(n)]
        if jsonl:
            lines = [
                json.dumps({"type": "user", "message": {"content": line}}) for _, line, _ in chosen
            ]
            path.write_text("\n".join(lines) + "\n")
        else:
            path.write_text(header + "\n".join(line for _, line, _ in chosen) + "\n")
        planted[path] = [(code, value) for code, _, value in chosen]

    put("checkpoint-fake.md", "# Checkpoint: fake\n\n- **Branch:** `main`\n\n## Notes\n", 2)
    put("LOG.md", "# Log\n\n## 2026-11-30 10:00 — session\n", 2)
    put(".handoff.md", "# Handoff\n\n## Current State\n", 2)
    put("topic.md", "# Topic\n\n", 2)
    put("memory/archive/2025-10.md", "# October\n\n", 2)
    put("memory/2026-11-29.md", "# 2026-11-29\n\n", 2)
    put("memory/session-transcripts/s1.jsonl", "", 2, jsonl=True)
    put("transcripts/s2.jsonl", "", 2, jsonl=True)
    (root / "MEMORY.md").write_text("# Project Memory\n\n- [Topic](topic.md)\n")
    return planted


def test_check_finds_a_secret_in_every_kind_of_memory_file_and_never_prints_it(
    tmp_path: Path,
) -> None:
    root = tmp_path / "mem"
    planted = plant(root)
    values = [v for items in planted.values() for _, v in items]
    outputs = {}
    for fmt in ("text", "json", "sarif"):
        result = memls_on(root, "check", "--format", fmt)
        assert result.returncode == 1, result.stderr
        outputs[fmt] = result.stdout + result.stderr
        for value in values:
            assert value not in outputs[fmt], fmt
    data = json.loads(memls_on(root, "check", "--format", "json").stdout)
    found = {(d["path"], d["code"]) for d in data["diagnostics"] if d["code"].startswith("SC")}
    for path, items in planted.items():
        rel = path.relative_to(root).as_posix()
        for code, _ in items:
            assert (rel, code) in found, (rel, code)
    scanned = data["roots"][0]["secret_scan_files"]
    assert "memory/archive/2025-10.md" in scanned
    assert "transcripts/s2.jsonl" in scanned


def test_fix_replaces_the_value_and_keeps_the_rest(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    key = "nvapi-" + rand(60)
    (root / "memory" / "archive").mkdir(parents=True)
    (root / "MEMORY.md").write_text("# Project Memory\n\n- [Notes](notes.md)\n")
    (root / "notes.md").write_text(f"# Notes\n\n- the key {key} came from the shell\n")
    archive = root / "memory" / "archive" / "old.md"
    archive.write_bytes(f"caf\xe9 \r\n- JWT_SECRET={jwt_secret()}\r\n".encode("latin-1"))
    before = archive.read_bytes()
    result = memls_on(root, "check", "--fix")
    assert "SC00" not in result.stdout, result.stdout
    notes = (root / "notes.md").read_text()
    assert key not in notes
    assert (
        "- the key <NVIDIA API key: keep it in .env or a secret manager, not in memory> came"
        in notes
    )
    after = archive.read_bytes()
    assert after.startswith(b"caf\xe9 \r\n- JWT_SECRET=<")  # invalid UTF-8 and CRLF kept
    assert after.endswith(b">\r\n")
    assert after != before
    assert "Fixed 2." in result.stdout
    again = memls_on(root, "check", "--fix")
    assert "All checks passed." in again.stdout  # nothing more to do: the placeholder is no secret
    assert archive.read_bytes() == after


def test_known_fakes_by_next_line_comment_or_fingerprint_but_never_file_wide(
    tmp_path: Path,
) -> None:
    root = tmp_path / "mem"
    root.mkdir()
    one, two, three = ("sk-proj-" + rand(48) for _ in range(3))
    (root / "MEMORY.md").write_text(
        "# Project Memory\n\n<!-- memls-disable -->\n<!-- memls-disable SC001 -->\n"
        f"<!-- memls-disable-next-line SC001 -->\n- test fixture key {one}\n"
        f"- fixture {two}\n- real {three}\n"
    )
    (root / "memls.toml").write_text(f'allow_secrets = ["{fingerprint(two)}"]\n')
    data = json.loads(memls_on(root, "check", "--format", "json").stdout)
    sc = [d for d in data["diagnostics"] if d["code"] == "SC001"]
    assert [d["line"] for d in sc] == [8]
    (root / "memls.toml").write_text(f'allow_secrets = ["{two}"]\n')
    refused = memls_on(root, "check")
    assert refused.returncode == 2
    assert two not in refused.stdout + refused.stderr  # the refusal does not echo it either
    assert "fingerprint" in refused.stderr


def test_secrets_hash_and_fingerprint_commands(tmp_path: Path) -> None:
    value = "sk-proj-" + rand(48)
    hashed = subprocess.run(
        [*run_memls_args(), "secrets", "hash"],
        input=value + "\n",
        capture_output=True,
        text=True,
        check=False,
    )
    assert hashed.stdout.strip() == fingerprint(value)
    (tmp_path / "n.md").write_text(f"x\n- key {value}\n")
    shown = run_memls("secrets", "fingerprint", "n.md", "2", cwd=tmp_path)
    assert fingerprint(value) in shown.stdout
    assert value not in shown.stdout


def run_memls_args() -> list[str]:
    import sys

    return [sys.executable, "-m", "memls"]


def test_pre_commit_hook_fails_on_a_secret_in_an_archive(tmp_path: Path) -> None:
    spec = (Path(__file__).resolve().parents[1] / ".pre-commit-hooks.yaml").read_text()
    files = re.search(r"files: '(.*)'", spec)
    assert files is not None
    pattern = re.compile(files.group(1))
    for rel in (
        "memory/archive/2025-10.md",
        "memory/session-transcripts/a.jsonl",
        "transcripts/a.jsonl",
        "LOG.md",
    ):
        assert pattern.search(rel), rel
    root = tmp_path / "repo"
    (root / "memory" / "archive").mkdir(parents=True)
    (root / "memory" / "MEMORY.md").write_text("# Project Memory\n")
    (root / "memory" / "archive" / "old.md").write_text(f"- JWT_SECRET={jwt_secret()}\n")
    result = run_memls("check", "memory/archive/old.md", cwd=root)  # the hook's entry and one file
    assert result.returncode == 1, result.stdout + result.stderr
    assert "SC003" in result.stdout


async def test_language_server_reports_redacted_and_offers_both_fixes(
    client: LanguageClient, tmp_path: Path
) -> None:
    path = root_of(tmp_path) / "testing.md"
    key = "sk-ant-api03-" + rand(90)
    text = path.read_text() + f"\n- eval key {key}\n"
    client.text_document_did_open(open_params(path, text))
    diags = await wait_for_diagnostics(client, path, lambda codes: "SC001" in codes)
    sc = next(d for d in diags if d.code == "SC001")
    assert key not in sc.message
    assert "Anthropic API key" in sc.message
    assert sc.severity == types.DiagnosticSeverity.Error
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri(path)),
            range=sc.range,
            context=types.CodeActionContext(diagnostics=[sc]),
        )
    )
    assert actions is not None
    titles = [a.title for a in actions if isinstance(a, types.CodeAction)]
    assert any(t.startswith("Replace the Anthropic API key") for t in titles), titles
    assert any(t.startswith("Mark as a known fake") for t in titles), titles
    for action in actions:
        assert isinstance(action, types.CodeAction)
        assert key not in json.dumps(action.edit.changes if action.edit else {}, default=str)
    replace = next(
        a for a in actions if isinstance(a, types.CodeAction) and a.title.startswith("Replace")
    )
    assert replace.edit is not None
    assert replace.edit.changes is not None
    fixed = apply_lsp_edits(text, list(replace.edit.changes[uri(path)]))
    assert key not in fixed
    client.text_document_did_change(change_all(path, fixed, 2))
    await wait_for_diagnostics(client, path, lambda codes: "SC001" not in codes)


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_secret_in_a_refused_argument_is_not_echoed(tmp_path: Path, fmt: str) -> None:
    """memls check on a root whose config is broken by a pasted value does not repeat it."""
    root = tmp_path / "mem"
    root.mkdir()
    value = "ghp_" + rand(36)
    (root / "memls.toml").write_text(f'allow_secrets = "{value}"\n')
    args = ["check"] + (["--format", "json"] if fmt == "json" else [])
    result = memls_on(root, *args)
    assert result.returncode == 2
    assert value not in result.stdout + result.stderr


async def test_language_server_checks_a_memory_subfolder_for_secrets_only(
    client: LanguageClient, tmp_path: Path
) -> None:
    archive = root_of(tmp_path) / "archive" / "2025-10.md"
    archive.parent.mkdir()
    key = "ghp_" + rand(36)
    text = f"notes without frontmatter\n\n- pushed with {key}\n"
    archive.write_text(text)
    client.text_document_did_open(open_params(archive, text))
    diags = await wait_for_diagnostics(client, archive, lambda codes: "SC001" in codes)
    assert [d.code for d in diags] == ["SC001"]  # no other rule judges an archive
    assert key not in diags[0].message
    client.text_document_did_change(change_all(archive, text.replace(key, "a rotated key"), 2))
    await wait_for_diagnostics(client, archive, lambda codes: "SC001" not in codes)


def test_replacing_a_secret_in_a_committed_log_is_not_an_append_only_breach(
    tmp_path: Path,
) -> None:
    from tests.lsp_helpers import git

    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    key = "sk-proj-" + rand(48)
    (root / "MEMORY.md").write_text("# Project Memory\n")
    (root / "LOG.md").write_text(
        f"# Log\n\n## 2026-11-30 10:00 — deploy\n- used {key} for the deploy\n"
    )
    git(root, "add", "-A")
    git(root, "commit", "-qm", "memory")
    fixed = memls_on(root, "check", "--fix", "--select", "SC,LG")
    assert "Fixed 1." in fixed.stdout, fixed.stdout
    assert key not in (root / "LOG.md").read_text()
    again = memls_on(root, "check", "--select", "SC,LG")
    assert again.returncode == 0, again.stdout
    (root / "LOG.md").write_text("# Log\n\n## 2026-11-30 10:00 — deploy\n- rewritten\n")
    assert "LG001" in memls_on(root, "check", "--select", "LG").stdout  # other edits still are


def test_resume_and_list_show_a_checkpoints_secret_redacted(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    root.mkdir()
    key = "ghp_" + rand(36)
    saved = memls_on(root, "checkpoint", "save", "deploy", "--next", "Push the tag")
    assert saved.returncode == 0, saved.stderr
    path = root / "checkpoint-deploy.md"
    text = path.read_text().replace(
        "## Next Action: Push the tag", f"## Next Action: Push with {key}"
    )
    path.write_text(text.replace("## Done This Session\n", f"## Done This Session\n- used {key}\n"))
    for args in (("checkpoint", "resume", "deploy"), ("checkpoint", "resume", "deploy", "--json")):
        shown = memls_on(root, *args)
        assert shown.returncode == 0, shown.stderr
        assert key not in shown.stdout
        assert "[redacted GitHub token]" in shown.stdout
    listed = memls_on(root, "checkpoint", "list", "--json")
    assert key not in listed.stdout
    assert key in path.read_text()  # the file itself is the user's: SC reports it


PROSE_AFTER_A_KEY_NAME = """\
# Replies this week

1. Thread on login flows: answered the newcomer. Credentials = rotated. Moved on.
2. Weekly stats for credentials: karma=120pt, replies=4x (a good week).
3. Wrote the explainer, private key=read-only. That IS the point of it.
4. Listed what the bot lacks: API key=MISSING. Will ask the owner.
5. They asked for my token: Pending. No reply yet.

## Settings kept here by mistake

- DB_PASSWORD={db}
- Set SESSION_SECRET={session} on the box.
- The staging password: {staging} was reset today.
"""


def test_prose_after_a_secrets_name_is_not_a_value_but_settings_are(tmp_path: Path) -> None:
    """A secret's name in a sentence followed by words ("= rotated.", "karma=120pt",
    "=read-only.", "=MISSING.", ": Pending.") names no value; the settings below it (fakes
    made here, of the shapes real ones have) are still found, each once."""
    text = PROSE_AFTER_A_KEY_NAME.format(db=rand(16), session=rand(20), staging=rand(10))
    (tmp_path / "social-log.md").write_text(text, encoding="utf-8")
    (tmp_path / "MEMORY.md").write_text("# Memory\n\n- [Replies](social-log.md)\n")
    proc = run_memls("check", "--select", "SC003", "--format", "json", str(tmp_path), cwd=tmp_path)
    found = json.loads(proc.stdout)
    lines = sorted(d["line"] for d in found["diagnostics"] if d["code"] == "SC003")
    assert lines == [11, 12, 13], proc.stdout
    for value in re.findall(r"(?:=|: )(\S{10,20})(?= |$)", text.split("## Settings")[1]):
        assert value not in proc.stdout


def test_a_published_test_chain_key_is_no_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    """A key every developer of a tool has (Hardhat's and Anvil's first test accounts, kept
    here as digests only) opens nothing real: no finding. A fake made here stands for one;
    another key of the same shape is still found."""
    import hashlib

    from memls.core import secrets as core_secrets

    public, private = rand(64, "0123456789abcdef"), rand(64, "0123456789abcdef")
    digest = hashlib.sha256(public.encode()).hexdigest()
    monkeypatch.setattr(core_secrets, "PUBLIC_TEST_KEYS", frozenset({digest}))
    assert find_secrets(f"export PRIVATE_KEY=0x{public}") == []
    [found] = find_secrets(f"export PRIVATE_KEY=0x{private}")
    assert found.code == "SC003"
    assert len(core_secrets.PUBLIC_TEST_KEYS) == 1


def test_a_firebase_web_key_is_no_secret_but_another_google_key_is(tmp_path: Path) -> None:
    """The API key of a Firebase web app's config ships to every browser (it names the
    project; rules guard the data): no finding, through the CLI too. The same shape as a
    plain Google key (a Maps key in an `.env`) is still SC001."""
    web, maps = "AIza" + rand(35, ALNUM + "-_"), "AIza" + rand(35, ALNUM + "-_")
    config = (
        f'- web config:\n  ```js\n  const firebaseConfig = {{\n    apiKey: "{web}",\n  }};\n  ```\n'
    )
    assert find_secrets(config) == []
    [found] = find_secrets(f"- maps: GOOGLE_MAPS_KEY={maps}\n")
    assert found.code == "SC001"
    root = tmp_path / "mem"
    root.mkdir()
    (root / "MEMORY.md").write_text("# Memory\n\n- [Deploy](deploy.md)\n")
    (root / "deploy.md").write_text(f"# Deploy\n\n{config}\n- maps: GOOGLE_MAPS_KEY={maps}\n")
    proc = run_memls("check", ".", "--format", "json", "--exit-zero", cwd=root)
    codes = [(d["code"], d["line"]) for d in json.loads(proc.stdout)["diagnostics"]]
    assert codes == [("SC001", 10)]
    assert web not in proc.stdout
    assert maps not in proc.stdout


def test_a_key_shown_cut_short_by_an_ellipsis_is_no_secret() -> None:
    """`sk-proj-AbC…` names which key (its first characters) and opens nothing; the whole
    key beside it is still found."""
    head = "sk-proj-" + rand(22)
    for line in (f"OPENAI_API_KEY={head}...", f"- the key `{head}…` was rotated"):
        assert find_secrets(line) == [], line.replace(head, "<fake>")
    whole = "sk-proj-" + rand(48)
    assert [s.code for s in find_secrets(f"OPENAI_API_KEY={whole}")] == ["SC001"]


def test_a_supabase_anon_key_is_public_but_its_service_role_key_is_not() -> None:
    """A JWT whose claims say `role: anon` is the client key every browser of the app holds;
    the `service_role` key beside it bypasses row-level security and is a secret."""
    anon = fake_jwt(iss="supabase", ref=rand(20), role="anon")
    service = fake_jwt(iss="supabase", ref=rand(20), role="service_role")
    assert find_secrets(f"- anon key: {anon}") == []
    assert [s.code for s in find_secrets(f"- service key: {service}")] == ["SC001"]


def test_a_twilio_app_sid_is_no_artifactory_credential() -> None:
    """`AP` and 32 hex digits names a TwiML app (a public identifier, like an Account
    SID); an Artifactory credential of that prefix, mixed-case, is still a secret."""
    for _ in range(50):
        sid = "AP" + secrets.token_hex(16)
        assert find_secrets(f"- TwiML app: {sid}") == [], sid
    credential = "AP" + "A" + rand(31, string.ascii_letters + string.digits)
    found = find_secrets(f"ARTIFACTORY={credential}")
    assert [s.code for s in found] == ["SC001"]


def test_prose_in_a_json_string_ends_at_its_escaped_line_break() -> None:
    """In a store's JSON Lines a note's lines are joined by `\\n` escapes: "can hang on a
    password prompt\\n- next item" names no password; a real one beside a host still is."""
    line = '{"notes": "- the CLI can hang on a password prompt\\n- ssh to db.example.com"}'
    assert "\\n" in line
    assert [s for s in find_secrets(line) if s.code == "SC004"] == []
    real = "P4ss" + rand(10)
    found = find_secrets(f'{{"notes": "ssh to db.example.com, the password is {real}"}}')
    assert [s.code for s in found] == ["SC004"]


def test_data_an_agent_keeps_in_its_memory_folder_is_searched_but_not_the_projects(
    tmp_path: Path,
) -> None:
    """`memory/state.yaml` and `memory/heartbeat.json` are the agent's: searched (the YAML
    fixed in place, the JSON left to the program that writes it) for what is known to be a
    secret, not for random-looking ids (SC005's guess); `package.json` at the repository's
    top and a lock file are the project's: not searched."""
    repo = tmp_path / "repo"
    memory = repo / ".claude" / "memory"
    memory.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    key = "ghp_" + rand(36)
    (memory / "MEMORY.md").write_text("# Memory\n\n- [Deploy](deploy.md) — how we ship\n")
    (memory / "deploy.md").write_text("# Deploy\n\nTag, then push.\n")
    (memory / "state.yaml").write_text(f"# session state\ngithub:\n  token: {key}\nturn: 4\n")
    peers = [{"peer_public_key": "12D3KooW" + rand(44)} for _ in range(3)]  # ids, no secret
    (memory / "heartbeat.json").write_text(json.dumps({"github_token": key}) + "\n")
    (memory / "peers.json").write_text(json.dumps(peers, indent=1) + "\n")
    (memory / "pnpm-lock.yaml").write_text(f"packages:\n  token: {key}\n")
    (repo / "package.json").write_text(json.dumps({"name": "app", "token": key}) + "\n")
    result = run_memls("check", str(repo), "--format", "json", cwd=repo)
    assert key not in result.stdout + result.stderr
    data = json.loads(result.stdout)
    found = sorted((d["path"], d["code"]) for d in data["diagnostics"])
    assert found == [
        (".claude/memory/heartbeat.json", "SC001"),
        (".claude/memory/state.yaml", "SC001"),
    ]
    run_memls("check", str(repo), "--fix", cwd=repo)
    assert (memory / "state.yaml").read_text().startswith("# session state\ngithub:\n  token: <")
    assert (memory / "state.yaml").read_text().endswith(">\nturn: 4\n")
    assert key in (memory / "heartbeat.json").read_text()


def test_a_masked_key_a_url_to_no_host_a_macro_and_a_colour_are_no_secrets() -> None:
    """`github_pat_11AB…_***` (its tail masked), `postgresql://user:p%40ss@host/db` (an
    example's host), `clientSecret: env!("…")` (a Rust macro reading the environment) or
    `env!.CLIENT_SECRET` (TypeScript), `COLOR_TOKEN: #1a2b3cff` or `#hexvalue` (a design
    token's colour, or its stand-in); the same shapes with a real tail,
    a real host and a real value are still found."""
    tail = rand(20)
    quiet = [
        f"- Token: github_pat_11{tail}_*** (revoked since)",
        "DATABASE_URL=postgresql://user:p%40ss@host/db",
        'clientSecret: env!("OAUTH_CLIENT_SECRET"),',
        "    clientSecret: env!.DISCORD_CLIENT_SECRET,",
        "COLOR_TOKEN: #1a2b3cff",
        "`/* COLOR_TOKEN: #hexvalue — replaced at build time */`",
        "    const token = ++this.requestSequence;",
        "+         hasAuthToken: !!user.authToken,",
        "          authToken: !response.authToken,",
    ]
    for line in quiet:
        assert find_secrets(line) == [], line
    loud = [
        f"- Token: github_pat_11{tail}{rand(62)}",
        f"DATABASE_URL=postgresql://admin:{rand(14)}@db.acme-internal.com/app",
        f'clientSecret: "{rand(24)}",',
    ]
    for line in loud:
        assert find_secrets(line) != [], line


def test_an_objects_id_with_its_type_in_front_is_no_secret() -> None:
    """`user_2x…` (Clerk), `cus_…`/`price_…` (Stripe), `org_…`: ids of records, quoted on a
    line about keys or written after a token's name; a `pi_…_secret_…` client secret, and
    a random value after the same names, are still found."""
    quiet = [
        f'- Clerk user: "user_{rand(27)}" (the token belongs to it)',
        f"customer_token: cus_{rand(14)}",
        f'- price for the key plan: "price_{rand(24)}"',
        f"ORG_TOKEN_OWNER=org_{rand(27)}",
    ]
    for line in quiet:
        assert find_secrets(line) == [], line.split(":")[0]
    loud = [
        f"client_secret: pi_{rand(24)}_secret_{rand(25)}",
        f"customer_token: {rand(24)}",
    ]
    for line in loud:
        assert find_secrets(line), line.split(":")[0]


def test_a_test_verdict_named_pass_is_no_password() -> None:
    """`QC PASS: <project>` and `smoke_test PASS: …` report a test that passed; a setting
    named `…_PASS` (`DB_PASS=…`, `SMTP_PASS: …`) is a password."""
    quiet = [
        f"| Work | QC PASS: Dashboard{rand(6)} mobile skip-target hardening |",
        f"Autotest x_tool PASS: door{rand(8)}, pickaxe outside the hotbar",
    ]
    for line in quiet:
        assert find_secrets(line) == [], line.split(":")[0]
    loud = [f"DB_PASS={rand(16)}", f"- SMTP_PASS: {rand(18)}"]
    for line in loud:
        assert find_secrets(line), line.split("=")[0].split(":")[0]


def test_a_random_key_cut_at_its_case_changes_is_no_words_stand_in() -> None:
    """A random value split at case changes gives word-shaped pieces (`Aa`, `AAAA`, `aa`);
    with `secret` among them (a `pi_…_secret_…` client secret) it is still no stand-in like
    `secure_password_123`: every one of 500 generated client secrets is found."""
    missed = [
        n for n in range(500) if not find_secrets(f"client_secret: pi_{rand(24)}_secret_{rand(25)}")
    ]
    assert missed == []
    for stand_in in ("secure_password_123", "MongoSecurePass2024!", "my_super_secret_token_2024"):
        assert find_secrets(f"client_secret: {stand_in}") == [], stand_in


def test_a_redaction_mark_in_a_secrets_place_is_no_secret() -> None:
    """`([REDACTED])` after a password's name and `ghp_REDACTED` in a URL are what a tool
    wrote in the secret's place; a real value there is still found."""
    quiet = [
        "- **Note:** the SSH password ([REDACTED]) was changed on host 10.0.0.4",
        "git clone https://ghp_REDACTED@github.com/owner/repo.git",
        "- token: ghp_masked",
    ]
    for line in quiet:
        assert find_secrets(line) == [], line[:20]
    loud = [
        f"git clone https://{rand(12)}@github.com/owner/repo.git".replace("https://", "https://u:")
    ]
    for line in loud:
        assert find_secrets(line), line[:20]


def test_an_sk_live_key_is_named_for_both_providers_that_issue_it() -> None:
    """Stripe and Clerk both issue `sk_live_…` / `sk_test_…` secret keys: the finding names
    both, so a Clerk user is not told to rotate a Stripe key."""
    found = find_secrets(f"CLERK_SECRET_KEY=sk_live_{rand(40)}")
    assert [s.kind for s in found] == ["Stripe or Clerk secret key"]


def test_a_file_carried_in_base64_is_no_random_looking_secret() -> None:
    """A ZIP or PNG written out in base64 on a line about a token (`"bundle": "UEsDB…"`)
    starts with its file signature: content, not a key; a random string there is still
    reported."""
    import base64

    zipped = base64.b64encode(b"PK\x03\x04" + rand(40).encode()).decode()
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + rand(40).encode()).decode()
    for value in (zipped, png):
        assert find_secrets(f'token bundle: "{value}"') == [], value[:5]
    assert find_secrets(f'token bundle: "{rand(48)}"')
