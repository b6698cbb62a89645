"""The SC rules on a corpus of real memory: every finding, redacted, for judging by reading.

Usage: `.venv/bin/python bench/secrets_corpus.py CORPUS [--json OUT]` where CORPUS holds one
folder per repository with its memory files (kept outside this repository: the secrets in
real memory are other people's). Every ``.md``/``.markdown``/``.txt``/``.jsonl`` file is
scanned the way `memls check` scans it (code fences and next-line suppressions count).

Printed per finding: repository, path:line, code, kind, the redacted preview, and the line
with every value on it replaced by ``[redacted …]`` — never a value whole. With ``--json``
the same rows go to a file for a judging pass (add ``"verdict": "tp" | "fp"`` by hand), and
``--verdicts FILE`` prints precision from a judged file.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from memls.core.config import Config
from memls.core.model import Suppressions
from memls.core.parse import parse_bytes
from memls.core.rules import configured
from memls.core.rules.secrets import secret_diagnostics
from memls.core.secrets import redact
from memls.core.text import decode_lossless

SUFFIXES = (".md", ".markdown", ".txt", ".jsonl")


def scan(corpus: Path) -> tuple[list[dict[str, object]], int, int, float]:
    rows: list[dict[str, object]] = []
    files = 0
    total = 0
    started = time.perf_counter()
    config = Config()
    allowed = frozenset(config.allow_secrets)
    for repo in sorted(p for p in corpus.iterdir() if p.is_dir()):
        for path in sorted(repo.rglob("*")):
            if not path.is_file() or path.suffix.lower() not in SUFFIXES:
                continue
            data = path.read_bytes()
            files += 1
            total += len(data)
            text, _ = decode_lossless(data)
            fences: tuple[tuple[int, int], ...] = ()
            suppressions = Suppressions()
            if path.suffix.lower() != ".jsonl":
                doc = parse_bytes(data, path)
                fences, suppressions = doc.fences, doc.suppressions
            lines = text.split("\n")
            found = secret_diagnostics(path, text, fences=fences, allowed=allowed)
            for diag in configured(found, config, suppressions):
                line = diag.range.start.line
                context = redact(lines[line])
                if len(context) > 240:
                    col = diag.range.start.character
                    context = redact(lines[line][max(0, col - 120) : col + 120])
                rows.append(
                    {
                        "repo": repo.name,
                        "path": path.relative_to(repo).as_posix(),
                        "line": line + 1,
                        "code": diag.code,
                        "message": diag.message.split(";")[0],
                        "context": context,
                    }
                )
    return rows, files, total, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--json", type=Path, help="write the findings here for judging")
    parser.add_argument("--verdicts", type=Path, help="a judged findings file: print precision")
    args = parser.parse_args()
    if args.verdicts:
        judged = json.loads(args.verdicts.read_text())
        tp = sum(1 for r in judged if r.get("verdict") == "tp")
        fp = sum(1 for r in judged if r.get("verdict") == "fp")
        print(f"{len(judged)} findings: {tp} true, {fp} false ({fp / max(1, tp + fp):.1%} false)")
        return
    rows, files, total, seconds = scan(args.corpus)
    repos = len({r["repo"] for r in rows})
    for r in rows:
        print(f"{r['repo']}/{r['path']}:{r['line']}: {r['code']} {r['message']}")
        print(f"    {r['context']}")
    by_code: dict[str, int] = {}
    for r in rows:
        by_code[str(r["code"])] = by_code.get(str(r["code"]), 0) + 1
    print(
        f"\n{len(rows)} findings in {repos} repositories ({', '.join(f'{k} {v}' for k, v in sorted(by_code.items()))}); "
        f"{files} files, {total / 1e6:.1f} MB scanned in {seconds:.2f} s"
    )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
