//! Bounded reads of `check` (issue 12, docs/security.md "Bounded work"): a workspace
//! document over 8 MiB is refused by its size (`WFX008`), each `SKILL.md` is read once per
//! check run however many workflows there are, and a `SKILL.md` over its 1 MiB bound is
//! never read. A counting `FileAccess` over the customer-support corpus shows what is read.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;

use wfx_schemas::check::{check_paths, check_workspace};
use wfx_schemas::files::{DirEntry, FileAccess, FileError, MemFiles};

/// A [`MemFiles`] that counts the reads of each path and reports every read's bound
/// (`read_max`), as the disk layer does: a file over the bound is `TooLarge`, unread.
struct Counting {
    inner: MemFiles,
    reads: Mutex<BTreeMap<String, usize>>,
}

impl Counting {
    fn reads_of(&self, suffix: &str) -> usize {
        self.reads
            .lock()
            .unwrap()
            .iter()
            .filter(|(p, _)| p.ends_with(suffix))
            .map(|(_, n)| n)
            .sum()
    }
}

impl FileAccess for Counting {
    fn read(&self, path: &str) -> Result<Vec<u8>, FileError> {
        self.read_max(path, u64::MAX)
    }
    fn read_max(&self, path: &str, max_bytes: u64) -> Result<Vec<u8>, FileError> {
        let bytes = self.inner.read(path)?;
        if bytes.len() as u64 > max_bytes {
            return Err(FileError::TooLarge {
                bytes: bytes.len() as u64,
                limit: max_bytes,
            });
        }
        *self
            .reads
            .lock()
            .unwrap()
            .entry(path.to_owned())
            .or_default() += 1;
        Ok(bytes)
    }
    fn list(&self, dir: &str) -> Result<Vec<DirEntry>, FileError> {
        self.inner.list(dir)
    }
    fn is_file(&self, path: &str) -> bool {
        self.inner.is_file(path)
    }
}

/// The corpus with `copies` more copies of the `order-lookup` workflow (`w0`, `w1`, …).
fn corpus(copies: usize) -> MemFiles {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/customer-support");
    let mut fs = MemFiles::new();
    let mut todo = vec![root.clone()];
    while let Some(dir) = todo.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let rel = p
                    .strip_prefix(&root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                let bytes = std::fs::read(&p).unwrap();
                if let Some(rest) = rel.strip_prefix("workflows/order-lookup/") {
                    for i in 0..copies {
                        fs.insert(format!("workflows/w{i}/{rest}"), bytes.clone());
                    }
                }
                fs.insert(rel, bytes);
            }
        }
    }
    fs
}

#[test]
fn each_skill_manifest_is_read_once_per_check_run() {
    let copies = 20;
    let fs = Counting {
        inner: corpus(copies),
        reads: Mutex::default(),
    };
    let skills = fs
        .inner
        .paths()
        .filter(|p| p.starts_with("skills/") && p.ends_with("/SKILL.md"))
        .count();
    assert!(skills >= 2, "the corpus has skills");
    check_workspace(&fs, "");
    // 22 workflows read the skills; each SKILL.md is read once.
    assert_eq!(fs.reads_of("/SKILL.md"), skills, "{:?}", fs.reads.lock());

    let fs = Counting {
        inner: corpus(copies),
        reads: Mutex::default(),
    };
    check_paths(&fs, &[String::new()]).unwrap();
    assert_eq!(fs.reads_of("/SKILL.md"), skills);
}

/// A check run reads a workflow's `workflow.yaml` once for the cases' cross-file rules,
/// however many cases and agent scripts it has (docs/performance.md), plus once to check
/// the file itself.
#[test]
fn each_workflow_spec_is_read_once_per_case_check_run() {
    let fs = Counting {
        inner: corpus(1),
        reads: Mutex::default(),
    };
    let cases = fs
        .inner
        .paths()
        .filter(|p| p.starts_with("workflows/w0/tests/") && p.ends_with(".test.yaml"))
        .count();
    assert!(cases >= 5, "{cases}");
    check_workspace(&fs, "");
    assert!(
        fs.reads_of("workflows/w0/workflow.yaml") <= 2,
        "{:?}",
        fs.reads.lock()
    );
    let fs = Counting {
        inner: corpus(1),
        reads: Mutex::default(),
    };
    check_paths(&fs, &["workflows/w0".to_owned()]).unwrap();
    assert!(fs.reads_of("workflows/w0/workflow.yaml") <= 2);
}

#[test]
fn an_oversized_skill_manifest_is_not_read_and_says_so() {
    let mut inner = corpus(0);
    let mut big = b"---\nname: order-data\ndescription: big\n---\n".to_vec();
    big.resize(2 * 1024 * 1024, b' ');
    inner.insert("skills/order-data/SKILL.md", big);
    let fs = Counting {
        inner,
        reads: Mutex::default(),
    };
    let diags = check_workspace(&fs, "");
    assert_eq!(fs.reads_of("order-data/SKILL.md"), 0);
    let unloadable: Vec<_> = diags
        .iter()
        .filter(|d| d.code.code == "WFX349" && d.message.contains("order-data"))
        .collect();
    assert!(!unloadable.is_empty(), "{diags:#?}");
    assert!(
        unloadable
            .iter()
            .all(|d| d.message.contains("2097152 bytes") && d.message.contains("1 MiB bound")),
        "{unloadable:#?}"
    );
}

#[test]
fn an_oversized_case_is_refused_unread_with_wfx008() {
    let mut inner = corpus(0);
    let case = "workflows/order-lookup/tests/huge.test.yaml";
    let mut big = b"title: Huge\nsteps:\n  - send: hi\n".to_vec();
    big.resize(8 * 1024 * 1024 + 1, b'\n');
    inner.insert(case, big);
    let fs = Counting {
        inner,
        reads: Mutex::default(),
    };
    let run = check_paths(&fs, &[case.to_owned()]).unwrap();
    assert_eq!(fs.reads_of("huge.test.yaml"), 0);
    let mine: Vec<_> = run.diagnostics.iter().filter(|d| d.file == case).collect();
    assert_eq!(mine.len(), 1, "{mine:#?}");
    assert_eq!(mine[0].code.code, "WFX008");
    assert!(mine[0].message.contains("not read"), "{}", mine[0].message);
}
