//! The language server: protocol glue on tower-lsp-server over the pure analysis of
//! `wfx_schemas` and [`crate::ide`]. Modules: `convert` (every offset ↔ position and
//! core ↔ LSP conversion), `document` (the open-document store), `paths` (URI ↔
//! workspace-relative path), `overlay` (open buffers over the disk as a `FileAccess`),
//! `settings`, `commands`, `closed` (diagnostics of closed files), `runs` (case runs from the editor and their annotations), `record` ("● Record with model": live recordings from the editor) and
//! `server` (the handlers, plus the custom `wfx/graph` request).
//!
//! Messages are handled strictly one at a time: [`serve`] runs tower-lsp-server with
//! `concurrency_level(1)`, so didOpen/didChange/didClose and requests never interleave.

pub mod closed;
pub mod commands;
pub mod convert;
pub mod document;
pub mod framing;
pub mod logging;
pub mod overlay;
pub mod paths;
pub mod record;
pub mod runs;
pub mod server;
pub mod settings;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tower_lsp_server::LspService;

/// Serves one client over `input`/`output` until `exit` or end of input; returns whether
/// `shutdown` was received first (LSP: exit code 0 then, 1 otherwise). Case runs still in
/// flight are cancelled on `shutdown` and again at the end, and awaited for up to 2 s.
pub async fn serve<I, O>(input: I, output: O) -> bool
where
    I: AsyncRead + Unpin,
    O: AsyncWrite,
{
    let shutdown = Arc::new(AtomicBool::new(false));
    let flag = shutdown.clone();
    let runs = server::Runs::default();
    let runs2 = runs.clone();
    let (service, socket) =
        LspService::build(move |client| server::Server::new(client, flag, runs2))
            .custom_method("wfx/graph", server::Server::graph)
            .custom_method(
                "window/workDoneProgress/cancel",
                server::Server::progress_cancel,
            )
            .finish();
    // tower-lsp-server talks to the client only through the framing layer (see
    // `framing`): its input is what `frame_input` accepted, its output is cut into whole
    // frames and written, together with the layer's own error replies, by one writer.
    let (server_in, lsp_in) = tokio::io::duplex(64 << 10);
    let (lsp_out, server_out) = tokio::io::duplex(64 << 10);
    let (frames_tx, frames_rx) = tokio::sync::mpsc::channel::<Vec<u8>>(16);
    let lsp = async {
        tower_lsp_server::Server::new(lsp_in, lsp_out, socket)
            .concurrency_level(1)
            .serve(service)
            .await;
    };
    let pump = framing::pump_output(server_out, frames_tx.clone());
    let mut reader = Some(Box::pin(framing::frame_input(input, server_in, frames_tx)));
    let writer = framing::write_output(frames_rx, output);
    let session = async {
        let mut work = std::pin::pin!(async { tokio::join!(lsp, pump) });
        if let Some(r) = reader.as_mut() {
            tokio::select! {
                _ = &mut work => {}
                // The input ended: tower-lsp-server sees its end too and winds down.
                _ = r => { work.await; }
            }
        }
        // The reader may still wait on the client's input (after `exit`); dropping it
        // releases its reply sender, so the writer ends once every frame is written.
        reader = None;
    };
    tokio::join!(session, writer);
    // `exit`, or the client went away: stop runs in flight and give them a moment to
    // kill their children (an external runner is polled every 20 ms), so no process or
    // runner thread outlives the server.
    runs.cancel_all();
    let idle = tokio::task::spawn_blocking(move || runs.wait_idle(Duration::from_secs(2)))
        .await
        .unwrap_or(false);
    if !idle {
        tracing::warn!("runs still in flight at exit");
    }
    shutdown.load(Ordering::SeqCst)
}

/// Runs the server on stdin/stdout on a fresh tokio runtime. `Err` when the runtime cannot
/// start or the client exited without `shutdown`.
pub fn run_stdio() -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let clean = rt.block_on(serve(tokio::io::stdin(), tokio::io::stdout()));
    // stdin's reader thread may still be blocked in a read; don't wait for it.
    rt.shutdown_background();
    if clean {
        Ok(())
    } else {
        Err(anyhow::anyhow!(
            "the client exited without a shutdown request"
        ))
    }
}
