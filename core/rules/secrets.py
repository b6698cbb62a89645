"""SC: secrets written into memory (keys, tokens, passwords, private keys).

Memory is committed and pushed, and agents copy what they saw into it. Every finding is an
error except SC005 (a random-looking string is a guess, not proof); the message names the
kind and shows the value redacted (:func:`memls.core.secrets.preview`) — a finding never
carries a secret whole. The fix replaces the value with a placeholder saying where it
belongs. A known fake is marked by ``<!-- memls-disable-next-line SC001 -->`` on the line
before, or by its fingerprint in ``allow_secrets`` (``memls secrets hash``); a file-wide
``memls-disable`` does not silence SC.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from memls.core.fsutil import TEMP_PREFIX
from memls.core.model import Diagnostic, Fix, Range, Severity, Suppressions, TextEdit
from memls.core.rules import Rule, RuleContext, configured
from memls.core.secrets import (
    SC_API_KEY,
    SC_HIGH_ENTROPY,
    Secret,
    find_secrets,
    fingerprint,
    placeholder,
    preview,
)
from memls.core.text import LineIndex, decode_lossless, encode_lossless
from memls.core.workspace import RootKind, Workspace, json_memory_files

RULES = (
    Rule(
        "SC001",
        "api-key",
        Severity.ERROR,
        "a provider API key or access token (OpenAI, Anthropic, NVIDIA, GitHub, AWS, Slack, …)",
        fixable=True,
        known_fake=True,
        rationale="error: a live key in committed memory is a leak — anyone who reads it can "
        "use it",
        doc="""
        A provider API key or access token in a memory file. Memory is committed, synced
        and read by agents; a key there is a leak.

        Fix: revoke the key, then replace it with a placeholder (the quick fix). A value
        that is a known fake can be marked with `<!-- memls-disable-next-line SC001 -->`
        on the line before.
        """,
    ),
    Rule(
        "SC002",
        "private-key",
        Severity.ERROR,
        "a private key block",
        fixable=True,
        known_fake=True,
        rationale="error: a private key in committed memory is a leak",
        doc="""
        A `-----BEGIN … PRIVATE KEY-----` block in a memory file.

        Fix: rotate the key, then replace the block with a placeholder (the quick fix).
        """,
    ),
    Rule(
        "SC003",
        "secret-value",
        Severity.ERROR,
        "a password, secret or token written as a value (`JWT_SECRET=…`, `password: …`); "
        "not a value that spells its own name (`SET_TOKEN = '@app/SET_TOKEN'`) or a label"
        " followed by a sentence (`**1Password**: API-based secret retrieval`)",
        fixable=True,
        rationale="error: a password or secret value in committed memory is a leak",
        doc="""
        A password, secret or token written as a value, e.g. `JWT_SECRET=…` or
        `password: …`.

        Wrong: `db password: hunter2-prod`.
        Right: `db password: in the team vault (prod/db)`.

        Fix: change the secret, then replace the value with a placeholder (the quick fix).
        """,
    ),
    Rule(
        "SC004",
        "host-credentials",
        Severity.ERROR,
        "credentials in a URL (`user:pass@host`) or a password beside the host it opens",
        fixable=True,
        known_fake=True,
        rationale="error: credentials with the host they open are a leak",
        doc="""
        Credentials in a URL (`postgres://user:pass@db.example.com`) or a password
        written beside the host it opens.

        Fix: change the password, then replace it with a placeholder (the quick fix).
        """,
    ),
    Rule(
        "SC005",
        "high-entropy-string",
        Severity.WARNING,
        "a quoted random-looking string on a line about keys or tokens (may be a secret);"
        " not a character set written out (`ABCDEFGHJKLMNPQRSTUVWXYZ23456789`) or a file"
        " carried in base64 (a ZIP's `UEsDB…`, a PNG's `iVBORw0KGg…`)",
        fixable=True,
        rationale="warning: a random-looking string may be a secret; it is a guess, not proof",
        doc="""
        A quoted random-looking string on a line about keys or tokens. It may be a secret;
        it may be a hash or an ID.

        Fix: if it is a secret, replace it with a placeholder (the quick fix); if not,
        mark it with `<!-- memls-disable-next-line SC005 -->` on the line before.
        """,
    ),
)


def message(secret: Secret, value: str, *, archive: bool = False) -> str:
    """The finding's text: kind and a redacted preview, never the value."""
    if archive:
        return (
            f"{secret.kind} `{preview(value)}` in an archived transcript (kept byte for byte): "
            "rotate it; keep the archive out of git, and once rotated list its fingerprint "
            "in allow_secrets (`memls secrets hash`)"
        )
    what = "may be a secret" if secret.code == SC_HIGH_ENTROPY else "is in memory"
    advice = (
        "if it is real, remove it and rotate it — memory is committed and shared"
        if secret.code == SC_HIGH_ENTROPY
        else "remove it and rotate it: memory is committed, pushed and read by every session"
    )
    return f"{secret.kind} `{preview(value)}` {what}; {advice}"


