-- Filetype for archmax workflow files. They are YAML by extension already; the mapping is explicit so a
-- user's broader pattern for *.yaml cannot turn them into something the wfx_lsp config does not match.
-- The server is not started from here: call vim.lsp.enable('wfx_lsp') in your config (see README.md).
if vim.g.loaded_wfx_lsp or vim.fn.has('nvim-0.11') == 0 then
  return
end
vim.g.loaded_wfx_lsp = true

vim.filetype.add({
  pattern = {
    ['.*/workflows/[^/]+/workflow%.yaml'] = 'yaml',
    ['.*/workflows/[^/]+/tests/.+%.test%.ya?ml'] = 'yaml',
    ['.*/workflows/[^/]+/tests/.+%.agent%.yaml'] = 'yaml',
    ['.*/workflows/[^/]+/tests/.+%.cassette%.json'] = 'json',
  },
})
