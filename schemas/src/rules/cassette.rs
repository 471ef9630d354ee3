//! Cassettes (`tests/<case>.cassette.json`, docs/cassettes.md): `WFX450`–`WFX454`.
//!
//! The format is [`crate::cassette`]; these rules turn its parse errors into positioned
//! diagnostics (invalid, version, unknown key), warn on key-shaped strings
//! ([`crate::cassette::key_shaped`]) and say when a cassette is stale (its recorded input
//! digests differ from the case and `workflow.yaml` now).
//!
//! Must not: put a key-shaped string into a message, or read anything but the cassette's
//! own case and `workflow.yaml` through [`FileAccess`]. `WFX453` names the kind only; the
//! others quote the file (an unknown key, serde's message with the offending value, the
//! recorded time, the case's path), so every message goes through [`mask_message`], with
//! the same masking as the code frame under it ([`mask_key_shaped`]).

use crate::cassette::{Cassette, CassetteErrorKind, KeyShaped, digest, key_shaped, parse};
use crate::diagnostics::{
    CASSETTE_INVALID, CASSETTE_KEY_SHAPED, CASSETTE_STALE, CASSETTE_UNKNOWN_KEY, CASSETTE_VERSION,
    Diagnostic,
};
use crate::files::FileAccess;
use crate::text::TextRange;
use crate::workspace::WorkflowDir;

/// `text` with every key-shaped string ([`key_shaped`]) replaced by `*`s of the same length:
/// the one masking of cassette text for output, used for `check`'s code frames (a
/// `WFX453` points at a credential-like string without printing it) and, through
/// [`mask_message`], for every message of these rules (docs/cassettes.md, "Secrets never
/// reach output"). The strings are ASCII token characters, so byte offsets and columns stay
/// put. At most [`crate::cassette::MAX_KEY_SHAPED`] strings are found per call.
pub fn mask_key_shaped(text: &str) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for k in key_shaped(text) {
        if let Some(run) = bytes.get_mut(k.start..k.end) {
            for b in run.iter_mut().filter(|b| b.is_ascii() && **b != b' ') {
                *b = b'*';
            }
        }
    }
    String::from_utf8(bytes).unwrap_or_else(|_| "*".repeat(text.len()))
}

/// A message about the cassette `text` with nothing key-shaped left in it: every string
/// [`key_shaped`] finds in the file is masked wherever the message repeats it (it may sit
/// between characters that would hide its shape), then whatever is key-shaped in the
/// message itself ([`mask_key_shaped`]; serde quotes a value decoded from its JSON escapes,
/// so the file's spelling may differ).
pub fn mask_message(message: &str, text: &str) -> String {
    let found = key_shaped(text);
    mask_found(message, text, &found)
}

/// [`mask_message`] with the file's key-shaped strings already found.
fn mask_found(message: &str, text: &str, found: &[KeyShaped]) -> String {
    let mut out = message.to_owned();
    for k in found {
        if let Some(s) = text.get(k.start..k.end).filter(|s| out.contains(*s)) {
            let stars: String = s
                .chars()
                .map(|c| if c == ' ' { ' ' } else { '*' })
                .collect();
            out = out.replace(s, &stars);
        }
    }
    mask_key_shaped(&out)
}

fn range(start: usize, end: usize, len: usize) -> TextRange {
    let s = start.min(len);
    let e = end.clamp(s, len);
    TextRange {
        start: u32::try_from(s).unwrap_or(u32::MAX),
        end: u32::try_from(e).unwrap_or(u32::MAX),
    }
}

/// The range of the last JSON key `"name"` that starts before `offset` (serde_json
/// reports an unknown field at or just after its key), or a point at `offset`.
fn key_range(text: &str, name: &str, offset: usize) -> TextRange {
    let quoted = format!("\"{name}\"");
    // serde_json's position may sit on the key's closing quote or just after it.
    let upto = text
        .get(..offset.saturating_add(quoted.len()).min(text.len()))
        .unwrap_or("");
    match upto.rfind(&quoted) {
        Some(s) => range(s, s + quoted.len(), text.len()),
        None => range(offset, offset, text.len()),
    }
}

