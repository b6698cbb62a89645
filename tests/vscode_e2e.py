"""A real VS Code for the end-to-end test and its bench: code-server (VS Code in a browser,
installed under the virtual environment by scripts/setup-vscode-e2e.sh) with the extension
built from this checkout, on a copy of examples/flat, driven through Debian Chromium by
Playwright. Nothing leaves the machine: code-server's gallery points at a dead local
address and the browser aborts every request that is not to 127.0.0.1.

Every step waits for what it needs in the page (a row, a tab, an input's title) or polls
the file on disk; nothing sleeps for a fixed time.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Locator, Page

PROJECT = Path(__file__).resolve().parents[1]
VENV = Path(sys.prefix)
CACHE = VENV / "vscode-e2e"
CODE_SERVER_VERSION = "4.139.1"
STAMP = CACHE / f".installed-code-server-{CODE_SERVER_VERSION}"
ENTRY = CACHE / "code-server" / "node_modules" / "code-server" / "out" / "node" / "entry.js"
CHROMIUM = Path("/usr/bin/chromium")
VSIX = PROJECT / "editors" / "vscode" / "memls.vsix"
EXAMPLE = PROJECT / "examples" / "flat"
ARTIFACTS = PROJECT / "tests" / "artifacts" / "vscode-e2e"
BRANCH = "feat/e2e"
STEP_TIMEOUT_MS = 60_000
"""The longest any one step waits (a cold server start on a busy 2-core machine)."""


def unavailable() -> str | None:
    """Why this machine cannot run the end-to-end test, or None when it can."""
    if not STAMP.is_file() or not ENTRY.is_file():
        return (
            f"code-server {CODE_SERVER_VERSION} is not installed under {CACHE} "
            "(scripts/setup-vscode-e2e.sh, run by make install-dev, installs it)"
        )
    if node() is None:
        return f"Node 24 is missing under {CACHE / 'node'} (scripts/setup-vscode-e2e.sh)"
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is absent (make install-dev installs chromium with apt)"
    if shutil.which("git") is None:
        return "git is not installed"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[dev]')"
    return None


def node() -> Path | None:
    try:
        path = Path((CACHE / "node-path").read_text(encoding="utf-8").strip())
    except OSError:
        return None
    return path if path.is_file() else None


def build_vsix() -> Path:
    """The .vsix as a clone builds it (scripts/vscode.sh), unless it is newer than every
    source of the extension."""
    sources = [
        p
        for p in (PROJECT / "editors" / "vscode").rglob("*")
        if p.is_file() and "node_modules" not in p.parts and p.suffix in {".ts", ".json"}
    ]
    if not VSIX.is_file() or any(p.stat().st_mtime > VSIX.stat().st_mtime for p in sources):
        subprocess.run(["bash", "scripts/vscode.sh"], cwd=PROJECT, check=True)
    return VSIX


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def memory_folder(base: Path) -> Path:
    """A copy of examples/flat as its own git repository, on branch ``feat/e2e`` with one
    commit of its own (so the save flow has a branch and a commit to offer)."""
    folder = base / "flat"
    shutil.copytree(EXAMPLE, folder)
    git(folder, "init", "-q", "-b", "main")
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", "The example memory")
    git(folder, "checkout", "-q", "-b", BRANCH)
    (folder / "testing.md").write_text(
        (folder / "testing.md").read_text(encoding="utf-8") + "\nRun the e2e suite too.\n",
        encoding="utf-8",
    )
    git(folder, "commit", "-q", "-am", "Note the e2e suite in testing.md")
    return folder


def user_settings(extra: dict[str, object] | None = None) -> dict[str, object]:
    return {
        "memls.interpreter": [sys.executable],
        "workbench.startupEditor": "none",
        "workbench.tips.enabled": False,
        "workbench.enableExperiments": False,
        "workbench.welcomePage.walkthroughs.openOnInstall": False,
        "telemetry.telemetryLevel": "off",
        "extensions.autoCheckUpdates": False,
        "extensions.autoUpdate": False,
        "update.mode": "none",
        "security.workspace.trust.enabled": False,
        "chat.disableAIFeatures": True,
        "git.enabled": False,
        "files.refactoring.autoSave": True,
        "explorer.confirmDragAndDrop": False,
        **(extra or {}),
    }


@dataclass
class CodeServer:
    """A running code-server with the extension installed, on a temporary home."""

    base: Path
    folder: Path
    port: int
    process: subprocess.Popen[bytes]
    log: Path
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/?folder={self.folder}"

    @property
    def settings_path(self) -> Path:
        return self.base / "data" / "User" / "settings.json"

    def server_log(self) -> str:
        """The extension's memls output channel, as code-server logged it."""
        logs = sorted((self.base / "data" / "logs").rglob("memls.log"), key=os.path.getmtime)
        return logs[-1].read_text(encoding="utf-8", errors="replace") if logs else ""