def secret_diagnostics(
    path: Path,
    text: str,
    *,
    fences: Iterable[tuple[int, int]] = (),
    allowed: frozenset[str] = frozenset(),
    fixable: bool = True,
    archive: bool = False,
) -> Iterator[Diagnostic]:
    """SC findings for any text (a memory document, an archived transcript)."""
    secrets = find_secrets(text, fences=fences)
    if not secrets:
        return
    index = LineIndex(text)
    from memls.core.rules import registry

    rules = registry()
    for secret in secrets:
        value = secret.value(text)
        if allowed and fingerprint(value) in allowed:
            continue
        start = index.position(secret.start)
        end = index.position(secret.end)
        rng = Range.of(start[0], start[1], end[0], end[1])
        fix = (
            Fix(
                f"Replace the {secret.kind} with a placeholder",
                (TextEdit(rng, placeholder(secret)),),
            )
            if fixable
            else None
        )
        yield Diagnostic(
            secret.code,
            rules[secret.code].severity,
            message(secret, value, archive=archive),
            path,
            rng,
            fix,
        )


SCANNED_SUFFIXES = (".md", ".markdown", ".txt", ".jsonl")
DATA_SUFFIXES = (".json", ".yaml", ".yml", ".toml")
"""Data an agent keeps in its memory folder (``memory/state.json``, ``heartbeat.yaml``):
searched there, never at a repository's top, where such files are the project's."""
_NOT_MEMORY_DATA = re.compile(r"(?i)(?:^|[-_.])lock\b|^package\.json$|^tsconfig|^\.")
_SKIP_DIRS = {"node_modules", "__pycache__", "venv", ".venv"}
_MAX_DEPTH = 8
_MAX_FILES = 20_000
_BLOCK = 4 * 1024 * 1024


def _files_among_others(workspace: Workspace) -> bool:
    """A root that reads chosen files of a folder that is not a memory folder: a notes root
    of named files or a dated journal (``docs/phase-6/SESSION-NOTES.md``), a handoff root
    outside a folder of handoffs (``docs/HANDOFF.md``). The folder's other files are the
    project's, not memory kept beside it."""
    from memls.core.workspace import RootKind, notes_files

    kind, root = workspace.root_kind, workspace.root
    if kind is RootKind.NOTES:
        return notes_files(root) is not None
    if kind is RootKind.HANDOFF:
        name = root.name.lower()
        return not any(word in name for word in ("handoff", "snapshot", "session"))
    return False


def scan_paths(workspace: Workspace) -> list[Path]:
    """Files beyond the root's memory files that hold memory text and may hold secrets.

    A memory folder's subfolders (``memory/archive/``, ``memory/session-transcripts/``,
    daily logs), other text files in them, archived transcripts (``*.jsonl``), and the data
    an agent keeps there (``.json``, ``.yaml``, ``.toml``; not lock files). In a
    project folder (a repository whose top level holds MEMORY.md) only ``memory/`` and
    ``transcripts/`` are searched: the project's own files are not memory; nor are the
    other files of a folder whose root reads chosen files (:func:`_files_among_others`).
    """
    root = workspace.root
    if workspace.root_kind is RootKind.JSON:
        return json_memory_files(root)
    listed = set(workspace.paths())
    if workspace.layout_choice.project_folder:
        places = [root / "memory", root / "transcripts"]
    elif _files_among_others(workspace):
        places = [root / "transcripts"]  # `docs/phase-6/` reads its session notes only
    else:
        places = [root]
    out: list[Path] = []
    real_root = root.resolve()
    repo = workspace.repo_root
    for place in places:
        data = repo is None or place.resolve() != repo.resolve()
        stack = [(place, 0)]
        while stack and len(out) < _MAX_FILES:
            folder, depth = stack.pop()
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError:
                continue
            for entry in entries:
                try:
                    if entry.is_symlink():
                        continue  # never follow a link out of (or around) the root
                    if entry.is_dir():
                        if (
                            depth < _MAX_DEPTH
                            and not entry.name.startswith(".")
                            and (entry.name not in _SKIP_DIRS)
                        ):
                            stack.append((Path(entry.path), depth + 1))
                        continue
                    if not entry.is_file():
                        continue
                except OSError:
                    continue
                path = Path(entry.path)
                suffix = path.suffix.lower()
                if (
                    (
                        suffix in SCANNED_SUFFIXES
                        or (
                            data
                            and suffix in DATA_SUFFIXES
                            and not _NOT_MEMORY_DATA.search(entry.name)
                        )
                    )
                    and path not in listed
                    and not entry.name.startswith(TEMP_PREFIX)
                    and real_root in path.resolve().parents
                ):
                    out.append(path)
    return sorted(out)


