// Integration tests of editors/vscode in the real VS Code extension host (extensionTestsPath contract:
// export run(): Promise<void>; a rejection fails the run). Started by ext-tests.js. process.env is the VS Code
// server's environment: WORKSPACE_DIR and EXPECT_* pass through; `wfx-lsp` is the shim first on PATH.
// Every check prints `PASS vscode.<name>` / `FAIL vscode.<name>`; all checks run, then the first failure rejects.
// EXPECT_* as in nvim/e2e.lua ("-" skips), plus EXPECT_RUN: "-" skips the verdict checks of the Test Explorer
// run (discovery and "every case got an outcome" are still checked), the run-case command and the hints after it;
// EXPECT_CLOSED_DIAG: the diagnostic a closed case gets when workflow.yaml renames its state ("-" skips; also
// open_files_only_setting: wfx.diagnostics.openFilesOnly on clears it, off brings it back);
// EXPECT_GRAPH: a state id the `wfx.showGraph` webview must show ("-" skips the graph checks).
// EXPECT_EVIDENCE: "on" runs each failing case of workflows/pay (runner/tests/fixtures/evidence, one per refusal
// class) from the editor and expects the hover on its failed step to name the reason, and the transcript its
// verdict lens opens (wfx.showTranscript, a Markdown document beside the case) and the Test Explorer's message on
// the failed step (a run of workflows/pay from its Test Explorer item) to name it too ("-" skips; issue 16).
// EXPECT_COMPLETION_EDITS: "on" checks that completion items' edits keep an anchor and add the space after a bare
// `reachedState:` ("-" skips); EXPECT_OUTLINE: "on" checks workflow.yaml's outline (every top-level key) and the
// document highlight of a state ("-" skips); EXPECT_LOG_LEVELS: "on" checks that the server's startup line is
// logged at info without a second timestamp ("-" skips); EXPECT_AGENT_LENS: "on" checks that the run lens names the
// agent (`(no agent)` on broken.test.yaml, `(cassette)` once a cassette is written beside delayed-orders-ok);
// EXPECT_CASSETTE: "on" checks that cassette's lenses and hover (issue 15; "-" skips each).
// Issue 16: with EXPECT_RENAME ("-" skips), key_after_block_scalar (prepareRename, references, definition and rename at the first
// character of `clarify:` as written and with the blank line before it deleted); with EXPECT_HOVER, hover_doc_link
// (the hover's docs/reference.md link points at the extension's bundled copy, which has the anchor); with
// EXPECT_CLOSED_DIAG, folder_rename_delete (a workflow folder made, renamed and deleted on disk moves and clears
// its closed case's diagnostic); with EXPECT_LOG_LEVELS, output_panel_one_timestamp (the `wfx` channel's log file, what the Output panel shows: the
// startup line has one timestamp and [info]).
// EXPECT_RECORD: "on" checks the *● Record with model* gate (issue 15 item 8): with wfx.run.allowLive off no record
// lens and the server refuses wfx.recordCase; turned on in the workspace settings, the lens appears on a case and
// *● Record all with model* on workflow.yaml, and (only when no ARCHMAX_* variable is set) the command ends with the
// missing-variable error on the extension's progress ("-" skips; the recording itself is tested in tests/lsp_record.rs).
const vscode = require('vscode');
const assert = require('assert');
const path = require('path');
const fs = require('fs');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const expect = (k, d) => {
  const v = process.env[k] === undefined ? d : process.env[k];
  return v === '-' ? null : v;
};
const X = {
  diag: expect('EXPECT_DIAG', 'unknown step'),
  diagPos: expect('EXPECT_DIAG_POS', '4,4'),
  diagSource: expect('EXPECT_DIAG_SOURCE', 'wfx'),
  completion: expect('EXPECT_COMPLETION', 'orders-question,refund-request'),
  triggerCompletion: expect('EXPECT_TRIGGER_COMPLETION', 'manual,report_requested'),
  hover: expect('EXPECT_HOVER', '.'),
  rename: expect('EXPECT_RENAME', 'workflow.yaml,.test.yaml'),
  lens: expect('EXPECT_LENS', 'Run case (agent script)'),
  agentLens: expect('EXPECT_AGENT_LENS', 'on'),
  cassette: expect('EXPECT_CASSETTE', 'on'),
  workflowLens: expect('EXPECT_WORKFLOW_LENS', 'Run all cases'),
  coverageLens: expect('EXPECT_COVERAGE_LENS', 'reached by 9 cases'),
  hint: expect('EXPECT_HINT', '/60'),
  run: expect('EXPECT_RUN', 'on'),
  graph: expect('EXPECT_GRAPH', 'refund-request'),
  closedDiag: expect('EXPECT_CLOSED_DIAG', 'general-question'),
  evidence: expect('EXPECT_EVIDENCE', 'on'),
  completionEdits: expect('EXPECT_COMPLETION_EDITS', 'on'),
  outline: expect('EXPECT_OUTLINE', 'on'),
  logLevels: expect('EXPECT_LOG_LEVELS', 'on'),
  record: expect('EXPECT_RECORD', 'on'),
};
// issue 16, "done when": each refusal class's case of workflows/pay and a reason its failed step's hover must show
const EVIDENCE = [
  ['hook-veto', 'Payments over 1000 EUR need a second approver'],
  ['governance', 'Blocked by governance'],
  ['failed-tool', 'no such file or folder'],
  ['unmocked', 'is not available in the simulator'],
  ['signature', 'the run finished without its returns'],
  ['no-edge', 'is not a transition of state'],
];
const hoverText = (hovers) => (hovers || []).flatMap((h) => h.contents.map((c) => (typeof c === 'string' ? c : c.value))).join('\n');
const EXT_ID = 'wfx.wfx-lsp';
const labelText = (l) => (typeof l === 'string' ? l : Array.isArray(l) ? l.map((p) => p.value).join('') : l.label);

async function waitFor(pred, ms = 15000, step = 100) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await pred();
    if (v || Date.now() > end) return v;
    await sleep(step);
  }
}

