// Where the wfx-lsp binary comes from. No `vscode` import: the caller passes the setting and the
// extension folder, so the order of the lookup is unit-tested.
import * as fs from 'fs';
import * as path from 'path';

export type ServerSource = 'setting' | 'bundled' | 'path';

export interface ResolvedServer {
  command: string;
  source: ServerSource;
}

export interface ResolveInput {
  /** the `wfx.server.path` setting, maybe empty */
  settingPath?: string | null;
  /** the extension's install folder (`context.extensionPath`) */
  extensionPath: string;
  /** folder a relative `wfx.server.path` is resolved against (the first workspace folder) */
  workspaceFolder?: string;
  /** `process.env.PATH` */
  envPath?: string;
  platform?: NodeJS.Platform;
}

export interface ResolveFailure {
  error: string;
  tried: string[];
}

const exe = (platform: NodeJS.Platform) => (platform === 'win32' ? 'wfx-lsp.exe' : 'wfx-lsp');

function isExecutable(p: string, platform: NodeJS.Platform): boolean {
  try {
    const st = fs.statSync(p);
    if (!st.isFile()) return false;
    if (platform === 'win32') return true;
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The server binary, in this order: the `wfx.server.path` setting (`~` and relative paths expanded),
 * then `<extension>/server/wfx-lsp` (a platform-specific VSIX ships it there), then `wfx-lsp` on PATH.
 * A setting that names a missing file is an error rather than a silent fallback.
 */
export function resolveServer(input: ResolveInput): ResolvedServer | ResolveFailure {
  const platform = input.platform ?? process.platform;
  const tried: string[] = [];
  const setting = (input.settingPath ?? '').trim();
  if (setting) {
    let p = setting.replace(/^~(?=$|[\\/])/, process.env.HOME ?? '~');
    if (!path.isAbsolute(p) && input.workspaceFolder) p = path.join(input.workspaceFolder, p);
    tried.push(p);
    if (isExecutable(p, platform)) return { command: p, source: 'setting' };
    return { error: `wfx.server.path is set to "${setting}", but ${p} is not an executable file`, tried };
  }
  const bundled = path.join(input.extensionPath, 'server', exe(platform));
  tried.push(bundled);
  if (isExecutable(bundled, platform)) return { command: bundled, source: 'bundled' };
  for (const dir of (input.envPath ?? process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const p = path.join(dir, exe(platform));
    if (isExecutable(p, platform)) return { command: p, source: 'path' };
  }
  tried.push(`${exe(platform)} on PATH`);
  return {
    error: 'wfx-lsp was not found: set wfx.server.path, install a platform VSIX that bundles it, or put wfx-lsp on PATH (cargo install --path . in the wfx-lsp repository)',
    tried,
  };
}

export function isFailure(r: ResolvedServer | ResolveFailure): r is ResolveFailure {
  return (r as ResolveFailure).error !== undefined;
}

/** Restart delays after crashes: 1 s, 2 s, 4 s, ... capped at 30 s. */
export function backoffMs(crashesInWindow: number): number {
  return Math.min(30000, 1000 * 2 ** Math.max(0, crashesInWindow - 1));
}
