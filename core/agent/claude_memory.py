"""Where Claude Code keeps a project's auto memory, found the way Claude Code finds it.

Claude Code names a project's folder under ``<config>/projects/`` after a path with every
character that is not an ASCII letter or digit replaced by ``-`` (UTF-16 code units, as
JavaScript counts them; no runs collapsed), and a name longer than 200 characters is cut
to 200 and followed by ``-`` and a 32-bit string hash of the path in base 36
(:func:`project_slug`). Its auto memory is ``<config>/projects/<slug>/memory/`` where the
slug is the path of the project's git repository (the main one, for a worktree) or, outside
git, of the folder the session started in. ``<config>`` is ``$CLAUDE_CONFIG_DIR`` or
``~/.claude``. The ``autoMemoryDirectory`` setting replaces that folder (managed settings,
the project's ``.claude/settings.local.json``, then the user's ``settings.json``; a
checked-in ``.claude/settings.json`` is not trusted with it, as Claude Code documents).

:func:`claude_memory_folder` applies that to a hook's payload: the configuration folder is
taken from the payload's ``transcript_path`` first (``<config>/projects/<slug>/<id>.jsonl``
names it), then the environment. Pure path and JSON reading plus one ``git rev-parse``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata
from collections.abc import Mapping
from pathlib import Path

MAX_SLUG = 200
MANAGED_SETTINGS = (
    Path("/Library/Application Support/ClaudeCode/managed-settings.json")
    if sys.platform == "darwin"
    else Path("/etc/claude-code/managed-settings.json")
)


def _units(text: str) -> list[int]:
    """``text`` as UTF-16 code units (what a JavaScript string is made of)."""
    data = text.encode("utf-16-le", "surrogatepass")
    return [int.from_bytes(data[i : i + 2], "little") for i in range(0, len(data), 2)]


def _string_hash(units: list[int]) -> int:
    """JavaScript's ``h = (h << 5) - h + code | 0`` over the code units (signed 32-bit)."""
    h = 0
    for code in units:
        h = (h * 31 + code) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        number, rest = divmod(number, 36)
        out = digits[rest] + out
        if number == 0:
            return out


def project_slug(path: str) -> str:
    """Claude Code's folder name for ``path`` (``/tmp/my_proj.v2`` → ``-tmp-my-proj-v2``)."""
    units = _units(path)
    slug = "".join(
        chr(u) if (48 <= u <= 57 or 65 <= u <= 90 or 97 <= u <= 122) else "-" for u in units
    )
    if len(slug) <= MAX_SLUG:
        return slug
    return f"{slug[:MAX_SLUG]}-{_base36(abs(_string_hash(units)))}"


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    env = os.environ if env is None else env
    value = env.get("CLAUDE_CONFIG_DIR")
    if value:
        return Path(value).expanduser()
    home = env.get("HOME")
    return (Path(home) if home else Path.home()) / ".claude"


def config_dir_of_transcript(transcript: Path) -> Path | None:
    """The configuration folder a session file lies in (``<config>/projects/<slug>/x.jsonl``)."""
    if transcript.suffix != ".jsonl" or transcript.parent.parent.name != "projects":
        return None
    return transcript.parent.parent.parent


def project_path(start: Path) -> Path:
    """The path Claude Code names a project's memory after: the git repository's top level
    (the main repository's, for a linked worktree), else ``start`` itself (both resolved)."""
    start = Path(os.path.realpath(start))
    try:
        proc = subprocess.run(
            ["git", "rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir"],
            cwd=start,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return start
    lines = proc.stdout.splitlines()
    if proc.returncode != 0 or not lines:
        return start
    top = Path(lines[0])
    if len(lines) > 1:
        common = Path(lines[1])
        if common.name == ".git" and common.parent != top and common.parent.is_dir():
            return common.parent  # a linked worktree: memory is the main repository's
    return top


def _setting(path: Path) -> str | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = data.get("autoMemoryDirectory") if isinstance(data, dict) else None
    return value if isinstance(value, str) and value else None


def _expand(value: str, home: Path) -> Path | None:
    """The setting as Claude Code reads it: ``~/`` is the home folder; absolute paths only."""
    if value.startswith(("~/", "~\\")):
        rest = value[2:]
        norm = os.path.normpath(rest or ".")
        if norm in (".", "..") or norm.startswith(".." + os.sep):
            return None
        value = str(home / rest)
    norm = os.path.normpath(value).rstrip("/\\")
    if not os.path.isabs(norm) or len(norm) < 3 or norm.startswith("//") or "\x00" in norm:
        return None
    return Path(unicodedata.normalize("NFC", norm))


def auto_memory_setting(
    project: Path, config: Path, env: Mapping[str, str] | None = None
) -> Path | None:
    """The ``autoMemoryDirectory`` Claude Code would use for ``project``, if one is set."""
    env = os.environ if env is None else env
    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    for source in (
        MANAGED_SETTINGS,
        project / ".claude" / "settings.local.json",
        config / "settings.json",
    ):
        value = _setting(source)
        if value is not None:
            return _expand(value, home)
    return None


def memory_folder_candidates(
    cwd: Path, transcript: Path | None = None, env: Mapping[str, str] | None = None
) -> list[Path]:
    """Where Claude Code's auto memory for a session in ``cwd`` is, most likely first."""
    env = os.environ if env is None else env
    configs: list[Path] = []
    from_payload = config_dir_of_transcript(transcript) if transcript is not None else None
    for config in (from_payload, config_dir(env)):
        if config is not None and config not in configs:
            configs.append(config)
    project = project_path(cwd)
    out: list[Path] = []

    def add(path: Path | None) -> None:
        if path is not None and path not in out:
            out.append(path)

    for config in configs:
        chosen = auto_memory_setting(project, config, env)
        if chosen is not None:  # Claude Code uses that folder and no other
            return [chosen]
    memory_base = env.get("CLAUDE_CODE_REMOTE_MEMORY_DIR")
    for config in configs:
        base = Path(memory_base) if memory_base else config
        add(base / "projects" / unicodedata.normalize("NFC", project_slug(str(project))) / "memory")
    if transcript is not None and from_payload is not None:
        add(transcript.parent / "memory")
    real_cwd = Path(os.path.realpath(cwd))
    for config in configs:
        add(config / "projects" / project_slug(str(real_cwd)) / "memory")
    return out


def claude_memory_folder(
    cwd: Path, transcript: Path | None = None, env: Mapping[str, str] | None = None
) -> Path | None:
    """Claude Code's auto-memory folder for the session, when it exists."""
    for candidate in memory_folder_candidates(cwd, transcript, env):
        if candidate.is_dir():
            return candidate
    return None


__all__ = [
    "auto_memory_setting",
    "claude_memory_folder",
    "config_dir",
    "memory_folder_candidates",
    "project_path",
    "project_slug",
]
