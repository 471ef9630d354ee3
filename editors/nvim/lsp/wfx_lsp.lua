-- wfx-lsp for Neovim 0.11+ (vim.lsp.config format). Put editors/nvim on 'runtimepath' and call
-- vim.lsp.enable('wfx_lsp'); override any field with vim.lsp.config('wfx_lsp', { ... }).
--
-- The server only attaches to archmax workflow files, never to other YAML:
--   <root>/workflows/<slug>/workflow.yaml
--   <root>/workflows/<slug>/tests/**/*.test.yaml | *.test.yml | *.agent.yaml | *.cassette.json
-- The root directory is <root>, the folder that holds workflows/.

--- Returns the folder holding `workflows/` when `path` is a workflow, case, agent-script or cassette file, else nil.
---@param path string
---@return string?
local function wfx_root(path)
  path = vim.fs.normalize(path)
  local patterns = {
    '^(.*)/workflows/[^/]+/workflow%.yaml$',
    '^(.*)/workflows/[^/]+/tests/.+%.test%.ya?ml$',
    '^(.*)/workflows/[^/]+/tests/.+%.agent%.yaml$',
    '^(.*)/workflows/[^/]+/tests/.+%.cassette%.json$',
  }
  for _, pat in ipairs(patterns) do
    -- greedy (.*) takes the innermost workflows/ folder, like the VS Code selector's **/workflows/*/
    local root = path:match(pat)
    if root then
      return root == '' and '/' or root
    end
  end
  return nil
end

---@type vim.lsp.Config
return {
  cmd = { 'wfx-lsp' },
  -- json: cassettes (recorded live runs, docs/cassettes.md); root_dir keeps it off other JSON
  filetypes = { 'yaml', 'json' },
  -- used only if a user config replaces root_dir with nil; root_dir below is what decides
  root_markers = { 'workflows', '.git' },
  root_dir = function(bufnr, on_dir)
    local name = vim.api.nvim_buf_get_name(bufnr)
    if name == '' or vim.bo[bufnr].buftype ~= '' then
      return
    end
    local root = wfx_root(name)
    if root then
      on_dir(root)
    end
  end,
  -- answered to workspace/configuration (section "wfx") and sent as initializationOptions
  settings = {
    wfx = {
      runner = { command = vim.NIL, skipGrades = true },
      inlayHints = { lengthBudget = true },
      diagnostics = { openFilesOnly = false },
      trace = { server = 'off' },
    },
  },
  init_options = {
    runner = { command = vim.NIL, skipGrades = true },
    inlayHints = { lengthBudget = true },
    diagnostics = { openFilesOnly = false },
    trace = { server = 'off' },
  },
}
