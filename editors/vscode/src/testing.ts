// Test Explorer integration: one item per workflow, one per case file, one per step of the case.
// Runs go through `wfx-lsp test <workflow dir> [filter] --json [--skip-grades] --buffers-stdin` and are mapped back
// onto the items; the unsaved buffers of the workspace's `workflows/` files go on stdin, so a run sees what the editor
// shows, as the run lens does (issue 16).
// No run profile exists in an untrusted workspace (running a case executes the runner).
import { spawn } from 'child_process';
import * as vscode from 'vscode';
import {
  CaseLocation,
  caseFilter,
  caseOutcome,
  locateCase,
  Outcome,
  parseRunnerOutput,
  parseSteps,
  resultMatches,
  stepOutcome,
  RunnerResult,
} from './cases';

export const CASE_GLOB = '**/workflows/*/tests/**/*.{test.yaml,test.yml}';

interface CaseData {
  loc: CaseLocation;
  uri: vscode.Uri;
}

export class CaseTests implements vscode.Disposable {
  readonly ctrl: vscode.TestController;
  private profile: vscode.TestRunProfile | undefined;
  private readonly data = new WeakMap<vscode.TestItem, CaseData>();
  private readonly disposables: vscode.Disposable[] = [];
  /** outcome per test item id of the last run (read by the integration tests through the extension's exports) */
  lastResults: Record<string, Outcome> = {};
  /** The messages of the last run's failed or errored items by id, as the Test Results view shows them (tests). */
  lastMessages: Record<string, string[]> = {};
  private discovered: Promise<void> | undefined;

