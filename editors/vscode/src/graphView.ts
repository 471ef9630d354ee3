// The *wfx: Show Workflow Graph* webview (command `wfx.showGraph`): one panel beside the editor showing the SVG
// from the server's `wfx/graph` request for the workflow of the active workflow.yaml or case. It is requested
// again 300 ms after the last edit of that workflow.yaml or case, when another of our files becomes active, and
// when a run the server made of that case (or of its workflow) finishes (`wfx/runStatus` `end`; the answer's
// `path` lights the states the case reached). A click on a state's label reveals its declaration in
// workflow.yaml. The panel is fitted to its width on open, zooms and pans (graph.ts), and survives a window
// reload: the webview keeps `{ uri, view }` with setState and the extension registers a serializer for
// `wfx.graph` that restores it (docs/editors.md). Pure parts (HTML, CSP, messages, click mapping) are in graph.ts.
import { randomBytes } from 'crypto';
import * as vscode from 'vscode';
import { LanguageClient } from 'vscode-languageclient/node';
import {
  GraphResponse,
  GraphViewport,
  HostMessage,
  ZoomAction,
  graphMessage,
  parsePanelState,
  makeNonce,
  nodeRange,
  parseWebviewMessage,
  stateForLabel,
  webviewHtml,
  workflowFileFor,
} from './graph';

export const GRAPH_REQUEST = 'wfx/graph';
/** The panel's view type (package.json `onWebviewPanel:wfx.graph` activates the extension to restore it). */
export const GRAPH_VIEW_TYPE = 'wfx.graph';

/** The `wfx/runStatus` notification's params (server/src/lsp/server.rs `RunStatus`, docs/lsp-extensions.md). */
export interface RunStatus {
  uri: string;
  phase: 'begin' | 'case' | 'end' | 'cancelled';
  total: number;
  done: number;
  case?: string;
  cases: string[];
  counts?: { passed: number; failed: number; skipped: number; notRun: number };
  message?: string;
}
const DEBOUNCE_MS = 300;

/** What the integration tests read through the extension's exports. */
export interface GraphState {
  /** the document the graph was last requested for */
  document?: string;
  /** the last `wfx/graph` answer */
  response?: GraphResponse;
  /** the last message posted to the webview */
  message?: HostMessage;
  /** what the webview reported after drawing the last graph */
  rendered?: { texts: number; svg: boolean };
  /** number of `wfx/graph` requests answered so far */
  answered: number;
  /** the last state revealed from a click */
  revealed?: { id: string; uri: string; line: number };
  /** the webview's last reported zoom and pan */
  view?: GraphViewport;
  /** panels restored after a window reload */
  restored: number;
  /** finished runs that made the panel request its graph again */
  followedRuns: number;
}

