#!/usr/bin/env node
// Run an extension's integration tests (extensionTestsPath, same contract as @vscode/test-electron) inside the
// real Node extension host of the VS Code server started by start-vscode-server.sh (--enable-smoke-test-driver).
// The workbench page is opened with ?payload=[["extensionDevelopmentPath",..],["extensionTestsPath",..]] and
// reports the end of the run through window.codeAutomationExit(code); the host's console comes through
// window.codeAutomationLog(type, args).
// Started by editors/e2e/run.sh vscode.
// Env: VSSERVER_PORT (18081) or VSSERVER_URL, WORKSPACE_DIR (required), EXT_DEV (default editors/vscode),
//      EXT_TESTS (default ./suite.js), EXT_TESTS_TIMEOUT_MS (120000), EXT_TESTS_VERBOSE=1 (show all host logs)
// Exit code 0 only when the suite's run() resolved.
const path = require('path');
const { pathToFileURL } = require('url');
const { launch } = require('./browser');

const BASE = process.env.VSSERVER_URL || `http://127.0.0.1:${process.env.VSSERVER_PORT || '18081'}`;
const AUTHORITY = new URL(BASE).host; // remote authority = host:port of the page
const EXT = path.resolve(process.env.EXT_DEV || path.join(__dirname, '..', '..', 'vscode'));
const TESTS = path.resolve(process.env.EXT_TESTS || path.join(__dirname, 'suite.js'));
const WS = process.env.WORKSPACE_DIR;
const TIMEOUT = Number(process.env.EXT_TESTS_TIMEOUT_MS || 120000);
// Workbench startup chatter (info lines tagged "[Component] ...", socket/token setup) and the offline
// open-vsx.org / service-worker errors, which are expected and harmless. EXT_TESTS_VERBOSE=1 shows everything.
const NOISE = /^\[ext-host info\] (\[[\w:.-]+\] |Creating a socket|Resolving connection token|Resolved connection token|Updating additional builtin)|Service ?Worker|open-vsx\.org/;

if (!WS) {
  console.error('WORKSPACE_DIR is not set');
  process.exit(2);
}
const remote = (p) => `vscode-remote://${AUTHORITY}${pathToFileURL(p).pathname}`;

(async () => {
  const t0 = Date.now();
  const { page, close } = await launch();
  let done;
  const exited = new Promise((r) => (done = r));
  await page.exposeFunction('codeAutomationLog', (type, args) => {
    const line = `[ext-host ${type}] ${(args || []).join(' ')}`;
    if (process.env.EXT_TESTS_VERBOSE === '1' || !NOISE.test(line)) console.log(line.slice(0, 2000));
  });
  await page.exposeFunction('codeAutomationExit', (code) => done(code));
  const payload = [['extensionDevelopmentPath', remote(EXT)], ['extensionTestsPath', remote(TESTS)]];
  const url = `${BASE}/?folder=${encodeURIComponent(WS)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
  await page.goto(url, { timeout: 60000 });
  const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r('timeout'), TIMEOUT))]);
  console.log(`EXTENSION TESTS EXIT CODE: ${code} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  await close();
  process.exit(code === 0 ? 0 : 1);
})().catch((e) => {
  console.error(e);
  process.exit(2);
});
