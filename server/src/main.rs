//! `wfx-lsp`: the language server (default, `lsp`, `serve`), `check`, `test` and `graph`. This file
//! only parses the command line (clap derive), sets up logging on stderr and dispatches;
//! stdout belongs to the protocol or, for `check`/`test`, to their results.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use wfx_lsp::cli::{self, CheckOptions, Format};

/// Language server, checker and deterministic runner for archmax workflow and case files.
#[derive(Debug, Parser)]
#[command(name = "wfx-lsp", version, about)]
struct Args {
    #[command(subcommand)]
    command: Option<Command>,
    /// Accepted and ignored: the server always speaks over stdio.
    #[arg(long, global = true, hide = true)]
    stdio: bool,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the language server over stdio (the default).
    #[command(visible_alias = "serve")]
    Lsp,
    /// Check workflow and case files; exit 1 on an error, 2 on a usage or IO error.
    Check {
        /// A workspace root (holding `workflows/`), a workflow folder or files.
        #[arg(default_value = ".")]
        paths: Vec<String>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = FormatArg::Human)]
        format: FormatArg,
        /// Apply the diagnostics' fixes, then check again.
        #[arg(long)]
        fix: bool,
        /// Check every file of each workflow a path belongs to (the pre-commit hook passes the
        /// changed files; a renamed state must still fail the unchanged cases naming it).
        #[arg(long)]
        whole_workflows: bool,
    },
    /// Run the cases of a workflow with the deterministic runner.
    Test {
        /// A workflow slug, a workflow folder, a workspace root or a case file.
        target: Option<String>,
        /// Substring filter on the workspace-relative case path.
        filter: Option<String>,
        /// Print the result JSON on stdout.
        #[arg(long)]
        json: bool,
        /// Extra reporters (written under `--out`).
        #[arg(long, value_parser = ["junit", "markdown", "json", "html"])]
        reporter: Vec<String>,
        /// Where reporters write.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Report `grade` assertions as not executed.
        #[arg(long)]
        skip_grades: bool,
        /// Stop after the first failing case.
        #[arg(long)]
        bail: bool,
        /// Do not fail the run for cases that were not run for want of an agent (they are
        /// still reported and counted).
        #[arg(long)]
        allow_no_agent: bool,
        /// Print each case's whole evidence record (what happened, step by step) on stderr.
        #[arg(long)]
        verbose: bool,
        /// Workflow coverage: a summary on stderr, `coverage.json` and `coverage.md` under
        /// `--out` (default `.wfx-test-results/`), a coverage graph in the HTML report.
        #[arg(long)]
        coverage: bool,
        /// Fail when coverage is below thresholds, e.g. `states=80,edges=60` (groups:
        /// states, edges, decisions, triggers, hooks; percent). Implies `--coverage`.
        #[arg(long, value_name = "GROUP=PERCENT,...")]
        coverage_min: Option<String>,
        /// Run the agent and the judge on the configured model (ARCHMAX_API_BASE_URL,
        /// ARCHMAX_API_KEY, ARCHMAX_MODEL; docs/live-agent.md). Without it no model is called.
        #[arg(long)]
        live: bool,
        /// Run every case N times (1 to 100) and report each case's pass rate; one
        /// `history.jsonl` row per run. Meant for `--live`, where answers vary.
        #[arg(long, value_name = "N")]
        repeat: Option<u32>,
        /// Read unsaved editor buffers from stdin, a JSON object of workspace-relative path
        /// (below `workflows/`) → text, and run them instead of the files on disk (at most
        /// 16 MiB, 1,000 buffers).
        #[arg(long)]
        buffers_stdin: bool,
        /// What to do with cassettes (`<case>.cassette.json`, docs/cassettes.md): `once`
        /// records a case without one and replays one that exists; `new` replays and
        /// records the rest live; `all` re-records; `none` only replays. Recording needs
        /// `--live`.
        #[arg(long, value_parser = ["once", "new", "all", "none"], default_value = "once")]
        record: String,
        /// Fail a replayed case whose prompt drifted from the recording (changed
        /// instructions, tool declarations or prompt wording) instead of warning.
        #[arg(long)]
        strict_cassettes: bool,
    },
    /// Draft `<case>.agent.yaml` for a case from a path through its workflow that
    /// satisfies its steps; refuses a case no agent can pass.
    Scaffold {
        /// The case file (`workflows/<slug>/tests/**/*.test.yaml`).
        case: String,
        /// Replace an existing agent script.
        #[arg(long)]
        force: bool,
    },
    /// Turn a case's cassette into `<case>.agent.yaml`: the model's replies and tool calls
    /// per run, so the recorded run becomes an editable, model-free case.
    ExportAgent {
        /// The case file (`workflows/<slug>/tests/**/*.test.yaml`) whose
        /// `<case>.cassette.json` is exported.
        case: String,
        /// Replace an existing agent script.
        #[arg(long)]
        force: bool,
    },
    /// Re-apply the redaction of key-like environment values (process and `.env`) to
    /// cassettes in place; prints per file how many values were replaced.
    Scrub {
        /// Cassettes (`*.cassette.json`) relative to the workspace root (the current
        /// folder); none: every cassette below `workflows/`.
        paths: Vec<String>,
    },
    /// Draw a workflow's graph; with `--case`, light the path a run of that case took.
    Graph {
        /// A workflow slug, a workspace root, a workflow folder or a file inside one.
        target: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = GraphFormatArg::Svg)]
        format: GraphFormatArg,
        /// Run this case (grades skipped) and highlight its path.
        #[arg(long = "case")]
        case: Option<String>,
        /// Write to this file instead of stdout.
        #[arg(short = 'o', long = "out")]
        out: Option<PathBuf>,
    },
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum GraphFormatArg {
    Svg,
    Mermaid,
    Dot,
    Json,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum FormatArg {
    Human,
    Json,
    Github,
    Sarif,
}

fn init_logging(default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("WFX_LOG")
        .or_else(|_| tracing_subscriber::EnvFilter::try_from_default_env())
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}

/// Server mode: the `wfx_*` crates' events go to the client as `window/logMessage` at their
/// level (`wfx_lsp::lsp::logging`); stderr gets only errors of other crates, without a
/// timestamp (clients add their own; Neovim files every stderr line as an error).
fn init_server_logging() {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let filter = tracing_subscriber::EnvFilter::try_from_env("WFX_LOG")
        .or_else(|_| tracing_subscriber::EnvFilter::try_from_default_env())
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .without_time()
        .with_ansi(false)
        .with_filter(tracing_subscriber::filter::filter_fn(|m| {
            *m.level() == tracing::Level::ERROR && !m.target().starts_with("wfx")
        }));
    let _ = tracing_subscriber::registry()
        .with(filter)
        .with(wfx_lsp::lsp::logging::ClientLog::install())
        .with(stderr)
        .try_init();
}

fn code(c: i32) -> ExitCode {
    ExitCode::from(u8::try_from(c).unwrap_or(2))
}

/// Safe writes: on SIGTERM, SIGINT (Ctrl-C) or SIGHUP, a thread removes the session folders
/// of the runs in flight (`wfx_runner::session_fs::remove_live_sessions`) and exits with
/// 128 + the signal's number, so a stopped `wfx-lsp test` (or server, or `graph --case`)
/// leaves no `wfx-session-*` folder behind. SIGKILL cannot be caught: a process killed that
/// way may leave its folders in the system temp dir.
#[cfg(unix)]
fn remove_sessions_on_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP]) else {
        tracing::warn!("no signal handler: a stopped run may leave its session folder");
        return;
    };
    std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            wfx_runner::session_fs::remove_live_sessions();
            std::process::exit(128 + sig);
        }
    });
}

