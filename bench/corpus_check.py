"""`memls check` on a corpus of real repositories' memory, as a new user runs it: figures.

Usage: `.venv/bin/python bench/corpus_check.py CORPUS [--labels LABELS.json] [--json OUT]`
where CORPUS holds one folder per repository. Each repository is checked through the CLI
(`memls check REPO --format json`, a fresh process, as a user would), and the figures are:

- roots present: folders holding memory-named files (MEMORY.md, LOG.md, checkpoint-*.md,
  handoffs, memory banks, memory folders …), found by file name alone — or, with
  ``--labels``, the roots a person judged present (``"present": ["repo/path", …]``) and
  the memory-named folders judged not memory (``"not_memory"``: found, they are false roots);
- roots found, and the present ones memls did not find (and of those, the ones whose files
  a found root reads — an OpenClaw workspace reads its `memory/` daily notes as its own);
- findings by rule, and with ``--labels`` (``"findings": {"repo/path:line CODE": "true" |
  "false"}``) true / false per rule and the false errors; unjudged findings are listed;
- wall time per repository (slowest).

A labels file is written by reading the files; this script never judges a finding.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

MEMLS = Path(sys.executable).with_name("memls")
SKIP = {".git", "node_modules", ".venv", "venv", "__pycache__", "build", "dist", "target"}
_MEMORY_NAME = re.compile(
    r"^(MEMORY|LOG|\.?handoff[-_. \w]*|checkpoint-.+|activeContext|projectbrief|progress|"
    r"memory_summary)\.md$",
    re.IGNORECASE,
)
_MEMORY_DIRS = ("memory-bank", "memory_bank", ".serena/memories", ".codex/memories")


def present_roots(repo: Path) -> set[str]:
    """Folders (relative to the corpus) holding memory-named files: the name-only estimate."""
    out: set[str] = set()
    for folder, dirs, files in os.walk(repo):
        dirs[:] = [d for d in dirs if d not in SKIP]
        rel = Path(folder).relative_to(repo.parent).as_posix()
        if any(rel.endswith("/" + d) for d in _MEMORY_DIRS) and files:
            out.add(rel)
            dirs[:] = []
            continue
        if any(_MEMORY_NAME.match(f) for f in files):
            out.add(rel)
    return out


def check_repo(repo: Path, code: Path | None = None) -> tuple[Any, float]:
    """`memls check REPO --format json` in a fresh process (``code``: a folder holding
    another memls checkout as ``memls/``, e.g. `git archive` of an older commit)."""
    start = time.perf_counter()
    args = ["check", repo.name, "--format", "json", "--exit-zero"]
    if code is None:
        cmd = [str(MEMLS), *args]
    else:
        boot = f"import sys; sys.path.insert(0, {str(code)!r}); from memls.cli import main; main()"
        cmd = [sys.executable, "-c", boot, *args]
    proc = subprocess.run(
        cmd,
        cwd=repo.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - start
    try:
        return json.loads(proc.stdout), seconds
    except json.JSONDecodeError:
        return {"error": (proc.stderr or proc.stdout)[-400:]}, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--labels", type=Path, help="judged roots and findings (JSON)")
    parser.add_argument("--json", type=Path, help="write every root and finding here")
    parser.add_argument(
        "--code", type=Path, help="run another memls (a folder holding it as memls/)"
    )
    args = parser.parse_args()
    labels: Any = json.loads(args.labels.read_text()) if args.labels else {}
    judged: dict[str, str] = dict(labels.get("findings", {}))
    repos = sorted(p for p in args.corpus.iterdir() if p.is_dir())
    found: set[str] = set()
    read: set[str] = set()  # every memory file a found root read
    within: dict[str, str] = {}  # a found root shown as a part of the found root it is in
    estimate: set[str] = set()
    findings: list[Any] = []
    times: list[tuple[float, str]] = []
    crashed: list[str] = []
    kinds: Counter[str] = Counter()
    files_read = 0
    for repo in repos:
        data, seconds = check_repo(repo, args.code)
        times.append((seconds, repo.name))
        estimate |= present_roots(repo)
        if "error" in data:
            crashed.append(f"{repo.name}: {data['error']}")
            continue
        for root in data["roots"]:
            found.add(root["path"])
            if root.get("within"):
                within[root["path"]] = root["within"]
            kinds[root.get("kind", "memory")] += 1
            count = root.get("file_count", root.get("files", 0))
            files_read += count if isinstance(count, int) else len(count)
            read.update(root.get("files", []))
        for d in data["diagnostics"]:
            d["key"] = f"{d['path']}:{d['line']} {d['code']}"
            findings.append(d)
    present = set(labels.get("present", estimate))
    missed = sorted(present - found)
    print(f"corpus: {args.corpus} ({len(repos)} repositories)")
    source = "judged" if "present" in labels else "memory-named folders (estimate)"
    print(f"roots present: {len(present)} ({source}); found: {len(found)}; ", end="")
    print(f"present and found: {len(present & found)}; missed: {len(missed)}")
    checked = [m for m in missed if any(f.startswith(m + "/") for f in read)]
    print(
        f"missed as a root of its own but its files read by a found root: {len(checked)}"
        + "".join(f"\n  read within another root: {m}" for m in checked)
    )
    print("roots found by kind: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    print(f"memory files read: {files_read}")
    for m in missed:
        print(f"  missed: {m}")
    extra = sorted(found - present)
    not_memory = set(labels.get("not_memory", ()))
    parts = [e for e in extra if within.get(e) in present and e not in not_memory]
    wrong = [e for e in extra if e in not_memory]
    print(f"found as a part of a present root it is shown within: {len(parts)}")
    if not_memory:
        print(f"found but judged not memory (false roots): {len(wrong)} of {len(not_memory)}")
    for e in extra:
        if e in parts:
            why = f"shown as a part of {within[e]}"
        else:
            why = "judged not memory" if e in not_memory else "not in the present list"
        print(f"  found, {why}: {e}")
    print(f"findings: {len(findings)}")
    by_rule: dict[str, Counter[str]] = {}
    for d in findings:
        verdict = judged.get(str(d["key"]), "unjudged")
        by_rule.setdefault(str(d["code"]), Counter())[verdict] += 1
    true = sum(c["true"] for c in by_rule.values())
    false = sum(c["false"] for c in by_rule.values())
    for code in sorted(by_rule):
        c = by_rule[code]
        print(f"  {code}: {sum(c.values())} (true {c['true']}, false {c['false']}, ", end="")
        print(f"unjudged {c['unjudged']})")
    if true + false:
        print(
            f"judged: {true + false}; false alarms: {false} ({100 * false / (true + false):.1f}%)"
        )
    false_errors = [
        d for d in findings if d["severity"] == "error" and judged.get(str(d["key"])) == "false"
    ]
    print(f"false errors: {len(false_errors)}")
    for d in false_errors:
        print(f"  {d['key']}: {d['message']}")
    times.sort(reverse=True)
    print("slowest: " + ", ".join(f"{n} {s:.2f}s" for s, n in times[:3]))
    for line in crashed:
        print(f"  crashed: {line}")
    if args.json:
        args.json.write_text(
            json.dumps({"found": sorted(found), "findings": findings}, indent=1, ensure_ascii=False)
        )


if __name__ == "__main__":
    main()