exports.run = async function run() {
  if (process.env.WFX_E2E_UNTRUSTED === '1') return runUntrusted();
  const ws = vscode.workspace.workspaceFolders[0].uri;
  const file = (rel) => vscode.Uri.joinPath(ws, ...rel.split('/'));
  const failures = [];
  const results = {};
  const check = async (name, fn) => {
    try {
      results[name] = (await fn()) ?? true;
      console.log(`PASS vscode.${name}`);
    } catch (e) {
      results[name] = String(e && e.message ? e.message : e);
      failures.push(name);
      console.log(`FAIL vscode.${name}: ${results[name]}`);
    }
  };
  const skip = (name) => console.log(`SKIP vscode.${name}`);
  const open = async (rel) => {
    const doc = await vscode.workspace.openTextDocument(file(rel));
    await vscode.window.showTextDocument(doc);
    return doc;
  };

  const broken = await open('workflows/order-lookup/tests/broken.test.yaml');
  let api;
  await check('activate', async () => {
    const ext = vscode.extensions.getExtension(EXT_ID);
    assert.ok(ext, `extension ${EXT_ID} not found`);
    api = await waitFor(() => ext.isActive && ext.exports, 20000);
    assert.ok(api, 'extension did not activate');
    await api.ready();
    const c = await waitFor(() => api.client() && api.client().isRunning(), 20000);
    assert.ok(c, 'language client is not running');
    return { trusted: vscode.workspace.isTrusted, server: api.client().initializeResult?.serverInfo };
  });
  if (!api) throw new Error('extension did not activate; nothing else to check');

  // issue 16: the server's startup line reaches the `wfx` log channel at its level (info), once, without the
  // language client's `[Info  - 10:00:00]` prefix (the log channel adds its own timestamp).
  if (X.logLevels !== null) {
    await check('server_log_levels', async () => {
      const hit = await waitFor(() => api.recentLog().find((l) => l.includes('initialize: encoding')), 10000);
      const lines = api.recentLog();
      assert.ok(hit, `no startup line in the log: ${JSON.stringify(lines.slice(-10))}`);
      assert.ok(hit.startsWith('info: '), `startup line not at info: ${hit}`);
      assert.ok(!/\d\d:\d\d:\d\d/.test(hit), `a timestamp inside the line: ${hit}`);
      const prefixed = lines.filter((l) => /\[(Trace|Debug|Info|Warn|Error)\s*- /.test(l));
      assert.deepEqual(prefixed, [], 'lines with the client prefix');
      return hit;
    });
    // what the Output panel shows is the channel's log file: one timestamp and the level per line, which the
    // file's own format adds; the server's startup line must not carry a second time or a `[Info  - …]` prefix
    await check('output_panel_one_timestamp', async () => {
      const files = findFiles(process.env.E2E_SCRATCH || '', (f) => path.basename(f) === 'wfx.log', 8);
      let text = '';
      const hit = await waitFor(() => {
        text = files.length ? newest(files).map((f) => fs.readFileSync(f, 'utf8')).join('') : '';
        return text.split('\n').find((l) => l.includes('initialize: encoding'));
      }, 10000, 200);
      assert.ok(files.length, `no wfx.log under ${process.env.E2E_SCRATCH}`);
      assert.ok(hit, `no startup line in ${files[0]}: ${JSON.stringify(text.split('\n').slice(-5))}`);
      const stamps = hit.match(/\d\d:\d\d:\d\d/g) || [];
      assert.ok(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} \[info\] /.test(hit), `not an info line of the channel: ${hit}`);
      assert.equal(stamps.length, 1, `timestamps in ${JSON.stringify(hit)}`);
      const prefixed = text.split('\n').filter((l) => /\[(Trace|Debug|Info|Warn|Error)\s*- /.test(l));
      assert.deepEqual(prefixed, [], 'lines with the client prefix');
      return hit;
    });
  } else skip('server_log_levels');

  if (X.diag !== null) {
    await check('diagnostics', async () => {
      const hit = await waitFor(() => vscode.languages.getDiagnostics(broken.uri).find((d) => d.message.includes(X.diag)), 20000);
      const all = vscode.languages.getDiagnostics(broken.uri).map((d) => `${d.range.start.line},${d.range.start.character} ${d.source} ${d.message}`);
      assert.ok(hit, `no diagnostic containing "${X.diag}": ${JSON.stringify(all)}`);
      if (X.diagPos !== null) assert.equal(`${hit.range.start.line},${hit.range.start.character}`, X.diagPos, `position of: ${hit.message}`);
      if (X.diagSource !== null) assert.equal(hit.source, X.diagSource);
      return all;
    });
  } else skip('diagnostics');

  await check('no_attach_unrelated_yaml', async () => {
    // a client attached to these would publish something (the fake publishes on every didOpen)
    const docs = [await open('other.yaml'), await open('workflows/order-lookup/notes.yaml')];
    await sleep(2000);
    for (const d of docs) {
      assert.equal(d.languageId, 'yaml');
      assert.deepEqual(vscode.languages.getDiagnostics(d.uri).map((x) => x.message), [], d.uri.fsPath);
    }
  });

  const wf = await open('workflows/order-lookup/workflow.yaml');
  if (X.workflowLens !== null) {
    await check('codelens_workflow', async () => {
      const titles = await waitFor(async () => {
        const lenses = (await vscode.commands.executeCommand('vscode.executeCodeLensProvider', wf.uri, 50)) || [];
        const t = lenses.map((l) => l.command && l.command.title).filter(Boolean);
        return t.some((x) => x.includes(X.workflowLens)) && t;
      }, 10000, 300);
      assert.ok(titles, 'no workflow lens');
      return titles;
    });
  } else skip('codelens_workflow');
  // issue 17: a coverage lens on the line of the state `identify-case`
  if (X.coverageLens !== null) {
    await check('codelens_coverage', async () => {
      const line = wf.getText().split('\n').findIndex((l) => /^  identify-case:/.test(l));
      let last = [];
      const ok = await waitFor(async () => {
        const lenses = (await vscode.commands.executeCommand('vscode.executeCodeLensProvider', wf.uri, 50)) || [];
        last = lenses.filter((l) => l.range.start.line === line).map((l) => l.command && l.command.title);
        return line >= 0 && last.some((t) => t && t.includes(X.coverageLens));
      }, 10000, 300);
      assert.ok(ok, `line ${line}: ${JSON.stringify(last)}`);
      return last;
    });
  } else skip('codelens_coverage');

  if (X.closedDiag !== null) {
    await check('workspace_diagnostics', async () => {
      // Renaming a state in the (unsaved) workflow.yaml reports the closed case that names it in the Problems
      // panel; undoing the rename clears it. The case is never opened.
      const closed = file('workflows/order-lookup/tests/skill-gate.test.yaml');
      const line = wf.getText().split('\n').findIndex((l) => l === '  general-question:');
      assert.ok(line >= 0, 'no `  general-question:` line in workflow.yaml');
      const set = async (text) => {
        const edit = new vscode.WorkspaceEdit();
        edit.replace(wf.uri, wf.lineAt(line).range, text);
        assert.ok(await vscode.workspace.applyEdit(edit));
      };
      const msgs = () => vscode.languages.getDiagnostics(closed).map((d) => d.message);
      await set('  general-questionx:');
      const seen = await waitFor(() => msgs().some((m) => m.includes(X.closedDiag)), 20000, 200);
      const during = msgs();
      await set('  general-question:');
      const cleared = await waitFor(() => msgs().length === 0, 20000, 200);
      const opened = vscode.workspace.textDocuments.some((d) => d.uri.toString() === closed.toString());
      assert.ok(seen, `no diagnostic containing "${X.closedDiag}" on the closed case: ${JSON.stringify(during)}`);
      assert.ok(cleared, `not cleared after the undo: ${JSON.stringify(msgs())}`);
      assert.ok(!opened, 'the case was opened');
      return during;
    });
    // the setting that limits diagnostics to open files (issue 16): turned on in the workspace settings, the closed
    // case's diagnostic is cleared; turned off again, it comes back
    await check('open_files_only_setting', async () => {
      const closed = file('workflows/order-lookup/tests/skill-gate.test.yaml');
      const line = wf.getText().split('\n').findIndex((l) => l === '  general-question:');
      assert.ok(line >= 0, 'no `  general-question:` line in workflow.yaml');
      const set = async (text) => {
        const edit = new vscode.WorkspaceEdit();
        edit.replace(wf.uri, wf.lineAt(line).range, text);
        assert.ok(await vscode.workspace.applyEdit(edit));
      };
      const msgs = () => vscode.languages.getDiagnostics(closed).map((d) => d.message);
      const named = () => msgs().some((m) => m.includes(X.closedDiag));
      const cfg = () => vscode.workspace.getConfiguration('wfx');
      await set('  general-questionx:');
      try {
        assert.ok(await waitFor(named, 20000, 200), `no closed-case diagnostic: ${JSON.stringify(msgs())}`);
        await cfg().update('diagnostics.openFilesOnly', true, vscode.ConfigurationTarget.Workspace);
        const cleared = await waitFor(() => msgs().length === 0, 20000, 200);
        assert.ok(cleared, `openFilesOnly on, the closed case still has ${JSON.stringify(msgs())}`);
        await cfg().update('diagnostics.openFilesOnly', undefined, vscode.ConfigurationTarget.Workspace);
        const back = await waitFor(named, 20000, 200);
        assert.ok(back, `openFilesOnly off again, no closed-case diagnostic: ${JSON.stringify(msgs())}`);
        return 'cleared, back';
      } finally {
        await cfg().update('diagnostics.openFilesOnly', undefined, vscode.ConfigurationTarget.Workspace);
        await set('  general-question:');
        await waitFor(() => msgs().length === 0, 20000, 200);
      }
    });
  } else {
    skip('workspace_diagnostics');
    skip('open_files_only_setting');
  }

  // issue 16: the outline of workflow.yaml has every top-level key; document highlight of a state
  if (X.outline !== null) {
    await check('outline', async () => {
      let top = [];
      let states = [];
      await waitFor(async () => {
        const syms = (await vscode.commands.executeCommand('vscode.executeDocumentSymbolProvider', wf.uri)) || [];
        top = syms.map((s) => s.name);
        const st = syms.find((s) => s.name === 'states');
        states = st ? st.children.map((c) => c.name) : [];
        return top.includes('title') && states.includes('clarify');
      }, 10000, 300);
      assert.ok(top.includes('title') && top.includes('states') && top.length > 2, `top-level symbols: ${JSON.stringify(top)}`);
      assert.ok(states.includes('clarify'), `states: ${JSON.stringify(states)}`);
      return top;
    });
    await check('document_highlight', async () => {
      const line = wf.getText().split('\n').findIndex((l) => /^  clarify:$/.test(l));
      assert.ok(line >= 0, 'no `  clarify:` line');
      const hl = (await vscode.commands.executeCommand('vscode.executeDocumentHighlights', wf.uri, new vscode.Position(line, 3))) || [];
      const shown = hl.map((h) => `${h.range.start.line}:${h.kind}`);
      assert.ok(hl.some((h) => h.kind === vscode.DocumentHighlightKind.Write && h.range.start.line === line), `no Write on the key: ${shown}`);
      assert.ok(hl.some((h) => h.kind === vscode.DocumentHighlightKind.Read), `no Read use: ${shown}`);
      return shown;
    });
  } else {
    skip('outline');
    skip('document_highlight');
  }

  // issue 16: the first character of a state key after a multi-line block scalar is part of the key: rename is
  // offered there and edits it, references are found, and the definition of a `to: clarify` lands on it. As the
  // file is (a blank line before `  clarify:`) and with that blank line deleted (unsaved), then restored.
  if (X.rename !== null) await check('key_after_block_scalar', async () => {
    const atKey = async (label) => {
      const lines = wf.getText().split('\n');
      const line = lines.findIndex((l) => l === '  clarify:');
      const use = lines.findIndex((l) => /^\s*- to: clarify\s*$/.test(l));
      assert.ok(line >= 0 && use >= 0, `${label}: no \`  clarify:\` key or \`- to: clarify\` use`);
      const key = new vscode.Position(line, 2);
      const prep = await vscode.commands.executeCommand('vscode.prepareRename', wf.uri, key);
      const r = prep && (prep.range || prep);
      assert.ok(r && r.start.line === line && r.start.character === 2 && r.end.character === 9, `${label}: prepareRename ${JSON.stringify(prep)}`);
      const refs = (await vscode.commands.executeCommand('vscode.executeReferenceProvider', wf.uri, key)) || [];
      assert.ok(refs.length > 1, `${label}: references ${refs.length}`);
      const defs = (await vscode.commands.executeCommand('vscode.executeDefinitionProvider', wf.uri,
        new vscode.Position(use, lines[use].indexOf('clarify') + 1))) || [];
      const at = defs.map((d) => d.targetSelectionRange || d.targetRange || d.range);
      assert.ok(at.some((x) => x.start.line === line && x.start.character === 2), `${label}: definition ${JSON.stringify(at)}`);
      const edit = await vscode.commands.executeCommand('vscode.executeDocumentRenameProvider', wf.uri, key, 'clarify-x');
      const mine = (edit ? edit.get(wf.uri) : []).map((e) => `${e.range.start.line}:${e.range.start.character}-${e.range.end.character}`);
      assert.ok(mine.includes(`${line}:2-9`), `${label}: rename edits ${JSON.stringify(mine)}`);
      return { line, refs: refs.length, edits: mine.length };
    };
    const asWritten = await atKey('as written');
    const line = asWritten.line;
    assert.equal(wf.lineAt(line - 1).text, '', 'no blank line before `  clarify:`');
    const del = new vscode.WorkspaceEdit();
    del.delete(wf.uri, new vscode.Range(line - 1, 0, line, 0));
    assert.ok(await vscode.workspace.applyEdit(del));
    try {
      return { asWritten, rightAfter: await atKey('right after the block scalar') };
    } finally {
      const ins = new vscode.WorkspaceEdit();
      ins.insert(wf.uri, new vscode.Position(line - 1, 0), '\n');
      await vscode.workspace.applyEdit(ins);
      await wf.save();
    }
  });

  const caseDoc = await open('workflows/order-lookup/tests/refund-approved.test.yaml');
  if (X.lens !== null) {
    await check('codelens_case', async () => {
      let last = [];
      const ok = await waitFor(async () => {
        const lenses = (await vscode.commands.executeCommand('vscode.executeCodeLensProvider', caseDoc.uri, 50)) || [];
        last = lenses.map((l) => l.command && l.command.title);
        return last.some((t) => t && t.includes(X.lens));
      }, 10000, 300);
      assert.ok(ok, `code lenses: ${JSON.stringify(last)}`);
      return last;
    });
  } else skip('codelens_case');

  if (X.hint !== null) {
    await check('inlayhint', async () => {
      let last = [];
      const ok = await waitFor(async () => {
        const hints = (await vscode.commands.executeCommand('vscode.executeInlayHintProvider', caseDoc.uri, new vscode.Range(0, 0, caseDoc.lineCount, 0))) || [];
        last = hints.map((h) => labelText(h.label));
        return last.some((t) => t.includes(X.hint));
      }, 10000, 300);
      assert.ok(ok, `inlay hints: ${JSON.stringify(last)}`);
      return last;
    });
  } else skip('inlayhint');

  if (X.hover !== null) {
    await check('hover', async () => {
      const line = caseDoc.getText().split('\n').findIndex((l) => /^\s*- send:/.test(l));
      const col = caseDoc.lineAt(line).text.indexOf('send') + 1;
      const hovers = (await vscode.commands.executeCommand('vscode.executeHoverProvider', caseDoc.uri, new vscode.Position(line, col))) || [];
      const text = hovers.flatMap((h) => h.contents.map((c) => (typeof c === 'string' ? c : c.value))).join('\n');
      assert.ok(text.trim() && (X.hover === '.' || text.includes(X.hover)), `hover: ${JSON.stringify(text)}`);
      return text.slice(0, 200);
    });
    // issue 16: the hover cites its docs/reference.md section as a link the client can open: the extension
    // points it at the copy bundled with it (docLinks.ts), which has the anchor
    await check('hover_doc_link', async () => {
      const line = caseDoc.getText().split('\n').findIndex((l) => /^\s*- send:/.test(l));
      const col = caseDoc.lineAt(line).text.indexOf('send') + 1;
      const hovers = (await vscode.commands.executeCommand('vscode.executeHoverProvider', caseDoc.uri, new vscode.Position(line, col))) || [];
      const text = hoverText(hovers);
      const m = /\]\(([^)\s]+\/docs\/reference\.md)#([\w-]+)\)/.exec(text);
      assert.ok(m, `no link to docs/reference.md in ${JSON.stringify(text.slice(-300))}`);
      const target = vscode.Uri.parse(m[1]);
      const ext = vscode.extensions.getExtension(EXT_ID);
      assert.ok(target.toString().startsWith(ext.extensionUri.toString()), `${target} is not the bundled copy`);
      const page = new TextDecoder().decode(await vscode.workspace.fs.readFile(target));
      assert.ok(page.includes(`<a id="${m[2]}"></a>`), `no anchor ${m[2]} in ${target}`);
      return `${target.path.split('/').slice(-2).join('/')}#${m[2]}`;
    });
  } else skip('hover');

  // completion while typing (unsaved edits go to the server as didChange)
  const trig = await open('workflows/order-lookup/tests/triggered-report.test.yaml');
  const complete = async (line, col, want) => {
    let labels = [];
    const ok = await waitFor(async () => {
      const list = await vscode.commands.executeCommand('vscode.executeCompletionItemProvider', trig.uri, new vscode.Position(line, col));
      labels = list.items.map((i) => labelText(i.label)).sort();
      return want.split(',').filter(Boolean).every((w) => labels.includes(w));
    }, 5000, 300);
    assert.ok(ok, `completion lacks some of ${want}: ${JSON.stringify(labels.slice(0, 40))}`);
    return labels.slice(0, 20);
  };
  if (X.triggerCompletion !== null) {
    await check('completion_trigger', async () => {
      const line = trig.getText().split('\n').findIndex((l) => /^  id:/.test(l));
      assert.ok(line >= 0, 'no `  id:` line');
      const edit = new vscode.WorkspaceEdit();
      edit.replace(trig.uri, trig.lineAt(line).range, '  id: ');
      assert.ok(await vscode.workspace.applyEdit(edit));
      return complete(line, 6, X.triggerCompletion);
    });
  } else skip('completion_trigger');
  if (X.completion !== null) {
    await check('completion_state', async () => {
      const line = trig.getText().split('\n').findIndex((l) => /^\s*- send:/.test(l));
      const edit = new vscode.WorkspaceEdit();
      edit.insert(trig.uri, new vscode.Position(line + 1, 0), '  - reachedState: \n');
      assert.ok(await vscode.workspace.applyEdit(edit));
      return complete(line + 1, 18, X.completion);
    });
  } else skip('completion_state');
  // issue 16: completion edits never corrupt the file. The item's edit as the language client converted it
  // (range + insertText) is applied: an anchor before the word stays, a bare `reachedState:` gets its space.
  if (X.completionEdits !== null) {
    await check('completion_edits', async () => {
      const applyItem = async (text, col, label) => {
        const line = trig.getText().split('\n').findIndex((l) => /^\s*- send:/.test(l)) + 1;
        const ins = new vscode.WorkspaceEdit();
        ins.insert(trig.uri, new vscode.Position(line, 0), `${text}\n`);
        assert.ok(await vscode.workspace.applyEdit(ins));
        let item;
        await waitFor(async () => {
          const list = await vscode.commands.executeCommand('vscode.executeCompletionItemProvider', trig.uri, new vscode.Position(line, col));
          item = list.items.find((i) => labelText(i.label) === label);
          return item;
        }, 5000, 300);
        assert.ok(item, `no completion item ${label} in ${JSON.stringify(text)}`);
        const range = item.range && item.range.replacing ? item.range.replacing : item.range;
        const insert = typeof item.insertText === 'string' ? item.insertText : item.insertText.value;
        const e = new vscode.WorkspaceEdit();
        e.replace(trig.uri, range, insert);
        assert.ok(await vscode.workspace.applyEdit(e));
        const got = trig.lineAt(line).text;
        const del = new vscode.WorkspaceEdit();
        del.delete(trig.uri, trig.lineAt(line).rangeIncludingLineBreak);
        assert.ok(await vscode.workspace.applyEdit(del));
        return got;
      };
      const a = await applyItem('  - reachedState: &s ref', 24, 'refund-request');
      const b = await applyItem('  - reachedState:', 17, 'refund-request');
      assert.equal(a, '  - reachedState: &s refund-request');
      assert.equal(b, '  - reachedState: refund-request');
      return [a, b];
    });
  } else skip('completion_edits');

  // Test Explorer: discovery, then a run of two cases through the run profile's handler
  const testing = api.testing;
  let items = {};
  await check('testexplorer_discovery', async () => {
    await testing.discoverAll();
    const wfItem = testing.ctrl.items.get(`workflow:${path.join(ws.fsPath, 'workflows', 'order-lookup')}`);
    assert.ok(wfItem, `no workflow item; have ${JSON.stringify([...iter(testing.ctrl.items)].map((i) => i.id))}`);
    items.refund = wfItem.children.get(file('workflows/order-lookup/tests/refund-approved.test.yaml').toString());
    items.broken = wfItem.children.get(broken.uri.toString());
    assert.ok(items.refund && items.broken, `cases: ${JSON.stringify([...iter(wfItem.children)].map((i) => i.id))}`);
    const steps = [...iter(items.refund.children)].map((s) => s.label);
    assert.equal(steps.length, 8, `refund-approved steps: ${JSON.stringify(steps)}`);
    assert.ok(steps[0].startsWith('1. send'), steps[0]);
    assert.equal(items.refund.label, 'Refund approved after human review');
    assert.ok(testing.hasRunProfile, 'no run profile (workspace untrusted?)');
    return { cases: wfItem.children.size, steps };
  });
  if (items.refund) {
    await check('testexplorer_run', async () => {
      const res = await testing.runForTests([items.refund, items.broken]);
      const r = { refund: res[items.refund.id], broken: res[items.broken.id], steps: [...iter(items.refund.children)].map((s) => res[s.id]), brokenSteps: [...iter(items.broken.children)].map((s) => res[s.id]) };
      assert.ok(r.refund && r.broken, `missing outcomes: ${JSON.stringify(res)}`);
      if (X.run !== null) {
        assert.ok(['failed', 'errored'].includes(r.broken), `broken case: ${r.broken}`);
        // the example case passes with the built-in runner: its steps pass, except the model-graded `grade`
        // (last), skipped by wfx.runner.skipGrades (default true)
        assert.equal(r.refund, 'passed', `refund-approved: ${r.refund}`);
        const want = ['passed', 'passed', 'passed', 'passed', 'passed', 'passed', 'passed', 'skipped'];
        assert.deepEqual(r.steps, want, `step outcomes: ${JSON.stringify(r.steps)}`);
        // the broken case never runs (its `sned` step is a load error): none of its steps may pass
        assert.ok(r.brokenSteps.length === 2 && r.brokenSteps.every((x) => x !== 'passed'), `broken steps: ${JSON.stringify(r.brokenSteps)}`);
      }
      return r;
    });
    // issue 16: the Test Explorer runs the unsaved buffer, like the lens. Edit a step of refund-approved to a state
    // no run reaches, do not save, run it from the Test Explorer: that step (4) fails; the file on disk is untouched.
    if (X.run !== null) {
      await check('testexplorer_runs_unsaved_buffer', async () => {
        const doc = await open('workflows/order-lookup/tests/refund-approved.test.yaml');
        const line = doc.getText().split('\n').findIndex((l) => /^\s*- reachedState: refund-review\s*$/.test(l));
        assert.ok(line >= 0, 'no `- reachedState: refund-review` step');
        const at = doc.lineAt(line).text.indexOf('refund-review');
        const edit = new vscode.WorkspaceEdit();
        edit.replace(doc.uri, new vscode.Range(line, at, line, at + 'refund-review'.length), 'escalation');
        assert.ok(await vscode.workspace.applyEdit(edit));
        try {
          assert.ok(doc.isDirty, 'the edit should leave the buffer unsaved');
          const res = await testing.runForTests([items.refund]);
          const steps = [...iter(items.refund.children)].map((s) => res[s.id]);
          assert.equal(res[items.refund.id], 'failed', `refund-approved with the unsaved edit: ${res[items.refund.id]} ${JSON.stringify(steps)}`);
          assert.equal(steps[3], 'failed', `step 4 (the edited reachedState): ${JSON.stringify(steps)}`);
          const disk = new TextDecoder().decode(await vscode.workspace.fs.readFile(doc.uri));
          assert.ok(disk.includes('- reachedState: refund-review'), 'the run changed the file on disk');
          return { steps };
        } finally {
          await vscode.window.showTextDocument(doc);
          await vscode.commands.executeCommand('workbench.action.files.revert');
        }
      });
    } else skip('testexplorer_runs_unsaved_buffer');
  }

  // graph webview: opens beside the editor, receives the SVG, a label click reveals the state in workflow.yaml,
  // an edit of workflow.yaml requests it again
  const graphState = api.graph && api.graph.state;
  if (X.graph !== null) {
    await check('graph_webview', async () => {
      assert.ok(graphState, 'the extension exports no graph view');
      await vscode.window.showTextDocument(caseDoc);
      await vscode.commands.executeCommand('wfx.showGraph');
      const drawn = await waitFor(() => graphState.rendered && graphState.rendered.svg && graphState.rendered.texts > 0, 20000, 100);
      assert.ok(drawn, `webview drew nothing; message: ${JSON.stringify(graphState.message).slice(0, 300)}`);
      const ids = (graphState.response.graph.nodes || []).map((n) => n.id);
      assert.ok(ids.includes(X.graph), `graph nodes: ${JSON.stringify(ids)}`);
      assert.ok(graphState.message.svg.includes(X.graph), 'the SVG does not name the state');
      const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs.map((t) => t.input && t.input.viewType)).filter(Boolean);
      assert.ok(tabs.some((v) => String(v).endsWith('wfx.graph')), `no graph tab: ${JSON.stringify(tabs)}`);
      return { nodes: ids.length, texts: graphState.rendered.texts };
    });
    // issue 16: readable where it opens: fitted to the panel's width (the drawn SVG is no wider than the view)
    await check('graph_fits_width', async () => {
      const v = await waitFor(() => graphState.view && graphState.view.svgWidth > 0 && graphState.view, 10000, 100);
      assert.ok(v, `the webview reported no view: ${JSON.stringify(graphState.view)}`);
      assert.ok(v.fit, `not in fit mode on open: ${JSON.stringify(v)}`);
      assert.ok(v.svgWidth <= v.viewWidth + 0.5, `SVG ${v.svgWidth}px wider than the view ${v.viewWidth}px`);
      return v;
    });
    // the toolbar's zoom (posted the way its buttons act) changes the transform; Fit resets it
    await check('graph_zoom', async () => {
      const before = graphState.view;
      assert.ok(before, 'no view');
      api.graph.zoom('in');
      const zoomed = await waitFor(() => graphState.view && graphState.view.transform !== before.transform && graphState.view, 5000, 50);
      assert.ok(zoomed, `the transform did not change: ${before.transform}`);
      assert.ok(zoomed.scale > before.scale && !zoomed.fit, JSON.stringify(zoomed));
      api.graph.zoom('fit');
      const reset = await waitFor(() => graphState.view && graphState.view.fit && graphState.view.scale === before.scale && graphState.view, 5000, 50);
      assert.ok(reset, `Fit did not restore ${before.transform}: ${JSON.stringify(graphState.view)}`);
      return { before: before.transform, zoomed: zoomed.transform };
    });
    await check('graph_click_reveals_state', async () => {
      assert.ok(graphState && graphState.response, 'no graph');
      // the label text the webview posts for a click on the state's box
      assert.ok(await api.graph.reveal(X.graph), "label not mapped to a state");
      const ed = vscode.window.activeTextEditor;
      assert.ok(ed && ed.document.uri.fsPath.endsWith('workflow.yaml'), `active: ${ed && ed.document.uri.fsPath}`);
      const line = ed.document.lineAt(ed.selection.start.line).text;
      assert.ok(line.includes(X.graph), `selection at line ${ed.selection.start.line}: ${line}`);
      return { line: ed.selection.start.line, text: line.trim() };
    });
    await check('graph_updates_on_edit', async () => {
      const before = graphState.answered;
      const doc = await vscode.workspace.openTextDocument(file('workflows/order-lookup/workflow.yaml'));
      const edit = new vscode.WorkspaceEdit();
      edit.insert(doc.uri, new vscode.Position(doc.lineCount, 0), '\n# edited\n');
      assert.ok(await vscode.workspace.applyEdit(edit));
      const again = await waitFor(() => graphState.answered > before && graphState.rendered, 10000, 50);
      assert.ok(again, `no new graph after the edit (answered ${graphState.answered})`);
      await vscode.commands.executeCommand('undo');
      await doc.save();
    });
    // issue 17: the graph of workflow.yaml shows coverage (the cases' assertions before any run): covered
    // states labelled ×N, uncovered ones "(not covered)", as in the HTML report
    await check('graph_coverage', async () => {
      await vscode.window.showTextDocument(wf);
      await vscode.commands.executeCommand('wfx.showGraph', wf.uri);
      const shown = await waitFor(() => {
        const r = graphState.response;
        return r && r.coverage && graphState.message && graphState.message.svg && graphState.message.svg.includes('(not covered)') && r.coverage;
      }, 20000, 100);
      assert.ok(shown, `no coverage in the workflow graph: ${JSON.stringify(graphState.response && graphState.response.coverage)}`);
      assert.ok(/ ×\d+/.test(graphState.message.svg), 'covered states are not labelled');
      await vscode.window.showTextDocument(caseDoc);
      await vscode.commands.executeCommand('wfx.showGraph');
      return shown;
    });
  } else skip('graph_webview');

  if (X.run !== null) {
    const stepLines = new Set(caseDoc.getText().split('\n').map((l, i) => (/^\s*- /.test(l) ? i : -1)).filter((i) => i >= 0));
    const stepHints = async () => {
      const hints = (await vscode.commands.executeCommand('vscode.executeInlayHintProvider', caseDoc.uri, new vscode.Range(0, 0, caseDoc.lineCount, 0))) || [];
      return hints.filter((h) => stepLines.has(h.position.line)).map((h) => `${h.position.line}:${labelText(h.label)}`);
    };
    const before = await stepHints();
    let lensCmd;
    await check('run_lens', async () => {
      const lenses = (await vscode.commands.executeCommand('vscode.executeCodeLensProvider', caseDoc.uri, 50)) || [];
      const l = lenses.find((x) => x.command && x.command.title.includes(X.lens || 'Run'));
      assert.ok(l, `lenses: ${JSON.stringify(lenses.map((x) => x.command))}`);
      assert.equal(l.command.command, 'wfx.runCase');
      lensCmd = l.command;
      return l.command;
    });
    await check('run_case_command', async () => {
      // the lens command with the lens's arguments, forwarded to the server's workspace/executeCommand
      await vscode.window.showTextDocument(caseDoc);
      const r = await vscode.commands.executeCommand('wfx.runCase', ...((lensCmd && lensCmd.arguments) || [caseDoc.uri.toString()]));
      return typeof r === 'string' ? r.slice(0, 200) : r === undefined ? null : JSON.stringify(r).slice(0, 200);
    });
    await check('run_step_hints', async () => {
      let after = [];
      const ok = await waitFor(async () => {
        after = await stepHints();
        return after.length > before.length;
      }, 30000, 200);
      assert.ok(ok, `step-line hints before ${JSON.stringify(before)} after ${JSON.stringify(after)}`);
      return after;
    });
    if (X.graph !== null) {
      await check('graph_path_after_run', async () => {
        const lit = await waitFor(() => {
          const p = graphState.response && graphState.response.path;
          return p && p.reached && Object.keys(p.reached).length > 0 && graphState.rendered && p;
        }, 30000, 100);
        assert.ok(lit, `no path in the graph after the run: ${JSON.stringify(graphState.response && graphState.response.path)}`);
        assert.ok(/ @\d+/.test(graphState.message.svg), 'the SVG does not label reached states');
        return lit.reached;
      });
      // issue 16: the panel follows the latest run: the server's `wfx/runStatus` end made it ask again; a case
      // that has not run yet shows no path, and after its run (no polling by the panel) it shows that run's path
      await check('graph_follows_run', async () => {
        const ok1 = await waitFor(() => graphState.followedRuns > 0, 30000, 100);
        assert.ok(ok1, 'no run end reached the graph panel');
        const other = await open('workflows/order-lookup/tests/refund-denied.test.yaml');
        const otherUri = other.uri.toString();
        try {
          await vscode.commands.executeCommand('wfx.showGraph', other.uri);
          const shown = await waitFor(() => graphState.document === otherUri && graphState.rendered && graphState.response, 20000, 100);
          assert.ok(shown, `no graph for ${otherUri}`);
          const before = shown.path && shown.path.reached;
          assert.ok(!before || Object.keys(before).length === 0, `a path before the run: ${JSON.stringify(before)}`);
          const followed = graphState.followedRuns;
          await vscode.commands.executeCommand('wfx.runCase', otherUri);
          const after = await waitFor(() => {
            const p = graphState.document === otherUri && graphState.response && graphState.response.path;
            return graphState.followedRuns > followed && p && p.reached && Object.keys(p.reached).length > 0 && p;
          }, 30000, 100);
          assert.ok(after, `the graph shows no path after the run: ${JSON.stringify(graphState.response && graphState.response.path)}`);
          return { followed: graphState.followedRuns, reached: after.reached };
        } finally {
          await vscode.window.showTextDocument(caseDoc);
          await vscode.commands.executeCommand('wfx.showGraph', caseDoc.uri);
        }
      });
    }
    // issue 16: "Run all cases" on workflow.yaml (its lens's command) shows a cancellable progress notification,
    // case i of n, then the verdict counts with a button to the Test Explorer
    if (X.workflowLens !== null) {
      await check('run_all_progress', async () => {
        const lenses = (await vscode.commands.executeCommand('vscode.executeCodeLensProvider', wf.uri, 50)) || [];
        const l = lenses.find((x) => x.command && x.command.title.includes(X.workflowLens));
        assert.ok(l, 'no Run all cases lens');
        assert.equal(l.command.command, 'wfx.runAllCases');
        await vscode.window.showTextDocument(wf);
        await vscode.commands.executeCommand(l.command.command, ...(l.command.arguments || [wf.uri.toString()]));
        const rec = await waitFor(() => api.runAll() && api.runAll().result && api.runAll(), 120000, 200);
        assert.ok(rec, `no result: ${JSON.stringify(api.runAll())}`);
        const n = rec.status.total;
        assert.ok(n >= 2, JSON.stringify(rec.status));
        assert.equal(rec.progress[0], `case 1 of ${n}`, JSON.stringify(rec.progress));
        assert.ok(rec.progress.some((p) => p.startsWith(`case ${n} of ${n}`)), JSON.stringify(rec.progress));
        const m = /(\d+) passed, (\d+) failed, (\d+) not run(?:, (\d+) skipped)?/.exec(rec.result);
        assert.ok(m, rec.result);
        const sum = [1, 2, 3, 4].reduce((a, i) => a + Number(m[i] || 0), 0);
        assert.equal(sum, n, rec.result);
        return { progress: rec.progress.length, result: rec.result };
      });
    }
  } else skip('run_case_command');

  // issue 16: for each refusal class, a run from the editor, then the hover on the failed step (the case's last)
  // shows the reason
  if (X.run !== null && X.evidence !== null) {
    await check('evidence_hover', async () => {
      const got = {};
      for (const [id, reason] of EVIDENCE) {
        const doc = await open(`workflows/pay/tests/${id}.test.yaml`);
        const lines = doc.getText().split('\n');
        let line = -1;
        lines.forEach((l, i) => { if (/^\s*- /.test(l)) line = i; });
        assert.ok(line >= 0, `${id}: no step line`);
        const pos = new vscode.Position(line, lines[line].indexOf('-') + 3);
        await vscode.commands.executeCommand('wfx.runCase', doc.uri.toString());
        let text = '';
        const shown = await waitFor(async () => {
          text = hoverText(await vscode.commands.executeCommand('vscode.executeHoverProvider', doc.uri, pos));
          return text.includes(reason);
        }, 30000, 200);
        got[id] = shown ? 'shown' : `missing; hover: ${text.slice(0, 300)}`;
      }
      const missing = Object.entries(got).filter(([, v]) => v !== 'shown');
      assert.ok(missing.length === 0, JSON.stringify(missing));
      return got;
    });
    // the case's full transcript: the verdict lens's command (wfx.showTranscript) opens it as a Markdown document
    // beside the case; it names the reason, with the step numbered from 1.
    // Every wait is on a condition, never a delay or a race: the case's editor is active before its lens runs; the
    // transcript looked for is the one whose title line names this case; afterwards that transcript is reverted and
    // closed, then the case's editor is closed, each close awaited until the editor is gone, so every case starts from
    // the layout the check found. The transcript is an untitled document with content, so it is reverted before it is
    // closed (no save prompt). This check used to close the other editor groups after each case instead, which
    // depends on which group has focus at that moment and on closing that untitled document; once it left the
    // previous case's transcript as the visible Markdown editor and the next one never appeared.
    await check('evidence_transcript', async () => {
      const got = {};
      const transcriptEditors = () => vscode.window.visibleTextEditors.filter((e) => e.document.languageId === 'markdown'
        && e.document.getText().startsWith('# Transcript of'));
      const closeTranscripts = async () => {
        for (const ed of transcriptEditors()) {
          await vscode.window.showTextDocument(ed.document, { viewColumn: ed.viewColumn, preserveFocus: false });
          await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
        }
        return waitFor(() => transcriptEditors().length === 0, 10000, 100);
      };
      const closeCase = async (doc) => {
        const shownIn = () => vscode.window.visibleTextEditors.find((e) => e.document === doc);
        const ed = shownIn();
        if (ed) {
          await vscode.window.showTextDocument(doc, { viewColumn: ed.viewColumn, preserveFocus: false });
          await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
        }
        return waitFor(() => !shownIn(), 10000, 100);
      };
      for (const [id, reason] of EVIDENCE) {
        const name = `${id}.test.yaml`;
        if (!(await closeTranscripts())) {
          got[id] = `a transcript is still open before the case: ${JSON.stringify(transcriptEditors().map((e) => e.document.getText().slice(0, 120)))}`;
          continue;
        }
        const doc = await open(`workflows/pay/tests/${name}`);
        await waitFor(() => vscode.window.activeTextEditor && vscode.window.activeTextEditor.document === doc, 10000, 100);
        let lens;
        await waitFor(async () => {
          const lenses = (await vscode.commands.executeCommand('vscode.executeCodeLensProvider', doc.uri, 50)) || [];
          lens = lenses.find((l) => l.command && l.command.command === 'wfx.showTranscript');
          return lens;
        }, 10000, 300);
        if (lens) {
          await vscode.commands.executeCommand(lens.command.command, ...(lens.command.arguments || []));
          // this case's transcript: its title line names the case file, and it holds the reason
          const shown = await waitFor(() => transcriptEditors().map((e) => e.document).find((d) =>
            d.getText().split('\n', 1)[0].includes(name) && d.getText().includes(reason)), 10000, 200);
          got[id] = shown && shown.getText().includes('**step 1**') ? 'shown'
            : `missing; open: ${JSON.stringify(vscode.window.visibleTextEditors.map((e) => e.document.getText().slice(0, 120)))}`;
        } else {
          got[id] = 'no verdict lens with wfx.showTranscript';
        }
        await closeTranscripts();
        await closeCase(doc);
      }
      const missing = Object.entries(got).filter(([, v]) => v !== 'shown');
      assert.ok(missing.length === 0, JSON.stringify(missing));
      return got;
    });
    // the Test Explorer's failure message of each refusal class's failed step says why (the reason)
    await check('evidence_testexplorer', async () => {
      await testing.discoverAll();
      const wfItem = testing.ctrl.items.get(`workflow:${path.join(ws.fsPath, 'workflows', 'pay')}`);
      assert.ok(wfItem, 'no pay workflow in the Test Explorer');
      const res = await testing.runForTests([wfItem]);
      const got = {};
      for (const [id, reason] of EVIDENCE) {
        const item = wfItem.children.get(file(`workflows/pay/tests/${id}.test.yaml`).toString());
        if (!item) { got[id] = 'no test item'; continue; }
        const failed = [...iter(item.children)].filter((s) => res[s.id] === 'failed');
        const texts = failed.flatMap((s) => testing.lastMessages[s.id] || []);
        got[id] = res[item.id] === 'failed' && texts.some((t) => t.includes('why:') && t.includes(reason)) ? 'shown'
          : `${res[item.id]}: ${JSON.stringify(texts).slice(0, 300)}`;
      }
      const missing = Object.entries(got).filter(([, v]) => v !== 'shown');
      assert.ok(missing.length === 0, JSON.stringify(missing));
      return got;
    });
  } else {
    skip('evidence_hover');
    skip('evidence_transcript');
    skip('evidence_testexplorer');
  }

  // issue 16: watching folder renames and deletes. A workflow folder made on disk after startup gets its closed
  // case's diagnostic; renaming the folder moves it to the new path (the old one is cleared); deleting the folder
  // clears it. VS Code reports each as one event for the folder, which the server's registered
  // `**/workflows/*` watcher receives.
  if (X.closedDiag !== null) {
    await check('folder_rename_delete', async () => {
      const from = file('workflows/wf-watch');
      const to = file('workflows/wf-watch-2');
      const strayIn = (dir) => vscode.Uri.joinPath(dir, 'tests', 'stray.test.yaml');
      const msgs = (dir) => vscode.languages.getDiagnostics(strayIn(dir)).map((d) => d.message);
      const names = (dir) => msgs(dir).some((m) => m.includes('nowhere-state'));
      await vscode.workspace.fs.writeFile(vscode.Uri.joinPath(from, 'workflow.yaml'),
        await vscode.workspace.fs.readFile(file('workflows/order-lookup/workflow.yaml')));
      await vscode.workspace.fs.writeFile(strayIn(from), Buffer.from(
        'title: Stray\ndescription: Names a state the workflow lacks.\nsteps:\n  - send: hi\n  - reachedState: nowhere-state\n'));
      try {
        const created = await waitFor(() => names(from), 30000, 200);
        assert.ok(created, `no diagnostic on the new folder's case: ${JSON.stringify(msgs(from))}`);
        await vscode.workspace.fs.rename(from, to);
        const moved = await waitFor(() => names(to) && msgs(from).length === 0, 30000, 200);
        assert.ok(moved, `after the rename: old ${JSON.stringify(msgs(from))}, new ${JSON.stringify(msgs(to))}`);
        await vscode.workspace.fs.delete(to, { recursive: true });
        const cleared = await waitFor(() => msgs(to).length === 0, 30000, 200);
        assert.ok(cleared, `after the delete: ${JSON.stringify(msgs(to))}`);
        return 'reported, moved, cleared';
      } finally {
        for (const d of [from, to]) await vscode.workspace.fs.delete(d, { recursive: true }).then(() => {}, () => {});
      }
    });
  } else skip('folder_rename_delete');

  await check('restart_after_crash', async () => {
    // kill the server; the error handler restarts it after a 1 s backoff and the diagnostics come back
    const c = api.client();
    const pid = c && c._serverProcess && c._serverProcess.pid;
    assert.ok(pid, 'no server process id');
    process.kill(pid, 'SIGKILL');
    const back = await waitFor(() => {
      const n = api.client();
      return n && n.isRunning() && n._serverProcess && n._serverProcess.pid !== pid && n._serverProcess.pid;
    }, 20000, 200);
    assert.ok(back, `server not restarted; log: ${api.recentLog().slice(-3).join(' | ')}`);
    if (X.diag !== null) {
      await vscode.window.showTextDocument(broken);
      const hit = await waitFor(() => vscode.languages.getDiagnostics(broken.uri).some((d) => d.message.includes(X.diag)), 15000);
      assert.ok(hit, 'no diagnostics after the restart');
    }
    return { old: pid, new: back };
  });

  await check('restart_command', async () => {
    await vscode.commands.executeCommand('wfx.restartServer');
    const ok = await waitFor(() => api.client() && api.client().isRunning(), 15000);
    assert.ok(ok, 'not running after wfx.restartServer');
  });

  // issue 15: the run lens names the agent; a cassette beside a case is served (lenses, hover)
  if (X.agentLens !== null || X.cassette !== null) {
    const cassetteRel = 'workflows/order-lookup/tests/delayed-orders-ok.cassette.json';
    await vscode.workspace.fs.writeFile(file(cassetteRel), Buffer.from(JSON.stringify({
      version: 1, recordedWith: 'wfx-lsp 0.1.0', recordedAt: '2026-12-03T08:52:53Z',
      clock: { startMs: 1796287973000, stepMs: 1, zone: 'UTC' }, model: 'e2e/model', endpoint: '127.0.0.1:9',
      case: 'delayed-orders-ok', inputs: { case: 'fnv1a64:0000000000000000', workflow: 'fnv1a64:0000000000000000' },
      interactions: [{ seq: 0, role: 'agent', run: 0, call: 0, step: 1, state: 'identify-case',
        request: { model: 'e2e/model', messagesFrom: 0, messages: [{ role: 'user', content: 'hi' }] },
        response: { content: 'Hello.', finishReason: 'stop', usage: { promptTokens: 1200, completionTokens: 34 } } }],
    }, null, 2)));
    const titlesOf = async (uri) => ((await vscode.commands.executeCommand('vscode.executeCodeLensProvider', uri, 50)) || [])
      .map((l) => l.command && l.command.title).filter(Boolean);
    if (X.agentLens !== null) {
      await check('codelens_agent', async () => {
        const withCassette = await open('workflows/order-lookup/tests/delayed-orders-ok.test.yaml');
        let none = [], cas = [];
        const ok = await waitFor(async () => {
          none = await titlesOf(broken.uri);
          cas = await titlesOf(withCassette.uri);
          return none.includes('▶ Run case (no agent)') && cas.includes('▶ Run case (cassette)');
        }, 10000, 300);
        assert.ok(ok, `lenses: broken ${JSON.stringify(none)}, with a cassette ${JSON.stringify(cas)}`);
        return { none, cas };
      });
    } else skip('codelens_agent');
    if (X.cassette !== null) {
      await check('cassette', async () => {
        const doc = await open(cassetteRel);
        assert.equal(doc.languageId, 'json');
        let titles = [], hover = '';
        const ok = await waitFor(async () => {
          titles = await titlesOf(doc.uri);
          hover = hoverText(await vscode.commands.executeCommand('vscode.executeHoverProvider', doc.uri, new vscode.Position(4, 5)));
          return titles.includes('recorded 2026-12-03T08:52:53Z · e2e/model · 1 call (1 agent) · 1,234 tokens')
            && titles.includes('▶ Replay case (cassette)') && hover.includes('**cassette** recorded');
        }, 10000, 300);
        assert.ok(ok, `lenses ${JSON.stringify(titles)}, hover ${JSON.stringify(hover.slice(0, 200))}`);
        return titles;
      });
    } else skip('cassette');
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
    await vscode.workspace.fs.delete(file(cassetteRel));
  }

  if (X.record !== null) {
    await check('record_lens', async () => {
      const titles = async (uri) => ((await vscode.commands.executeCommand('vscode.executeCodeLensProvider', uri, 50)) || [])
        .map((l) => l.command && l.command.title).filter(Boolean);
      const wfDoc = await open('workflows/order-lookup/workflow.yaml');
      const caseDoc = await open('workflows/order-lookup/tests/broken.test.yaml');
      const cfg = () => vscode.workspace.getConfiguration('wfx');
      assert.equal(cfg().get('run.allowLive'), false, 'wfx.run.allowLive is not off by default');
      const off = await titles(caseDoc.uri);
      assert.ok(off.includes('▶ Run case (no agent)'), `lenses ${JSON.stringify(off)}`);
      assert.ok(!off.some((t) => t.includes('Record')), `a record lens while off: ${JSON.stringify(off)}`);
      // a client that sends the command anyway is refused by the server
      const refused = await api.client()
        .sendRequest('workspace/executeCommand', { command: 'wfx.recordCase', arguments: [caseDoc.uri.toString()] })
        .then((r) => `answered ${JSON.stringify(r)}`, (e) => e.message);
      assert.ok(refused.includes('wfx.run.allowLive'), `not refused: ${refused}`);
      await cfg().update('run.allowLive', true, vscode.ConfigurationTarget.Workspace);
      try {
        let on = [], wf = [];
        const ok = await waitFor(async () => {
          on = await titles(caseDoc.uri);
          wf = await titles(wfDoc.uri);
          return on.includes('● Record with model') && wf.includes('● Record all with model');
        }, 10000, 300);
        assert.ok(ok, `with wfx.run.allowLive on: case ${JSON.stringify(on)}, workflow ${JSON.stringify(wf)}`);
        // Without any ARCHMAX_* variable (never a paid call from this suite) the command goes through the extension's
        // progress on its own token and ends with the runner's missing-variable error.
        let ended;
        if (!Object.keys(process.env).some((k) => k.startsWith('ARCHMAX_'))) {
          await vscode.commands.executeCommand('wfx.recordCase', caseDoc.uri);
          ended = await waitFor(() => api.record() && api.record().uri === caseDoc.uri.toString() && api.record().result, 15000);
          assert.ok(ended && ended.includes('ARCHMAX_API_BASE_URL'), `the recording ended with ${JSON.stringify(ended)}`);
        }
        return { off, on, refused, ended };
      } finally {
        await cfg().update('run.allowLive', undefined, vscode.ConfigurationTarget.Workspace);
      }
    });
  } else skip('record_lens');

  console.log('E2E-RESULT ' + JSON.stringify(results));
  if (failures.length) console.log('extension log:\n  ' + api.recentLog().join('\n  '));
  if (failures.length) throw new Error(`failed: ${failures.join(', ')}`);
};

