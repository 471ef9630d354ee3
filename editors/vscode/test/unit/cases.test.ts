import { strict as assert } from 'assert';
import { test } from 'node:test';
import { caseFilter, caseOutcome, explainingEvidence, locateCase, parseRunnerOutput, parseSteps, resultMatches, RunnerResult, stepOutcome } from '../../src/cases';

const CASE = `# comment
title: Refund approved after human review
description: >-
  A refund.
trigger:
  id: manual
steps:
  - send: "Hi, I'd like a refund for order ORD-1001."
  # a comment between steps
  - parked: true
  - reachedState: refund-request
  - reply:
      includes: ["ORD-1001", "/approv/i"]
  - { decide: { to: refund-closed } }
  - succeeded: true   # trailing comment
mocks: []
`;

test('parseSteps finds the top-level steps with their lines and key columns', () => {
  const steps = parseSteps(CASE);
  assert.deepEqual(
    steps.map((s) => [s.index, s.key, s.line, s.column]),
    [
      [0, 'send', 7, 4],
      [1, 'parked', 9, 4],
      [2, 'reachedState', 10, 4],
      [3, 'reply', 11, 4],
      [4, 'decide', 13, 6],
      [5, 'succeeded', 14, 4],
    ],
  );
  assert.equal(steps[2].summary, 'refund-request');
  assert.equal(steps[5].summary, 'true');
});

test('parseSteps: unindented list, CRLF, nothing after steps', () => {
  const steps = parseSteps('title: x\r\nsteps:\r\n- send: hi\r\n- sned: oops\r\n');
  assert.deepEqual(steps.map((s) => [s.key, s.line, s.column]), [['send', 2, 2], ['sned', 3, 2]]);
  assert.deepEqual(parseSteps('title: x\n'), []);
  assert.deepEqual(parseSteps('steps: []\n'), []);
});

test('locateCase, caseFilter and resultMatches', () => {
  const loc = locateCase('/ws/workflows/order-lookup/tests/sub/refund.test.yaml')!;
  assert.equal(loc.root, '/ws');
  assert.equal(loc.slug, 'order-lookup');
  assert.equal(loc.workflowDir, '/ws/workflows/order-lookup');
  assert.equal(loc.caseId, 'sub/refund');
  assert.equal(loc.relPath, 'workflows/order-lookup/tests/sub/refund.test.yaml');
  assert.equal(caseFilter(loc), 'tests/sub/refund.test.yaml');
  assert.ok(resultMatches('sub/refund', loc));
  assert.ok(resultMatches('workflows/order-lookup/tests/sub/refund.test.yaml', loc));
  assert.ok(resultMatches('/ws/workflows/order-lookup/tests/sub/refund.test.yaml', loc));
  assert.ok(!resultMatches('refund', loc));
  assert.ok(!resultMatches('sub/refund-2', loc));
  assert.equal(locateCase('/ws/other.yaml'), undefined);
  assert.equal(locateCase('/ws/workflows/a/workflow.yaml'), undefined);
});

test('runner JSON is mapped to case and step outcomes', () => {
  const out = parseRunnerOutput(`narration\n${JSON.stringify({
    workflow: 'order-lookup',
    results: [
      { id: 'a', verdict: { status: 'passed', failures: [] }, records: [{ kind: 'parked', status: 'passed', step: 1, threshold: null }] },
      {
        id: 'b',
        verdict: { status: 'failed', failures: ['reachedState: refund-request'] },
        records: [
          { kind: 'parked', status: 'passed', step: 1 },
          { kind: 'reachedState', status: 'failed', detail: 'refund-request', step: 2 },
          { kind: 'reply', status: 'not-executed', step: 3 },
        ],
      },
      { id: 'c', verdict: { status: 'failed', failures: ['boom'] }, records: [], error: 'boom' },
      { id: 'd', verdict: { status: 'skipped', failures: [] }, records: [], skipReason: 'later' },
    ],
    exitCode: 1,
    discovered: 4,
  })}`)!;
  assert.equal(out.results.length, 4);
  const [a, b, c, d] = out.results.map(caseOutcome);
  assert.equal(a.outcome, 'passed');
  assert.equal(b.outcome, 'failed');
  assert.deepEqual(b.messages, ['reachedState: refund-request']);
  assert.deepEqual([...b.steps].map(([i, s]) => [i, s.outcome]), [[1, 'passed'], [2, 'failed'], [3, 'skipped']]);
  assert.deepEqual(b.steps.get(2)!.messages, ['reachedState: refund-request']);
  assert.equal(c.outcome, 'errored');
  assert.equal(d.outcome, 'skipped');
  assert.equal(parseRunnerOutput('not json'), undefined);
});

