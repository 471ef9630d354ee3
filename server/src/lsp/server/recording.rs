//! Recording a case with the live model from the editor (`wfx.recordCase`, issue 15 item
//! 8): the refusal unless `wfx.run.allowLive`, the record task and its progress.

use super::run::text_of;
#[allow(
    clippy::wildcard_imports,
    reason = "a part of the parent module, split off by topic"
)]
use super::*;

impl Server {
    /// `wfx.recordCase [uri]` (issue 15 item 8): refused unless `wfx.run.allowLive` is true
    /// (whatever the client sends); records the case of `uri`, or every case of the
    /// workflow of a `workflow.yaml` URI, with the live model in a background task. A
    /// running run or recording started for the same URI is cancelled. `client_token`: the
    /// request's `workDoneToken`, used for the progress instead of a server-created one.
    pub(super) fn start_record(
        &self,
        uri: &Uri,
        client_token: Option<lsp::ProgressToken>,
    ) -> Result<()> {
        let s = self.session();
        if !s.settings.run_allow_live {
            return Err(request_failed(record::REFUSED_OFF.into()));
        }
        let loc = paths::locate(uri, &s.roots)
            .ok_or_else(|| Error::invalid_params("the document is outside the workspace"))?;
        let Some(dir) = workflow_dir(&loc.rel) else {
            return Err(Error::invalid_params("not a workflow or case file"));
        };
        let fs = self.overlay(&loc.root);
        let (target, cases) = match workspace::classify(&loc.rel) {
            FileKind::Case(_) => {
                if let wfx_runner::select::AgentSource::AgentScript { path } =
                    wfx_runner::select::select_agent(&fs, &loc.rel, true)
                {
                    return Err(request_failed(format!(
                        "`{}` has an agent script, `{path}`, which comes before the model: move it away to record the case",
                        loc.rel
                    )));
                }
                (loc.rel.clone(), vec![loc.rel.clone()])
            }
            FileKind::Workflow(_) => (dir.dir(), workspace::discover_cases(&fs, &dir)),
            _ => {
                return Err(Error::invalid_params(
                    "wfx.recordCase takes a case file or a workflow.yaml",
                ));
            }
        };
        let token = runs::CancelToken::default();
        {
            let mut st = self.run_state();
            if let Some(old) = st.tokens.insert(uri.as_str().to_owned(), token.clone()) {
                old.store(true, Ordering::SeqCst);
            }
        }
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let buffers = self
            .docs
            .texts_under(&loc.root)
            .into_iter()
            .filter(|(rel, _)| rel.starts_with("workflows/"))
            .map(|(rel, text)| (rel, text.to_string()))
            .collect();
        let job = record::Job {
            root: loc.root.clone(),
            target,
            skip_grades: s.settings.runner_skip_grades,
            buffers,
            cancel: token.clone(),
            inner: std::sync::Arc::new(|env: &wfx_runner::model::config::ModelEnv| {
                Box::new(crate::live::HttpTransport::new(env))
                    as Box<dyn wfx_runner::model::wire::ChatTransport + Send>
            }),
            notes: tx,
        };
        let this = self.clone();
        let key = uri.as_str().to_owned();
        tokio::spawn(async move {
            this.record_task(
                key,
                token,
                client_token,
                loc.root,
                dir,
                fs,
                cases,
                (job, rx),
                s,
            )
            .await;
        });
        Ok(())
    }

    /// Runs a recording ([`record::record`]) with work-done progress on the client's token,
    /// else on one it creates when the client announced `window.workDoneProgress`: `Begin`,
    /// one `Report` per model call (`model call 3: agent · step 2 · …`),
    /// `End`. Cancelled by `window/workDoneProgress/cancel` or `wfx.cancelRun [uri]`: the
    /// call in flight is abandoned and nothing is written. A finished recording annotates
    /// its cases like a run, and the code lenses are refreshed (the run lens then says
    /// `(cassette)`).
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn record_task(
        &self,
        key: String,
        cancel: runs::CancelToken,
        client_token: Option<lsp::ProgressToken>,
        root: PathBuf,
        dir: WorkflowDir,
        fs: Overlay,
        cases: Vec<String>,
        (job, mut rx): (record::Job, tokio::sync::mpsc::UnboundedReceiver<String>),
        s: Session,
    ) {
        let ptoken = match client_token {
            Some(tok) => {
                if let lsp::ProgressToken::String(t) = &tok {
                    self.run_state().progress.insert(t.clone(), key.clone());
                }
                Some(tok)
            }
            None if s.work_done_progress => self.create_progress("record", &key).await,
            None => None,
        };
        self.progress(
            &ptoken,
            lsp::WorkDoneProgress::Begin(lsp::WorkDoneProgressBegin {
                title: "Recording with the model".into(),
                cancellable: Some(true),
                message: Some(format!(
                    "{}: {} case(s); every model call is billed",
                    job.target,
                    cases.len()
                )),
                percentage: None,
            }),
        )
        .await;
        let texts: Vec<Arc<str>> = cases
            .iter()
            .map(|c| Arc::from(fs.read_text(c).unwrap_or_default().as_str()))
            .collect();
        let this = self.clone();
        let tok2 = ptoken.clone();
        // One `Report` per model call, in order, while the recording runs.
        let forward = tokio::spawn(async move {
            while let Some(note) = rx.recv().await {
                this.progress(
                    &tok2,
                    lsp::WorkDoneProgress::Report(lsp::WorkDoneProgressReport {
                        cancellable: Some(true),
                        message: Some(note),
                        percentage: None,
                    }),
                )
                .await;
            }
        });
        let got = tokio::task::spawn_blocking(move || record::record(job))
            .await
            .map_err(|e| format!("the recording task failed: {e}"))
            .and_then(|r| r);
        // The job (and every sender) is gone: the forwarder ends after the last note.
        let _ = forward.await;
        let cancelled = cancel.load(Ordering::SeqCst);
        let mut touched = Vec::new();
        let message = {
            let mut st = self.run_state();
            if st.tokens.get(&key).is_some_and(|t| Arc::ptr_eq(t, &cancel)) {
                st.tokens.remove(&key);
            }
            if let Some(lsp::ProgressToken::String(t)) = &ptoken {
                st.progress.remove(t);
            }
            match &got {
                _ if cancelled => "cancelled: nothing was written".to_owned(),
                Err(e) => e.clone(),
                Ok(r) => {
                    let outcomes = runs::parse_external(&r.stdout, &dir, &cases, r.duration_ms)
                        .unwrap_or_default();
                    let passed = outcomes
                        .iter()
                        .filter(|(_, o)| o.verdict == "passed")
                        .count();
                    for (case, o) in outcomes {
                        let Some(uri) = paths::uri_of(&root, &case) else {
                            continue;
                        };
                        let text = text_of(&cases, &texts, &case);
                        st.annotations.insert(
                            uri.as_str().to_owned(),
                            runs::Annotation { text, outcome: o },
                        );
                        touched.push(uri);
                    }
                    format!(
                        "{} model call(s); {passed}/{} case(s) passed",
                        r.calls,
                        touched.len()
                    )
                }
            }
        };
        if let Err(e) = &got
            && !cancelled
        {
            self.client
                .show_message(
                    lsp::MessageType::ERROR,
                    format!("wfx: the recording failed: {e}"),
                )
                .await;
        }
        self.progress(
            &ptoken,
            lsp::WorkDoneProgress::End(lsp::WorkDoneProgressEnd {
                message: Some(message),
            }),
        )
        .await;
        if cancelled {
            return;
        }
        self.show_run_results(&s, &touched).await;
    }
}
