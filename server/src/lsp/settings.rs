//! The server's settings: the `wfx` section that clients send as `initializationOptions`,
//! in `workspace/didChangeConfiguration` and in answer to `workspace/configuration`.
//! `editors/settings.json` lists every setting; the ones with `"owner": "server"` are
//! exactly [`Settings::NAMES`] (a test holds the two together). Parsing is tolerant: a
//! missing or mistyped value keeps its default and is logged.

use serde_json::Value;

/// Settings the server reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// `wfx.runner.command`: an external runner command; `None` uses the built-in runner.
    pub runner_command: Option<String>,
    /// `wfx.runner.skipGrades`: report `grade` assertions as not executed (default true).
    pub runner_skip_grades: bool,
    /// `wfx.inlayHints.lengthBudget`: show length budgets as inlay hints (default true).
    pub inlay_hints_length_budget: bool,
    /// `wfx.trace.server`: `off`, `messages` or `verbose` (default `off`).
    pub trace_server: String,
    /// `wfx.coverage.uncoveredDecisions`: a hint diagnostic on `workflow.yaml` for each
    /// human decision edge no case's `decide` names (default false).
    pub coverage_uncovered_decisions: bool,
    /// `wfx.diagnostics.openFilesOnly`: report diagnostics of open documents only, not of
    /// every closed `workflow.yaml` and case file (default false).
    pub diagnostics_open_files_only: bool,
    /// `wfx.run.allowLive`: offer "● Record with model" on cases (and "● Record all with
    /// model" on `workflow.yaml`) and accept `wfx.recordCase`, which calls the model endpoint
    /// of `ARCHMAX_*` and spends money (default false: opening a file never calls a model;
    /// docs/editors.md).
    pub run_allow_live: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            runner_command: None,
            runner_skip_grades: true,
            inlay_hints_length_budget: true,
            trace_server: "off".into(),
            coverage_uncovered_decisions: false,
            diagnostics_open_files_only: false,
            run_allow_live: false,
        }
    }
}

impl Settings {
    /// Every setting name the server knows, as `editors/settings.json` spells them.
    pub const NAMES: &'static [&'static str] = &[
        "wfx.runner.command",
        "wfx.runner.skipGrades",
        "wfx.inlayHints.lengthBudget",
        "wfx.trace.server",
        "wfx.coverage.uncoveredDecisions",
        "wfx.diagnostics.openFilesOnly",
        "wfx.run.allowLive",
    ];

    /// Reads settings from a `wfx` section (`{"runner": {...}, ...}`), or from an object
    /// holding it under `"wfx"`; anything else gives the defaults.
    pub fn from_json(v: &Value) -> Self {
        let mut s = Self::default();
        let section = v.get("wfx").unwrap_or(v);
        for name in Self::NAMES {
            let Some(rel) = name.strip_prefix("wfx.") else {
                continue;
            };
            let mut cur = Some(section);
            for seg in rel.split('.') {
                cur = cur.and_then(|c| c.get(seg));
            }
            if let Some(value) = cur {
                s.set(name, value);
            }
        }
        s
    }

    /// Sets one setting by its full name; a mistyped value is logged and ignored.
    fn set(&mut self, name: &str, value: &Value) {
        let ok = match (name, value) {
            ("wfx.runner.command", Value::Null) => {
                self.runner_command = None;
                true
            }
            ("wfx.runner.command", Value::String(c)) => {
                self.runner_command = if c.trim().is_empty() {
                    None
                } else {
                    Some(c.clone())
                };
                true
            }
            ("wfx.runner.skipGrades", Value::Bool(b)) => {
                self.runner_skip_grades = *b;
                true
            }
            ("wfx.diagnostics.openFilesOnly", Value::Bool(b)) => {
                self.diagnostics_open_files_only = *b;
                true
            }
            ("wfx.run.allowLive", Value::Bool(b)) => {
                self.run_allow_live = *b;
                true
            }
            ("wfx.inlayHints.lengthBudget", Value::Bool(b)) => {
                self.inlay_hints_length_budget = *b;
                true
            }
            ("wfx.coverage.uncoveredDecisions", Value::Bool(b)) => {
                self.coverage_uncovered_decisions = *b;
                true
            }
            ("wfx.trace.server", Value::String(t))
                if ["off", "messages", "verbose"].contains(&t.as_str()) =>
            {
                self.trace_server = t.clone();
                true
            }
            _ => false,
        };
        if !ok {
            tracing::warn!("ignoring setting {name}: unexpected value {value}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `{"a": {"b": value}}` for `wfx.a.b`.
    fn nested(name: &str, value: Value) -> Value {
        name.strip_prefix("wfx.")
            .unwrap()
            .split('.')
            .rev()
            .fold(value, |acc, seg| json!({ seg: acc }))
    }

    #[test]
    fn the_server_knows_exactly_the_server_settings_of_editors_settings_json() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/editors/settings.json");
        let list: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let mut listed: Vec<&str> = list
            .iter()
            .filter(|s| s["owner"] == "server")
            .map(|s| s["name"].as_str().unwrap())
            .collect();
        listed.sort_unstable();
        let mut known = Settings::NAMES.to_vec();
        known.sort_unstable();
        assert_eq!(listed, known);
        // Each name is read: the defaults match settings.json and every setting can change.
        for s in &list {
            let name = s["name"].as_str().unwrap();
            if s["owner"] != "server" {
                continue;
            }
            let other = match &s["default"] {
                Value::Bool(b) => json!(!b),
                Value::Null => json!("my-runner"),
                Value::String(_) => json!("verbose"),
                v => panic!("unexpected default {v}"),
            };
            assert_eq!(
                Settings::from_json(&nested(name, s["default"].clone())),
                Settings::default(),
                "{name} default"
            );
            let changed = json!({ "wfx": nested(name, other) });
            assert_ne!(
                Settings::from_json(&changed),
                Settings::default(),
                "{name} is ignored"
            );
        }
    }

    #[test]
    fn mistyped_values_keep_defaults() {
        let s = Settings::from_json(
            &json!({"runner": {"skipGrades": "no", "command": " "}, "trace": {"server": "loud"}}),
        );
        assert_eq!(s, Settings::default());
    }
}
