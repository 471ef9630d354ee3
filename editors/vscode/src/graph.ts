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

/** Messages from the webview script to the extension. */
export type WebviewMessage =
  | { type: 'ready' }
  | { type: 'rendered'; texts: number; svg: boolean }
  | { type: 'select'; text: string };

/** Messages from the extension to the webview script. */
export type HostMessage =
  | { type: 'graph'; svg: string; caption: string; reached: Record<string, number> }
  | { type: 'error'; message: string };

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
export function graphMessage(res: GraphResponse | undefined | null, docLabel: string): HostMessage {
  if (!res || typeof res.svg !== 'string' || !res.svg.includes('<svg')) {
    return { type: 'error', message: `no graph for ${docLabel}` };
  }
  const reached = res.path?.reached ?? {};
  const n = Object.keys(reached).length;
  const caption = `${res.workflow ?? ''}${n ? ` · last run of ${docLabel} reached ${n} state${n === 1 ? '' : 's'}` : ''}`;
  return { type: 'graph', svg: sanitizeSvg(res.svg), caption, reached };
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
 * The webview's whole document: the CSP meta tag, inline styles, and one nonce'd script that renders
 * `graph`/`error` messages, posts `ready`, `rendered` (count of text elements) and `select` (the label text of a
 * clicked state; a click on a box picks the label drawn inside it).
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
  body { padding: 8px; color: var(--vscode-foreground); font-family: var(--vscode-font-family); }
  #caption { font-size: 12px; opacity: 0.8; margin-bottom: 6px; }
  #graph svg { max-width: 100%; height: auto; background: white; border-radius: 4px; }
  #graph text { cursor: pointer; }
  #graph .wfx-hover { text-decoration: underline; }
  #error { color: var(--vscode-errorForeground); }
</style>
</head>
<body>
<div id="caption"></div>
<div id="error"></div>
<div id="graph"></div>
<script nonce="${nonce}">
(function () {
  const vscode = acquireVsCodeApi();
  const graph = document.getElementById('graph');
  const caption = document.getElementById('caption');
  const error = document.getElementById('error');
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
    const text = labelAt(ev.target);
    if (text) vscode.postMessage({ type: 'select', text: text });
  });
  window.addEventListener('message', function (ev) {
    const m = ev.data || {};
    if (m.type === 'graph') {
      error.textContent = '';
      caption.textContent = m.caption || '';
      graph.innerHTML = m.svg;
      vscode.postMessage({ type: 'rendered', texts: graph.querySelectorAll('text').length, svg: !!graph.querySelector('svg') });
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
