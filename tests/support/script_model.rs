//! A fake model that plays agent scripts (a copy of the player in `tests/live.rs`): per
//! case, the assistant messages that replay the script's actions (a `say` opens a new
//! message unless the current one has no calls yet); the judge answers score 1 in prose
//! with a fence, rubric hooks `ok`. A request whose transcript has no real assistant
//! message yet starts the next case.

use serde_json::{Value, json};
use wfx_runner::agent::AgentAction;

use super::fake_model::{Reply, Seen, call};

pub fn is_judge(s: &Seen) -> bool {
    system(s).starts_with("You grade whether")
}

pub fn is_rubric(s: &Seen) -> bool {
    !is_judge(s) && system(s).contains("{\"verdict\"")
}

pub fn system(s: &Seen) -> String {
    s.body["messages"][0]["content"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

/// The model's answers for one agent script: per run, the assistant messages that replay
/// its actions (a `say` opens a new message unless the current one has no calls yet).
pub fn replies_of(turns: &[Vec<AgentAction>], ids: &mut u64) -> Vec<Vec<Reply>> {
    turns
        .iter()
        .map(|turn| {
            let mut out = Vec::new();
            let mut content: Option<String> = None;
            let mut calls: Vec<Value> = Vec::new();
            for a in turn {
                match a {
                    AgentAction::Say(t) => {
                        if !calls.is_empty() {
                            out.push(Reply::message(content.as_deref(), Value::Array(calls)));
                            calls = Vec::new();
                            content = Some(t.clone());
                        } else {
                            content = Some(match content {
                                Some(c) => format!("{c}\n\n{t}"),
                                None => t.clone(),
                            });
                        }
                    }
                    AgentAction::Call { tool, input } => {
                        *ids += 1;
                        calls.push(call(&format!("fake_{ids}"), tool, &input.to_string()));
                    }
                }
            }
            if content.is_some() || !calls.is_empty() {
                out.push(Reply::message(content.as_deref(), Value::Array(calls)));
            }
            out
        })
        .collect()
}

/// Plays the scripts of `cases` in order, the judge (score 1 in prose with a fence) and
/// rubric hooks (`ok`).
pub struct Player {
    pub cases: Vec<Vec<Vec<Reply>>>,
    pub case: Option<usize>,
    pub run: usize,
    pub pos: usize,
}

impl Player {
    pub fn answer(&mut self, s: &Seen) -> Reply {
        if is_judge(s) {
            return Reply::message(
                Some(
                    "Looking at the record and the reply:\n```json\n{\"score\": 1, \"pass\": true, \"reason\": \"The reply meets it.\"}\n```",
                ),
                json!([]),
            );
        }
        if is_rubric(s) {
            return Reply::message(
                Some("{\"verdict\": \"ok\", \"reason\": \"friendly\"}"),
                json!([]),
            );
        }
        let msgs = s.body["messages"].as_array().cloned().unwrap_or_default();
        let real = msgs.iter().any(|m| {
            m["role"] == "assistant"
                && (m["content"].as_str().is_some_and(|c| !c.is_empty())
                    || m["tool_calls"].as_array().is_some_and(|cs| {
                        cs.iter().any(|c| c["function"]["name"] != "archmax_note")
                    }))
        });
        if !real {
            self.case = Some(self.case.map_or(0, |c| c + 1));
            self.run = 0;
            self.pos = 0;
        }
        let empty = Reply::message(None, json!([]));
        let Some(runs) = self.case.and_then(|c| self.cases.get(c)) else {
            return empty;
        };
        let Some(run) = runs.get(self.run) else {
            return empty;
        };
        if let Some(r) = run.get(self.pos).cloned() {
            self.pos += 1;
            let v: Value = serde_json::from_str(&r.body).unwrap();
            if v["choices"][0]["message"].get("tool_calls").is_none() {
                self.run += 1;
                self.pos = 0;
            }
            return r;
        }
        self.run += 1;
        self.pos = 0;
        empty
    }
}
