//! The raw parse cost, for comparison with `wfx-lsp check` (issue 8): reads every file
//! named in a list file (one path a line, relative to the current directory) and runs
//! saphyr-parser's event parser over it, nothing else (no span tree, no validation).
//! Prints `files events bytes parse_ms total_ms` (parse_ms excludes reading the files;
//! total_ms includes it). Run by `bench/compare/run.sh`; not a test.

#![allow(clippy::print_stdout, reason = "a benchmark prints its figures")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a benchmark harness fails loudly"
)]

use std::time::{Duration, Instant};

use saphyr_parser::Parser;

fn main() {
    let list = std::env::args()
        .nth(1)
        .expect("usage: parse_only <list file>");
    let t_total = Instant::now();
    let names = std::fs::read_to_string(list).unwrap();
    let (mut files, mut events, mut bytes, mut errors) = (0u64, 0u64, 0u64, 0u64);
    let mut parse = Duration::ZERO;
    for name in names.lines().filter(|l| !l.is_empty()) {
        let text = std::fs::read_to_string(name).unwrap();
        let t = Instant::now();
        for item in Parser::new_from_str(&text) {
            match item {
                Ok(ev) => {
                    std::hint::black_box(ev);
                    events += 1;
                }
                Err(_) => {
                    errors += 1;
                    break;
                }
            }
        }
        parse += t.elapsed();
        files += 1;
        bytes += text.len() as u64;
    }
    println!(
        "files {files} events {events} bytes {bytes} errors {errors} parse_ms {:.1} total_ms {:.1}",
        parse.as_secs_f64() * 1e3,
        t_total.elapsed().as_secs_f64() * 1e3
    );
}
