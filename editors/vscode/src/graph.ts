// The pure parts of the workflow graph view (no `vscode` import, unit-tested with node's test runner):
// the shape of the server's `wfx/graph` answer, the webview's HTML (strict CSP, one nonce'd inline script,
// nothing from the network), SVG sanitising, the webview → extension message protocol, and the mapping of a
// click on the SVG (the text of a state box) to a state id and its declaration's range in workflow.yaml.
//
// `wfx/graph` (docs/lsp-extensions.md): params `{ textDocument: { uri } }` (a workflow.yaml or a case) →
// `{ workflow, graph: { nodes, edges, entry, finals, mermaid }, svg, mermaid, path }` where each node is
// `{ id, kind, terminal, title, triggers, range }` and `path` is null or `{ reached: { state: step }, edges }`
// (the states the active case reached in its last run; the SVG already lights them and labels them ` @<step>`).

/** LSP position / range (0-based lines, UTF-16 code units). */
export interface LspPosition {
  line: number;
  character: number;
}
export interface LspRange {
  start: LspPosition;
  end: LspPosition;
}

export interface GraphNode {
  id: string;
  kind?: string;
  terminal?: boolean;
  title?: string | null;
  triggers?: string[];
  /** an LSP range in workflow.yaml, or (tolerated) byte offsets `{ start, end }` */
  range?: LspRange | { start: number; end: number } | null;
}

export interface GraphResponse {
  /** the workflow: its slug or the URI of its workflow.yaml */
  workflow?: string | null;
  graph?: { nodes?: GraphNode[]; edges?: unknown[]; entry?: string | null; finals?: string[]; mermaid?: string } | null;
  svg?: string | null;
  mermaid?: string | null;
  path?: { reached?: Record<string, number>; edges?: [string, string][] } | null;
}

/**
 * How the webview shows the graph: the SVG is drawn at its natural size and scaled by `scale` (1 = 100 %) after
 * a translation of (`tx`, `ty`) CSS pixels; `fit` is true while the scale follows the view's width (on open, after
 * *Fit*, until the user zooms or pans). `svgWidth` is the drawn width and `viewWidth` the view's, in CSS pixels.
 */
export interface GraphViewport {
  scale: number;
  tx: number;
  ty: number;
  fit: boolean;
  svgWidth: number;
  viewWidth: number;
  /** the CSS transform applied to the SVG */
  transform: string;
}

/**
 * What the webview keeps across a window reload (`vscode.setState`): the document the graph is for (a URI) and
 * the zoom and pan. `registerWebviewPanelSerializer` hands it back to the extension.
 */
export interface GraphPanelState {
  uri?: string;
  view?: { scale: number; tx: number; ty: number; fit: boolean };
}

/** Messages from the webview script to the extension. */
export type WebviewMessage =
  | { type: 'ready' }
  | { type: 'rendered'; texts: number; svg: boolean }
  | { type: 'select'; text: string }
  | ({ type: 'view' } & GraphViewport);

/** Zoom actions, from the toolbar or (for tests and keybindings) the extension. */
export type ZoomAction = 'in' | 'out' | 'fit';

/** Messages from the extension to the webview script. */
export type HostMessage =
  | { type: 'graph'; svg: string; caption: string; reached: Record<string, number>; uri?: string }
  | { type: 'error'; message: string }
  | { type: 'zoom'; action: ZoomAction };

/** Reads a persisted panel state; anything malformed is dropped field by field. */
export function parsePanelState(raw: unknown): GraphPanelState {
  if (!raw || typeof raw !== 'object') return {};
  const m = raw as Record<string, unknown>;
  const out: GraphPanelState = {};
  if (typeof m.uri === 'string' && m.uri.length <= 4096) out.uri = m.uri;
  const v = m.view as Record<string, unknown> | undefined;
  if (v && typeof v === 'object' && [v.scale, v.tx, v.ty].every((n) => typeof n === 'number' && Number.isFinite(n))) {
    out.view = { scale: clampScale(v.scale as number), tx: v.tx as number, ty: v.ty as number, fit: v.fit === true };
  }
  return out;
}

