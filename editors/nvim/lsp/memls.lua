-- memls language server for Neovim 0.11+ (`vim.lsp.config` / `vim.lsp.enable`).
-- Put editors/nvim on 'runtimepath' (or copy this file to ~/.config/nvim/lsp/memls.lua).
-- Override the command with `vim.g.memls_cmd = { '/path/to/python', '-m', 'memls.lsp' }`.
return {
  cmd = vim.g.memls_cmd or { 'memls', 'serve' },
  filetypes = { 'markdown' },
  root_markers = { 'MEMORY.md', 'LOG.md', '.git' },
  settings = {
    memls = {
      roots = {},
      staleDays = 14,
      select = {},
      ignore = {},
      recall = { model = '' },
    },
  },
}
