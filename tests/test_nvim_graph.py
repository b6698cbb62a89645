"""The link graph in real headless Neovim with the shipped editors/nvim config:
``vim.lsp.buf.rename()`` on a checkpoint bullet renames the file on disk and rewrites
MEMORY.md and the ``continue`` line; ``vim.lsp.buf.references()`` lists the linking files;
the code lens command fills the quickfix list; ``:MemlsMove`` moves a file with its links."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.lsp_helpers import NAME, make_project
from tests.test_nvim import lua, run_script

SCRIPT = r"""
local out = {{}}
local function attached(buf)
  return #vim.lsp.get_clients({{ bufnr = buf, name = 'memls' }}) > 0
end
local function has_line(buf, needle)
  for _, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    if l:find(needle, 1, true) then return true end
  end
  return false
end
local function line_of(buf, needle)
  for i, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    local at = l:find(needle, 1, true)
    if at then return i, at end
  end
end

local ok, err = pcall(function()
  vim.cmd.edit({index})
  local index = vim.api.nvim_get_current_buf()
  out.attached = vim.wait(20000, function() return attached(index) end, 20)

  -- references from the link to testing.md: the files that link to it
  local row, col = line_of(index, '(testing.md)')
  vim.api.nvim_win_set_cursor(0, {{ row, col + 2 }})
  local refs = nil
  vim.lsp.buf.references({{ includeDeclaration = false }}, {{
    on_list = function(t) refs = t.items end,
  }})
  out.references = vim.wait(10000, function() return refs ~= nil end, 20)
  local files = {{}}
  for _, item in ipairs(refs or {{}}) do table.insert(files, vim.fs.basename(item.filename)) end
  table.sort(files)
  out.reference_files = files

  -- the code lens over testing.md's title, run: its references land in the quickfix list
  vim.cmd.edit({testing})
  local testing = vim.api.nvim_get_current_buf()
  vim.wait(10000, function() return attached(testing) end, 20)
  vim.lsp.codelens.refresh({{ bufnr = testing }})
  out.lens = vim.wait(10000, function() return #vim.lsp.codelens.get(testing) > 0 end, 20)
  local lens = vim.lsp.codelens.get(testing)[1]
  out.lens_title = lens and lens.command and lens.command.title or vim.NIL
  vim.api.nvim_win_set_cursor(0, {{ 1, 0 }})
  vim.lsp.codelens.run()
  out.quickfix = vim.wait(10000, function()
    return vim.fn.getqflist({{ title = 1 }}).title == 'memls references'
  end, 20)
  out.quickfix_count = #vim.fn.getqflist()
  vim.cmd('cclose')

  -- rename the checkpoint from its bullet
  vim.cmd.buffer(index)
  row, col = line_of(index, '**{name}**')
  vim.api.nvim_win_set_cursor(0, {{ row, col + 3 }})
  vim.lsp.buf.rename('auth-login')
  out.renamed_on_disk = vim.wait(15000, function() return vim.uv.fs_stat({new_checkpoint}) ~= nil end, 20)
  out.old_gone = vim.uv.fs_stat({old_checkpoint}) == nil
  out.index_buffer = vim.wait(10000, function() return has_line(index, '**auth-login**') end, 20)
  vim.cmd('silent! wall')

  -- :MemlsMove the topic file into memory/: the index's link follows
  vim.cmd.edit({testing})
  vim.cmd('MemlsMove ' .. {moved})
  out.moved = vim.wait(10000, function() return vim.uv.fs_stat({moved}) ~= nil end, 20)
  out.moved_buffer = vim.api.nvim_buf_get_name(0) == {moved}
  out.index_link = vim.wait(10000, function() return has_line(index, '(memory/testing.md)') end, 20)
  vim.cmd('silent! wall')
end)
out.error = ok and vim.NIL or tostring(err)
out.messages = vim.fn.execute('messages')
local f = assert(io.open({result}, 'w'))
f:write(vim.json.encode(out))
f:close()
vim.cmd('qa!')
"""


@pytest.mark.slow
def test_neovim_rename_and_references(tmp_path: Path) -> None:
    project, root = make_project(tmp_path)
    (root / "deploy.md").write_text(
        "# Deploying\n\nAfter [the tests](testing.md), continue feat-login.\n", encoding="utf-8"
    )
    index = root / "MEMORY.md"
    index.write_text(index.read_text() + "- [Deploying](deploy.md)\n", encoding="utf-8")
    old = root / f"checkpoint-{NAME}.md"
    new = root / "checkpoint-auth-login.md"
    script = SCRIPT.format(
        index=lua(str(index)),
        testing=lua(str(root / "testing.md")),
        name=NAME,
        new_checkpoint=lua(str(new)),
        old_checkpoint=lua(str(old)),
        moved=lua(str(root / "memory" / "testing.md")),
        result=lua(str(tmp_path / "result.json")),
    )
    seen = run_script(tmp_path, script, project)
    assert seen["error"] is None, seen
    assert seen["attached"] is True
    assert seen["references"] is True
    assert seen["reference_files"] == ["MEMORY.md", "deploy.md"]
    assert seen["lens"] is True
    assert seen["lens_title"] == "2 references"
    assert seen["quickfix"] is True
    assert seen["quickfix_count"] == 2
    assert seen["renamed_on_disk"] is True
    assert seen["old_gone"] is True
    assert seen["index_buffer"] is True
    assert not old.exists()
    assert new.read_text().startswith("# Checkpoint: auth-login\n")
    assert "- **auth-login** (feat/login," in index.read_text()
    assert "continue auth-login." in (root / "deploy.md").read_text()
    assert seen["moved"] is True
    assert seen["moved_buffer"] is True
    assert seen["index_link"] is True
    assert not (root / "testing.md").exists()
    assert "- [Testing notes](memory/testing.md)" in index.read_text()
    assert "[the tests](memory/testing.md)" in (root / "deploy.md").read_text()
    assert "Error" not in seen["messages"], seen["messages"]
