//! Fuzz target: arbitrary bytes as a case, a workflow and an agent script next to the
//! customer-support-shaped workflow; `check_file` must never panic, and every diagnostic
//! range must stay inside the text on char boundaries.
//! Run: `cargo +nightly fuzz run parse_validate` from the repository root.

#![no_main]

use libfuzzer_sys::fuzz_target;
use wfx_schemas::check::check_file;
use wfx_schemas::files::MemFiles;

const WORKFLOW: &str = "states:\n  intake:\n    triggers:\n      manual: {}\n    transitions:\n      done: {}\n  done: {}\n";

fuzz_target!(|data: &[u8]| {
    for path in [
        "workflows/a/tests/x.test.yaml",
        "workflows/a/workflow.yaml",
        "workflows/a/tests/x.agent.yaml",
    ] {
        let mut fs = MemFiles::new().with("workflows/a/workflow.yaml", WORKFLOW);
        fs.insert(path, data.to_vec());
        let text = wfx_schemas::text::decode(data).ok();
        for d in check_file(&fs, path) {
            if let Some(t) = &text {
                assert!(d.range.end as usize <= t.len(), "{d:?}");
                assert!(
                    t.is_char_boundary(d.range.start as usize)
                        && t.is_char_boundary(d.range.end as usize),
                    "{d:?}"
                );
            }
        }
    }
});
