// The wfx VS Code client: starts `wfx-lsp lsp` over stdio for workflow and case files only (so it coexists with
// the YAML extension), restarts it with backoff after crashes, forwards the run commands to the server, and
// hosts the Test Explorer controller (testing.ts).
import * as vscode from 'vscode';
import {
  CloseAction,
  CloseHandlerResult,
  ErrorAction,
  ErrorHandlerResult,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  State,
  TransportKind,
  WorkDoneProgress,
  WorkDoneProgressCancelNotification,
} from 'vscode-languageclient/node';
import { parseRunnerOutput } from './cases';
import { resolveDocLinks } from './docLinks';
import { DOCUMENT_SELECTOR, WATCH_GLOB } from './selector';
import { backoffMs, isFailure, ResolvedServer, resolveServer } from './server';
import { GRAPH_VIEW_TYPE, GraphView, RunStatus } from './graphView';
import { CaseTests } from './testing';
import { registerYamlContributor, writeYamlSchemasSetting } from './yamlSchemas';

const RUN_COMMANDS = ['wfx.runCase', 'wfx.runAllCases'];
/** *● Record with model* (shown only with `wfx.run.allowLive`; the server refuses it while the setting is off) */
const RECORD_CASE = 'wfx.recordCase';
const SHOW_TRANSCRIPT = 'wfx.showTranscript';
const CRASH_WINDOW_MS = 3 * 60 * 1000;
const MAX_CRASHES = 5;

let client: LanguageClient | undefined;
let starting: Promise<void> | undefined;
let log: vscode.LogOutputChannel;
let ctx: vscode.ExtensionContext;
let missingBinaryShown = false;
let graphView: GraphView | undefined;
const crashes: number[] = [];
/** run commands registered client-side because the server did not announce them */
const registeredFallbacks = new Set<string>();

/** What the extension exports, for its integration tests. */
export interface WfxApi {
  client(): LanguageClient | undefined;
  /** the extension's own log lines (not the server's), newest last */
  recentLog(): string[];
  ready(): Promise<void>;
  testing: CaseTests;
  /** the workflow graph webview (`wfx.showGraph`): its last request, answer and what the webview drew */
  graph: GraphView;
  /** the last *Run all cases* from the editor: the progress messages shown and the result message */
  runAll(): RunAllRecord | undefined;
  /** the last *Record with model*: the progress messages shown (one per model call) and how it ended */
  record(): RunAllRecord | undefined;
}

/** What *Run all cases* showed (read by the integration tests). */
export interface RunAllRecord {
  uri: string;
  /** the progress notification's messages, in order (`case 2 of 5: refund-approved.test.yaml`) */
  progress: string[];
  /** the last `wfx/runStatus` of the run (`end` or `cancelled`), or undefined while it runs */
  status?: RunStatus;
  /** the result message shown when it ended */
  result?: string;
}

const RUN_STATUS = 'wfx/runStatus';
/** listeners of `wfx/runStatus` (the graph panel, running *Run all cases* notifications) */
const runListeners = new Set<(s: RunStatus) => void>();
let lastRunAll: RunAllRecord | undefined;
/** How long *Run all cases* waits for the server's `begin` before it drops the progress notification. */
const RUN_BEGIN_TIMEOUT_MS = 10_000;

const baseName = (uri: string) => decodeURIComponent(uri.split('/').pop() ?? uri);

/**
 * *Run all cases* (`wfx.runAllCases`, its lens on workflow.yaml): a cancellable progress notification, `case i of
 * n: <file>` as the server's `wfx/runStatus` reports each case, then the verdict counts with buttons to open the
 * Test Explorer or the output. Cancel sends `wfx.cancelRun [uri]`. `listen` is registered before the command is
 * sent, so no status is missed.
 */
