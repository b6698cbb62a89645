"""What the staleness-from-git rules (HO005–HO007, CP023–CP025) cost `memls check`.

Builds a repository with ``--commits`` commits (each adding or deleting a few files) and a
memory root with a handoff and ``--checkpoints`` checkpoints, then times `memls check` in a
fresh process with every rule and with every rule but those, and prints the figures.

Run: `.venv/bin/python bench/stale_git.py [--commits 400] [--checkpoints 50] [--runs 5]`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MEMLS = [sys.executable, "-m", "memls"]
ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}
STALE = "HO005,HO006,HO007,CP023,CP024,CP025"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, env=ENV, check=True, capture_output=True)


def build(base: Path, commits: int, checkpoints: int) -> Path:
    repo = base / "repo"
    (repo / "src").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    mem = repo / "memory"
    mem.mkdir()
    (mem / "MEMORY.md").write_text("# Project Memory\n")
    (mem / ".handoff.md").write_text(
        "# Handoff\n\n- **Updated:** 2026-01-01 10:00\n\n## Current State\n"
        + "".join(f"- `src/f{n}.py`\n" for n in range(0, 60, 3))
    )
    for n in range(checkpoints):
        (mem / f"checkpoint-c{n}.md").write_text(
            f"# Checkpoint: c{n}\n\n- **Branch:** `main`\n- **Saved:** 2026-01-01 10:00\n\n"
            f"## Next Action: Edit\nEdit `src/f{n}.py`.\n"
        )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "memory")
    # fast-import: many commits in one git call
    lines: list[str] = []
    for n in range(commits):
        lines += ["commit refs/heads/main", f"mark :{n + 1}"]
        lines += [f"committer bench <b@example.invalid> {1_780_000_000 + n * 60} +0000"]
        msg = f"change {n}"
        lines += [f"data {len(msg)}", msg]
        lines += ["from refs/heads/main^0"] if n == 0 else []
        body = f"v{n}\n"
        lines += [f"M 100644 inline src/f{n % 200}.py", f"data {len(body)}", body.rstrip("\n")]
        if n % 7 == 0 and n > 0:
            lines += [f"D src/f{(n * 3) % 200}.py"]
    subprocess.run(
        ["git", "fast-import", "--quiet"],
        cwd=repo,
        env=ENV,
        input=("\n".join(lines) + "\n").encode(),
        check=True,
    )
    git(repo, "reset", "-q", "--hard", "main")
    return mem


def run_once(mem: Path, ignore: str) -> tuple[float, int]:
    start = time.perf_counter()
    proc = subprocess.run(
        [*MEMLS, "check", "--root", str(mem), "--exit-zero"]
        + (["--ignore", ignore] if ignore else []),
        check=False,
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    lines = sum(1 for line in proc.stdout.splitlines() if ": " in line and line[:1] != " ")
    return time.perf_counter() - start, lines


def timed(mem: Path, runs: int) -> tuple[tuple[float, int], tuple[float, int]]:
    """(without, with) the staleness rules: median wall time and finding lines, the two
    runs interleaved so that load on the machine hits both alike."""
    without: list[float] = []
    with_: list[float] = []
    n_without = n_with = 0
    for _ in range(runs):
        t, n_without = run_once(mem, STALE)
        without.append(t)
        t, n_with = run_once(mem, "")
        with_.append(t)
    return (statistics.median(without), n_without), (statistics.median(with_), n_with)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--commits", type=int, default=400)
    parser.add_argument("--checkpoints", type=int, default=50)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="build the repository here and keep it")
    args = parser.parse_args()
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        report(build(args.keep, args.commits, args.checkpoints), args)
        return
    with tempfile.TemporaryDirectory() as tmp:
        report(build(Path(tmp), args.commits, args.checkpoints), args)


def report(mem: Path, args: argparse.Namespace) -> None:
    (base, n_base), (both, n_both) = timed(mem, args.runs)
    print(f"repository: {args.commits} commits; root: 1 handoff, {args.checkpoints} checkpoints")
    print(f"memls check without the git staleness rules: {base * 1000:.0f} ms ({n_base} lines)")
    print(f"memls check with them:                       {both * 1000:.0f} ms ({n_both} lines)")
    cost = (both - base) * 1000
    print(f"cost of HO005–HO007/CP023–CP025: {cost:+.0f} ms (median of {args.runs})")


if __name__ == "__main__":
    main()
