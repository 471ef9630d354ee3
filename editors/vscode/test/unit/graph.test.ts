import { strict as assert } from 'assert';
import { test } from 'node:test';
import {
  byteOffsetToPosition,
  contentSecurityPolicy,
  fitScale,
  GraphResponse,
  graphMessage,
  makeNonce,
  nodeRange,
  parsePanelState,
  parseWebviewMessage,
  sanitizeSvg,
  stateForLabel,
  webviewHtml,
  workflowFileFor,
} from '../../src/graph';
import { resolveDocLinks } from '../../src/docLinks';

const range = (l: number, c: number, l2: number, c2: number) => ({ start: { line: l, character: c }, end: { line: l2, character: c2 } });
const RES: GraphResponse = {
  workflow: 'order-lookup',
  graph: {
    nodes: [
      { id: '__start__', kind: 'start', terminal: false, title: null, triggers: [], range: null },
      { id: 'triage', kind: 'agent', terminal: false, title: 'Triage', triggers: ['manual'], range: range(4, 10, 4, 16) },
      { id: 'review', kind: 'human', terminal: false, title: null, triggers: [], range: range(12, 10, 12, 16) },
      { id: 'done', kind: 'agent', terminal: true, title: null, triggers: [], range: { start: 7, end: 11 } },
    ],
    edges: [],
    entry: 'triage',
    finals: ['done'],
  },
  svg: '<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"><text>triage @0</text></svg>',
  mermaid: 'flowchart TD',
  path: { reached: { triage: 0, review: 2 }, edges: [['__start__', 'triage']] },
};

test('stateForLabel maps node labels, with kind and step suffixes, to states', () => {
  assert.equal(stateForLabel('triage', RES)?.id, 'triage');
  assert.equal(stateForLabel('  triage @0 ', RES)?.id, 'triage');
  assert.equal(stateForLabel('review (human)', RES)?.id, 'review');
  assert.equal(stateForLabel('review (human) @2', RES)?.id, 'review');
  assert.equal(stateForLabel('done (end)', RES)?.id, 'done');
});

test('stateForLabel: start, edge labels, unknown text and a missing graph give nothing', () => {
  assert.equal(stateForLabel('start', RES), undefined);
  assert.equal(stateForLabel('__start__', RES), undefined);
  assert.equal(stateForLabel('manual', RES), undefined);
  assert.equal(stateForLabel('', RES), undefined);
  assert.equal(stateForLabel('triage', undefined), undefined);
});

test('nodeRange passes LSP ranges through and converts byte offsets', () => {
  assert.deepEqual(nodeRange(RES.graph!.nodes![1]), range(4, 10, 4, 16));
  const text = 'a: é\nb: done\n';
  // bytes: "a: é\n" is 6 bytes (é = 2), so byte 9 is line 1 col 3
  assert.deepEqual(nodeRange({ id: 'done', range: { start: 9, end: 13 } }, text), range(1, 3, 1, 7));
  assert.equal(nodeRange({ id: 'x', range: { start: 1, end: 2 } }), undefined);
  assert.equal(nodeRange({ id: 'x', range: null }), undefined);
});

test('byteOffsetToPosition counts UTF-16 columns and clamps at the end', () => {
  assert.deepEqual(byteOffsetToPosition('😀x\ny', 4), { line: 0, character: 2 });
  assert.deepEqual(byteOffsetToPosition('ab\ncd', 100), { line: 1, character: 2 });
  assert.deepEqual(byteOffsetToPosition('ab', 0), { line: 0, character: 0 });
});

test('workflowFileFor finds the workflow of workflow.yaml, cases and agent scripts only', () => {
  assert.equal(workflowFileFor('/w/workflows/a/workflow.yaml'), '/w/workflows/a/workflow.yaml');
  assert.equal(workflowFileFor('/w/workflows/a/tests/x.test.yaml'), '/w/workflows/a/workflow.yaml');
  assert.equal(workflowFileFor('/w/workflows/a/tests/sub/x.test.yml'), '/w/workflows/a/workflow.yaml');
  assert.equal(workflowFileFor('/w/workflows/a/tests/x.agent.yaml'), '/w/workflows/a/workflow.yaml');
  assert.equal(workflowFileFor('C:\\w\\workflows\\a\\tests\\x.test.yaml'), 'C:\\w\\workflows\\a\\workflow.yaml');
  assert.equal(workflowFileFor('/w/workflows/a/notes.yaml'), undefined);
  assert.equal(workflowFileFor('/w/other.yaml'), undefined);
});

test('parseWebviewMessage accepts the three messages and drops anything else', () => {
  assert.deepEqual(parseWebviewMessage({ type: 'ready' }), { type: 'ready' });
  assert.deepEqual(parseWebviewMessage({ type: 'rendered', texts: 5, svg: true }), { type: 'rendered', texts: 5, svg: true });
  assert.deepEqual(parseWebviewMessage({ type: 'select', text: 'triage' }), { type: 'select', text: 'triage' });
  assert.equal(parseWebviewMessage({ type: 'select', text: 3 }), undefined);
  assert.equal(parseWebviewMessage({ type: 'select', text: 'x'.repeat(1001) }), undefined);
  assert.equal(parseWebviewMessage({ type: 'rendered' }), undefined);
  assert.equal(parseWebviewMessage({ type: 'eval', code: '1' }), undefined);
  assert.equal(parseWebviewMessage(null), undefined);
  assert.equal(parseWebviewMessage('ready'), undefined);
});