@contextlib.contextmanager
def code_server() -> Iterator[CodeServer]:
    """code-server on a fresh temporary home (its own folder, not pytest's tmp_path, which
    a concurrent pytest run may prune); its logs are kept in the artifacts at the end."""
    with tempfile.TemporaryDirectory(prefix="memls-vscode-e2e-") as tmp:
        base = Path(tmp)
        try:
            with _code_server(base) as server:
                yield server
        finally:
            logs = ARTIFACTS / "logs"
            shutil.rmtree(logs, ignore_errors=True)
            if (base / "data" / "logs").is_dir():
                shutil.copytree(base / "data" / "logs", logs)


@contextlib.contextmanager
def _code_server(base: Path) -> Iterator[CodeServer]:
    node_bin = node()
    assert node_bin is not None
    for sub in ("ext", "data/User", "xdg/config", "xdg/data", "xdg/cache", "home"):
        (base / sub).mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "PATH": f"{node_bin.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(base / "home"),
        "XDG_CONFIG_HOME": str(base / "xdg" / "config"),
        "XDG_DATA_HOME": str(base / "xdg" / "data"),
        "XDG_CACHE_HOME": str(base / "xdg" / "cache"),
        "EXTENSIONS_GALLERY": json.dumps(
            {"serviceUrl": "http://127.0.0.1:9/gallery", "itemUrl": "http://127.0.0.1:9/item"}
        ),
    }
    dirs = ["--extensions-dir", str(base / "ext"), "--user-data-dir", str(base / "data")]
    subprocess.run(
        [str(node_bin), str(ENTRY), "--install-extension", str(build_vsix()), *dirs],
        env=env,
        check=True,
        capture_output=True,
        timeout=120,
    )
    folder = memory_folder(base / "ws")
    (base / "data" / "User" / "settings.json").write_text(
        json.dumps(user_settings(), indent=2), encoding="utf-8"
    )
    port = free_port()
    log = base / "code-server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                str(node_bin),
                str(ENTRY),
                "--bind-addr",
                f"127.0.0.1:{port}",
                "--auth",
                "none",
                "--disable-telemetry",
                "--disable-update-check",
                "--disable-workspace-trust",
                *dirs,
            ],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = CodeServer(base, folder, port, process, log)
    try:
        wait_healthy(server)
        yield server
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def wait_healthy(server: CodeServer, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"code-server exited: {server.log.read_text(errors='replace')}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/healthz", timeout=2):
                return
        except (urllib.error.URLError, OSError):
            time.sleep(0.1)  # polling a port that is not listening yet
    raise TimeoutError(f"code-server did not answer /healthz: {server.log.read_text()}")


@contextlib.contextmanager
def browser() -> Iterator[Browser]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            yield b
        finally:
            b.close()


LOCAL = ("http://127.0.0.1:", "ws://127.0.0.1:", "data:", "blob:")


def new_page(b: Browser, blocked: list[str]) -> Page:
    context = b.new_context(viewport={"width": 1400, "height": 900})

    def route(r: object) -> None:
        from playwright.sync_api import Route

        assert isinstance(r, Route)
        if r.request.url.startswith(LOCAL):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    context.set_default_timeout(STEP_TIMEOUT_MS)
    return context.new_page()


# -- the workbench ----------------------------------------------------------------------
PROBLEM_ROW = ".markers-panel .monaco-list-row"


def open_folder(page: Page, server: CodeServer) -> float:
    """Load the workbench on the memory folder; seconds until the first memls diagnostic
    shows in the Problems panel (the panel opened as soon as the workbench is there)."""
    start = time.monotonic()
    server.timings["goto_at"] = time.time()
    page.goto(server.url)
    page.wait_for_selector(".monaco-workbench .part.editor")
    server.timings["workbench"] = time.monotonic() - start
    show_problems(page)
    problem(page).wait_for()
    server.timings["problem_at"] = time.time()
    return time.monotonic() - start