// Restricted mode: the server still checks files, but nothing runs cases.
async function runUntrusted() {
  const ws = vscode.workspace.workspaceFolders[0].uri;
  const failures = [];
  const check = async (name, fn) => {
    try {
      await fn();
      console.log(`PASS vscode.${name}`);
    } catch (e) {
      failures.push(name);
      console.log(`FAIL vscode.${name}: ${e && e.message ? e.message : e}`);
    }
  };
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.joinPath(ws, 'workflows', 'order-lookup', 'tests', 'broken.test.yaml'));
  await vscode.window.showTextDocument(doc);
  const ext = vscode.extensions.getExtension(EXT_ID);
  const api = ext && (await waitFor(() => ext.isActive && ext.exports, 20000));
  await check('untrusted_limited', async () => {
    assert.equal(vscode.workspace.isTrusted, false, 'workspace should be untrusted');
    assert.ok(api, 'extension did not activate in restricted mode');
    await api.testing.discoverAll();
    assert.ok(api.testing.ctrl.items.size > 0, 'Test Explorer lists nothing');
    assert.equal(api.testing.hasRunProfile, false, 'a run profile exists in an untrusted workspace');
    const r = await vscode.commands.executeCommand('wfx.runCase', doc.uri).then((x) => x, (e) => `error: ${e.message}`);
    assert.ok(r === undefined || String(r).startsWith('error'), `wfx.runCase ran: ${JSON.stringify(r)}`);
  });
  if (X.diag !== null) {
    await check('untrusted_diagnostics', async () => {
      await api.ready();
      const hit = await waitFor(() => vscode.languages.getDiagnostics(doc.uri).find((d) => d.message.includes(X.diag)), 20000);
      assert.ok(hit, `no diagnostic in restricted mode; log: ${api.recentLog().slice(-5).join(' | ')}`);
    });
  }
  if (failures.length) throw new Error(`failed: ${failures.join(', ')}`);
}

// Files under `dir` for which `pred(path)` holds, at most `depth` folders down (bounded walk).
function findFiles(dir, pred, depth) {
  const out = [];
  if (!dir || depth < 0) return out;
  let entries = [];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...findFiles(p, pred, depth - 1));
    else if (pred(p)) out.push(p);
  }
  return out;
}
// The most recently written of `files` (one element, or none).
const newest = (files) => files.map((f) => [fs.statSync(f).mtimeMs, f]).sort((a, b) => b[0] - a[0]).slice(0, 1).map((x) => x[1]);

function* iter(collection) {
  const all = [];
  collection.forEach((i) => all.push(i));
  yield* all;
}
