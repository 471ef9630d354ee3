// editors/settings.json is the one list of wfx settings; package.json's contributes.configuration must match
// it exactly (the Rust side checks the server's own settings against the same file).
import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { test } from 'node:test';

const root = path.resolve(__dirname, '..', '..'); // out/unit -> editors/vscode
const settings: { name: string; type: unknown; default: unknown; description: string; enum?: string[]; owner: string; scope: string }[] =
  JSON.parse(fs.readFileSync(path.join(root, '..', 'settings.json'), 'utf8'));
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const props: Record<string, Record<string, unknown>> = pkg.contributes.configuration.properties;

test('settings.json is well-formed', () => {
  assert.ok(settings.length >= 6);
  const names = settings.map((s) => s.name);
  assert.equal(new Set(names).size, names.length, 'duplicate names');
  for (const s of settings) {
    assert.match(s.name, /^wfx\.[a-zA-Z]+(\.[a-zA-Z]+)+$/, s.name);
    assert.ok(['client', 'server'].includes(s.owner), `${s.name}: owner`);
    assert.ok(s.description && !s.description.endsWith(' '), `${s.name}: description`);
    assert.ok('default' in s, `${s.name}: default`);
  }
  for (const n of ['wfx.runner.command', 'wfx.runner.skipGrades', 'wfx.inlayHints.lengthBudget', 'wfx.trace.server']) {
    assert.equal(settings.find((s) => s.name === n)?.owner, 'server', n);
  }
});

test('package.json contributes exactly the settings of settings.json', () => {
  assert.deepEqual(Object.keys(props).sort(), settings.map((s) => s.name).sort());
  for (const s of settings) {
    const p = props[s.name];
    assert.deepEqual(p.type, s.type, `${s.name}: type`);
    assert.deepEqual(p.default, s.default, `${s.name}: default`);
    assert.deepEqual(p.enum, s.enum, `${s.name}: enum`);
    assert.equal(p.scope, s.scope, `${s.name}: scope`);
    assert.equal(p.markdownDescription ?? p.description, s.description, `${s.name}: description`);
  }
});

test('untrusted workspaces: restricted settings exist', () => {
  const restricted: string[] = pkg.capabilities.untrustedWorkspaces.restrictedConfigurations;
  for (const r of restricted) assert.ok(props[r], r);
  assert.equal(pkg.capabilities.untrustedWorkspaces.supported, 'limited');
});

test('activation and commands', () => {
  assert.ok(pkg.activationEvents.includes('workspaceContains:**/workflows/*/workflow.yaml'));
  const cmds = pkg.contributes.commands.map((c: { command: string }) => c.command);
  for (const c of ['wfx.restartServer', 'wfx.showOutput', 'wfx.runCase', 'wfx.runAllCases']) assert.ok(cmds.includes(c), c);
  assert.equal(pkg.main, './dist/extension.js');
});
