// The *wfx: Show Workflow Graph* webview (command `wfx.showGraph`): one panel beside the editor showing the SVG
// from the server's `wfx/graph` request for the workflow of the active workflow.yaml or case. It is requested
// again 300 ms after the last edit of that workflow.yaml or case, when another of our files becomes active, and
// after a run (the answer's `path` lights the states the case reached). A click on a state's label reveals its
// declaration in workflow.yaml. Pure parts (HTML, CSP, messages, click mapping) are in graph.ts.
import { randomBytes } from 'crypto';
import * as vscode from 'vscode';
import { LanguageClient } from 'vscode-languageclient/node';
import {
  GraphResponse,
  HostMessage,
  graphMessage,
  makeNonce,
  nodeRange,
  parseWebviewMessage,
  stateForLabel,
  webviewHtml,
  workflowFileFor,
} from './graph';

export const GRAPH_REQUEST = 'wfx/graph';
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
}

export class GraphView implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private doc: vscode.Uri | undefined;
  private timer: NodeJS.Timeout | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private seq = 0;
  private webviewReady = false;
  private pending: HostMessage | undefined;
  readonly state: GraphState = { answered: 0 };
  private readonly subs: vscode.Disposable[] = [];

  constructor(
    private readonly client: () => LanguageClient | undefined,
    private readonly log: vscode.LogOutputChannel,
    private readonly isOurs: (doc: vscode.TextDocument) => boolean,
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
      this.webviewReady = false;
      this.panel = vscode.window.createWebviewPanel(
        'wfx.graph',
        'Workflow graph',
        { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
        { enableScripts: true, localResourceRoots: [], retainContextWhenHidden: true },
      );
      const nonce = makeNonce((n) => randomBytes(n));
      this.panel.webview.html = webviewHtml(this.panel.webview.cspSource, nonce);
      this.panel.webview.onDidReceiveMessage((raw) => this.onMessage(raw), undefined, this.subs);
      this.panel.onDidDispose(() => {
        this.panel = undefined;
        this.webviewReady = false;
      }, undefined, this.subs);
    } else {
      this.panel.reveal(vscode.ViewColumn.Beside, true);
    }
    await this.refresh();
  }

  /**
   * After a run command: the server runs in the background and answers the command at once, so the graph of a
   * case is requested every 500 ms until its `path` changes (the run finished) or 60 s have passed; the graph
   * of a workflow.yaml (no path) is requested once. No-op without a panel.
   */
  afterRun(uri?: string): void {
    if (!this.panel) return;
    if (uri) {
      try {
        const u = vscode.Uri.parse(uri);
        if (workflowFileFor(u.fsPath)) this.doc = u;
      } catch {
        // not a URI: keep the tracked document
      }
    }
    const doc = this.doc;
    if (!doc || !/\.test\.ya?ml$/.test(doc.path)) return this.schedule(0);
    const before = this.state.document === doc.toString() ? JSON.stringify(this.state.response?.path ?? null) : undefined;
    const deadline = Date.now() + 60_000;
    const poll = async () => {
      if (!this.panel || this.doc?.toString() !== doc.toString()) return;
      await this.refresh();
      const now = JSON.stringify(this.state.response?.path ?? null);
      if (now !== 'null' && now !== before) return;
      if (Date.now() < deadline) this.pollTimer = setTimeout(() => void poll(), 500);
    };
    if (this.pollTimer) clearTimeout(this.pollTimer);
    void poll();
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
    this.post(graphMessage(res, label));
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
    if (this.pollTimer) clearTimeout(this.pollTimer);
    this.panel?.dispose();
    for (const s of this.subs) s.dispose();
  }
}