  constructor(
    private readonly serverCommand: () => string | undefined,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.ctrl = vscode.tests.createTestController('wfx', 'wfx cases');
    this.ctrl.resolveHandler = async (item) => {
      if (!item) await this.discoverAll();
    };
    this.ctrl.refreshHandler = async () => {
      this.discovered = undefined;
      await this.discoverAll();
    };
    const watcher = vscode.workspace.createFileSystemWatcher(CASE_GLOB);
    watcher.onDidCreate((u) => this.updateFile(u));
    watcher.onDidChange((u) => this.updateFile(u));
    watcher.onDidDelete((u) => this.removeFile(u));
    this.disposables.push(
      this.ctrl,
      watcher,
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (locateCase(e.document.uri.fsPath) && e.document.uri.scheme === 'file') this.updateText(e.document.uri, e.document.getText());
      }),
    );
    if (vscode.workspace.isTrusted) this.createProfile();
    else this.disposables.push(vscode.workspace.onDidGrantWorkspaceTrust(() => this.createProfile()));
  }

  get hasRunProfile(): boolean {
    return this.profile !== undefined;
  }

  private createProfile() {
    if (this.profile) return;
    this.profile = this.ctrl.createRunProfile('Run', vscode.TestRunProfileKind.Run, (req, token) => this.run(req, token), true);
    this.disposables.push(this.profile);
  }

  /** Finds every case file in the workspace (once; later changes come through the watcher). */
  discoverAll(): Promise<void> {
    if (!this.discovered) {
      this.discovered = (async () => {
        const files = await vscode.workspace.findFiles(CASE_GLOB, '**/node_modules/**');
        files.sort((a, b) => a.fsPath.localeCompare(b.fsPath));
        for (const f of files) await this.updateFile(f);
      })();
    }
    return this.discovered;
  }

  private workflowItem(loc: CaseLocation): vscode.TestItem {
    const id = `workflow:${loc.workflowDir}`;
    let wf = this.ctrl.items.get(id);
    if (!wf) {
      wf = this.ctrl.createTestItem(id, loc.slug, vscode.Uri.file(`${loc.workflowDir}/workflow.yaml`));
      wf.description = 'workflow';
      this.ctrl.items.add(wf);
    }
    return wf;
  }

  private async updateFile(uri: vscode.Uri) {
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    let text: string;
    try {
      text = open ? open.getText() : new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
    } catch {
      return this.removeFile(uri);
    }
    this.updateText(uri, text);
  }

  private updateText(uri: vscode.Uri, text: string) {
    const loc = locateCase(uri.fsPath);
    if (!loc) return;
    const wf = this.workflowItem(loc);
    let item = wf.children.get(uri.toString());
    if (!item) {
      item = this.ctrl.createTestItem(uri.toString(), loc.caseId, uri);
      wf.children.add(item);
    }
    this.data.set(item, { loc, uri });
    const title = /^title\s*:\s*(.+?)\s*$/m.exec(text)?.[1]?.replace(/^(["'])(.*)\1$/, '$2');
    item.label = title && !/^[>|]/.test(title) ? title : loc.caseId;
    item.description = loc.caseId;
    // the gutter's run button sits on the `title:` line (else the first line)
    const titleLine = Math.max(0, text.split(/\r\n|\r|\n/).findIndex((l) => /^title\s*:/.test(l)));
    item.range = new vscode.Range(titleLine, 0, titleLine, 0);
    const steps = parseSteps(text).map((s) => {
      const child = this.ctrl.createTestItem(`${uri.toString()}#${s.index}`, `${s.index + 1}. ${s.key}${s.summary ? ': ' + s.summary : ''}`, uri);
      child.range = new vscode.Range(s.line, s.column, s.line, s.column + s.key.length);
      return child;
    });
    item.children.replace(steps);
  }

  private removeFile(uri: vscode.Uri) {
    const loc = locateCase(uri.fsPath);
    if (!loc) return;
    const wf = this.ctrl.items.get(`workflow:${loc.workflowDir}`);
    if (!wf) return;
    wf.children.delete(uri.toString());
    if (wf.children.size === 0) this.ctrl.items.delete(wf.id);
  }

  /** Runs the given items (all when `include` is empty) and resolves with the outcome per item id. */
  async runForTests(include?: readonly vscode.TestItem[]): Promise<Record<string, Outcome>> {
    await this.discoverAll();
    const cts = new vscode.CancellationTokenSource();
    try {
      await this.run(new vscode.TestRunRequest(include, undefined, this.profile), cts.token);
    } finally {
      cts.dispose();
    }
    return this.lastResults;
  }

  private async run(request: vscode.TestRunRequest, token: vscode.CancellationToken): Promise<void> {
    await this.discoverAll();
    const run = this.ctrl.createTestRun(request);
    this.lastResults = {};
    this.lastMessages = {};
    const excluded = new Set((request.exclude ?? []).map((i) => i.id));
    // group the selected cases by workflow; `whole` = every case of the workflow is selected
    const groups = new Map<string, { wf: vscode.TestItem; cases: vscode.TestItem[]; whole: boolean }>();
    const addCase = (wf: vscode.TestItem, c: vscode.TestItem, whole: boolean) => {
      if (excluded.has(c.id)) return;
      const g = groups.get(wf.id) ?? { wf, cases: [], whole };
      if (!g.cases.includes(c)) g.cases.push(c);
      groups.set(wf.id, g);
    };
    const roots: vscode.TestItem[] = request.include ? [...request.include] : [];
    if (!request.include) this.ctrl.items.forEach((i) => roots.push(i));
    for (const item of roots) {
      if (excluded.has(item.id)) continue;
      if (item.id.startsWith('workflow:')) item.children.forEach((c) => addCase(item, c, true));
      else {
        const caseItem = item.id.includes('#') ? item.parent : item; // a step runs its whole case
        if (caseItem?.parent) addCase(caseItem.parent, caseItem, false);
      }
    }
    for (const g of groups.values()) {
      if (g.whole && g.cases.length !== g.wf.children.size) g.whole = false;
    }
    const command = this.serverCommand();
    try {
      for (const g of groups.values()) {
        if (token.isCancellationRequested) break;
        for (const c of g.cases) {
          run.enqueued(c);
          c.children.forEach((s) => run.enqueued(s));
        }
        const batches: { filter?: string; cases: vscode.TestItem[] }[] = g.whole
          ? [{ cases: g.cases }]
          : g.cases.map((c) => ({ filter: caseFilter(this.data.get(c)!.loc), cases: [c] }));
        for (const b of batches) {
          if (token.isCancellationRequested) break;
          await this.runBatch(run, command, b.cases, b.filter, token);
        }
      }
    } finally {
      run.end();
    }
  }

  private async runBatch(run: vscode.TestRun, command: string | undefined, cases: vscode.TestItem[], filter: string | undefined, token: vscode.CancellationToken) {
    const loc = this.data.get(cases[0])!.loc;
    for (const c of cases) {
      run.started(c);
      c.children.forEach((s) => run.started(s));
    }
    const fail = (msg: string) => {
      for (const c of cases) {
        run.errored(c, new vscode.TestMessage(msg));
        this.lastResults[c.id] = 'errored';
        this.lastMessages[c.id] = [msg];
        c.children.forEach((s) => run.skipped(s));
      }
    };
    if (!command) return fail('wfx-lsp was not found: set wfx.server.path or put wfx-lsp on PATH');
    const skipGrades = vscode.workspace.getConfiguration('wfx', this.data.get(cases[0])!.uri).get<boolean>('runner.skipGrades', true);
    const buffers = dirtyBuffers(loc.root);
    const args = ['test', loc.workflowDir, ...(filter ? [filter] : []), '--json', ...(skipGrades ? ['--skip-grades'] : []), '--buffers-stdin'];
    run.appendOutput(`$ ${command} ${args.join(' ')}\r\n`);
    const unsaved = Object.keys(buffers);
    this.log.info(`run: ${command} ${args.join(' ')} (cwd ${loc.root}; unsaved buffers: ${unsaved.length ? unsaved.join(', ') : 'none'})`);
    const t0 = Date.now();
    const res = await execCancellable(command, args, loc.root, token, JSON.stringify(buffers));
    if (res.stderr) run.appendOutput(res.stderr.replace(/\r?\n/g, '\r\n'));
    if (token.isCancellationRequested) {
      for (const c of cases) run.skipped(c);
      return;
    }
    const out = parseRunnerOutput(res.stdout);
    if (!out) {
      const why = res.error ?? `exit code ${res.code}`;
      return fail(`wfx-lsp test printed no runner JSON (${why})${res.stderr ? ':\n' + res.stderr.slice(-2000) : ''}`);
    }
    const duration = Date.now() - t0;
    for (const c of cases) {
      const d = this.data.get(c)!;
      const r = out.results.find((x) => resultMatches(x.id, d.loc));
      if (!r) {
        run.skipped(c);
        c.children.forEach((s) => run.skipped(s));
        this.lastResults[c.id] = 'skipped';
        continue;
      }
      this.report(run, c, d, r, cases.length === 1 ? duration : undefined);
    }
  }

  private report(run: vscode.TestRun, item: vscode.TestItem, d: CaseData, r: RunnerResult, duration?: number) {
    const o = caseOutcome(r);
    const steps: vscode.TestItem[] = [];
    item.children.forEach((s) => steps.push(s));
    steps.sort((a, b) => stepIndex(a) - stepIndex(b));
    let failLocation: vscode.Location | undefined;
    for (const s of steps) {
      const i = stepIndex(s);
      const so = o.steps.get(i);
      const where = s.range ? new vscode.Location(d.uri, s.range) : undefined;
      const outcome: Outcome = stepOutcome(o, i);
      this.lastResults[s.id] = outcome;
      if (outcome === 'failed') {
        failLocation ??= where;
        const texts = so?.messages.length ? so.messages : ['failed'];
        this.lastMessages[s.id] = texts;
        run.failed(s, texts.map((m) => withLocation(m, where)));
      } else if (outcome === 'skipped') run.skipped(s);
      else run.passed(s);
    }
    this.lastResults[item.id] = o.outcome;
    const texts = o.messages.length ? o.messages : [o.outcome];
    const msgs = () => {
      this.lastMessages[item.id] = texts;
      return texts.map((m) => withLocation(m, failLocation ?? new vscode.Location(d.uri, new vscode.Position(0, 0))));
    };
    switch (o.outcome) {
      case 'passed':
        run.passed(item, duration);
        break;
      case 'skipped':
        run.skipped(item);
        break;
      case 'errored':
        run.errored(item, msgs(), duration);
        break;
      default:
        run.failed(item, msgs(), duration);
    }
  }

  dispose() {
    for (const d of this.disposables) d.dispose();
  }
}

function stepIndex(item: vscode.TestItem): number {
  return Number(item.id.slice(item.id.lastIndexOf('#') + 1));
}

function withLocation(message: string, where: vscode.Location | undefined): vscode.TestMessage {
  const m = new vscode.TestMessage(message);
  m.location = where;
  return m;
}

interface ExecResult {
  code: number | null;
  stdout: string;
  stderr: string;
  error?: string;
}

/**
 * The unsaved (dirty) text documents below `<root>/workflows/`, as the `--buffers-stdin` map: workspace-relative
 * path with `/` → full text. Only `file:` documents; the runner refuses paths outside `workflows/`.
 */
export function dirtyBuffers(root: string): Record<string, string> {
  const base = root.replace(/\\/g, '/').replace(/\/$/, '');
  const out: Record<string, string> = {};
  for (const d of vscode.workspace.textDocuments) {
    if (!d.isDirty || d.uri.scheme !== 'file') continue;
    const p = d.uri.fsPath.replace(/\\/g, '/');
    if (!p.startsWith(base + '/workflows/')) continue;
    out[p.slice(base.length + 1)] = d.getText();
  }
  return out;
}

function execCancellable(command: string, args: string[], cwd: string, token: vscode.CancellationToken, stdin: string): Promise<ExecResult> {
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    const child = spawn(command, args, { cwd, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    // the server may exit before reading all of stdin (a refused input): ignore EPIPE
    child.stdin.on('error', () => undefined);
    child.stdin.end(stdin);
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    const sub = token.onCancellationRequested(() => child.kill());
    child.on('error', (e) => {
      sub.dispose();
      resolve({ code: null, stdout, stderr, error: e.message });
    });
    child.on('close', (code) => {
      sub.dispose();
      resolve({ code, stdout, stderr });
    });
  });
}