/// Without Unix signals there is nothing to install.
#[cfg(not(unix))]
fn remove_sessions_on_signals() {}

fn main() -> ExitCode {
    let args = Args::parse();
    if !matches!(args.command, Some(Command::Check { .. })) {
        // Every command but `check` may run cases (the server on request, `test`, and
        // `graph --case`); `check` runs nothing, so it keeps the default signal behaviour.
        remove_sessions_on_signals();
    }
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    match args.command {
        None | Some(Command::Lsp) => {
            init_server_logging();
            match wfx_lsp::lsp::run_stdio() {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    // The client is gone: stderr is the only place left.
                    eprintln!("wfx-lsp: the language server failed: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Some(Command::Check {
            paths,
            format,
            fix,
            whole_workflows,
        }) => {
            init_logging("warn");
            let format = match format {
                FormatArg::Human => Format::Human,
                FormatArg::Json => Format::Json,
                FormatArg::Github => Format::Github,
                FormatArg::Sarif => Format::Sarif,
            };
            let color = format == Format::Human
                && std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none();
            let opts = CheckOptions {
                paths,
                format,
                fix,
                color,
                whole_workflows,
            };
            code(cli::run_check(
                &opts,
                &cwd,
                &mut cli::QuietPipe::new(std::io::stdout().lock()),
                &mut std::io::stderr(),
            ))
        }
        Some(Command::Test {
            target,
            filter,
            json,
            reporter,
            out,
            skip_grades,
            bail,
            allow_no_agent,
            verbose,
            coverage,
            coverage_min,
            live,
            repeat,
            buffers_stdin,
            record,
            strict_cassettes,
        }) => {
            init_logging("warn");
            let buffers = if buffers_stdin {
                match wfx_runner::buffers::read_buffers(&mut std::io::stdin().lock()) {
                    Ok(b) => Some(b),
                    Err(m) => {
                        eprintln!("Error: {}", wfx_schemas::inert::inert(&m));
                        return ExitCode::from(2);
                    }
                }
            } else {
                None
            };
            let opts = wfx_runner::cli::TestOptions {
                target,
                filter,
                json,
                reporters: reporter,
                out_dir: out,
                skip_grades,
                bail,
                allow_no_agent,
                verbose,
                coverage,
                coverage_min,
                // `None`: the runner's default host, the QuickJS sandbox.
                script_host: None,
                live,
                chat: Some(wfx_runner::cli::ChatTransportFactory(std::sync::Arc::new(
                    |env| Box::new(wfx_lsp::live::HttpTransport::new(env)),
                ))),
                env: None,
                repeat,
                buffers,
                record: wfx_runner::cassette::RecordMode::parse(&record),
                strict_cassettes,
                cancelled: None,
            };
            code(cli::run_test(
                &opts,
                &cwd,
                &mut cli::QuietPipe::new(std::io::stdout().lock()),
                &mut std::io::stderr(),
            ))
        }
        Some(Command::Scaffold { case, force }) => {
            init_logging("warn");
            code(wfx_runner::scaffold::run_cli(
                &case,
                force,
                &cwd,
                &mut cli::QuietPipe::new(std::io::stdout().lock()),
                &mut std::io::stderr(),
            ))
        }
        Some(Command::ExportAgent { case, force }) => {
            init_logging("warn");
            code(wfx_runner::cassette::export::run_cli(
                &case,
                force,
                &cwd,
                &mut cli::QuietPipe::new(std::io::stdout().lock()),
                &mut std::io::stderr(),
            ))
        }
        Some(Command::Scrub { paths }) => {
            init_logging("warn");
            code(wfx_runner::cassette::scrub::run_cli(
                &paths,
                &cwd,
                &mut cli::QuietPipe::new(std::io::stdout().lock()),
                &mut std::io::stderr(),
            ))
        }
        Some(Command::Graph {
            target,
            format,
            case,
            out,
        }) => {
            init_logging("warn");
            let opts = cli::graph::GraphOptions {
                target,
                format: match format {
                    GraphFormatArg::Svg => cli::graph::GraphFormat::Svg,
                    GraphFormatArg::Mermaid => cli::graph::GraphFormat::Mermaid,
                    GraphFormatArg::Dot => cli::graph::GraphFormat::Dot,
                    GraphFormatArg::Json => cli::graph::GraphFormat::Json,
                },
                case,
                out,
            };
            code(cli::graph::run_graph(
                &opts,
                &cwd,
                &mut cli::QuietPipe::new(std::io::stdout().lock()),
                &mut std::io::stderr(),
            ))
        }
    }
}