function runAllProgress(uri: string, c: LanguageClient): { listen: () => void } {
  const rec: RunAllRecord = { uri, progress: [] };
  lastRunAll = rec;
  let onStatus: ((s: RunStatus) => void) | undefined;
  const finished = new Promise<RunStatus | undefined>((resolve) => {
    let begun = false;
    onStatus = (s) => {
      if (s.uri !== uri) return;
      if (s.phase === 'begin') begun = true;
      if (s.phase === 'end' || s.phase === 'cancelled') {
        runListeners.delete(onStatus!);
        rec.status = s;
        resolve(s);
      }
    };
    setTimeout(() => {
      if (!begun && !rec.status) {
        runListeners.delete(onStatus!);
        resolve(undefined);
      }
    }, RUN_BEGIN_TIMEOUT_MS);
  });
  const title = `wfx: running the cases of ${uri.replace(/\/workflow\.yaml$/, '').split('/').pop()}`;
  void vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title, cancellable: true },
    async (progress, token) => {
      let last = 0;
      const report = (s: RunStatus) => {
        if (s.uri !== uri || s.total === 0) return;
        if (s.phase === 'begin' || s.phase === 'case') {
          const message = s.phase === 'begin' ? `case 1 of ${s.total}` : `case ${Math.min(s.done + 1, s.total)} of ${s.total} (${s.done} done${s.case ? `, last ${baseName(s.case)}` : ''})`;
          rec.progress.push(message);
          progress.report({ message, increment: ((s.done - last) * 100) / s.total });
          last = s.done;
        }
      };
      runListeners.add(report);
      token.onCancellationRequested(() => {
        void c.sendRequest(ExecuteCommandRequest.type, { command: 'wfx.cancelRun', arguments: [uri] }).catch(() => undefined);
      });
      try {
        return await finished;
      } finally {
        runListeners.delete(report);
      }
    },
  );
  void finished.then(async (s) => {
    if (!s) return;
    const k = s.counts ?? { passed: 0, failed: 0, skipped: 0, notRun: s.total };
    const head = s.phase === 'cancelled' ? 'run cancelled' : `${s.total} case${s.total === 1 ? '' : 's'} ran`;
    const msg = `wfx: ${head}: ${k.passed} passed, ${k.failed} failed, ${k.notRun} not run${k.skipped ? `, ${k.skipped} skipped` : ''}`;
    rec.result = msg;
    log.info(msg);
    const show = k.failed || k.notRun ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
    const pick = await show(msg, 'Open Test Explorer', 'Show Output');
    if (pick === 'Open Test Explorer') await vscode.commands.executeCommand('workbench.view.testing.focus');
    else if (pick === 'Show Output') log.show();
  });
  return { listen: () => onStatus && runListeners.add(onStatus) };
}

const cfg = () => vscode.workspace.getConfiguration('wfx');

function server(): ResolvedServer | { error: string; tried: string[] } {
  return resolveServer({
    settingPath: cfg().get<string>('server.path'),
    extensionPath: ctx.extensionPath,
    workspaceFolder: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
  });
}

/** The `wfx` settings as one plain object (initializationOptions; workspace/configuration is answered by the client). */
function settingsObject(): unknown {
  const c = cfg();
  return {
    server: { enabled: c.get('server.enabled'), path: c.get('server.path') },
    runner: { command: c.get('runner.command') ?? null, skipGrades: c.get('runner.skipGrades') },
    inlayHints: { lengthBudget: c.get('inlayHints.lengthBudget') },
    run: { allowLive: c.get('run.allowLive') },
    trace: { server: c.get('trace.server') },
  };
}

async function reportMissingBinary(message: string) {
  log.error(message);
  if (missingBinaryShown) return;
  missingBinaryShown = true;
  const pick = await vscode.window.showErrorMessage(`wfx: ${message}`, 'Open Settings', 'Show Output');
  if (pick === 'Open Settings') await vscode.commands.executeCommand('workbench.action.openSettings', 'wfx.server.path');
  else if (pick === 'Show Output') log.show();
}

function normalizeRunArgs(command: string, args: unknown[]): unknown[] {
  if (args.length) return args.map((a) => (a instanceof vscode.Uri ? a.toString() : a));
  const doc = vscode.window.activeTextEditor?.document;
  if (doc) return [doc.uri.toString()];
  throw new Error(`${command} needs a case or workflow file: open one first`);
}

