// Schema-only mode (`wfx.server.enabled: false`): hand the bundled JSON Schemas to the YAML extension
// (redhat.vscode-yaml) so workflow and case files still get basic validation and completion.
//
// `contributes.yamlValidation` would be static and would run next to the server (double diagnostics), so the
// extension uses the YAML extension's `registerContributor` API instead, and the contributor answers only
// while the server is disabled. `wfx.configureYamlSchemas` writes the equivalent `yaml.schemas` entries into
// the workspace settings for people who prefer that (or use another YAML client).
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';

const SCHEME = 'wfx-schema';

/** glob (yaml.schemas style) -> schema file name under schemas/ */
export const SCHEMA_GLOBS: [string, string][] = [
  ['**/workflows/*/workflow.yaml', 'workflow.schema.json'],
  ['**/workflows/*/tests/**/*.test.yaml', 'case.schema.json'],
  ['**/workflows/*/tests/**/*.test.yml', 'case.schema.json'],
];

function schemaFor(resource: string): string | undefined {
  const p = resource.replace(/\\/g, '/');
  if (/\/workflows\/[^/]+\/workflow\.yaml$/.test(p)) return 'workflow.schema.json';
  if (/\/workflows\/[^/]+\/tests\/.+\.test\.ya?ml$/.test(p)) return 'case.schema.json';
  return undefined;
}

interface YamlApi {
  registerContributor(
    schema: string,
    requestSchema: (resource: string) => string | undefined,
    requestSchemaContent: (uri: string) => string | undefined,
    label?: string,
  ): boolean;
}

let registered = false;

/** Registers the contributor once; `active()` decides per request whether it answers. */
export async function registerYamlContributor(extensionPath: string, active: () => boolean, log: vscode.LogOutputChannel): Promise<void> {
  if (registered) return;
  const yaml = vscode.extensions.getExtension('redhat.vscode-yaml');
  if (!yaml) {
    log.info('schema-only mode: redhat.vscode-yaml is not installed; run "wfx: Write yaml.schemas" for another YAML client');
    return;
  }
  const api = (await yaml.activate()) as YamlApi | undefined;
  if (!api || typeof api.registerContributor !== 'function') return;
  const dir = path.join(extensionPath, 'schemas');
  registered = api.registerContributor(
    'wfx',
    (resource) => {
      if (!active()) return undefined;
      const name = schemaFor(resource);
      return name && fs.existsSync(path.join(dir, name)) ? `${SCHEME}://schemas/${name}` : undefined;
    },
    (uri) => {
      const name = uri.replace(`${SCHEME}://schemas/`, '');
      try {
        return fs.readFileSync(path.join(dir, path.basename(name)), 'utf8');
      } catch {
        return undefined;
      }
    },
    'wfx',
  );
  log.info(`schema-only mode: registered ${dir} with redhat.vscode-yaml (${registered})`);
}

/** `wfx.configureYamlSchemas`: write `yaml.schemas` into the workspace settings. */
export async function writeYamlSchemasSetting(extensionPath: string): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0];
  // prefer the repository's own schemas/ folder when the workspace is the wfx-lsp repository or vendors it
  const local = folder && fs.existsSync(path.join(folder.uri.fsPath, 'schemas', 'case.schema.json'));
  const base = local ? './schemas' : path.join(extensionPath, 'schemas');
  const cfg = vscode.workspace.getConfiguration('yaml');
  const current = { ...(cfg.get<Record<string, string | string[]>>('schemas') ?? {}) };
  for (const [glob, file] of SCHEMA_GLOBS) {
    const key = `${base}/${file}`;
    const globs = new Set(([] as string[]).concat(current[key] ?? []));
    globs.add(glob);
    current[key] = [...globs];
  }
  await cfg.update('schemas', current, vscode.ConfigurationTarget.Workspace);
  vscode.window.showInformationMessage(`wfx: yaml.schemas now maps workflow and case files to ${base}`);
}