test('stepOutcome: own records decide; otherwise passed only if the run went past the step', () => {
  const o = (status: string, records: { step: number; status: string; kind: string }[], error?: string) =>
    caseOutcome({ id: 'x', verdict: { status, failures: [] }, records, error } as unknown as RunnerResult);
  // a case that never ran (load error): nothing passed
  const never = o('failed', [], 'unknown step `sned`');
  assert.deepEqual([0, 1].map((i) => stepOutcome(never, i)), ['skipped', 'skipped']);
  // step 2 failed: 0 ran before it (passed), 1 has no records but the run went past it, 3 was not reached
  const mid = o('failed', [{ step: 0, status: 'passed', kind: 'send' }, { step: 2, status: 'failed', kind: 'reachedState' }]);
  assert.deepEqual([0, 1, 2, 3].map((i) => stepOutcome(mid, i)), ['passed', 'passed', 'failed', 'skipped']);
  // a passed case: steps without records passed too; not-executed records are skipped
  const ok = o('passed', [{ step: 1, status: 'not-executed', kind: 'grade' }]);
  assert.deepEqual([0, 1].map((i) => stepOutcome(ok, i)), ['passed', 'skipped']);
});

test('a failed step says why: the refusals up to it from the evidence, numbered from 1', () => {
  const r = {
    id: 'hook-veto',
    verdict: { status: 'failed', failures: ['reachedState: pay (committed: none)'] },
    records: [{ kind: 'reachedState', status: 'failed', detail: 'pay (committed: none)', step: 1 }],
    evidence: [
      { stepNumber: 1, state: 'start', kind: 'user', summary: 'user: Pay invoice 7', refusal: false },
      { stepNumber: 1, state: 'start', kind: 'hook', summary: 'before hook hooks/limit.js of pay: veto: Over the limit.', refusal: true },
      { stepNumber: 1, state: 'start', kind: 'tool-call', summary: 'tool read_file {} failed: gone', refusal: true, output: 'gone\nreally' },
      { stepNumber: 3, state: 'start', kind: 'note', summary: 'note error: later', refusal: true },
    ],
  } as unknown as RunnerResult;
  const o = caseOutcome(r);
  const msgs = o.steps.get(1)!.messages;
  assert.equal(msgs[0], 'reachedState: pay (committed: none)');
  assert.equal(
    msgs[1],
    'why:\nstep 1 · in start · before hook hooks/limit.js of pay: veto: Over the limit.\nstep 1 · in start · tool read_file {} failed: gone\n  │ gone\n  │ really',
  );
  assert.deepEqual(explainingEvidence(r, 0).length, 2);
  assert.deepEqual(explainingEvidence(r, 2).length, 3);
});

test('caseOutcome: a case not run for want of an agent is errored with its hint, never passed', () => {
  const o = caseOutcome({
    id: 'x',
    verdict: { status: 'not-run', failures: [] },
    records: [],
    notRun: 'no agent: no agent script `w/tests/x.agent.yaml`, no cassette, and live runs are off',
  } as RunnerResult);
  assert.equal(o.outcome, 'errored');
  assert.deepEqual(o.messages, ['not run: no agent: no agent script `w/tests/x.agent.yaml`, no cassette, and live runs are off']);
  assert.equal(stepOutcome(o, 0), 'skipped');
});
