//! Running cases from the editor (`wfx.runCase`, `wfx.runAllCases`, `wfx.cancelRun`): the
//! run task, its progress and `wfx/runStatus`, and what a finished run shows (annotations,
//! run diagnostics, the transcript, `wfx/graph` with the last run's path).

#[allow(
    clippy::wildcard_imports,
    reason = "a part of the parent module, split off by topic"
)]
use super::*;

impl Server {
    pub(super) fn run_state(&self) -> std::sync::MutexGuard<'_, RunState> {
        self.runs.lock()
    }

    /// The run annotation of `uri` if the document's text is still the text it ran on.
    pub(super) fn current_annotation(&self, uri: &Uri) -> Option<(Snapshot, runs::Annotation)> {
        let snap = self.docs.snapshot(uri)?;
        let a = self.run_state().annotations.get(uri.as_str()).cloned()?;
        (*a.text == *snap.text).then_some((snap, a))
    }

    /// ` · last run ✔` when every case of `cases` (workspace-relative) that has a current
    /// run annotation passed, ` · last run ✖` when one failed, empty when none has one.
    pub(super) fn last_run_mark(&self, root: &std::path::Path, cases: &[String]) -> String {
        let (mut ran, mut failed) = (0, 0);
        for c in cases {
            let Some(uri) = paths::uri_of(root, c) else {
                continue;
            };
            if let Some((_, a)) = self.current_annotation(&uri) {
                ran += 1;
                if a.outcome.verdict == "failed" {
                    failed += 1;
                }
            }
        }
        match (ran, failed) {
            (0, _) => String::new(),
            (_, 0) => " · last run ✔".into(),
            _ => " · last run ✖".into(),
        }
    }

    /// The `wfx.showTranscript` answer for `uri`: `{title, markdown}` of its last run in
    /// this session while the run's annotation is kept (an edit of the case drops it, as it
    /// drops the step marks), else `None` (`null`).
    pub(super) fn transcript(&self, uri: &Uri) -> Option<Value> {
        let a = self.run_state().annotations.get(uri.as_str()).cloned()?;
        let name = uri
            .as_str()
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .to_owned();
        let name = paths::locate(uri, &self.session().roots).map_or(name, |l| l.rel);
        Some(serde_json::json!({
            "title": format!("Transcript of {name}"),
            "markdown": runs::transcript_markdown(&name, &a.outcome),
        }))
    }

    /// `wfx-run` diagnostics of the last run of `uri` (failed steps; a died case's error on
    /// the first line).
    pub(super) fn run_diagnostics(&self, uri: &Uri) -> Vec<lsp::Diagnostic> {
        let Some((snap, a)) = self.current_annotation(uri) else {
            return Vec::new();
        };
        let session = self.session();
        let enc = session.encoding;
        let steps = runs::step_annotations(&snap.text, &a.outcome);
        let mut out: Vec<lsp::Diagnostic> = steps
            .iter()
            .filter_map(|s| match &s.mark {
                runs::StepMark::Failed(d) => Some(lsp::Diagnostic {
                    range: convert::range(&snap.index, s.key_range, enc),
                    severity: Some(lsp::DiagnosticSeverity::ERROR),
                    source: Some("wfx-run".into()),
                    // 1-based, as every step number people read (issue 16).
                    message: format!("step {} failed: {d}", s.index + 1),
                    ..Default::default()
                }),
                _ => None,
            })
            .collect();
        if let Some(e) = &a.outcome.error {
            out.push(lsp::Diagnostic {
                range: lsp::Range::default(),
                severity: Some(lsp::DiagnosticSeverity::ERROR),
                source: Some("wfx-run".into()),
                message: format!("the case died: {e}"),
                ..Default::default()
            });
        }
        // A client that cannot be told to re-request code lenses (Neovim announces no
        // `workspace.codeLens.refreshSupport`) would show the verdict lens only after a
        // manual refresh: it gets the verdict as an information diagnostic on the first line
        // instead (issue 16; docs/editors.md "Run annotations without a lens refresh").
        if !session.code_lens_refresh {
            out.push(lsp::Diagnostic {
                range: lsp::Range::default(),
                severity: Some(lsp::DiagnosticSeverity::INFORMATION),
                source: Some("wfx-run".into()),
                message: format!("last run: {}", runs::verdict_title(&a.outcome, &steps)),
                ..Default::default()
            });
        }
        out
    }

    /// Starts a run of one case (`all == false`) or of every case of the workflow of `uri`
    /// in a background task; a running run started for the same URI is cancelled.
    pub(super) fn start_run(&self, uri: &Uri, all: bool) -> Result<()> {
        let s = self.session();
        let loc = paths::locate(uri, &s.roots)
            .ok_or_else(|| Error::invalid_params("the document is outside the workspace"))?;
        let Some(dir) = workflow_dir(&loc.rel) else {
            return Err(Error::invalid_params("not a workflow or case file"));
        };
        let fs = self.overlay(&loc.root);
        let cases = if all {
            workspace::discover_cases(&fs, &dir)
        } else if matches!(workspace::classify(&loc.rel), FileKind::Case(_)) {
            vec![loc.rel.clone()]
        } else {
            return Err(Error::invalid_params("wfx.runCase takes a case file"));
        };
        let token = runs::CancelToken::default();
        {
            let mut st = self.run_state();
            if let Some(old) = st.tokens.insert(uri.as_str().to_owned(), token.clone()) {
                old.store(true, Ordering::SeqCst);
            }
        }
        let this = self.clone();
        let key = uri.as_str().to_owned();
        tokio::spawn(async move {
            this.run_task(key, token, loc.root, dir, fs, cases, s).await;
        });
        Ok(())
    }

    pub(super) async fn progress(
        &self,
        token: &Option<lsp::ProgressToken>,
        value: lsp::WorkDoneProgress,
    ) {
        if let Some(t) = token {
            self.client
                .send_notification::<lsp::notification::Progress>(lsp::ProgressParams {
                    token: t.clone(),
                    value: lsp::ProgressParamsValue::WorkDone(value),
                })
                .await;
        }
    }

    /// Creates a server-initiated work-done progress token `wfx-{kind}-N` and registers it
    /// under the run `key`, so `window/workDoneProgress/cancel` on it cancels that run.
    /// `None` when the client refuses or does not answer within 2 s (bounded: a client that
    /// never answers must not stall the run or recording).
    pub(super) async fn create_progress(
        &self,
        kind: &str,
        key: &str,
    ) -> Option<lsp::ProgressToken> {
        let t = {
            let mut st = self.run_state();
            st.next += 1;
            format!("wfx-{kind}-{}", st.next)
        };
        let tok = lsp::ProgressToken::String(t.clone());
        let created = tokio::time::timeout(
            std::time::Duration::from_secs(2),
            self.client.create_work_done_progress(tok.clone()),
        )
        .await;
        if !matches!(created, Ok(Ok(()))) {
            return None;
        }
        self.run_state().progress.insert(t, key.to_owned());
        Some(tok)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) async fn run_task(
        &self,
        key: String,
        cancel: runs::CancelToken,
        root: PathBuf,
        dir: WorkflowDir,
        fs: Overlay,
        cases: Vec<String>,
        s: Session,
    ) {
        let ptoken = if s.work_done_progress && !s.run_status {
            self.create_progress("run", &key).await
        } else {
            None
        };
        let total = cases.len().max(1);
        self.progress(
            &ptoken,
            lsp::WorkDoneProgress::Begin(lsp::WorkDoneProgressBegin {
                title: "Running cases".into(),
                cancellable: Some(true),
                message: Some(format!("{} case(s) of {}", cases.len(), dir.slug)),
                percentage: Some(0),
            }),
        )
        .await;
        let case_uris: Vec<String> = cases
            .iter()
            .filter_map(|c| paths::uri_of(&root, c).map(|u| u.as_str().to_owned()))
            .collect();
        let mut status = RunStatus {
            uri: key.clone(),
            phase: "begin".into(),
            total: cases.len(),
            done: 0,
            case: None,
            cases: case_uris,
            counts: None,
            message: None,
        };
        self.run_status(&s, &status).await;
        let texts: Vec<Arc<str>> = cases
            .iter()
            .map(|c| Arc::from(fs.read_text(c).unwrap_or_default().as_str()))
            .collect();
        let mut outcomes: Vec<(String, runs::CaseOutcome)> = Vec::new();
        let mut failure = None;
        if let Some(command) = s.settings.runner_command.clone() {
            let filter = (cases.len() == 1).then(|| cases.first().cloned()).flatten();
            let (root2, dir2, cancel2, skip) = (
                root.clone(),
                dir.clone(),
                cancel.clone(),
                s.settings.runner_skip_grades,
            );
            let got = tokio::task::spawn_blocking(move || {
                runs::run_external(
                    &command,
                    &root2,
                    &dir2,
                    filter.as_deref(),
                    skip,
                    &cancel2,
                    runs::EXTERNAL_TIMEOUT,
                )
            })
            .await
            .map_err(|e| e.to_string())
            .and_then(|r| r)
            .and_then(|(out, ms)| runs::parse_external(&out, &dir, &cases, ms));
            match got {
                Ok(o) => outcomes = o,
                Err(e) => failure = Some(e),
            }
        } else {
            for (i, case) in cases.iter().enumerate() {
                if cancel.load(Ordering::SeqCst) {
                    break;
                }
                let (fs2, case2, skip) = (fs.clone(), case.clone(), s.settings.runner_skip_grades);
                // "Cancel run" also stops the hook or script running at that moment.
                let stop = wfx_runner::sandbox::CancelToken::from_flag(cancel.clone());
                let got = tokio::task::spawn_blocking(move || {
                    let clock = wfx_runner::clock::SystemClock;
                    let make_host = || -> Box<dyn wfx_runner::script_host::ScriptHost> {
                        Box::new(wfx_runner::sandbox::QuickJsHost::with_cancel(stop.clone()))
                    };
                    let mut ro = wfx_runner::suite::RunOptions::new(&fs2, &clock);
                    ro.grades.skip = skip;
                    ro.script_host = Some(&make_host);
                    wfx_runner::suite::run_case_file(&ro, &case2)
                        .map(|run| runs::outcome_from_run(&run))
                        .map_err(|e| e.to_string())
                })
                .await;
                match got {
                    Ok(Ok(o)) => outcomes.push((case.clone(), o)),
                    Ok(Err(e)) => failure = Some(e),
                    Err(e) => failure = Some(format!("the run task failed: {e}")),
                }
                self.progress(
                    &ptoken,
                    lsp::WorkDoneProgress::Report(lsp::WorkDoneProgressReport {
                        cancellable: Some(true),
                        message: Some(format!("{}/{} {case}", i + 1, cases.len())),
                        percentage: u32::try_from((i + 1) * 100 / total).ok(),
                    }),
                )
                .await;
                status.phase = "case".into();
                status.done = i + 1;
                status.case = paths::uri_of(&root, case).map(|u| u.as_str().to_owned());
                self.run_status(&s, &status).await;
            }
        }
        let cancelled = cancel.load(Ordering::SeqCst);
        let mut touched = Vec::new();
        {
            let mut st = self.run_state();
            if st.tokens.get(&key).is_some_and(|t| Arc::ptr_eq(t, &cancel)) {
                st.tokens.remove(&key);
            }
            if let Some(lsp::ProgressToken::String(t)) = &ptoken {
                st.progress.remove(t);
            }
            let mut counts = RunCounts::default();
            for (_, o) in &outcomes {
                match o.verdict.as_str() {
                    "passed" => counts.passed += 1,
                    "failed" => counts.failed += 1,
                    "skipped" => counts.skipped += 1,
                    _ => counts.not_run += 1,
                }
            }
            counts.not_run += cases.len().saturating_sub(outcomes.len());
            status.counts = Some(counts);
            if !cancelled {
                for (case, o) in outcomes {
                    let Some(uri) = paths::uri_of(&root, &case) else {
                        continue;
                    };
                    let text = text_of(&cases, &texts, &case);
                    if let Some(p) = &o.path {
                        st.paths.insert(uri.as_str().to_owned(), p.clone());
                    }
                    st.annotations.insert(
                        uri.as_str().to_owned(),
                        runs::Annotation { text, outcome: o },
                    );
                    touched.push(uri);
                }
            }
        }
        let message = if cancelled {
            "cancelled".to_owned()
        } else if let Some(f) = &failure {
            f.clone()
        } else {
            format!("{} case(s) ran", touched.len())
        };
        if let Some(f) = &failure
            && !cancelled
        {
            self.client
                .show_message(lsp::MessageType::ERROR, format!("wfx: the run failed: {f}"))
                .await;
        }
        self.progress(
            &ptoken,
            lsp::WorkDoneProgress::End(lsp::WorkDoneProgressEnd {
                message: Some(message.clone()),
            }),
        )
        .await;
        status.phase = if cancelled { "cancelled" } else { "end" }.into();
        status.case = None;
        status.message = Some(message);
        if cancelled {
            self.run_status(&s, &status).await;
            return;
        }
        self.show_run_results(&s, &touched).await;
        // Last, so a client that refreshes on it sees the run's annotations and path.
        self.run_status(&s, &status).await;
    }

    /// After a run or a recording: rechecks the open documents among `touched` (their run
    /// diagnostics and annotations changed) and asks the client to refresh inlay hints and
    /// code lenses when it supports the refresh.
    pub(super) async fn show_run_results(&self, s: &Session, touched: &[Uri]) {
        for uri in touched {
            if self.docs.version(uri).is_some() {
                self.recheck(uri).await;
            }
        }
        if s.inlay_hint_refresh {
            let _ = self.client.inlay_hint_refresh().await;
        }
        if s.code_lens_refresh {
            let _ = self.client.code_lens_refresh().await;
        }
    }

    /// Sends `wfx/runStatus` (docs/lsp-extensions.md) to a client that asked for it.
    pub(super) async fn run_status(&self, s: &Session, status: &RunStatus) {
        if s.run_status {
            self.client
                .send_notification::<RunStatusNotification>(status.clone())
                .await;
        }
    }

    /// Cancels the run started for `key` (a URI) or owning progress token `key`.
    pub(super) fn cancel_run(&self, key: &str) -> bool {
        let st = self.run_state();
        let key = st.progress.get(key).map_or(key, String::as_str);
        match st.tokens.get(key) {
            Some(t) => {
                t.store(true, Ordering::SeqCst);
                true
            }
            None => false,
        }
    }

    /// `window/workDoneProgress/cancel`: cancels the run behind the progress token.
    pub async fn progress_cancel(&self, params: lsp::WorkDoneProgressCancelParams) {
        if let lsp::ProgressToken::String(t) = &params.token {
            self.cancel_run(t);
        }
    }

    /// `wfx/graph` (docs/lsp-extensions.md): the graph of the workflow of a `workflow.yaml`
    /// or case document, from the current (possibly unsaved) text, with the last run's path
    /// of the case when it ran in this session.
    pub async fn graph(&self, params: GraphParams) -> Result<Value> {
        let uri = params.text_document.uri;
        let s = self.session();
        let loc = paths::locate(&uri, &s.roots)
            .ok_or_else(|| Error::invalid_params("the document is outside the workspace"))?;
        let dir = workflow_dir(&loc.rel)
            .ok_or_else(|| Error::invalid_params("not a workflow or case file"))?;
        let fs = self.overlay(&loc.root);
        let is_case = matches!(workspace::classify(&loc.rel), FileKind::Case(_));
        let path = if is_case {
            self.run_state().paths.get(uri.as_str()).cloned()
        } else {
            None
        };
        // workflow.yaml: coverage (issue 17), from the runs of its cases in this session,
        // else from what the cases' assertions name.
        let tests_prefix = paths::uri_of(&loc.root, &dir.tests_dir())
            .map(|u| format!("{}/", u.as_str()))
            .unwrap_or_default();
        let run_union = (!is_case).then(|| {
            let st = self.run_state();
            let mine: Vec<&wfx_schemas::graph::CasePath> = st
                .paths
                .iter()
                .filter(|(u, _)| !tests_prefix.is_empty() && u.starts_with(&tests_prefix))
                .map(|(_, p)| p)
                .collect();
            (!mine.is_empty()).then(|| ide::coverage::union_path(mine.into_iter()))
        });
        // The layout is CPU work (bounded: `graph::MAX_LAYOUT_WORK`); it runs on a blocking
        // thread so the runtime's workers keep answering other requests meanwhile.
        let enc = s.encoding;
        let job = move || {
            guard("wfx/graph", || {
                let info = wfx_schemas::check::load_workflow(&fs, &dir).ok_or_else(|| {
                    request_failed(format!("no workflow.yaml for '{}'", dir.slug))
                })?;
                let index = LineIndex::new(&info.text);
                let wf = info
                    .model
                    .ok_or_else(|| request_failed(format!("{} is not a mapping", info.path)))?;
                let g = wfx_schemas::graph::Graph::from_workflow(&wf);
                let (coverage, source) = match (&run_union, is_case) {
                    (_, true) => (None, None),
                    (Some(Some(u)), _) => (Some(u.clone()), Some("runs")),
                    _ => (
                        Some(ide::coverage::assertion_coverage_path(&fs, &dir, &wf)),
                        Some("assertions"),
                    ),
                };
                let lit = path.as_ref().or(coverage.as_ref());
                let mut graph = g.to_reference_json();
                let nodes: Vec<Value> = g
                    .nodes
                    .iter()
                    .map(|n| {
                        serde_json::json!({
                            "id": n.id,
                            "kind": match n.kind {
                                wfx_schemas::graph::NodeKind::Start => "start",
                                wfx_schemas::graph::NodeKind::Agent => "agent",
                                wfx_schemas::graph::NodeKind::Human => "human",
                            },
                            "terminal": n.terminal,
                            "title": n.title,
                            "triggers": n.triggers,
                            "range": n.range.map(|r| convert::range(&index, r, enc)),
                        })
                    })
                    .collect();
                if let Some(o) = graph.as_object_mut() {
                    o.insert("nodes".into(), Value::Array(nodes));
                }
                let (svg, layout) = match g.to_svg_measured(lit) {
                    Ok((svg, layout)) => (svg, Some(layout)),
                    Err(_) => (String::new(), None),
                };
                if layout.is_some_and(|l| l.cut) {
                    tracing::info!(
                        "wfx/graph: the layout of '{}' spent its budget of {} units; node order not fully optimised",
                        dir.slug,
                        wfx_schemas::graph::MAX_LAYOUT_WORK
                    );
                }
                Ok(serde_json::json!({
                    "workflow": dir.slug,
                    "graph": graph,
                    "svg": svg,
                    "layout": layout.map(|l| serde_json::json!({"work": l.work, "cut": l.cut})),
                    "mermaid": g.to_mermaid(lit),
                    "path": path.as_ref().map(crate::cli::graph::path_json),
                    "coverage": coverage.as_ref().map(|c| {
                        let mut v = crate::cli::graph::path_json(c);
                        if let Some(o) = v.as_object_mut() {
                            o.insert("source".into(), Value::from(source.unwrap_or("")));
                        }
                        v
                    }),
                }))
            })
        };
        tokio::task::spawn_blocking(job)
            .await
            .map_err(|_| Error::internal_error())??
    }
}

/// The text `case` had when its run started: the entry of `texts` at its index in `cases`
/// (the two are parallel), or empty when it is not among them.
pub(super) fn text_of(cases: &[String], texts: &[Arc<str>], case: &str) -> Arc<str> {
    cases
        .iter()
        .position(|c| c == case)
        .and_then(|i| texts.get(i).cloned())
        .unwrap_or_else(|| Arc::from(""))
}
