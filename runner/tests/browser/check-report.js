// Loads an offline HTML report in headless Debian chromium with every non-file request
// aborted; fails on any console error, page error or failed request; saves a full-page
// screenshot. Usage: node check-report.js <report.html> <screenshot.png>
// playwright-core comes from $PLAYWRIGHT_DIR/node_modules (check-report.sh installs it there).
const fs = require('fs');
const os = require('os');
const path = require('path');

function loadPlaywright() {
  const dir = process.env.PLAYWRIGHT_DIR;
  const tries = dir ? [path.join(dir, 'node_modules', 'playwright-core')] : [];
  tries.push('playwright-core');
  for (const t of tries) {
    try { return require(t); } catch (e) { if (e.code !== 'MODULE_NOT_FOUND') throw e; }
  }
  throw new Error('playwright-core not found: run check-report.sh (it installs it) or set PLAYWRIGHT_DIR');
}

async function main() {
  const [report, shot] = process.argv.slice(2);
  if (!report || !shot) throw new Error('usage: node check-report.js <report.html> <screenshot.png>');
  const file = path.resolve(report);
  if (!fs.existsSync(file)) throw new Error(`no such report: ${file}`);
  const { chromium } = loadPlaywright();
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'wfx-report-check-'));
  const home = path.join(scratch, 'home');
  fs.mkdirSync(home, { recursive: true });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    env: { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), XDG_CACHE_HOME: path.join(home, '.cache') },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--no-first-run'],
  });
  const problems = [];
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.route('**', (route) => {
      const url = route.request().url();
      if (url.startsWith('file://') || url.startsWith('data:')) return route.continue();
      problems.push(`blocked network request: ${url}`);
      return route.abort();
    });
    page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`); });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('requestfailed', (r) => problems.push(`failed request: ${r.url()} (${r.failure() && r.failure().errorText})`));
    const resp = await page.goto('file://' + file, { waitUntil: 'load' });
    if (!resp || !resp.ok()) problems.push(`load failed: ${resp && resp.status()}`);
    const facts = await page.evaluate(() => ({
      cases: document.querySelectorAll('details.case').length,
      svgs: document.querySelectorAll('details.case svg').length,
      rendered: [...document.querySelectorAll('details.case svg')].filter((s) => s.getBoundingClientRect().width > 100).length,
      title: document.title,
    }));
    if (facts.cases === 0) problems.push('no case sections');
    if (facts.svgs !== facts.cases) problems.push(`${facts.svgs} graphs for ${facts.cases} cases`);
    if (facts.rendered !== facts.svgs) problems.push(`${facts.svgs - facts.rendered} graphs not rendered`);
    fs.mkdirSync(path.dirname(path.resolve(shot)), { recursive: true });
    await page.screenshot({ path: shot, fullPage: true });
    console.log(`${facts.title}: ${facts.cases} cases, ${facts.svgs} graphs; screenshot ${shot}`);
  } finally {
    await browser.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  if (problems.length) {
    console.error(problems.join('\n'));
    process.exit(1);
  }
}

main().catch((e) => { console.error(e.stack || String(e)); process.exit(1); });
