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
    const expectFile = `${file}.expect.json`;
    if (fs.existsSync(expectFile)) {
      const expected = JSON.parse(fs.readFileSync(expectFile, 'utf8'));
      const shown = await selectStates(page, expected, problems);
      const evShot = shot.replace(/(\.png)?$/, '-evidence.png');
      await page.screenshot({ path: evShot });
      console.log(`evidence: ${shown} of ${expected.length} reasons shown where their state is selected; screenshot ${evShot}`);
    }
  } finally {
    await browser.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  if (problems.length) {
    console.error(problems.join('\n'));
    process.exit(1);
  }
}

// Issue 16: "select a state on the graph to see what happened there; transcript beside it". For each
// {id, reason, state} of <report>.expect.json (written by runner/tests/evidence.rs): collapse the case's block
// for `state` (as a reader may have), click the state's label in the case's graph (exactly one label links
// there), then the URL names the block, it is the :target, on screen and shows `reason` though collapsed, and
// the case's transcript shows it too (innerText: only what is rendered).
// Returns how many cases passed; each miss is added to `problems`.
async function selectStates(page, expected, problems) {
  let shown = 0;
  for (const { id, reason, state } of expected) {
    const found = await page.evaluate(({ id, state }) => {
      const c = [...document.querySelectorAll('details.case')]
        .find((d) => { const code = d.querySelector(':scope > summary code'); return code && code.textContent === id; });
      if (!c) return { error: `${id}: no case section` };
      const block = [...c.querySelectorAll('details.state-ev')]
        .find((b) => { const code = b.querySelector('summary code'); return code && code.textContent === state; });
      if (!block) return { error: `${id}: no evidence block for state ${state}` };
      block.open = false; // as a reader who collapsed it: the selection must bring it back
      const links = [...c.querySelectorAll('figure.graph svg a')].filter((a) => a.getAttribute('href') === `#${block.id}`);
      return { caseId: c.id, block: block.id, links: links.length };
    }, { id, state });
    if (found.error) { problems.push(found.error); continue; }
    if (found.links !== 1) { problems.push(`${id}: ${found.links} graph labels link to the block of ${state}`); continue; }
    await page.locator(`[id="${found.caseId}"] figure.graph svg a[href="#${found.block}"]`).click();
    await page.waitForFunction((b) => location.hash === `#${b}`, found.block, { timeout: 5000 }).catch(() => {});
    const seen = await page.evaluate(({ caseId, block, reason }) => {
      const b = document.getElementById(block);
      const r = b.getBoundingClientRect();
      const t = document.getElementById(caseId).querySelector('details.transcript');
      return {
        hash: location.hash, target: b.matches(':target'), open: b.open,
        onScreen: r.top > -2 && r.top < window.innerHeight && r.height > 0 ? true : `top ${r.top} height ${r.height} of ${window.innerHeight}`,
        reasonInBlock: b.innerText.includes(reason),
        reasonInTranscript: !!t && t.open && t.innerText.includes(reason),
      };
    }, { ...found, reason });
    // `open` is reported, not required: a collapsed block shows its entries while targeted (::details-content)
    const bad = Object.entries(seen).filter(([k, v]) => !['hash', 'open'].includes(k) && v !== true).map(([k, v]) => (v === false ? k : `${k}: ${v}`));
    if (seen.hash !== `#${found.block}`) bad.push(`hash ${seen.hash}`);
    if (bad.length) problems.push(`${id}: selecting ${state} on the graph: ${bad.join(', ')} (reason: ${reason})`);
    else shown += 1;
  }
  return shown;
}

main().catch((e) => { console.error(e.stack || String(e)); process.exit(1); });