/** Zoom limits of the graph view (10 % to 800 %). */
export const MIN_SCALE = 0.1;
export const MAX_SCALE = 8;
/** One zoom step (a button press or one wheel notch): ×1.25. */
export const ZOOM_STEP = 1.25;

export function clampScale(s: number): number {
  return Math.min(MAX_SCALE, Math.max(MIN_SCALE, s));
}

/** The scale that fits an SVG `svgWidth` wide into `viewWidth` (never above 100 %: small graphs are not blown up). */
export function fitScale(svgWidth: number, viewWidth: number): number {
  if (!(svgWidth > 0) || !(viewWidth > 0)) return 1;
  return clampScale(Math.min(1, viewWidth / svgWidth));
}

/** Validates a message posted by the webview; anything malformed is `undefined` (ignored). */
export function parseWebviewMessage(raw: unknown): WebviewMessage | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const m = raw as Record<string, unknown>;
  switch (m.type) {
    case 'ready':
      return { type: 'ready' };
    case 'rendered':
      return typeof m.texts === 'number' ? { type: 'rendered', texts: m.texts, svg: m.svg === true } : undefined;
    case 'select':
      return typeof m.text === 'string' && m.text.length <= 1000 ? { type: 'select', text: m.text } : undefined;
    case 'view': {
      const nums = [m.scale, m.tx, m.ty, m.svgWidth, m.viewWidth];
      if (!nums.every((n) => typeof n === 'number' && Number.isFinite(n))) return undefined;
      return {
        type: 'view',
        scale: m.scale as number,
        tx: m.tx as number,
        ty: m.ty as number,
        fit: m.fit === true,
        svgWidth: m.svgWidth as number,
        viewWidth: m.viewWidth as number,
        transform: typeof m.transform === 'string' ? m.transform.slice(0, 200) : '',
      };
    }
    default:
      return undefined;
  }
}

/**
 * The state id behind the text of an SVG label: node labels are `<id>`, `<id> (human)`, `<id> (end)`, each
 * optionally followed by ` @<step>` when the last run reached it (schemas/src/graph.rs `to_layout_dot`).
 * Edge labels and `start` are not states: `undefined`.
 */
export function stateForLabel(text: string, graph: GraphResponse | undefined): GraphNode | undefined {
  const nodes = graph?.graph?.nodes ?? [];
  const t = text.replace(/\s+/g, ' ').trim();
  if (!t) return undefined;
  const candidates = [t, t.replace(/ @\d+$/, '')];
  candidates.push(candidates[1].replace(/ \((human|end)\)$/, ''));
  for (const c of candidates) {
    const hit = nodes.find((n) => n.id === c && n.kind !== 'start' && n.id !== '__start__');
    if (hit) return hit;
  }
  return undefined;
}

/** LSP range of a node's declaration; byte-offset ranges are converted with `text` (the workflow.yaml text). */
export function nodeRange(node: GraphNode, text?: string): LspRange | undefined {
  const r = node.range;
  if (!r) return undefined;
  if (typeof r.start === 'object' && typeof r.end === 'object') return r as LspRange;
  if (typeof r.start === 'number' && typeof r.end === 'number' && text !== undefined) {
    return { start: byteOffsetToPosition(text, r.start), end: byteOffsetToPosition(text, r.end as number) };
  }
  return undefined;
}

/** 0-based line / UTF-16 column of a UTF-8 byte offset in `text` (clamped to the end). */
export function byteOffsetToPosition(text: string, offset: number): LspPosition {
  let bytes = 0;
  let line = 0;
  let character = 0;
  for (const ch of text) {
    if (bytes >= offset) break;
    const cp = ch.codePointAt(0) ?? 0;
    bytes += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    if (ch === '\n') {
      line++;
      character = 0;
    } else character += ch.length;
  }
  return { line, character };
}

/**
 * Path of the workflow.yaml that a workflow or case file belongs to (`…/workflows/<slug>/workflow.yaml` for
 * `…/workflows/<slug>/tests/**`), or `undefined` for other files. POSIX or Windows separators.
 */
