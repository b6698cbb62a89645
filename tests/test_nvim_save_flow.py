"""`:MemlsSaveCheckpoint` in headless Neovim with the shipped editors/nvim files: it asks
with vim.ui.input, prefilled with what memls infers (the branch, the files edited in this
Neovim, the branch's commits), writes a checkpoint without placeholder text, opens it and
shows MEMORY.md's change in a diff buffer; the "Save checkpoint…" code action runs the
same flow."""

from __future__ import annotations

from pathlib import Path

from tests.lsp_helpers import git, make_project
from tests.test_nvim import lua, run_script

BRANCH = "feat/nvim-flow"
NAME = "feat-nvim-flow"

SCRIPT = r"""
local out = {{ prompts = {{}}, defaults = {{}} }}
local answers = {{ 'Post the form from `src/form.py`', '' }}
local asked = 0
vim.ui.input = function(opts, on_confirm)
  asked = asked + 1
  table.insert(out.prompts, opts.prompt)
  table.insert(out.defaults, opts.default or '')
  local answer = answers[asked]
  if answer == nil or answer == '' then answer = opts.default end
  vim.schedule(function() on_confirm(answer) end)
end
local function attached(buf)
  return #vim.lsp.get_clients({{ bufnr = buf, name = 'memls' }}) > 0
end
local function diff_buffer()
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].filetype == 'diff' then return b end
  end
end
local ok, err = pcall(function()
  -- an edit in this session: the flow names the file
  vim.cmd.edit({form})
  vim.api.nvim_buf_set_lines(0, 0, -1, false, {{ 'print("form v2")' }})
  vim.cmd('write')
  vim.cmd.edit({index})
  local index = vim.api.nvim_get_current_buf()
  out.attached = vim.wait(20000, function() return attached(index) end, 20)
  vim.cmd('MemlsSaveCheckpoint')
  out.saved = vim.wait(20000, function() return vim.uv.fs_stat({checkpoint}) ~= nil end, 20)
  out.shown = vim.wait(10000, function() return vim.api.nvim_buf_get_name(0) == {checkpoint} end, 20)
  vim.wait(10000, function() return diff_buffer() ~= nil end, 20)
  local d = diff_buffer()
  out.diff = d and table.concat(vim.api.nvim_buf_get_lines(d, 0, -1, false), '\n') or vim.NIL

  -- the code action from the Ctrl+. equivalent, on MEMORY.md: the same questions
  vim.cmd.edit({index})
  local before = #out.prompts
  vim.lsp.buf.code_action({{
    apply = true,
    filter = function(a) return a.title:find('Save checkpoint', 1, true) == 1 end,
  }})
  out.asked_again = vim.wait(10000, function() return #out.prompts >= before + 2 end, 20)
  vim.wait(10000, function()
    local f = io.open({checkpoint})
    local text = f and f:read('*a') or ''
    if f then f:close() end
    return text:find('Saved', 1, true) ~= nil and #out.prompts >= before + 2
  end, 20)
end)
out.error = ok and vim.NIL or tostring(err)
out.messages = vim.fn.execute('messages')
local f = assert(io.open({result}, 'w'))
f:write(vim.json.encode(out))
f:close()
vim.cmd('qa!')
"""


def test_memls_save_checkpoint_asks_and_writes_no_placeholder(tmp_path: Path) -> None:
    project, root = make_project(tmp_path)
    git(project, "checkout", "-q", "-b", BRANCH)
    (project / "src").mkdir()
    form = project / "src" / "form.py"
    form.write_text('print("form")\n', encoding="utf-8")
    git(project, "add", "src/form.py")
    git(project, "commit", "-q", "-m", "Add the form module")
    checkpoint = root / f"checkpoint-{NAME}.md"
    index = root / "MEMORY.md"
    before = index.read_text(encoding="utf-8")
    seen = run_script(
        tmp_path,
        SCRIPT.format(
            form=lua(str(form)),
            index=lua(str(index)),
            checkpoint=lua(str(checkpoint.resolve())),
            result=lua(str(tmp_path / "result.json")),
        ),
        project,
    )
    assert seen["error"] is None, seen
    assert seen["attached"], seen
    assert seen["saved"], seen
    assert seen["shown"], seen
    # the questions, prefilled with the branch, the edited file and the branch's commit
    assert seen["prompts"][:2] == [
        f'memls: next action for "{NAME}": ',
        "memls: done this session (items separated by ;): ",
    ]
    assert seen["defaults"][0] == f"Continue on `{BRANCH}`: `src/form.py`"
    assert seen["defaults"][1] == "Add the form module"
    text = checkpoint.read_text(encoding="utf-8")
    assert "## Next Action: Post the form from `src/form.py`\nFiles: `src/form.py`\n" in text
    assert "## Done This Session\n- Add the form module\n" in text
    assert "(author:" not in text
    assert "None recorded" not in text
    # MEMORY.md's change, shown as a diff
    assert f"+- **{NAME}** (" in seen["diff"]
    assert index.read_text(encoding="utf-8") != before
    # the code action asked the same two questions (the next action prefilled from the file)
    assert seen["asked_again"], seen
    assert seen["defaults"][2] == "Post the form from `src/form.py`"