_LOG_STAMP = re.compile(r"^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}) \[\w+\] (.*)$")


def server_phases(server: CodeServer) -> dict[str, float] | None:
    """Where the last open_folder's time went, from the memls output channel's own log
    (its lines carry the extension host's clock): ``activated`` (the extension's first
    line, written in activate()) and ``running`` (the language client's Starting ->
    Running, i.e. the server answered initialize), as seconds after the page load began.
    None when the log has no such lines (an older window's log, a failed start)."""
    marks: dict[str, float] = {}
    for line in server.server_log().splitlines():
        m = _LOG_STAMP.match(line)
        if m is None:
            continue
        at = dt.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S.%f").timestamp()
        if "activated" not in marks:
            marks["activated"] = at
        if "Starting -> Running" in m.group(2) and "running" not in marks:
            marks["running"] = at
    if len(marks) < 2:
        return None
    begin = server.timings["goto_at"]
    return {
        "activated": marks["activated"] - begin,
        "running": marks["running"] - begin,
        "problem": server.timings["problem_at"] - begin,
    }


def problem(page: Page, code: str = r"[A-Z]{2}\d{3}", text: str = "") -> Locator:
    """The first Problems row of a memls diagnostic (its source and code render as
    ``memls(CODE)``, in separate elements), optionally holding ``text``."""
    rows = page.locator(PROBLEM_ROW, has_text=re.compile(rf"memls\W*{code}"))
    return (rows.filter(has_text=text) if text else rows).first


def show_problems(page: Page) -> None:
    panel = page.locator(".markers-panel")
    if not panel.is_visible():
        page.keyboard.press("Control+Shift+M")
        panel.wait_for()


def filter_problems(page: Page, text: str) -> None:
    show_problems(page)
    page.locator(".viewpane-filter input").first.fill(text)


def quick_open(page: Page, name: str) -> None:
    """Ctrl+P, type the file name, wait for its row (Enter before results arrive would open
    nothing), open it and wait for its tab."""
    page.keyboard.press("Escape")
    page.keyboard.press("Control+P")
    box = page.locator(".quick-input-widget input")
    box.wait_for()
    box.fill(name)
    page.locator(f".quick-input-list .monaco-list-row[aria-label*='{name}']").first.wait_for()
    page.keyboard.press("Enter")
    active_tab(page, name).wait_for()
    page.locator(".editor-group-container.active .monaco-editor .view-lines").first.wait_for()


def active_tab(page: Page, label: str) -> Locator:
    return page.locator(f".editor-group-container.active .tab.active[aria-label*='{label}']").first


def editor_focus_line(page: Page, line: int) -> None:
    """Put the cursor at the start of ``line`` (1-based) in the active editor (Ctrl+G)."""
    page.locator(".editor-group-container.active .monaco-editor .view-lines").first.click()
    page.keyboard.press("Control+g")
    box = page.locator(".quick-input-widget input")
    box.wait_for()
    box.fill(f":{line}")
    page.keyboard.press("Enter")
    page.locator(".quick-input-widget").wait_for(state="hidden")
    page.keyboard.press("Home")


def code_action(page: Page, title: str, attempts: int = 5) -> None:
    """Ctrl+. and pick the action ``title`` from the menu. The active editor's squiggles
    show that its diagnostics are in; the menu is asked for again (a bounded number of
    times) when it opened before the server's answer had the action."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    editor = page.locator(".editor-group-container.active .monaco-editor").first
    editor.locator("[class*='squiggly-']").first.wait_for()
    row = page.locator(".action-widget .monaco-list-row", has_text=title).first
    for attempt in range(attempts):
        page.keyboard.press("Control+.")
        try:
            row.wait_for(timeout=STEP_TIMEOUT_MS / attempts)
        except PlaywrightTimeout:
            if attempt == attempts - 1:
                raise
            page.keyboard.press("Escape")
            continue
        row.click()
        return


def wait_for_file(path: Path, ok: Callable[[str | None], bool], timeout: float = 30) -> str | None:
    """Poll ``path`` until ``ok(its text or None)``; the text it ended with."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            text: str | None = path.read_text(encoding="utf-8")
        except OSError:
            text = None
        if ok(text) or time.monotonic() > deadline:
            return text
        time.sleep(0.05)  # polling the disk for what the editor writes


def screenshot(page: Page, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path
