"""Real VS Code: from opening the memory folder to the first memls diagnostic in the Problems
panel (a script, not a test; issue 24, target <= 3 s once code-server is warm).

Starts code-server (installed under the virtual environment by scripts/setup-vscode-e2e.sh)
with the extension built from this checkout on a copy of examples/flat, and drives it through
Chromium with Playwright (tests/vscode_e2e.py). The first load is cold (code-server's first
page); every later one reloads the folder with code-server warm: a new window, extension host
and language server each time, as opening the folder again in VS Code is.

    .venv/bin/python bench/vscode.py [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests import vscode_e2e as e2e


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="warm loads to time (default 5)")
    args = parser.parse_args()
    reason = e2e.unavailable()
    if reason is not None:
        print(f"vscode bench: cannot run: {reason}")
        return 2
    with e2e.code_server() as server, e2e.browser() as b:
        page = e2e.new_page(b, [])
        cold = e2e.open_folder(page, server)
        warm: list[float] = []
        workbench: list[float] = []
        phases: list[dict[str, float]] = []
        for _ in range(args.runs):
            warm.append(e2e.open_folder(page, server))
            workbench.append(server.timings["workbench"])
            if (found := e2e.server_phases(server)) is not None:
                phases.append(found)
    med = statistics.median
    print("open folder -> first memls diagnostic in the Problems panel (examples/flat)")
    print(f"  cold (first page of a fresh code-server): {cold:.2f} s")
    print(
        f"  warm, {len(warm)} runs: median {med(warm):.2f} s, "
        f"min {min(warm):.2f} s, max {max(warm):.2f} s (target <= 3 s)"
    )
    print("  where it goes (warm medians, from the page load):")
    print(f"    VS Code: workbench shown                     {med(workbench):.2f} s")
    if phases:
        activated = med(p["activated"] for p in phases)
        running = med(p["running"] - p["activated"] for p in phases)
        shown = med(p["problem"] - p["running"] for p in phases)
        own = med(p["problem"] - p["activated"] for p in phases)
        print(f"    VS Code: extension host up, memls activated  {activated:.2f} s")
        print(f"    memls: activate -> server answered initialize +{running:.2f} s")
        print(f"    memls: -> first diagnostic in Problems panel +{shown:.2f} s")
        print(
            f"  memls's own share (activation -> first diagnostic): median {own:.2f} s; "
            f"VS Code's before any extension runs: {activated:.2f} s"
        )
    else:
        print("    (no memls output-channel log with timestamps: phases not split)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
