import { strict as assert } from 'assert';
import { minimatch } from 'minimatch';
import { test } from 'node:test';
import { DOCUMENT_SELECTOR, WATCH_GLOB } from '../../src/selector';

// VS Code matches document filter patterns against the absolute path
const matches = (p: string) => DOCUMENT_SELECTOR.some((f) => minimatch(p, f.pattern, { dot: true }));

test('the selector takes workflow, case and agent-script files and cassettes', () => {
  for (const p of [
    '/ws/workflows/order-lookup/workflow.yaml',
    '/ws/workflows/order-lookup/tests/refund.test.yaml',
    '/ws/workflows/order-lookup/tests/sub/dir/refund.test.yaml',
    '/ws/workflows/order-lookup/tests/refund.test.yml',
    '/ws/workflows/order-lookup/tests/bot.agent.yaml',
    '/ws/workflows/order-lookup/tests/refund.cassette.json',
    '/deep/repo/tests/corpus/x/workflows/a/workflow.yaml',
  ]) assert.ok(matches(p), p);
});

test('the selector leaves other YAML alone', () => {
  for (const p of [
    '/ws/other.yaml',
    '/ws/workflow.yaml',
    '/ws/workflows/order-lookup/notes.yaml',
    '/ws/workflows/order-lookup/tests/fixture.yaml',
    '/ws/workflows/order-lookup/sub/workflow.yaml',
    '/ws/.github/workflows/ci.yaml',
    '/ws/workflows/a/tests/x.agent.yml',
    '/ws/workflows/a/tests/fixtures/orders.json',
    '/ws/workflows/a/x.cassette.json',
    '/ws/package.json',
  ]) assert.ok(!matches(p), p);
  for (const f of DOCUMENT_SELECTOR) {
    assert.equal(f.scheme, 'file');
    assert.equal(f.language, f.pattern.endsWith('.json') ? 'json' : 'yaml', f.pattern);
  }
});

test('the watcher glob covers the same files', () => {
  assert.ok(minimatch('/ws/workflows/a/workflow.yaml', WATCH_GLOB));
  assert.ok(minimatch('/ws/workflows/a/tests/b/c.test.yaml', WATCH_GLOB));
  assert.ok(minimatch('/ws/workflows/a/tests/c.cassette.json', WATCH_GLOB));
  assert.ok(!minimatch('/ws/workflows/a/notes.yaml', WATCH_GLOB));
  assert.ok(!minimatch('/ws/workflows/a/tests/fixtures/orders.json', WATCH_GLOB));
});