export function workflowFileFor(fsPath: string): string | undefined {
  const m = /^(.*[\\/]workflows[\\/][^\\/]+)[\\/](workflow\.yaml|tests[\\/].+\.(test|agent)\.ya?ml)$/.exec(fsPath);
  if (!m) return undefined;
  const sep = fsPath.includes('/') ? '/' : '\\';
  return `${m[1]}${sep}workflow.yaml`;
}

/** Removes what a webview must never run from an SVG: scripts, foreignObject, `on…` handlers, external hrefs. */
export function sanitizeSvg(svg: string): string {
  const start = svg.indexOf('<svg');
  let s = start > 0 ? svg.slice(start) : svg;
  s = s.replace(/<script[\s\S]*?<\/script\s*>/gi, '').replace(/<script[^>]*\/>/gi, '');
  s = s.replace(/<foreignObject[\s\S]*?<\/foreignObject\s*>/gi, '');
  s = s.replace(/\son[a-z]+\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)/gi, '');
  s = s.replace(/\s(xlink:)?href\s*=\s*("(?!#)[^"]*"|'(?!#)[^']*')/gi, '');
  return s;
}

/** The message that shows a graph answer in the webview (an error message when it holds no SVG). */
export function graphMessage(res: GraphResponse | undefined | null, docLabel: string, uri?: string): HostMessage {
  if (!res || typeof res.svg !== 'string' || !res.svg.includes('<svg')) {
    return { type: 'error', message: `no graph for ${docLabel}` };
  }
  const reached = res.path?.reached ?? {};
  const n = Object.keys(reached).length;
  const caption = `${res.workflow ?? ''}${n ? ` · last run of ${docLabel} reached ${n} state${n === 1 ? '' : 's'}` : ''}`;
  const m = { type: 'graph' as const, svg: sanitizeSvg(res.svg), caption, reached };
  return uri === undefined ? m : { ...m, uri };
}

/** A random nonce for the script tag (base64url of 16 bytes from `random`, injectable for tests). */
export function makeNonce(random: (n: number) => Uint8Array): string {
  return Buffer.from(random(16)).toString('base64').replace(/[+/=]/g, (c) => (c === '+' ? '-' : c === '/' ? '_' : ''));
}

/** The content security policy of the graph webview. */
export function contentSecurityPolicy(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `style-src ${cspSource} 'unsafe-inline'`,
    `img-src ${cspSource} data:`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
}

/**
 * The webview's whole document: the CSP meta tag, inline styles, a toolbar (zoom out, zoom %, zoom in, Fit) and one
 * nonce'd script. The script draws `graph` messages at the SVG's natural size inside a clipped viewport and
 * scales it to the view's width on open (never above 100 %); the buttons and ctrl/⌘ + wheel zoom (around the
 * pointer), a drag or a plain wheel pans, *Fit* resets. It posts `ready`, `rendered` (count of text elements),
 * `view` (a GraphViewport after every change) and `select` (the label text of a clicked state; a click on a box
 * picks the label drawn inside it; the end of a drag is not a click), and keeps `{ uri, view }` with
 * `vscode.setState` so a window reload restores the panel where it was (GraphPanelState).
 */