/// The diagnostics of the cassette at `path` (workspace-relative) with text `text`:
/// `WFX450` (not the format: syntax, a wrong type, a missing key, an inconsistency, over
/// 16 MiB), `WFX451` (another `version`), `WFX452` (an unknown key, on the key), one
/// `WFX453` per key-shaped string (on the string; at most
/// [`crate::cassette::MAX_KEY_SHAPED`]) and, when the cassette parses, `WFX454` when it is
/// stale ([`stale`]). Source: docs/cassettes.md.
pub fn check_document(
    fs: &dyn FileAccess,
    dir: &WorkflowDir,
    path: &str,
    text: &str,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let len = text.len();
    match parse(text) {
        Ok(c) => {
            if let Some(why) = stale(fs, dir, path, &c) {
                out.push(Diagnostic::new(
                    &CASSETTE_STALE,
                    path,
                    key_range(text, "inputs", len),
                    why,
                ));
            }
        }
        Err(e) => {
            let at = e.offset.unwrap_or(0);
            let unknown = e
                .message
                .split_once("unknown field `")
                .and_then(|(_, rest)| rest.split_once('`'))
                .map(|(name, _)| name.to_owned());
            let d = match (&e.kind, unknown) {
                (CassetteErrorKind::Version(_), _) => Diagnostic::new(
                    &CASSETTE_VERSION,
                    path,
                    key_range(text, "version", len),
                    e.message.clone(),
                ),
                (CassetteErrorKind::Syntax, Some(name)) => Diagnostic::new(
                    &CASSETTE_UNKNOWN_KEY,
                    path,
                    key_range(text, &name, at),
                    format!("unknown key `{name}`: the cassette format has no such key"),
                ),
                _ => Diagnostic::new(
                    &CASSETTE_INVALID,
                    path,
                    range(at, at.saturating_add(1), len),
                    e.message.clone(),
                ),
            };
            out.push(d);
        }
    }
    let found = key_shaped(text);
    for k in &found {
        out.push(Diagnostic::new(
            &CASSETTE_KEY_SHAPED,
            path,
            range(k.start, k.end, len),
            format!(
                "this string looks like a credential ({}); a committed cassette publishes it — remove it, or redact it by value with `wfx-lsp scrub` while the variable holding it is set",
                k.kind
            ),
        ));
    }
    for d in &mut out {
        d.message = mask_found(&d.message, text, &found);
    }
    out
}

/// The case a cassette belongs to: `x.cassette.json` → `x.test.yaml`, else `x.test.yml`
/// when only that exists.
pub fn case_of_cassette(fs: &dyn FileAccess, path: &str) -> Option<String> {
    let stem = path.strip_suffix(".cassette.json")?;
    let yaml = format!("{stem}.test.yaml");
    let yml = format!("{stem}.test.yml");
    if !fs.is_file(&yaml) && fs.is_file(&yml) {
        Some(yml)
    } else {
        Some(yaml)
    }
}

