//! Benchmark figures (not a timed test): the duration of one scripted case and of the
//! example suite, with the system clock, over `tests/corpus/customer-support`.
//! Run with `cargo run --release --example bench_runner -p wfx-runner`; pass `--show` to
//! print the suite's narration once.

#![allow(clippy::print_stdout, reason = "a benchmark prints its figures")]

use std::path::PathBuf;
use std::time::Instant;

use wfx_runner::cli::{CliContext, TestOptions, run_cli_with};
use wfx_runner::clock::SystemClock;
use wfx_runner::disk::DiskFiles;
use wfx_runner::grade::GradePolicy;
use wfx_runner::suite::{RunOptions, run_case_file};

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/customer-support");
    let show = std::env::args().any(|a| a == "--show");
    let opts = TestOptions {
        skip_grades: true,
        ..Default::default()
    };
    let mut sink_out = Vec::new();
    let mut sink_err = Vec::new();
    let ctx = CliContext {
        clock: &SystemClock,
        model: None,
    };
    if show {
        run_cli_with(&opts, &root, &ctx, &mut sink_out, &mut sink_err);
        eprint!("{}", String::from_utf8_lossy(&sink_err));
        print!("{}", String::from_utf8_lossy(&sink_out));
        return;
    }
    let fs = DiskFiles::new(&root);
    let clock = SystemClock;
    let mut ro = RunOptions::new(&fs, &clock);
    ro.grades = GradePolicy {
        skip: true,
        model: None,
    };
    let case = "workflows/order-lookup/tests/triggered-report.test.yaml";
    let n = 200;
    let t = Instant::now();
    for _ in 0..n {
        let run = run_case_file(&ro, case).map(|r| r.result.verdict.status);
        assert!(run.is_ok());
    }
    let per_case = t.elapsed().as_secs_f64() * 1000.0 / f64::from(n);
    let t = Instant::now();
    let m = 50;
    for _ in 0..m {
        sink_out.clear();
        sink_err.clear();
        run_cli_with(&opts, &root, &ctx, &mut sink_out, &mut sink_err);
    }
    let per_suite = t.elapsed().as_secs_f64() * 1000.0 / f64::from(m);
    println!("one scripted case (triggered-report): {per_case:.3} ms (mean of {n})");
    println!(
        "example suite (9 cases, `wfx-lsp test --skip-grades`): {per_suite:.3} ms (mean of {m})"
    );
}