function showRunResult(result: unknown) {
  const text = typeof result === 'string' ? result : result ? JSON.stringify(result) : '';
  const out = typeof result === 'string' ? parseRunnerOutput(result) : parseRunnerOutput(text);
  if (out) {
    const n = (s: string) => out.results.filter((r) => r.verdict?.status === s).length;
    const msg = `wfx: ${n('passed')} passed, ${n('failed')} failed, ${n('skipped')} skipped`;
    log.info(msg);
    if (n('failed')) vscode.window.showWarningMessage(msg, 'Show Output').then((p) => p && log.show());
    else vscode.window.showInformationMessage(msg);
  } else if (text) {
    log.info(`run result: ${text.slice(0, 2000)}`);
  }
}

/**
 * `wfx.showTranscript`: asks the server for the last run's transcript of a case (the argument, else the active
 * editor's document) and opens it beside the case as an untitled Markdown document (issue 16). The server
 * answers `{title, markdown}`, or null when the case has not run in this session.
 */
async function showTranscript(args: unknown[], next: (command: string, args: unknown[]) => Promise<unknown>): Promise<unknown> {
  const a = args[0];
  const uri = typeof a === 'string' ? a : a instanceof vscode.Uri ? a.toString() : vscode.window.activeTextEditor?.document.uri.toString();
  if (!uri) {
    vscode.window.showInformationMessage('wfx: open a case file to see the transcript of its last run');
    return undefined;
  }
  const r = (await next(SHOW_TRANSCRIPT, [uri])) as { title?: unknown; markdown?: unknown } | null | undefined;
  if (!r || typeof r.markdown !== 'string') {
    vscode.window.showInformationMessage('wfx: this case has not run in this session; run it first (▶ Run case)');
    return undefined;
  }
  const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: r.markdown });
  await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true });
  return r;
}

async function runCommand(command: string, args: unknown[], next?: (command: string, args: unknown[]) => Promise<unknown>): Promise<unknown> {
  if (!vscode.workspace.isTrusted) {
    vscode.window.showWarningMessage('wfx: running cases is disabled in an untrusted workspace');
    return undefined;
  }
  const a = normalizeRunArgs(command, args);
  const c = client;
  if (!c || !c.isRunning()) throw new Error('wfx-lsp is not running');
  if (command === 'wfx.runAllCases' && typeof a[0] === 'string') runAllProgress(a[0], c).listen();
  const result = next ? await next(command, a) : await c.sendRequest(ExecuteCommandRequest.type, { command, arguments: a });
  showRunResult(result);
  graphView?.afterRun(typeof a[0] === 'string' ? a[0] : undefined);
  return result;
}

let lastRecord: RunAllRecord | undefined;

/**
 * *● Record with model* (`wfx.recordCase`): sends the command with the client's own `workDoneToken` and shows the
 * server's progress on it in a cancellable notification (vscode-languageclient would show server-created progress
 * in the status bar only, where it cannot be cancelled): one message per model call, *Cancel* sends
 * `window/workDoneProgress/cancel` (the server then writes nothing), and the end message is logged and shown.
 */