export function webviewHtml(cspSource: string, nonce: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${contentSecurityPolicy(cspSource, nonce)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>Workflow graph</title>
<style>
  html, body { height: 100%; margin: 0; }
  body { padding: 8px; box-sizing: border-box; display: flex; flex-direction: column; color: var(--vscode-foreground); font-family: var(--vscode-font-family); }
  #bar { display: flex; align-items: center; gap: 4px; margin-bottom: 6px; font-size: 12px; }
  #bar button { color: var(--vscode-button-secondaryForeground); background: var(--vscode-button-secondaryBackground); border: none; border-radius: 2px; padding: 2px 8px; cursor: pointer; font: inherit; }
  #bar button:hover { background: var(--vscode-button-secondaryHoverBackground); }
  #zoom { min-width: 3.5em; text-align: center; }
  #caption { opacity: 0.8; margin-left: 8px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
  #viewport { position: relative; flex: 1; min-height: 120px; overflow: hidden; cursor: grab; touch-action: none; }
  #viewport.dragging { cursor: grabbing; }
  #graph { position: absolute; left: 0; top: 0; transform-origin: 0 0; }
  #graph svg { display: block; background: white; border-radius: 4px; }
  #graph text { cursor: pointer; }
  #error { color: var(--vscode-errorForeground); }
</style>
</head>
<body>
<div id="bar">
  <button id="zoom-out" title="Zoom out (ctrl/⌘ + wheel)" aria-label="Zoom out">−</button>
  <span id="zoom" aria-live="polite">100%</span>
  <button id="zoom-in" title="Zoom in (ctrl/⌘ + wheel)" aria-label="Zoom in">+</button>
  <button id="zoom-fit" title="Fit to width and reset the pan" aria-label="Fit to width">Fit</button>
  <span id="caption"></span>
</div>
<div id="error"></div>
<div id="viewport"><div id="graph"></div></div>
<script nonce="${nonce}">
(function () {
  const vscode = acquireVsCodeApi();
  const MIN = ${MIN_SCALE}, MAX = ${MAX_SCALE}, STEP = ${ZOOM_STEP};
  const viewport = document.getElementById('viewport');
  const graph = document.getElementById('graph');
  const caption = document.getElementById('caption');
  const error = document.getElementById('error');
  const zoomLabel = document.getElementById('zoom');
  const saved = vscode.getState() || {};
  let uri = typeof saved.uri === 'string' ? saved.uri : undefined;
  let view = saved.view && typeof saved.view.scale === 'number'
    ? { scale: saved.view.scale, tx: saved.view.tx || 0, ty: saved.view.ty || 0, fit: saved.view.fit === true }
    : { scale: 1, tx: 0, ty: 0, fit: true };
  function clamp(s) { return Math.min(MAX, Math.max(MIN, s)); }
  function svgSize() {
    const svg = graph.querySelector('svg');
    if (!svg) return { w: 0, h: 0 };
    let w = parseFloat(svg.getAttribute('width') || '');
    let h = parseFloat(svg.getAttribute('height') || '');
    const vb = svg.viewBox && svg.viewBox.baseVal;
    if (!(w > 0) && vb && vb.width > 0) { w = vb.width; h = vb.height; }
    return { w: w > 0 ? w : 0, h: h > 0 ? h : 0 };
  }
  function apply() {
    const t = 'translate(' + view.tx + 'px, ' + view.ty + 'px) scale(' + view.scale + ')';
    graph.style.transform = t;
    zoomLabel.textContent = Math.round(view.scale * 100) + '%';
    vscode.setState({ uri: uri, view: view });
    const svg = graph.querySelector('svg');
    const drawn = svg ? svg.getBoundingClientRect().width : 0;
    vscode.postMessage({ type: 'view', scale: view.scale, tx: view.tx, ty: view.ty, fit: view.fit,
      svgWidth: drawn, viewWidth: viewport.clientWidth, transform: t });
  }
  function fit() {
    const size = svgSize();
    const vw = viewport.clientWidth;
    const s = size.w > 0 && vw > 0 ? clamp(Math.min(1, vw / size.w)) : 1;
    view = { scale: s, tx: Math.max(0, (vw - size.w * s) / 2), ty: 0, fit: true };
    apply();
  }
  // zoom by factor f keeping the point (x, y) of the viewport (CSS pixels) where it is
  function zoomAt(f, x, y) {
    const s = clamp(view.scale * f);
    const k = s / view.scale;
    view = { scale: s, tx: x - (x - view.tx) * k, ty: y - (y - view.ty) * k, fit: false };
    apply();
  }
  function zoomCenter(f) { zoomAt(f, viewport.clientWidth / 2, viewport.clientHeight / 2); }
  function act(action) {
    if (action === 'in') zoomCenter(STEP);
    else if (action === 'out') zoomCenter(1 / STEP);
    else if (action === 'fit') fit();
  }
  document.getElementById('zoom-in').addEventListener('click', function () { act('in'); });
  document.getElementById('zoom-out').addEventListener('click', function () { act('out'); });
  document.getElementById('zoom-fit').addEventListener('click', function () { act('fit'); });
  viewport.addEventListener('wheel', function (ev) {
    ev.preventDefault();
    const r = viewport.getBoundingClientRect();
    if (ev.ctrlKey || ev.metaKey) {
      zoomAt(ev.deltaY < 0 ? STEP : 1 / STEP, ev.clientX - r.left, ev.clientY - r.top);
    } else {
      view = { scale: view.scale, tx: view.tx - ev.deltaX, ty: view.ty - ev.deltaY, fit: false };
      apply();
    }
  }, { passive: false });
  // drag to pan; a press that moves less than 4 px stays a click (selects a state)
  let drag = null;
  let suppressClick = false;
  viewport.addEventListener('pointerdown', function (ev) {
    if (ev.button !== 0) return;
    drag = { x: ev.clientX, y: ev.clientY, tx: view.tx, ty: view.ty, moved: false, id: ev.pointerId };
  });
  viewport.addEventListener('pointermove', function (ev) {
    if (!drag || ev.pointerId !== drag.id) return;
    const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
    if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 4) return;
    if (!drag.moved) {
      drag.moved = true;
      viewport.classList.add('dragging');
      try { viewport.setPointerCapture(ev.pointerId); } catch (e) { /* gone */ }
    }
    view = { scale: view.scale, tx: drag.tx + dx, ty: drag.ty + dy, fit: false };
    apply();
  });
  function endDrag() {
    if (drag && drag.moved) suppressClick = true;
    drag = null;
    viewport.classList.remove('dragging');
  }
  viewport.addEventListener('pointerup', endDrag);
  viewport.addEventListener('pointercancel', endDrag);
  window.addEventListener('resize', function () { if (view.fit) fit(); else apply(); });
  function center(b) { return { x: b.x + b.width / 2, y: b.y + b.height / 2 }; }
  // layout-rs draws a label as <text><tspan>line</tspan>…</text>; lines are joined with a space
  function textOf(t) {
    const spans = t.querySelectorAll('tspan');
    return spans.length ? Array.from(spans).map(function (s) { return s.textContent || ''; }).join(' ') : (t.textContent || '');
  }
  function labelAt(target) {
    let el = target;
    while (el && el !== graph) {
      const tag = (el.tagName || '').toLowerCase();
      if (tag === 'text' || tag === 'tspan') {
        return textOf(tag === 'tspan' && el.parentNode ? el.parentNode : el);
      }
      // a state's box (not an edge's path): the label drawn inside it
      if (tag === 'rect' || tag === 'ellipse' || tag === 'circle' || tag === 'polygon') {
        let box;
        try { box = el.getBBox(); } catch (e) { return ''; }
        for (const t of graph.querySelectorAll('text')) {
          let c;
          try { c = center(t.getBBox()); } catch (e) { continue; }
          if (c.x >= box.x && c.x <= box.x + box.width && c.y >= box.y && c.y <= box.y + box.height) return textOf(t);
        }
        return '';
      }
      el = el.parentNode;
    }
    return '';
  }
  graph.addEventListener('click', function (ev) {
    if (suppressClick) { suppressClick = false; return; }
    const text = labelAt(ev.target);
    if (text) vscode.postMessage({ type: 'select', text: text });
  });
  window.addEventListener('message', function (ev) {
    const m = ev.data || {};
    if (m.type === 'graph') {
      error.textContent = '';
      caption.textContent = m.caption || '';
      const newDoc = typeof m.uri === 'string' && m.uri !== uri;
      if (typeof m.uri === 'string') uri = m.uri;
      graph.innerHTML = m.svg;
      const size = svgSize();
      const svg = graph.querySelector('svg');
      // natural size: the transform alone decides how big the graph is drawn
      if (svg && size.w > 0) { svg.setAttribute('width', String(size.w)); svg.setAttribute('height', String(size.h)); }
      if (view.fit || newDoc) fit(); else apply();
      vscode.postMessage({ type: 'rendered', texts: graph.querySelectorAll('text').length, svg: !!svg });
    } else if (m.type === 'zoom') {
      act(m.action);
    } else if (m.type === 'error') {
      error.textContent = m.message;
    }
  });
  vscode.postMessage({ type: 'ready' });
})();
</script>
</body>
</html>`;
}