/// Why the cassette at `path` is stale, or `None`: "stale" means a recorded input digest
/// (`inputs.case`, `inputs.workflow`: [`digest`] of the file's text as the confined layer
/// reads it, BOM stripped) differs from the digest of that file now, or the file is gone.
/// A stale cassette may still replay (the digests are never used for matching); the
/// message says which input changed so the author knows whether to re-record.
pub fn stale(fs: &dyn FileAccess, dir: &WorkflowDir, path: &str, c: &Cassette) -> Option<String> {
    let case_path = case_of_cassette(fs, path)?;
    let mut changed = Vec::new();
    match fs.read_text(&case_path) {
        Ok(t) if digest(&t) == c.inputs.case => {}
        Ok(_) => changed.push(format!("the case `{case_path}` changed")),
        Err(_) => changed.push(format!("the case `{case_path}` is gone")),
    }
    match fs.read_text(&dir.spec_path()) {
        Ok(t) if digest(&t) == c.inputs.workflow => {}
        Ok(_) => changed.push("`workflow.yaml` changed".to_owned()),
        Err(_) => changed.push("`workflow.yaml` is gone".to_owned()),
    }
    (!changed.is_empty()).then(|| {
        format!(
            "stale cassette: {} since it was recorded ({}); a replay may diverge — re-record with `wfx-lsp test --live --record all`",
            changed.join(" and "),
            c.recorded_at
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::MemFiles;

    const CASE: &str = "title: t\nsteps:\n  - send: hi\n";
    const WF: &str = "title: W\nstates:\n  a:\n    triggers: { manual: }\n";
    const PATH: &str = "workflows/w/tests/a.cassette.json";

    fn dir() -> WorkflowDir {
        WorkflowDir {
            root: String::new(),
            slug: "w".into(),
        }
    }

    fn cassette(extra: &str, content: &str) -> String {
        format!(
            r#"{{
  "version": 1,
  "recordedWith": "wfx-lsp 0.1.0",
  "recordedAt": "2026-12-03T08:52:53Z",
  "clock": {{ "startMs": 0, "stepMs": 1, "zone": "UTC" }},
  "model": "m",
  "endpoint": "127.0.0.1:9",
  "case": "a",{extra}
  "inputs": {{ "case": "{}", "workflow": "{}" }},
  "prompts": {{ "p0": "{content}" }},
  "interactions": []
}}
"#,
            digest(CASE),
            digest(WF)
        )
    }

    fn fs() -> MemFiles {
        let mut fs = MemFiles::new();
        fs.insert("workflows/w/workflow.yaml", WF);
        fs.insert("workflows/w/tests/a.test.yaml", CASE);
        fs
    }

    fn codes(fs: &MemFiles, text: &str) -> Vec<(&'static str, String)> {
        check_document(fs, &dir(), PATH, text)
            .into_iter()
            .map(|d| {
                let r = d.range.as_usize();
                (d.code.code, text.get(r).unwrap_or("").to_owned())
            })
            .collect()
    }

    #[test]
    fn a_fresh_cassette_has_no_diagnostics() {
        assert_eq!(codes(&fs(), &cassette("", "Be brief.")), vec![]);
    }

    #[test]
    fn unknown_key_version_and_syntax_each_get_their_code_on_the_right_text() {
        let fs = fs();
        let unknown = cassette("\n  \"recordedBy\": \"me\",", "x");
        assert_eq!(
            codes(&fs, &unknown),
            vec![("WFX452", "\"recordedBy\"".to_owned())]
        );
        let v2 = cassette("", "x").replace("\"version\": 1", "\"version\": 2");
        let got = check_document(&fs, &dir(), PATH, &v2);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].code.code, "WFX451");
        assert!(got[0].message.contains("version 2"), "{}", got[0].message);
        assert_eq!(v2.get(got[0].range.as_usize()), Some("\"version\""));
        let broken = cassette("", "x").replace("\"interactions\": []", "\"interactions\": [");
        assert_eq!(codes(&fs, &broken).first().map(|c| c.0), Some("WFX450"));
        let missing = cassette("", "x").replace("\"model\": \"m\",", "");
        let got = check_document(&fs, &dir(), PATH, &missing);
        assert_eq!(got[0].code.code, "WFX450");
        assert!(got[0].message.contains("model"), "{}", got[0].message);
    }

    #[test]
    fn key_shaped_strings_warn_on_the_string_without_naming_it() {
        // The documented example (WFX453), split so that this line holds no key shape.
        let key = concat!("sk-", "proj-EXAMPLEonlyNOTaREALkey");
        let text = cassette("", &format!("use {key} now"));
        let got = check_document(&fs(), &dir(), PATH, &text);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].code.code, "WFX453");
        assert_eq!(text.get(got[0].range.as_usize()), Some(key));
        assert!(!got[0].message.contains(key));
        // A placeholder is not a key.
        let redacted = cassette("", "use <ENV:OPENAI_API_KEY> now");
        assert_eq!(codes(&fs(), &redacted), vec![]);
    }

    /// Issue 24: `WFX450`/`WFX452` printed a key-shaped string verbatim right under its
    /// masked code frame. Every message of these rules is masked like the frame.
    #[test]
    fn no_message_quotes_a_key_shaped_string() {
        // Built at run time, so no committed line holds a key shape.
        let sk = concat!("sk-", "proj-EXAMPLEonlyNOTaREALkey");
        let hi: String = (0..40)
            .map(|i| char::from(b"aB3xQ9zK7mW2pL5vR8tY"[i % 20]))
            .collect();
        let fs = fs();
        let mut changed = fs.clone();
        changed.insert("workflows/w/tests/a.test.yaml", "title: t2\nsteps: []\n");
        let cases = [
            // WFX452: the unknown key is the key.
            (&fs, cassette(&format!("\n  \"{sk}\": 1,"), "x"), "WFX452"),
            // WFX450: serde quotes the value it could not take.
            (
                &fs,
                cassette("", "x").replace("\"startMs\": 0", &format!("\"startMs\": \"{sk}\"")),
                "WFX450",
            ),
            (
                &fs,
                cassette("", "x").replace("\"startMs\": 0", &format!("\"startMs\": \"{hi}\"")),
                "WFX450",
            ),
            // The file spells it with a JSON escape (no key shape there); serde decodes it.
            (
                &fs,
                cassette("", "x").replace(
                    "\"startMs\": 0",
                    &format!("\"startMs\": \"sk-\\u0070roj-{}\"", &sk[8..]),
                ),
                "WFX450",
            ),
            // WFX454: the recorded time is quoted.
            (
                &changed,
                cassette("", "x").replace("2026-12-03T08:52:53Z", sk),
                "WFX454",
            ),
        ];
        for (fs, text, code) in cases {
            let got = check_document(fs, &dir(), PATH, &text);
            let d = got
                .iter()
                .find(|d| d.code.code == code)
                .unwrap_or_else(|| panic!("no {code} in {got:?}"));
            assert!(d.message.contains("****"), "{}", d.message);
            for d in &got {
                assert!(!d.message.contains(sk), "{}", d.message);
                assert!(!d.message.contains(&hi), "{}", d.message);
                assert!(!d.message.contains(&sk[8..]), "{}", d.message);
                assert_eq!(key_shaped(&d.message), vec![], "{}", d.message);
            }
        }
        // The message still says what is wrong.
        let got = check_document(
            &fs,
            &dir(),
            PATH,
            &cassette(&format!("\n  \"{sk}\": 1,"), "x"),
        );
        assert_eq!(
            got[0].message,
            format!(
                "unknown key `{}`: the cassette format has no such key",
                "*".repeat(sk.len())
            )
        );
    }

    #[test]
    fn stale_when_the_case_or_the_workflow_changed_or_is_gone() {
        let text = cassette("", "x");
        let mut changed = fs();
        changed.insert("workflows/w/tests/a.test.yaml", "title: t2\nsteps: []\n");
        let got = check_document(&changed, &dir(), PATH, &text);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].code.code, "WFX454");
        assert!(
            got[0].message.starts_with(
                "stale cassette: the case `workflows/w/tests/a.test.yaml` changed since"
            ),
            "{}",
            got[0].message
        );
        assert_eq!(text.get(got[0].range.as_usize()), Some("\"inputs\""));
        let mut wf = fs();
        wf.insert("workflows/w/workflow.yaml", "title: W2\n");
        let got = check_document(&wf, &dir(), PATH, &text);
        assert!(
            got[0].message.contains("`workflow.yaml` changed"),
            "{}",
            got[0].message
        );
        let mut gone = MemFiles::new();
        gone.insert("workflows/w/workflow.yaml", WF);
        let got = check_document(&gone, &dir(), PATH, &text);
        assert!(got[0].message.contains("is gone"), "{}", got[0].message);
    }
}