async function recordCommand(args: unknown[]): Promise<unknown> {
  if (!vscode.workspace.isTrusted) {
    vscode.window.showWarningMessage('wfx: recording with the model is disabled in an untrusted workspace');
    return undefined;
  }
  const a = normalizeRunArgs(RECORD_CASE, args);
  const c = client;
  if (!c || !c.isRunning()) throw new Error('wfx-lsp is not running');
  const uri = String(a[0]);
  const token = `wfx-record-client-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  const rec: RunAllRecord = { uri, progress: [] };
  lastRecord = rec;
  let finish: (m: string | undefined) => void = () => undefined;
  let report: ((m: string) => void) | undefined;
  const ended = new Promise<string | undefined>((resolve) => (finish = resolve));
  const sub = c.onProgress(WorkDoneProgress.type, token, (v) => {
    if (v.kind === 'report' && v.message) rec.progress.push(v.message);
    if (v.kind === 'end') finish(v.message ?? 'ended');
    if (v.kind !== 'end' && v.message) report?.(v.message);
  });
  void vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `wfx: recording ${baseName(uri)} with the model`, cancellable: true },
    async (progress, ct) => {
      report = (message) => progress.report({ message });
      ct.onCancellationRequested(() => void c.sendNotification(WorkDoneProgressCancelNotification.type, { token }));
      try {
        return await ended;
      } finally {
        sub.dispose();
      }
    },
  );
  let result: unknown;
  try {
    result = await c.sendRequest(ExecuteCommandRequest.type, { command: RECORD_CASE, arguments: a, workDoneToken: token });
  } catch (e) {
    const m = e instanceof Error ? e.message : String(e);
    rec.result = `refused: ${m}`;
    finish(undefined);
    vscode.window.showErrorMessage(`wfx: ${m}`);
    return undefined;
  }
  void ended.then((m) => {
    if (!m) return;
    rec.result = m;
    log.info(`recording of ${baseName(uri)}: ${m}`);
    vscode.window.showInformationMessage(`wfx: recording of ${baseName(uri)}: ${m}`);
    graphView?.afterRun(uri);
  });
  return result;
}

function makeClient(srv: ResolvedServer): LanguageClient {
  const serverOptions: ServerOptions = {
    // vscode-languageclient appends --stdio for TransportKind.stdio; `wfx-lsp lsp` accepts and ignores it
    run: { command: srv.command, args: ['lsp'], transport: TransportKind.stdio },
    debug: { command: srv.command, args: ['lsp'], transport: TransportKind.stdio, options: { env: { ...process.env, RUST_LOG: 'debug' } } },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: DOCUMENT_SELECTOR,
    outputChannel: serverChannel(log),
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    initializationOptions: settingsObject(),
    synchronize: {
      configurationSection: 'wfx',
      fileEvents: vscode.workspace.createFileSystemWatcher(WATCH_GLOB),
    },
    errorHandler: {
      error: (_e, _m, count): ErrorHandlerResult => ({ action: (count ?? 0) <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown }),
      closed: async (): Promise<CloseHandlerResult> => {
        const now = Date.now();
        crashes.push(now);
        while (crashes.length && now - crashes[0] > CRASH_WINDOW_MS) crashes.shift();
        if (crashes.length > MAX_CRASHES) {
          vscode.window
            .showErrorMessage(`wfx-lsp crashed ${crashes.length} times in 3 minutes and will not be restarted.`, 'Restart', 'Show Output')
            .then((p) => (p === 'Restart' ? vscode.commands.executeCommand('wfx.restartServer') : p && log.show()));
          return { action: CloseAction.DoNotRestart, handled: true };
        }
        const delay = backoffMs(crashes.length);
        log.warn(`wfx-lsp exited unexpectedly; restarting in ${delay} ms (crash ${crashes.length} in the last 3 minutes)`);
        await new Promise((r) => setTimeout(r, delay));
        return { action: CloseAction.Restart, handled: true };
      },
    },
    middleware: {
      // hovers and completion docs link to docs/reference.md#…: open the copy bundled in the extension
      provideHover: async (doc, pos, token, next) => {
        const h = await next(doc, pos, token);
        if (h) h.contents = h.contents.map((c) => (c instanceof vscode.MarkdownString ? docLinks(c) : c));
        return h;
      },
      resolveCompletionItem: async (item, token, next) => {
        const r = await next(item, token);
        if (r && r.documentation instanceof vscode.MarkdownString) r.documentation = docLinks(r.documentation);
        return r;
      },
      provideCompletionItem: async (doc, pos, cx, token, next) => {
        const r = await next(doc, pos, cx, token);
        const items = Array.isArray(r) ? r : r?.items ?? [];
        for (const i of items) if (i.documentation instanceof vscode.MarkdownString) i.documentation = docLinks(i.documentation);
        return r;
      },
      // commands the server announces (executeCommandProvider) are registered by the client library;
      // this keeps their arguments and the trust check the same as the client-side fallbacks below
      executeCommand: (command, args, next) =>
        RUN_COMMANDS.includes(command)
          ? runCommand(command, args, next)
          : command === RECORD_CASE
            ? recordCommand(args)
            : command === SHOW_TRANSCRIPT
              ? showTranscript(args, next)
              : next(command, args),
    },
  };
  const lc = new LanguageClient('wfx', 'wfx', serverOptions, clientOptions);
  // `experimental.wfxRunStatus`: the server reports runs with `wfx/runStatus` (docs/lsp-extensions.md) instead of
  // work-done progress, which VS Code would show only in the status bar
  lc.registerFeature({
    fillClientCapabilities: (caps) => {
      caps.experimental = { ...(caps.experimental ?? {}), wfxRunStatus: true };
    },
    initialize: () => undefined,
    getState: () => ({ kind: 'static' }),
    clear: () => undefined,
  });
  return lc;
}

/** `m` with its `docs/reference.md#…` links pointing at the extension's bundled copy (docLinks.ts). */
function docLinks(m: vscode.MarkdownString): vscode.MarkdownString {
  const base = vscode.Uri.joinPath(ctx.extensionUri, 'docs').toString() + '/';
  const value = resolveDocLinks(m.value, base);
  if (value === m.value) return m;
  const out = new vscode.MarkdownString(value, m.supportThemeIcons);
  out.isTrusted = m.isTrusted;
  out.supportHtml = m.supportHtml;
  out.baseUri = m.baseUri;
  return out;
}

function onRunStatus(s: RunStatus) {
  graphView?.onRunStatus(s);
  for (const l of [...runListeners]) l(s);
}

async function start(): Promise<void> {
  if (client || starting) return starting;
  if (!cfg().get<boolean>('server.enabled', true)) {
    log.info('wfx.server.enabled is false: not starting wfx-lsp (schema-only mode)');
    return;
  }
  const srv = server();
  if (isFailure(srv)) {
    log.error(`tried: ${srv.tried.join(', ')}`);
    return reportMissingBinary(srv.error);
  }
  log.info(`starting ${srv.command} lsp (from ${srv.source})`);
  const c = makeClient(srv);
  client = c;
  starting = (async () => {
    try {
      c.onNotification(RUN_STATUS, (s: RunStatus) => onRunStatus(s));
      await c.start();
      const claimed = c.initializeResult?.capabilities.executeCommandProvider?.commands ?? [];
      for (const cmd of RUN_COMMANDS) {
        if (claimed.includes(cmd) || registeredFallbacks.has(cmd)) continue;
        registeredFallbacks.add(cmd);
        ctx.subscriptions.push(vscode.commands.registerCommand(cmd, (...args: unknown[]) => runCommand(cmd, args)));
      }
    } catch (e) {
      log.error(`wfx-lsp failed to start: ${e instanceof Error ? e.message : String(e)}`);
      client = undefined;
      vscode.window.showErrorMessage(`wfx: wfx-lsp failed to start (${srv.command})`, 'Show Output').then((p) => p && log.show());
    } finally {
      starting = undefined;
    }
  })();
  return starting;
}
async function stop(): Promise<void> {
  const c = client;
  client = undefined;
  if (c && c.state !== State.Stopped) await c.stop().catch((e) => log.warn(`stop: ${e}`));
}

async function restart(): Promise<void> {
  crashes.length = 0;
  missingBinaryShown = false;
  await starting;
  await stop();
  await start();
}

/**
 * The channel the language client writes to. vscode-languageclient prefixes each `window/logMessage` line with
 * `[Info  - 10:00:00]` and appends the server's stderr as is; the `wfx` channel is a log channel that adds its
 * own timestamp and level, so the prefix is stripped and the line logged at its level (no doubled timestamps,
 * issue 16). The server writes only errors to stderr, so a stderr line is logged as an error.
 */
function serverChannel(ch: vscode.LogOutputChannel): vscode.OutputChannel {
  let partial = '';
  const line = (text: string) => {
    const m = /^\[(Trace|Debug|Info|Warn|Error)\s*- [^\]]*\] ?([\s\S]*)$/.exec(text);
    if (!m) return ch.info(text);
    const body = m[2];
    switch (m[1]) {
      case 'Trace': return ch.trace(body);
      case 'Debug': return ch.debug(body);
      case 'Warn': return ch.warn(body);
      case 'Error': return ch.error(body);
      default: return ch.info(body);
    }
  };
  return {
    name: ch.name,
    append: (v: string) => {
      const parts = (partial + v).split('\n');
      partial = parts.pop() ?? '';
      for (const p of parts) if (p.trim()) ch.error(p);
    },
    appendLine: (v: string) => line(v),
    replace: (v: string) => ch.replace(v),
    clear: () => ch.clear(),
    show: (a?: unknown, b?: boolean) => (typeof a === 'boolean' ? ch.show(a) : ch.show(b)),
    hide: () => ch.hide(),
    dispose: () => undefined,
  } as vscode.OutputChannel;
}