export class GraphView implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private doc: vscode.Uri | undefined;
  private timer: NodeJS.Timeout | undefined;
  private seq = 0;
  private webviewReady = false;
  private pending: HostMessage | undefined;
  readonly state: GraphState = { answered: 0, restored: 0, followedRuns: 0 };
  private readonly subs: vscode.Disposable[] = [];

  constructor(
    private readonly client: () => LanguageClient | undefined,
    private readonly log: vscode.LogOutputChannel,
    private readonly isOurs: (doc: vscode.TextDocument) => boolean,
    /** starts the language client if it is not running (awaited before a restored panel asks for its graph) */
    private readonly ensureClient: () => Promise<void> = async () => undefined,
  ) {
    this.subs.push(
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (this.panel && this.affects(e.document.uri)) this.schedule();
      }),
      vscode.window.onDidChangeActiveTextEditor((ed) => {
        if (!this.panel || !ed || !this.isOurs(ed.document)) return;
        if (ed.document.uri.toString() === this.doc?.toString()) return;
        this.doc = ed.document.uri;
        this.schedule(0);
      }),
    );
  }

  /** True when an edit of `uri` changes what the panel shows: the tracked file or its workflow.yaml. */
  private affects(uri: vscode.Uri): boolean {
    if (!this.doc) return false;
    if (uri.toString() === this.doc.toString()) return true;
    const wf = workflowFileFor(this.doc.fsPath);
    return wf !== undefined && uri.fsPath === wf;
  }

  /** `wfx.showGraph`: opens (or reveals) the panel for `uri` or the active editor's workflow/case file. */
  async show(uri?: vscode.Uri): Promise<void> {
    const target = uri ?? vscode.window.activeTextEditor?.document.uri;
    if (!target || !workflowFileFor(target.fsPath)) {
      vscode.window.showInformationMessage('wfx: open a workflow.yaml or a case file to show its graph');
      return;
    }
    this.doc = target;
    if (!this.panel) {
      this.adopt(
        vscode.window.createWebviewPanel(
          GRAPH_VIEW_TYPE,
          'Workflow graph',
          { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
          { enableScripts: true, localResourceRoots: [], retainContextWhenHidden: true },
        ),
      );
    } else {
      this.panel.reveal(vscode.ViewColumn.Beside, true);
    }
    await this.refresh();
  }

  /** Takes `panel` as the graph panel: fresh HTML (a new nonce), message and dispose handlers. */
  private adopt(panel: vscode.WebviewPanel) {
    this.panel?.dispose();
    this.webviewReady = false;
    this.pending = undefined;
    this.panel = panel;
    panel.webview.options = { enableScripts: true, localResourceRoots: [] };
    const nonce = makeNonce((n) => randomBytes(n));
    panel.webview.html = webviewHtml(panel.webview.cspSource, nonce);
    panel.webview.onDidReceiveMessage((raw) => this.onMessage(raw), undefined, this.subs);
    panel.onDidDispose(() => {
      if (this.panel !== panel) return;
      this.panel = undefined;
      this.webviewReady = false;
    }, undefined, this.subs);
  }

  /**
   * The `wfx.graph` serializer's `deserializeWebviewPanel`: after a window reload VS Code hands back the panel
   * and what the webview kept with setState (GraphPanelState). The graph of the kept document is requested once
   * the language client runs; the webview itself restores the zoom and pan. A state naming no workflow or case
   * file leaves the panel with an error message.
   */
  async restore(panel: vscode.WebviewPanel, raw: unknown): Promise<void> {
    const st = parsePanelState(raw);
    this.adopt(panel);
    this.state.restored++;
    let doc: vscode.Uri | undefined;
    try {
      doc = st.uri ? vscode.Uri.parse(st.uri, true) : undefined;
    } catch {
      doc = undefined;
    }
    if (!doc || !workflowFileFor(doc.fsPath)) {
      this.post({ type: 'error', message: 'wfx: open a workflow.yaml or a case file and run wfx: Show Workflow Graph' });
      return;
    }
    this.doc = doc;
    await this.ensureClient().catch((e) => this.log.warn(`graph restore: ${e instanceof Error ? e.message : String(e)}`));
    await this.refresh();
  }

  /** Zooms the webview as its toolbar does (for keybindings and the integration tests). */
  zoom(action: ZoomAction): void {
    this.post({ type: 'zoom', action });
  }

  /** After a run command: the panel follows the run's document (a case or workflow.yaml). No-op without a panel. */
  afterRun(uri?: string): void {
    if (!this.panel || !uri) return;
    try {
      const u = vscode.Uri.parse(uri);
      if (workflowFileFor(u.fsPath) && u.toString() !== this.doc?.toString()) {
        this.doc = u;
        this.schedule(0);
      }
    } catch {
      // not a URI: keep the tracked document
    }
  }

  /**
   * `wfx/runStatus`: when a run ends that included the shown case (or was started for the shown document, or ran
   * cases of the shown workflow.yaml), the graph is requested again, so it shows the latest run's path.
   */
  onRunStatus(s: RunStatus): void {
    if (!this.panel || !this.doc || s.phase !== 'end') return;
    const shown = this.doc.toString();
    const wf = workflowFileFor(this.doc.fsPath);
    const hit =
      s.uri === shown ||
      s.cases.includes(shown) ||
      (wf !== undefined && this.doc.path.endsWith('/workflow.yaml') && s.cases.some((c) => c.startsWith(shown.replace(/workflow\.yaml$/, 'tests/'))));
    if (!hit) return;
    this.state.followedRuns++;
    this.schedule(0);
  }

  private schedule(ms = DEBOUNCE_MS) {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.refresh();
    }, ms);
  }

  /** Requests `wfx/graph` for the tracked document and posts the answer; stale answers are dropped. */
  async refresh(): Promise<void> {
    const doc = this.doc;
    const c = this.client();
    if (!doc || !this.panel) return;
    const label = doc.path.split('/').pop() ?? doc.toString();
    if (!c || !c.isRunning()) {
      this.post({ type: 'error', message: 'wfx-lsp is not running' });
      return;
    }
    const seq = ++this.seq;
    let res: GraphResponse | undefined;
    try {
      res = await c.sendRequest<GraphResponse>(GRAPH_REQUEST, { textDocument: { uri: doc.toString() } });
    } catch (e) {
      if (seq !== this.seq) return;
      const msg = e instanceof Error ? e.message : String(e);
      this.log.warn(`${GRAPH_REQUEST} failed: ${msg}`);
      this.post({ type: 'error', message: `${GRAPH_REQUEST} failed: ${msg}` });
      return;
    }
    if (seq !== this.seq) return;
    this.state.document = doc.toString();
    this.state.response = res ?? undefined;
    this.state.answered++;
    this.post(graphMessage(res, label, doc.toString()));
  }

  private post(m: HostMessage) {
    this.state.message = m;
    if (m.type === 'graph') this.state.rendered = undefined;
    if (!this.panel) return;
    if (!this.webviewReady) {
      this.pending = m;
      return;
    }
    void this.panel.webview.postMessage(m);
  }

  private async onMessage(raw: unknown) {
    const m = parseWebviewMessage(raw);
    if (!m) return;
    if (m.type === 'ready') {
      this.webviewReady = true;
      const p = this.pending;
      this.pending = undefined;
      if (p && this.panel) void this.panel.webview.postMessage(p);
    } else if (m.type === 'view') {
      const { type: _t, ...v } = m;
      this.state.view = v;
    } else if (m.type === 'rendered') {
      this.state.rendered = { texts: m.texts, svg: m.svg };
    } else if (m.type === 'select') {
      await this.reveal(m.text);
    }
  }

  /** Reveals the declaration of the state whose label is `text` in workflow.yaml (next to the panel). */
  async reveal(text: string): Promise<boolean> {
    const node = stateForLabel(text, this.state.response);
    const wfPath = this.doc && workflowFileFor(this.doc.fsPath);
    if (!node || !wfPath || !this.doc) return false;
    const wfUri = this.doc.with({ path: this.doc.path.replace(/\/(workflow\.yaml|tests\/.+)$/, '/workflow.yaml') });
    const doc = await vscode.workspace.openTextDocument(wfUri);
    const r = nodeRange(node, doc.getText());
    const pos = r ? new vscode.Position(r.start.line, r.start.character) : new vscode.Position(0, 0);
    const range = r ? new vscode.Range(pos, new vscode.Position(r.end.line, r.end.character)) : new vscode.Range(pos, pos);
    const column = vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === wfUri.toString())?.viewColumn
      ?? vscode.window.visibleTextEditors.find((e) => this.isOurs(e.document))?.viewColumn
      ?? vscode.ViewColumn.One;
    const ed = await vscode.window.showTextDocument(doc, { viewColumn: column, selection: range, preserveFocus: false });
    ed.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    this.state.revealed = { id: node.id, uri: wfUri.toString(), line: pos.line };
    return true;
  }

  dispose() {
    if (this.timer) clearTimeout(this.timer);
    this.panel?.dispose();
    for (const s of this.subs) s.dispose();
  }
}
