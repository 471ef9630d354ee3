// Which files the client hands to wfx-lsp: workflow, case and agent-script files and cassettes only, so the
// extension coexists with the YAML and JSON extensions. No `vscode` import (unit-tested).

/** The language client's document selector. */
export const DOCUMENT_SELECTOR: { scheme: string; language: string; pattern: string }[] = [
  { scheme: 'file', language: 'yaml', pattern: '**/workflows/*/workflow.yaml' },
  { scheme: 'file', language: 'yaml', pattern: '**/workflows/*/tests/**/*.test.yaml' },
  { scheme: 'file', language: 'yaml', pattern: '**/*.test.yml' },
  { scheme: 'file', language: 'yaml', pattern: '**/workflows/*/tests/**/*.agent.yaml' },
  // A recorded live run (docs/cassettes.md): hover, lenses and WFX45x diagnostics.
  { scheme: 'file', language: 'json', pattern: '**/workflows/*/tests/**/*.cassette.json' },
];

/** Files whose changes the server hears about (workspace/didChangeWatchedFiles). */
export const WATCH_GLOB = '**/workflows/*/{workflow.yaml,tests/**/*.test.yaml,tests/**/*.test.yml,tests/**/*.agent.yaml,tests/**/*.cassette.json}';