const memory: string[] = [];
/** Keeps the last 200 lines the extension itself logs, for the integration tests' failure reports. */
function withMemory(ch: vscode.LogOutputChannel): vscode.LogOutputChannel {
  for (const level of ['trace', 'debug', 'info', 'warn', 'error'] as const) {
    const orig = ch[level].bind(ch) as (m: string | Error, ...a: unknown[]) => void;
    (ch as unknown as Record<string, unknown>)[level] = (m: string | Error, ...a: unknown[]) => {
      memory.push(`${level}: ${m instanceof Error ? m.message : m}`);
      if (memory.length > 200) memory.shift();
      orig(m, ...a);
    };
  }
  return ch;
}

const isOurs = (doc: vscode.TextDocument) => vscode.languages.match(DOCUMENT_SELECTOR, doc) > 0;

export async function activate(context: vscode.ExtensionContext): Promise<WfxApi> {
  ctx = context;
  log = withMemory(vscode.window.createOutputChannel('wfx', { log: true }));
  context.subscriptions.push(log);
  log.info(`wfx ${context.extension.packageJSON.version} on VS Code ${vscode.version}; trusted: ${vscode.workspace.isTrusted}`);

  const testing = new CaseTests(() => {
    const s = server();
    return isFailure(s) ? undefined : s.command;
  }, log);
  const graph = new GraphView(() => client, log, isOurs, () => start());
  graphView = graph;
  context.subscriptions.push(
    testing,
    graph,
    vscode.commands.registerCommand('wfx.restartServer', restart),
    vscode.commands.registerCommand('wfx.showOutput', () => log.show()),
    vscode.commands.registerCommand('wfx.showGraph', (uri?: vscode.Uri) => graph.show(uri instanceof vscode.Uri ? uri : undefined)),
    // a window reload restores the graph panel (graphView.ts `restore`)
    vscode.window.registerWebviewPanelSerializer(GRAPH_VIEW_TYPE, {
      deserializeWebviewPanel: (panel, state) => graph.restore(panel, state),
    }),
    vscode.commands.registerCommand('wfx.configureYamlSchemas', () => writeYamlSchemasSetting(context.extensionPath)),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (e.affectsConfiguration('wfx.server.enabled')) {
        if (cfg().get<boolean>('server.enabled', true)) await start();
        else {
          await stop();
          await registerYamlContributor(context.extensionPath, () => !cfg().get<boolean>('server.enabled', true), log);
        }
      } else if (e.affectsConfiguration('wfx.server.path')) await restart();
    }),
    { dispose: () => void stop() },
  );

  if (!cfg().get<boolean>('server.enabled', true)) {
    await registerYamlContributor(context.extensionPath, () => !cfg().get<boolean>('server.enabled', true), log);
  }

  // Start now when the workspace has workflows or one of our files is open; otherwise (activated by some
  // unrelated YAML file) wait until one of ours opens, so plain YAML projects never spawn the server.
  const startWhenOurs = vscode.workspace.onDidOpenTextDocument((doc) => {
    if (isOurs(doc)) {
      startWhenOurs.dispose();
      void start();
    }
  });
  context.subscriptions.push(startWhenOurs);
  const hasWorkflows = (await vscode.workspace.findFiles('**/workflows/*/workflow.yaml', '**/node_modules/**', 1)).length > 0;
  if (hasWorkflows || vscode.workspace.textDocuments.some(isOurs)) {
    startWhenOurs.dispose();
    void start();
  }
  if (hasWorkflows) void testing.discoverAll();

  return {
    client: () => client,
    recentLog: () => [...memory],
    ready: async () => {
      await starting;
    },
    testing,
    graph,
    runAll: () => lastRunAll,
    record: () => lastRecord,
  };
}

export async function deactivate(): Promise<void> {
  await stop();
}