test('graphMessage: the sanitised SVG with the reached states, or an error without SVG', () => {
  const m = graphMessage(RES, 'refund.test.yaml');
  assert.equal(m.type, 'graph');
  if (m.type !== 'graph') return;
  assert.ok(m.svg.startsWith('<svg'), m.svg);
  assert.deepEqual(m.reached, { triage: 0, review: 2 });
  assert.equal(m.caption, 'order-lookup · last run of refund.test.yaml reached 2 states');
  assert.deepEqual(graphMessage({ ...RES, path: null }, 'x').type === 'graph' && graphMessage({ ...RES, path: null }, 'x'), {
    type: 'graph',
    svg: m.svg,
    caption: 'order-lookup',
    reached: {},
  });
  assert.deepEqual(graphMessage({ ...RES, svg: null }, 'x'), { type: 'error', message: 'no graph for x' });
  assert.deepEqual(graphMessage(null, 'x'), { type: 'error', message: 'no graph for x' });
});

test('sanitizeSvg strips scripts, handlers, foreignObject and external links', () => {
  const dirty =
    '<svg><script>alert(1)</script><g onclick="x()" onload=\'y\'><text>a</text></g>' +
    '<foreignObject><div>x</div></foreignObject><a href="https://evil/"><text>b</text></a><use href="#n1"/></svg>';
  const clean = sanitizeSvg(dirty);
  assert.equal(clean, '<svg><g><text>a</text></g><a><text>b</text></a><use href="#n1"/></svg>');
});

test('webviewHtml: strict CSP with the nonce on the only script, nothing from the network', () => {
  const nonce = makeNonce((n) => new Uint8Array(n).fill(251));
  assert.match(nonce, /^[A-Za-z0-9_-]{20,}$/);
  const html = webviewHtml('vscode-webview://abc', nonce);
  const csp = contentSecurityPolicy('vscode-webview://abc', nonce);
  assert.equal(
    csp,
    `default-src 'none'; style-src vscode-webview://abc 'unsafe-inline'; img-src vscode-webview://abc data:; script-src 'nonce-${nonce}'`,
  );
  assert.ok(html.includes(`content="${csp}"`));
  const scripts = html.match(/<script[^>]*>/g) ?? [];
  assert.deepEqual(scripts, [`<script nonce="${nonce}">`]);
  assert.ok(!/https?:\/\//.test(html), 'no network URL in the webview');
});

test('parseWebviewMessage: the view report keeps numbers only', () => {
  const v = { type: 'view', scale: 0.5, tx: 10, ty: 0, fit: true, svgWidth: 400, viewWidth: 420, transform: 'translate(10px, 0px) scale(0.5)' };
  assert.deepEqual(parseWebviewMessage(v), v);
  assert.equal(parseWebviewMessage({ ...v, scale: 'big' }), undefined);
  assert.equal(parseWebviewMessage({ ...v, tx: Infinity }), undefined);
});

test('fitScale fits the width and never blows a small graph up', () => {
  assert.equal(fitScale(2000, 500), 0.25);
  assert.equal(fitScale(300, 500), 1);
  assert.equal(fitScale(100000, 500), 0.1);
  assert.equal(fitScale(0, 500), 1);
  assert.equal(fitScale(500, 0), 1);
});

test('parsePanelState keeps a string uri and a finite view, drops the rest', () => {
  assert.deepEqual(parsePanelState({ uri: 'file:///w/workflow.yaml', view: { scale: 2, tx: -5, ty: 3, fit: false } }), {
    uri: 'file:///w/workflow.yaml',
    view: { scale: 2, tx: -5, ty: 3, fit: false },
  });
  assert.deepEqual(parsePanelState({ uri: 3, view: { scale: NaN, tx: 0, ty: 0 } }), {});
  assert.deepEqual(parsePanelState({ view: { scale: 99, tx: 0, ty: 0, fit: true } }), { view: { scale: 8, tx: 0, ty: 0, fit: true } });
  assert.deepEqual(parsePanelState(undefined), {});
  assert.deepEqual(parsePanelState('x'), {});
});

test('webviewHtml: zoom toolbar, ctrl/meta wheel, drag and setState are wired', () => {
  const html = webviewHtml('vscode-webview://abc', 'n0nce');
  for (const id of ['zoom-in', 'zoom-out', 'zoom-fit', 'viewport']) assert.ok(html.includes(`id="${id}"`), id);
  assert.ok(/ev\.ctrlKey \|\| ev\.metaKey/.test(html));
  assert.ok(html.includes('pointermove') && html.includes('vscode.setState(') && html.includes('vscode.getState()'));
  // the SVG is no longer squeezed by CSS: the transform decides its size
  assert.ok(!html.includes('max-width: 100%'));
});

test('resolveDocLinks points docs/reference.md links at the bundled copy, leaves the rest', () => {
  const base = 'file:///ext/docs/';
  assert.equal(
    resolveDocLinks('see [`decide`](docs/reference.md#case-steps-decide) and [x](docs/cli.md#a) and [y](https://e/docs/reference.md)', base),
    'see [`decide`](file:///ext/docs/reference.md#case-steps-decide) and [x](docs/cli.md#a) and [y](https://e/docs/reference.md)',
  );
  assert.equal(resolveDocLinks('[r](docs/reference.md)', base), '[r](file:///ext/docs/reference.md)');
});
