import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { test } from 'node:test';
import { backoffMs, isFailure, resolveServer } from '../../src/server';

function exe(p: string) {
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, '#!/bin/sh\n');
  fs.chmodSync(p, 0o755);
}

test('server lookup order: setting, bundled, PATH', () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'wfx-srv-'));
  try {
    const ext = path.join(d, 'ext');
    const bin = path.join(d, 'bin');
    exe(path.join(bin, 'wfx-lsp'));
    let r = resolveServer({ extensionPath: ext, envPath: bin, platform: 'linux' });
    assert.ok(!isFailure(r) && r.source === 'path' && r.command === path.join(bin, 'wfx-lsp'));
    exe(path.join(ext, 'server', 'wfx-lsp'));
    r = resolveServer({ extensionPath: ext, envPath: bin, platform: 'linux' });
    assert.ok(!isFailure(r) && r.source === 'bundled');
    exe(path.join(d, 'ws', 'tools', 'wfx-lsp'));
    r = resolveServer({ settingPath: 'tools/wfx-lsp', workspaceFolder: path.join(d, 'ws'), extensionPath: ext, envPath: bin, platform: 'linux' });
    assert.ok(!isFailure(r) && r.source === 'setting' && r.command === path.join(d, 'ws', 'tools', 'wfx-lsp'));
    r = resolveServer({ settingPath: '/nope/wfx-lsp', extensionPath: ext, envPath: bin, platform: 'linux' });
    assert.ok(isFailure(r) && r.error.includes('/nope/wfx-lsp'));
    r = resolveServer({ extensionPath: path.join(d, 'none'), envPath: path.join(d, 'none'), platform: 'linux' });
    assert.ok(isFailure(r) && r.error.includes('wfx.server.path'));
  } finally {
    fs.rmSync(d, { recursive: true, force: true });
  }
});

test('backoff doubles and is capped', () => {
  assert.deepEqual([1, 2, 3, 4, 6, 9].map(backoffMs), [1000, 2000, 4000, 8000, 30000, 30000]);
});