def check_file(workspace: Workspace, path: Path) -> list[Diagnostic]:
    """SC findings for a file that is not one of the root's memory documents.

    Markdown and text are parsed (code fences and ``memls-disable-next-line`` count) and get
    the fix; a transcript is read in blocks and gets no fix (the archive keeps its bytes).
    Configuration (select/ignore, severities, ``allow_secrets``) applies as for any rule.
    """
    cfg = workspace.config
    allowed = frozenset(cfg.allow_secrets)
    out: list[Diagnostic] = []
    kept = workspace.root_kind is RootKind.JSON  # a store's JSON, JSON Lines or YAML
    if path.suffix.lower() == ".jsonl" and not kept:
        out.extend(_transcript_diagnostics(path, allowed))
    else:
        from memls.core.parse import parse_bytes

        try:
            data = path.read_bytes()
        except OSError:
            return []
        text, _ = decode_lossless(data)  # ranges on the text a writer encodes back
        if not find_secrets(text):
            return []  # most files: no need to parse for fences and suppressions
        doc = parse_bytes(data, path)  # fences and suppressions (lines are the same)
        store = kept or path.suffix.lower() == ".json"  # a memory server's store: its to rewrite
        found: Iterable[Diagnostic] = secret_diagnostics(
            path, text, fences=doc.fences, allowed=allowed, fixable=not store
        )
        if not kept and path.suffix.lower() in DATA_SUFFIXES:
            # data is quoted strings throughout (ids, hashes, peer ids): only what is
            # known to be a secret, never SC005's guess
            found = [d for d in found if d.code != SC_HIGH_ENTROPY]
        return configured(found, cfg, doc.suppressions)
    return configured(out, cfg, Suppressions())


def fix_file(workspace: Workspace, path: Path) -> tuple[bytes | None, int]:
    """New bytes for a scanned-only Markdown or text file with its secrets replaced by
    placeholders (``memls check --fix``), and how many; every other byte kept. A transcript
    is never rewritten, nor a JSON memory store (its server owns the format), nor any file
    of a ``json`` root (YAML checkpoints, Beads' issues)."""
    if path.suffix.lower() in (".jsonl", ".json") or workspace.root_kind is RootKind.JSON:
        return None, 0
    from memls.core.fixes import apply_fixes

    fixes = [d.fix for d in check_file(workspace, path) if d.fix is not None]
    if not fixes:
        return None, 0
    try:
        data = path.read_bytes()
    except OSError:
        return None, 0
    text, bom = decode_lossless(data)
    return encode_lossless(apply_fixes(text, fixes), bom), len(fixes)


def _transcript_diagnostics(path: Path, allowed: frozenset[str]) -> Iterator[Diagnostic]:
    """A JSONL file in blocks of whole lines, so a 1 GB archive is never read at once."""
    try:
        handle = path.open("rb")
    except OSError:
        return
    with handle:
        line_base = 0
        carry = b""
        while True:
            block = handle.read(_BLOCK)
            data = carry + block
            if not block:
                carry = b""
            else:
                cut = data.rfind(b"\n")
                if cut == -1:
                    carry = data
                    continue
                data, carry = data[: cut + 1], data[cut + 1 :]
            if data:
                text, _ = decode_lossless(data)
                for diag in secret_diagnostics(
                    path, text, allowed=allowed, fixable=False, archive=True
                ):
                    rng = diag.range
                    moved = Range.of(
                        rng.start.line + line_base,
                        rng.start.character,
                        rng.end.line + line_base,
                        rng.end.character,
                    )
                    yield Diagnostic(diag.code, diag.severity, diag.message, path, moved, None)
                line_base += data.count(b"\n")
            if not block:
                break


def known_fake_fix(doc_lines: tuple[str, ...] | list[str], diag: Diagnostic) -> Fix:
    """Mark a finding as a known fake: ``memls-disable-next-line CODE`` on the line before."""
    line = diag.range.start.line
    text = doc_lines[line] if line < len(doc_lines) else ""
    indent = text[: len(text) - len(text.lstrip(" \t"))]
    comment = f"{indent}<!-- memls-disable-next-line {diag.code} -->\n"
    return Fix(
        f"Mark as a known fake ({diag.code} off for this line)",
        (TextEdit(Range.point(line, 0), comment),),
    )


def check(ctx: RuleContext) -> Iterator[Diagnostic]:
    doc = ctx.doc
    yield from secret_diagnostics(
        doc.path,
        doc.text,
        fences=doc.fences,
        allowed=frozenset(ctx.config.allow_secrets),
    )


__all__ = [
    "RULES",
    "SC_API_KEY",
    "check",
    "check_file",
    "fix_file",
    "known_fake_fix",
    "message",
    "scan_paths",
    "secret_diagnostics",
]
