// Pure helpers for the Test Explorer: where the steps of a case file are, which case a runner result
// belongs to, and what each step's outcome is. No `vscode` import, so the unit tests run under plain node.

/** One `- <key>:` entry of a case's top-level `steps:` list. Lines and columns are 0-based. */
export interface CaseStep {
  /** index into the case's `steps` list; the runner's `record.step` uses the same index */
  index: number;
  /** the step's single key, e.g. `send`, `reachedState` */
  key: string;
  /** a short one-line rendering of the value, for the Test Explorer label */
  summary: string;
  line: number;
  /** column of the key */
  column: number;
}

const TOP_KEY = /^([A-Za-z_][\w-]*)\s*:/;
// `- key:` / `- key: value` / `- { key: value }` ; the key may be quoted
const ITEM = /^(\s*)-\s+(?:\{\s*)?(["']?)([A-Za-z_][\w.-]*)\2\s*:(.*)$/;
const ITEM_ANY = /^(\s*)-(\s|$)/;

/**
 * Finds the items of the top-level `steps:` sequence by scanning lines (no YAML parser: this must work on
 * half-typed files). Items are the `-` lines at the indentation of the first item; anything deeper belongs
 * to the item above. The list ends at the next top-level key.
 */
export function parseSteps(text: string): CaseStep[] {
  const lines = text.split(/\r\n|\r|\n/);
  const steps: CaseStep[] = [];
  let inSteps = false;
  let itemIndent = -1;
  let index = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (/^\s*(#.*)?$/.test(line)) continue; // blank or comment
    if (!inSteps) {
      if (/^steps\s*:\s*(#.*)?$/.test(line)) inSteps = true;
      continue;
    }
    // a top-level key ends the list (a `-` at column 0 is an item of an unindented list)
    if (TOP_KEY.test(line) && !line.startsWith('-')) break;
    const any = ITEM_ANY.exec(line);
    if (!any) continue;
    const indent = any[1].length;
    if (itemIndent < 0) itemIndent = indent;
    if (indent !== itemIndent) continue;
    const m = ITEM.exec(line);
    if (m) {
      const rest = m[4].replace(/\s+#.*$/, '').replace(/\}\s*$/, '').trim();
      steps.push({ index, key: m[3], summary: shorten(rest), line: i, column: line.indexOf(m[3], indent) });
    } else {
      steps.push({ index, key: '?', summary: shorten(line.slice(indent + 1).trim()), line: i, column: indent });
    }
    index++;
  }
  return steps;
}

function shorten(s: string, max = 48): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > max ? one.slice(0, max - 1) + '…' : one;
}

/** Where a case file sits: `<root>/workflows/<slug>/tests/<rel>.test.yaml`. Paths use `/`. */
export interface CaseLocation {
  /** folder that holds `workflows/` */
  root: string;
  slug: string;
  /** `<root>/workflows/<slug>` */
  workflowDir: string;
  /** the runner's case id: the path under `tests/` without `.test.yaml` / `.test.yml` (FORMAT §C.1) */
  caseId: string;
  /** workspace-relative path, `workflows/<slug>/tests/<rel>.test.yaml` */
  relPath: string;
}

export function locateCase(fsPath: string): CaseLocation | undefined {
  const p = fsPath.replace(/\\/g, '/');
  const m = /^(.*?)\/?workflows\/([^/]+)\/tests\/(.+)\.test\.ya?ml$/.exec(p);
  if (!m) return undefined;
  const [, root, slug, rel] = m;
  const relPath = p.slice(root.length).replace(/^\//, '');
  return { root: root || '/', slug, workflowDir: `${root}/workflows/${slug}`, caseId: rel, relPath };
}

/**
 * The FILTER argument that selects exactly this case: the runner matches a plain substring of the
 * workspace-relative path (FORMAT §C.2), so `tests/<rel>.test.yaml` picks this file and no sibling whose
 * name merely starts the same way.
 */
export function caseFilter(loc: CaseLocation): string {
  return loc.relPath.slice(`workflows/${loc.slug}/`.length);
}

/** Does a runner result id (a case id, or a file path for a case that failed to parse) name this case? */
export function resultMatches(resultId: string, loc: CaseLocation): boolean {
  const id = resultId.replace(/\\/g, '/').replace(/\.test\.ya?ml$/, '').replace(/^\.\//, '');
  if (id === loc.caseId) return true;
  // a file path: workspace-relative, tests/-relative or absolute
  const rel = loc.relPath.replace(/\.test\.ya?ml$/, '');
  return id === rel || id === `tests/${loc.caseId}` || id.endsWith('/' + rel);
}

/** The JSON printed by `wfx-lsp test --json` (FORMAT §C.3/§C.4). Unknown fields are ignored. */
export interface RunnerOutput {
  workflow?: string;
  results: RunnerResult[];
  exitCode?: number;
  discovered?: number;
  skipped?: string;
}
export interface RunnerResult {
  id: string;
  title?: string;
  verdict: { status: string; failures?: string[] };
  records?: RunnerRecord[];
  skipReason?: string;
  error?: string;
  /** Why a case was not run (status `not-run`: no agent), with the hint naming the ways to give it one. */
  notRun?: string;
  /** what happened, in order (wfx-lsp's addition to the reference shape, docs/cli.md) */
  evidence?: RunnerEvidence[];
}
/** One entry of `results[].evidence`: `stepNumber` is 1-based, unlike `records[].step`. */
export interface RunnerEvidence {
  stepNumber: number;
  state: string;
  kind: string;
  summary?: string;
  refusal?: boolean;
  output?: string;
}
export interface RunnerRecord {
  kind: string;
  status: string;
  detail?: string;
  step: number;
  score?: number;
  threshold?: number | null;
}

/**
 * The evidence lines that explain a failure at step `index` (0-based, as `records[].step`): every refusal up to
 * and including step `index + 1` in the evidence's 1-based numbering, as `step N · in <state> · <summary>`, a
 * failed tool's multi-line output indented below; at most 20 entries.
 */
export function explainingEvidence(r: RunnerResult, index: number): string[] {
  const out: string[] = [];
  for (const e of r.evidence ?? []) {
    if (out.length >= 20) break;
    if (!e.refusal || typeof e.stepNumber !== 'number' || e.stepNumber > index + 1) continue;
    let line = `step ${e.stepNumber} · in ${e.state} · ${e.summary ?? e.kind}`;
    const more = (e.output ?? '').split('\n');
    if (more.length > 1) line += '\n' + more.slice(0, 12).map((l) => `  │ ${l}`).join('\n');
    out.push(line);
  }
  return out;
}

/** Parses the runner's stdout; tolerates narration before the JSON object. */
export function parseRunnerOutput(stdout: string): RunnerOutput | undefined {
  const start = stdout.indexOf('{');
  if (start < 0) return undefined;
  try {
    const v = JSON.parse(stdout.slice(start));
    if (v && Array.isArray(v.results)) return v as RunnerOutput;
  } catch {
    /* not JSON */
  }
  return undefined;
}

export type Outcome = 'passed' | 'failed' | 'skipped' | 'errored';

export interface StepOutcome {
  outcome: Outcome;
  messages: string[];
}

/** The outcome of one case: its verdict plus one entry per step index that produced records. */
export function caseOutcome(r: RunnerResult): { outcome: Outcome; messages: string[]; steps: Map<number, StepOutcome> } {
  const steps = new Map<number, StepOutcome>();
  for (const rec of r.records ?? []) {
    if (typeof rec.step !== 'number') continue;
    const s = steps.get(rec.step) ?? { outcome: 'passed' as Outcome, messages: [] };
    if (rec.status === 'failed') {
      s.outcome = 'failed';
      s.messages.push(rec.detail ? `${rec.kind}: ${rec.detail}` : rec.kind);
    } else if (rec.status === 'not-executed' && s.outcome === 'passed') {
      s.outcome = 'skipped';
    }
    steps.set(rec.step, s);
  }
  // a failed step also says why: the refusals, vetoes and failed tool calls up to it (issue 16)
  for (const [index, s] of steps) {
    if (s.outcome !== 'failed') continue;
    const why = explainingEvidence(r, index);
    if (why.length) s.messages.push(`why:\n${why.join('\n')}`);
  }
  const status = r.verdict?.status;
  const failures = r.verdict?.failures ?? [];
  let outcome: Outcome;
  if (status === 'passed') outcome = 'passed';
  else if (status === 'skipped') outcome = 'skipped';
  else if (status === 'not-run') outcome = 'errored';
  else if (r.error && !(r.records ?? []).some((x) => x.status === 'failed')) outcome = 'errored';
  else outcome = 'failed';
  const messages = failures.length ? failures : r.error ? [r.error] : r.notRun ? [`not run: ${r.notRun}`] : r.skipReason ? [r.skipReason] : [];
  return { outcome, messages, steps };
}

/**
 * The outcome of step `index` of a case: its own records decide when it has any; otherwise (a step that checks
 * nothing by itself, e.g. `send`) it passed when the case passed, or when the run went past it (a later step
 * has records) and no earlier step failed; else it was not reached: skipped. A case that never ran (a load
 * error, no records) therefore has every step skipped, never passed.
 */
export function stepOutcome(o: ReturnType<typeof caseOutcome>, index: number): Outcome {
  const own = o.steps.get(index);
  if (own) return own.outcome;
  if (o.outcome === 'passed') return 'passed';
  const firstBad = Math.min(...[...o.steps].filter(([, s]) => s.outcome !== 'passed').map(([i]) => i), Infinity);
  const lastRun = Math.max(...o.steps.keys(), -1);
  return index < firstBad && index < lastRun ? 'passed' : 'skipped';
}

