-- memls: attach the language server to memory files only, and add user commands.
--   :MemlsSaveCheckpoint [name]   save a checkpoint (name: the branch when omitted), asking
--                                 for the next action (vim.ui.input, prefilled); also
--                                 :MemlsCheckpointSave, and the "Save checkpoint…" code action
--   :MemlsResume [name]           resume a checkpoint (opens it)
--   :MemlsRecall {query}          search memory and transcripts into the quickfix list
--   :MemlsMove {path}             move/rename the current memory file; links to it follow
-- Set `vim.g.memls_no_enable = true` before this runs to call vim.lsp.enable('memls') yourself.
if vim.g.loaded_memls then
  return
end
vim.g.loaded_memls = true

local function exists(path)
  return vim.uv.fs_stat(path) ~= nil
end

local function is_root(dir)
  return exists(dir .. '/MEMORY.md') or exists(dir .. '/LOG.md')
end

--- The memory root a file belongs to, or nil when it is not a memory file.
local function memory_root(path)
  if path == '' then
    return nil
  end
  local name = vim.fs.basename(path)
  local dir = vim.fs.dirname(path)
  local parent = vim.fs.dirname(dir)
  if name:sub(-3) ~= '.md' then
    return nil
  end
  if vim.fs.basename(dir) == 'memory' and exists(parent .. '/LOG.md') then
    return parent -- orchestrator layout: memory/*.md belong to the root above
  end
  if name == '.handoff.md' and vim.fs.basename(dir) == 'transcripts' then
    return parent
  end
  local named = name == 'MEMORY.md' or name == 'LOG.md' or name == '.handoff.md'
    or name:match('^checkpoint%-.+%.md$') ~= nil
  if named or is_root(dir) then
    return dir
  end
  return nil
end

vim.lsp.config('memls', {
  root_dir = function(bufnr, on_dir)
    local root = memory_root(vim.api.nvim_buf_get_name(bufnr))
    if root then
      on_dir(root)
    end
  end,
})

if not vim.g.memls_no_enable then
  vim.lsp.enable('memls')
end

local function client()
  local clients = vim.lsp.get_clients({ name = 'memls', bufnr = 0 })
  if #clients == 0 then
    clients = vim.lsp.get_clients({ name = 'memls' })
  end
  if #clients == 0 then
    vim.notify('memls: no language server running (open a memory file first)', vim.log.levels.WARN)
    return nil
  end
  return clients[1]
end

local function execute(command, args, on_result)
  local c = client()
  if not c then
    return
  end
  args.uri = args.uri or vim.uri_from_bufnr(0)
  c:request('workspace/executeCommand', { command = command, arguments = { args } }, function(err, result)
    if err then
      vim.notify('memls: ' .. (err.message or tostring(err)), vim.log.levels.ERROR)
      return
    end
    if on_result then
      on_result(result)
    end
  end, 0)
end

local function text_or_nil(value)
  return type(value) == 'string' and value ~= '' and value or nil
end

-- The files edited in this session, most recent first: the save flow names them.
local edited = {}
vim.api.nvim_create_autocmd({ 'TextChanged', 'TextChangedI', 'BufWritePost' }, {
  group = vim.api.nvim_create_augroup('memls-edited', { clear = true }),
  callback = function(args)
    local name = vim.api.nvim_buf_get_name(args.buf)
    if name ~= '' and vim.bo[args.buf].buftype == '' then
      edited[name] = vim.uv.hrtime()
    end
  end,
})

local function recent_files()
  local paths = vim.tbl_keys(edited)
  table.sort(paths, function(a, b)
    return edited[a] > edited[b]
  end)
  return vim.list_slice(paths, 1, 10)
end

--- MEMORY.md's change, as the server's unified diff, in a scratch split below.
local function show_index_diff(result)
  local diff = text_or_nil((result or {}).index_diff)
  if not diff then
    return
  end
  vim.cmd('botright new')
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(diff, '\n', { trimempty = true }))
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = 'diff'
  pcall(vim.api.nvim_buf_set_name, buf, 'memls://MEMORY.md changes')
  vim.cmd('wincmd p')
end

--- Save checkpoint as an editor flow: what memls can infer (the branch, the files edited,
--- commits since the last save) prefills vim.ui.input for the next action and for what was
--- done; the server writes the checkpoint (never a placeholder) and opens it; MEMORY.md's
--- change is shown below it.
local function save_checkpoint(name, uri)
  uri = uri or vim.uri_from_bufnr(0)
  local files = recent_files()
  execute('memls.checkpoint.suggest', { uri = uri, name = name, files = files }, function(s)
    s = s or {}
    local function with_name(nm)
      vim.ui.input({
        prompt = 'memls: next action for "' .. nm .. '": ',
        default = text_or_nil(s.next) or '',
      }, function(next_action)
        if next_action == nil or vim.trim(next_action) == '' then
          vim.notify('memls: checkpoint not saved (no next action)', vim.log.levels.WARN)
          return
        end
        local done = {}
        for _, d in ipairs(type(s.done) == 'table' and s.done or {}) do
          table.insert(done, (tostring(d):gsub(';', ',')))
        end
        vim.ui.input({
          prompt = 'memls: done this session (items separated by ;): ',
          default = table.concat(done, '; '),
        }, function(done_text)
          if done_text == nil then
            return
          end
          local items = {}
          for _, item in ipairs(vim.split(done_text, ';', { trimempty = true })) do
            if vim.trim(item) ~= '' then
              table.insert(items, vim.trim(item))
            end
          end
          local args = { uri = uri, name = nm, next = vim.trim(next_action), done = items, files = files }
          execute('memls.checkpoint.save', args, show_index_diff) -- the server reports and opens it
        end)
      end)
    end
    local known = name or text_or_nil(s.name)
    if known then
      with_name(known)
    else
      vim.ui.input({ prompt = 'memls: checkpoint name: ' }, function(typed)
        if typed and vim.trim(typed) ~= '' then
          with_name(vim.trim(typed))
        end
      end)
    end
  end)
end

local function save_command(opts)
  save_checkpoint(opts.args ~= '' and opts.args or nil)
end
vim.api.nvim_create_user_command('MemlsSaveCheckpoint', save_command, {
  nargs = '?',
  desc = 'memls: save a checkpoint, asking for the next action',
})
vim.api.nvim_create_user_command('MemlsCheckpointSave', save_command, {
  nargs = '?',
  desc = 'memls: save a checkpoint (same as :MemlsSaveCheckpoint)',
})

-- The "Save checkpoint…" code action runs the same flow; a call that already carries the
-- next action goes straight to the server.
vim.lsp.commands['memls.checkpoint.save'] = function(command, ctx)
  local args = (command.arguments or {})[1] or {}
  if text_or_nil(args.next) then
    local c = vim.lsp.get_client_by_id(ctx.client_id)
    if c then
      c:request('workspace/executeCommand', { command = command.command, arguments = { args } }, nil, ctx.bufnr)
    end
    return
  end
  save_checkpoint(text_or_nil(args.name), text_or_nil(args.uri))
end

vim.api.nvim_create_user_command('MemlsResume', function(opts)
  local args = {}
  if opts.args ~= '' then
    args.name = opts.args
  end
  execute('memls.checkpoint.resume', args)
end, { nargs = '?', desc = 'memls: resume a checkpoint' })

vim.api.nvim_create_user_command('MemlsRecall', function(opts)
  execute('memls.recall.search', { query = opts.args }, function(result)
    local items = {}
    for _, r in ipairs((result or {}).results or {}) do
      -- JSON null arrives as vim.NIL (truthy userdata): only strings are labels
      local label = (text_or_nil(r.heading) or text_or_nil(r.snippet) or ''):gsub('%s+', ' ')
      table.insert(items, {
        filename = r.path,
        lnum = r.start_line + 1,
        end_lnum = r.end_line + 1,
        text = string.format('[%s %.3f] %s', r.kind, r.score, label),
      })
    end
    vim.fn.setqflist({}, ' ', { title = 'memls recall: ' .. opts.args, items = items })
    if #items > 0 then
      vim.cmd('copen')
    else
      vim.notify('memls: no recall results for ' .. opts.args, vim.log.levels.INFO)
    end
  end)
end, { nargs = '+', desc = 'memls: recall search into the quickfix list' })

-- Code lens "N references" over topic file titles and checkpoint headings: clicking
-- (`vim.lsp.codelens.run()`) lists the places in the quickfix list.
vim.lsp.commands['memls.showReferences'] = function(command, ctx)
  local locations = (command.arguments or {})[3] or {}
  local c = vim.lsp.get_client_by_id(ctx.client_id)
  local items = vim.lsp.util.locations_to_items(locations, c and c.offset_encoding or 'utf-16')
  vim.fn.setqflist({}, ' ', { title = 'memls references', items = items })
  if #items > 0 then
    vim.cmd('copen')
  else
    vim.notify('memls: no references', vim.log.levels.INFO)
  end
end

vim.api.nvim_create_autocmd('LspAttach', {
  group = vim.api.nvim_create_augroup('memls-codelens', { clear = true }),
  callback = function(args)
    local c = vim.lsp.get_client_by_id(args.data.client_id)
    if not c or c.name ~= 'memls' or vim.g.memls_no_codelens then
      return
    end
    local function refresh()
      pcall(vim.lsp.codelens.refresh, { bufnr = args.buf })
    end
    refresh()
    vim.api.nvim_create_autocmd({ 'BufEnter', 'InsertLeave', 'BufWritePost' }, {
      group = vim.api.nvim_create_augroup('memls-codelens-' .. args.buf, { clear = true }),
      buffer = args.buf,
      callback = refresh,
    })
  end,
})

-- Neovim has no file explorer of its own that sends workspace/willRenameFiles: this asks the
-- server for the link edits, applies them, moves the file (and its buffer), then tells the
-- server it moved.
vim.api.nvim_create_user_command('MemlsMove', function(opts)
  local c = client()
  if not c then
    return
  end
  local old = vim.api.nvim_buf_get_name(0)
  local new = vim.fs.normalize(vim.fn.fnamemodify(vim.fn.expand(opts.args), ':p'))
  if vim.fn.isdirectory(new) == 1 then
    new = new .. '/' .. vim.fs.basename(old)
  end
  if vim.uv.fs_stat(new) then
    vim.notify('memls: ' .. new .. ' already exists', vim.log.levels.ERROR)
    return
  end
  local params = { files = { { oldUri = vim.uri_from_fname(old), newUri = vim.uri_from_fname(new) } } }
  local response = c:request_sync('workspace/willRenameFiles', params, 10000, 0)
  if response == nil or response.err then
    local why = response and response.err and response.err.message or 'no answer'
    vim.notify('memls: ' .. why, vim.log.levels.ERROR)
    return
  end
  if response.result then
    vim.lsp.util.apply_workspace_edit(response.result, c.offset_encoding)
  end
  vim.lsp.util.rename(old, new)
  c:notify('workspace/didRenameFiles', params)
end, { nargs = 1, complete = 'file', desc = 'memls: move the current memory file, keeping links' })
