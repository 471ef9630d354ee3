//! The background pass over closed files (see `crate::lsp::closed`): scheduling,
//! coalescing and publishing.

#[allow(
    clippy::wildcard_imports,
    reason = "a part of the parent module, split off by topic"
)]
use super::*;

impl Server {
    /// Queues a pass over the closed files (coalesced with any pass already queued).
    pub(super) fn schedule_closed(&self) {
        self.closed_gen.fetch_add(1, Ordering::SeqCst);
        self.closed_wake.notify_one();
    }

    /// The closed-file pass loop, spawned once at `initialized`; ends at `shutdown`.
    pub(super) async fn closed_worker(&self) {
        loop {
            self.closed_wake.notified().await;
            if self.shutdown.load(Ordering::SeqCst) {
                return;
            }
            self.closed_pass().await;
        }
    }

    /// Checks every closed `workflow.yaml` and case file (nothing when
    /// `wfx.diagnostics.openFilesOnly`) and pushes what changed since the last pass.
    pub(super) async fn closed_pass(&self) {
        let start = std::time::Instant::now();
        let generation = self.closed_gen.load(Ordering::SeqCst);
        let s = self.session();
        let files = if s.settings.diagnostics_open_files_only {
            Vec::new()
        } else {
            self.indexed_files().await
        };
        let open_now = || -> std::collections::BTreeSet<String> {
            self.docs
                .all()
                .into_iter()
                .map(|(u, _)| u.as_str().to_owned())
                .collect()
        };
        let open = open_now();
        let overlays: BTreeMap<PathBuf, Overlay> = s
            .roots
            .iter()
            .map(|r| (r.clone(), self.overlay(r)))
            .collect();
        let checked = files.len();
        let gen_now = self.closed_gen.clone();
        let found = tokio::task::spawn_blocking(move || {
            let overlay = |root: &Path| {
                overlays
                    .get(root)
                    .cloned()
                    .unwrap_or_else(|| Overlay::new(root, BTreeMap::new()))
            };
            let superseded = || gen_now.load(Ordering::SeqCst) != generation;
            crate::lsp::closed::closed_diagnostics(&files, &open, &overlay, &s, &superseded)
        })
        .await;
        let checked_ms = start.elapsed().as_millis();
        let found = match found {
            Ok(Some(f)) => f,
            Ok(None) => {
                tracing::debug!(
                    "workspace diagnostics: pass superseded after {checked_ms} ms; the queued one follows"
                );
                return;
            }
            Err(e) => {
                tracing::error!("the workspace diagnostics task failed: {e}");
                return;
            }
        };
        let _guard = self.publish.lock().await;
        // Documents opened meanwhile are left to their own (versioned) push.
        let open = open_now();
        let found = found
            .into_iter()
            .filter(|(k, _)| !open.contains(k))
            .collect();
        let pushes = self
            .closed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .update(found, &open);
        let pushed = pushes.len();
        for (uri, diags) in pushes {
            self.client.publish_diagnostics(uri, diags, None).await;
        }
        tracing::debug!(
            "workspace diagnostics: {checked} files checked in {checked_ms} ms, {pushed} pushed in {} ms",
            start.elapsed().as_millis()
        );
    }
}
