//! The cassette file format (issue 15, item 1; docs/cassettes.md): one reviewable JSON file
//! per case, `tests/<case>.cassette.json` beside the case, holding the model calls of a
//! live run at the chat level so a later run can replay them with no network and no key.
//!
//! This module is the format only: the serde types ([`Cassette`] and its parts, every
//! object `deny_unknown_fields`), [`parse`] (size bound, version check, structural
//! validation, errors with a byte offset), [`load`] through [`FileAccess`], [`to_json`]
//! (pretty, stable key order, secrets redacted), the path rule ([`cassette_path`]), the
//! key redaction ([`Secrets`]) and a detector of key-shaped strings ([`key_shaped`]) that
//! `check` and the recorder call for warnings. Recording, replay and the atomic write live
//! in the runner (`wfx_runner::cassette`).
//!
//! Must not: touch the environment, the clock or the disk (callers pass environment
//! variables and write the bytes), or keep anything that is not in the file (headers, the
//! key, the endpoint's path or query are never part of these types).
//!
//! serde derives sit here, unlike the YAML models (STYLE §8), because a cassette *is* a
//! serialised file: the types are the format.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::files::{FileAccess, FileError};
pub use crate::workspace::cassette_path;

/// The one version this build reads and writes (`"version": 1`). Any other is refused by
/// [`parse`] with [`CassetteErrorKind::Version`].
pub const VERSION: u64 = 1;

/// A cassette larger than this (bytes) is refused by [`parse`] rather than parsed
/// ("bounded work"). 16 MiB: a long live case is well under 1 MiB.
pub const MAX_BYTES: usize = 16 * 1024 * 1024;

/// At most this many interactions per cassette (more is a [`CassetteErrorKind::Invalid`],
/// found while the list is read: the rest is not parsed).
pub const MAX_INTERACTIONS: usize = 10_000;

/// At most this many JSON values in one cassette's lists, maps and free-form values
/// together: each element of a list (`interactions`, `messages`, `toolCalls`, `tools`, a
/// toolset), each entry of a map (`prompts`, `toolsets`), and each value inside an
/// `arguments` or a tool's `parameters` (the value itself, every array element and object
/// entry below it) counts one. More is a [`CassetteErrorKind::Invalid`] at the value that
/// crossed it, and [`parse`] stops there, so what a cassette costs in memory is bounded
/// by this count, not by the 16 MiB of its text: a JSON value in memory is 72 bytes
/// (`[0,0,…]` of 16 MiB was 8.4 million of them, 1.2 GB parsed twice; issue 24). A long
/// live case holds a few thousand. Source: docs/cassettes.md ("The format"),
/// docs/security.md (bounded work).
pub const MAX_VALUES: usize = 500_000;

/// The most arrays and objects nested in a cassette, the file's outer object included:
/// serde_json's recursion limit (128, of which one is its own), which the one pass of
/// [`parse`] keeps (the `unbounded_depth` feature is not enabled). Deeper is a
/// [`CassetteErrorKind::Syntax`] ("recursion limit exceeded") where it happens, so a
/// response's `arguments` nests at most 121 levels; the stack and the recursive drop of a
/// value stay bounded.
pub const MAX_DEPTH: usize = 127;

/// The redaction placeholder of an environment variable's value: `<ENV:NAME>`.
pub fn placeholder(name: &str) -> String {
    format!("<ENV:{name}>")
}

/// One cassette: what a live run of one case said to the model and what it answered.
///
/// JSON keys are camelCase, in the order of the fields; unknown keys are an error.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Cassette {
    /// The format version, [`VERSION`].
    pub version: u64,
    /// The tool that wrote it, `wfx-lsp <version>`.
    pub recorded_with: String,
    /// When the recording started, RFC 3339 in UTC (`2026-12-03T08:52:53Z`).
    pub recorded_at: String,
    /// The runner's clock during the recording; a replay runs on the same clock, so trail
    /// timestamps, `parkedAt`, the prompt's clock line and `archmax_wait` deadlines are
    /// byte-identical.
    pub clock: RecordedClock,
    /// The model id of the recording (`ARCHMAX_MODEL`; a state may still name another, each
    /// request keeps its own).
    pub model: String,
    /// The endpoint reduced to its host (`openrouter.ai`, `127.0.0.1:8080`): no scheme,
    /// path, query or credentials.
    pub endpoint: String,
    /// The case id (its path below `tests/` without `.test.yaml`).
    pub case: String,
    /// Digests of the inputs at recording time, for "stale" hints only (never for matching).
    pub inputs: InputDigests,
    /// System prompts by id (`p0`, `p1`, … in order of first use), each stored once.
    #[serde(default, deserialize_with = "bounded::map")]
    pub prompts: IndexMap<String, String>,
    /// Offered tool declarations by id (`t0`, `t1`, …), each set stored once.
    #[serde(default, deserialize_with = "bounded::toolsets")]
    pub toolsets: IndexMap<String, Vec<RecordedTool>>,
    /// The model calls in the order they were made (agent, judge and rubric alike); at
    /// most [`MAX_INTERACTIONS`].
    #[serde(deserialize_with = "bounded::interactions")]
    pub interactions: Vec<Interaction>,
}

/// The deterministic clock a recording ran on: the first read returns `startMs`, each
/// later read `stepMs` more (the runner's `FixedClock`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecordedClock {
    /// Epoch milliseconds of the first read.
    pub start_ms: u64,
    /// Milliseconds added per read.
    pub step_ms: u64,
    /// The time zone the prompt's clock line is rendered in (`UTC`: the only one today).
    pub zone: String,
}

/// Digests (`fnv1a64:<16 hex>`, see [`digest`]) of the case and `workflow.yaml` texts when
/// the cassette was recorded. A different digest now means the cassette may be stale.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InputDigests {
    /// The case document's text.
    pub case: String,
    /// The workflow's `workflow.yaml` text.
    pub workflow: String,
}

/// Who made a model call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InteractionRole {
    /// The live agent.
    Agent,
    /// The `grade` judge.
    Judge,
    /// A rubric hook.
    Rubric,
}

/// One model call: its context in the case, the request at the chat level and the answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Interaction {
    /// Position in [`Cassette::interactions`], from 0.
    pub seq: u64,
    /// Who called.
    pub role: InteractionRole,
    /// The driven model run of the case, from 0 (one per `send`, `decide`, `deliver`).
    pub run: u64,
    /// The model call within that run, from 0.
    pub call: u64,
    /// The case step that drove it, 1-based as people read it (`None` outside a step).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<u64>,
    /// The workflow state the run was in (`None` for a judge).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// What was asked.
    pub request: RecordedRequest,
    /// What the model answered.
    pub response: RecordedResponse,
}

/// A request at the chat level: never headers, never the key.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecordedRequest {
    /// The model id asked.
    pub model: String,
    /// Sampling temperature, when one was sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Completion token cap, when one was sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// The system prompt: a key of [`Cassette::prompts`] (`None`: the request had none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// The offered tool names, in the order offered (empty: none, a reply-only call).
    #[serde(default, deserialize_with = "bounded::seq")]
    pub tools: Vec<String>,
    /// Their declarations: a key of [`Cassette::toolsets`] (`None` when none were offered).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toolset: Option<String>,
    /// Index (among the request's messages after the system prompt) of the first message
    /// stored in [`Self::messages`]: the ones before it are the previous call's (the
    /// agent's previous call, whatever its run; for the judge, the previous attempt at the
    /// same question), plus that call's answer. 0 when the request does not extend it.
    pub messages_from: u64,
    /// The messages new since that previous call.
    #[serde(deserialize_with = "bounded::seq")]
    pub messages: Vec<RecordedMessage>,
}

/// Who wrote a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MessageRole {
    /// The system prompt (never stored among the messages; see [`RecordedRequest::system`]).
    System,
    /// A person, or the case's `send`.
    User,
    /// The model.
    Assistant,
    /// A tool result.
    Tool,
}

/// One chat message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecordedMessage {
    /// The author.
    pub role: MessageRole,
    /// The text (`None` for an assistant message that only calls tools).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// An assistant message's tool calls, in order.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "bounded::seq"
    )]
    pub tool_calls: Vec<RecordedToolCall>,
    /// A tool result's call id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

/// One tool call, arguments parsed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecordedToolCall {
    /// The provider's call id.
    pub id: String,
    /// The tool name.
    pub name: String,
    /// The arguments as JSON (`null` when the model sent text that is not JSON; then
    /// [`Self::raw_arguments`] holds it). Read within [`MAX_VALUES`] and [`MAX_DEPTH`].
    #[serde(deserialize_with = "bounded::value")]
    pub arguments: Value,
    /// Arguments that were not JSON, verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_arguments: Option<String>,
}

/// One offered tool's declaration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecordedTool {
    /// Wire name.
    pub name: String,
    /// Description.
    pub description: String,
    /// JSON Schema of the arguments. Read within [`MAX_VALUES`] and [`MAX_DEPTH`].
    #[serde(deserialize_with = "bounded::value")]
    pub parameters: Value,
}

/// The model's answer.
#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecordedResponse {
    /// The assistant text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Its tool calls, in order.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "bounded::seq"
    )]
    pub tool_calls: Vec<RecordedToolCall>,
    /// `stop`, `tool_calls`, `length`, … as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// The model id the endpoint said answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Token counts, when the endpoint reported them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<RecordedUsage>,
}

/// Token counts of one call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecordedUsage {
    /// Prompt (input) tokens.
    pub prompt_tokens: u64,
    /// Completion (output) tokens.
    pub completion_tokens: u64,
    /// Prompt tokens served from the provider's cache.
    #[serde(default)]
    pub cached_tokens: u64,
}

impl Cassette {
    /// The sum of the recorded token counts.
    pub fn total_usage(&self) -> RecordedUsage {
        let mut t = RecordedUsage::default();
        for u in self.interactions.iter().filter_map(|i| i.response.usage) {
            t.prompt_tokens = t.prompt_tokens.saturating_add(u.prompt_tokens);
            t.completion_tokens = t.completion_tokens.saturating_add(u.completion_tokens);
            t.cached_tokens = t.cached_tokens.saturating_add(u.cached_tokens);
        }
        t
    }
}

/// What is wrong with a cassette's text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CassetteErrorKind {
    /// Larger than [`MAX_BYTES`].
    TooLarge,
    /// Not JSON, or JSON that is not the format (a wrong type, a missing or unknown key).
    Syntax,
    /// A `version` other than [`VERSION`] (the value it has, `None` when absent or not a
    /// number).
    Version(Option<u64>),
    /// Well-formed but over a bound or inconsistent: more than [`MAX_INTERACTIONS`]
    /// interactions, more than [`MAX_VALUES`] values, `seq` out of order, a
    /// `system`/`toolset` id that is not declared.
    Invalid,
}

/// Why a cassette cannot be used: the kind, a message in our words and, when known, the
/// byte offset into the text it applies to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CassetteError {
    /// The kind.
    pub kind: CassetteErrorKind,
    /// The message (lower case, no final period).
    pub message: String,
    /// Byte offset into the text, when the error has a position.
    pub offset: Option<usize>,
}

/// The message as shown to a person: every key-shaped string masked
/// (`crate::rules::cassette::mask_key_shaped`, the masking of `check`'s cassette messages and
/// code frames). serde's message quotes a value it could not take, so a cassette that does
/// not parse would otherwise print a credential-like string from the file in a replay's
/// failure, `scrub`'s and `export-agent`'s errors (issue 24; docs/cassettes.md, "Secrets").
/// The rules read [`CassetteError::message`] itself (they need the unknown key's name to
/// place a diagnostic) and mask their own messages.
impl std::fmt::Display for CassetteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&crate::rules::cassette::mask_key_shaped(&self.message))
    }
}

fn err(kind: CassetteErrorKind, message: impl Into<String>) -> CassetteError {
    CassetteError {
        kind,
        message: message.into(),
        offset: None,
    }
}

/// The byte offset of serde_json's 1-based line and column (a column counts bytes; it
/// names the byte the error was found at).
fn offset_of(text: &str, line: usize, column: usize) -> Option<usize> {
    if line == 0 {
        return None;
    }
    let mut start = 0usize;
    for _ in 1..line {
        start += text.get(start..)?.find('\n')? + 1;
    }
    Some((start + column.saturating_sub(1)).min(text.len()))
}

/// Parses and validates a cassette: one pass of serde_json over the text straight into
/// the types (no `serde_json::Value` of the file), its lists, maps and free-form values
/// held to [`MAX_INTERACTIONS`], [`MAX_VALUES`] and [`MAX_DEPTH`] while they are
/// read, so the parse stops at the value that crossed a bound.
///
/// Errors, in this order of precedence: the size ([`MAX_BYTES`], `TooLarge`, before any
/// parsing), JSON syntax (`Syntax`, nesting past [`MAX_DEPTH`] included), the `version` (`Version`, so a newer file says so
/// rather than listing unknown keys), the shape with unknown keys refused (`Syntax`), the
/// bounds and consistency (`Invalid`: more than [`MAX_INTERACTIONS`] interactions, more
/// than [`MAX_VALUES`] values, `seq` not
/// equal to the position, an undeclared `system`/`toolset` id). When the one pass fails,
/// a second scan of the text that builds nothing (`bounded::VersionOnly`) reads the
/// `version` and the first syntax error to keep that precedence. Source: docs/cassettes.md.
pub fn parse(text: &str) -> Result<Cassette, CassetteError> {
    if text.len() > MAX_BYTES {
        return Err(err(
            CassetteErrorKind::TooLarge,
            format!(
                "the cassette is {} bytes, over the {} MiB limit",
                text.len(),
                MAX_BYTES / (1024 * 1024)
            ),
        ));
    }
    // A bound crossed is said as it is; anything else from serde is "not a cassette".
    let positioned = |kind: CassetteErrorKind, e: serde_json::Error| CassetteError {
        message: match kind {
            CassetteErrorKind::Invalid => e.to_string(),
            _ => format!("not a cassette: {e}"),
        },
        kind,
        offset: offset_of(text, e.line(), e.column()),
    };
    let parsed = {
        let armed = bounded::Armed::new();
        let parsed = serde_json::from_str::<Cassette>(text);
        (parsed, armed.hit())
    };
    let c = match parsed {
        (Ok(c), _) => c,
        (Err(e), hit) => {
            // Keep the precedence: syntax, then version, then the shape and the bounds.
            let version = match serde_json::from_str::<bounded::VersionOnly>(text) {
                Ok(v) => v.version,
                Err(scan) => return Err(positioned(CassetteErrorKind::Syntax, scan)),
            };
            if version != Some(VERSION) {
                return Err(version_error(version));
            }
            let kind = if hit {
                CassetteErrorKind::Invalid
            } else {
                CassetteErrorKind::Syntax
            };
            return Err(positioned(kind, e));
        }
    };
    if c.version != VERSION {
        return Err(version_error(Some(c.version)));
    }
    validate(&c)?;
    Ok(c)
}

/// The error of a `version` other than [`VERSION`] (`None`: absent or not a number).
fn version_error(version: Option<u64>) -> CassetteError {
    let message = match version {
        Some(v) => format!(
            "cassette version {v} is not supported: this wfx-lsp reads version {VERSION}; re-record with `--live --record all`"
        ),
        None => format!("the cassette has no numeric `version` (expected {VERSION})"),
    };
    err(CassetteErrorKind::Version(version), message)
}

/// Bounded deserialisation of the cassette's lists, maps and free-form values (see
/// [`parse`]): each element charges one to the budget [`Armed`] holds for the parse in
/// progress on this thread, and a free-form value is built here, value by value, rather
/// than by `serde_json::Value`'s own unbounded visitor.
mod bounded {
    use std::cell::Cell;
    use std::fmt;

    use indexmap::IndexMap;
    use serde::Deserialize;
    use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
    use serde_json::{Map, Number, Value};

    use super::{Interaction, MAX_INTERACTIONS, MAX_VALUES, RecordedTool};

    thread_local! {
        /// Values left to the parse in progress on this thread (`None`: none armed, the
        /// types deserialised outside [`super::parse`]: the count
        /// is then [`MAX_VALUES`] per list, map or value).
        static LEFT: Cell<Option<usize>> = const { Cell::new(None) };
        /// A bound was crossed in the parse in progress.
        static HIT: Cell<bool> = const { Cell::new(false) };
    }

    /// The budget of one parse, armed until dropped (the previous state then returns).
    pub(super) struct Armed {
        prev: (Option<usize>, bool),
    }

    impl Armed {
        /// Arms [`MAX_VALUES`].
        pub(super) fn new() -> Self {
            let left = LEFT.with(|c| c.replace(Some(MAX_VALUES)));
            let hit = HIT.with(|c| c.replace(false));
            Self { prev: (left, hit) }
        }

        /// True when a bound was crossed since [`Armed::new`].
        pub(super) fn hit(&self) -> bool {
            HIT.with(Cell::get)
        }
    }

    impl Drop for Armed {
        fn drop(&mut self) {
            LEFT.with(|c| c.set(self.prev.0));
            HIT.with(|c| c.set(self.prev.1));
        }
    }

    fn over<E: de::Error>(what: fmt::Arguments<'_>) -> E {
        HIT.with(|c| c.set(true));
        E::custom(what)
    }

    /// One value's charge. `local` counts within the one list, map or value being read,
    /// for when no parse is armed.
    fn charge<E: de::Error>(local: &Cell<usize>) -> Result<(), E> {
        local.set(local.get().saturating_add(1));
        let within = LEFT.with(|c| match c.get() {
            None => local.get() <= MAX_VALUES,
            Some(0) => false,
            Some(n) => {
                c.set(Some(n - 1));
                true
            }
        });
        if within {
            Ok(())
        } else {
            Err(over(format_args!(
                "the cassette holds more than {MAX_VALUES} JSON values in its lists, maps, `arguments` and `parameters`"
            )))
        }
    }

    /// A list of `T`, each element charged, at most `max` elements (`what` names it).
    struct Seq<T> {
        max: usize,
        what: &'static str,
        out: std::marker::PhantomData<T>,
    }

    impl<'de, T: Deserialize<'de>> Visitor<'de> for Seq<T> {
        type Value = Vec<T>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an array")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
            let local = Cell::new(0);
            let mut out = Vec::new();
            loop {
                if out.len() == self.max {
                    // One more element is one too many; an empty rest is fine.
                    return match seq.next_element::<Skip>()? {
                        None => Ok(out),
                        Some(_) => Err(over(format_args!(
                            "more than {} {}, over the limit",
                            self.max, self.what
                        ))),
                    };
                }
                match seq.next_element()? {
                    Some(v) => {
                        charge(&local)?;
                        out.push(v);
                    }
                    None => return Ok(out),
                }
            }
        }
    }

    /// A bounded list (see [`super::MAX_VALUES`]).
    pub(super) fn seq<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
        d: D,
    ) -> Result<Vec<T>, D::Error> {
        d.deserialize_seq(Seq {
            max: usize::MAX,
            what: "elements",
            out: std::marker::PhantomData,
        })
    }

    /// `interactions`: bounded, and at most [`MAX_INTERACTIONS`].
    pub(super) fn interactions<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<Interaction>, D::Error> {
        d.deserialize_seq(Seq {
            max: MAX_INTERACTIONS,
            what: "interactions",
            out: std::marker::PhantomData,
        })
    }

    /// An element of a toolset (a bounded list itself).
    struct Toolset(Vec<RecordedTool>);

    impl<'de> Deserialize<'de> for Toolset {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            seq(d).map(Toolset)
        }
    }

    /// A map of string keys to `T`, each entry charged.
    struct Entries<T>(std::marker::PhantomData<T>);

    impl<'de, T: Deserialize<'de>> Visitor<'de> for Entries<T> {
        type Value = IndexMap<String, T>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an object")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let local = Cell::new(0);
            let mut out = IndexMap::new();
            while let Some((k, v)) = map.next_entry::<String, T>()? {
                charge(&local)?;
                out.insert(k, v);
            }
            Ok(out)
        }
    }

    /// A bounded map (`prompts`).
    pub(super) fn map<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
        d: D,
    ) -> Result<IndexMap<String, T>, D::Error> {
        d.deserialize_map(Entries(std::marker::PhantomData))
    }

    /// `toolsets`: a bounded map of bounded lists.
    pub(super) fn toolsets<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<IndexMap<String, Vec<RecordedTool>>, D::Error> {
        let sets: IndexMap<String, Toolset> = map(d)?;
        Ok(sets.into_iter().map(|(k, v)| (k, v.0)).collect())
    }

    /// A free-form value, counted in `local` too (its nesting is serde_json's to bound:
    /// [`super::MAX_DEPTH`]).
    struct Free<'a> {
        local: &'a Cell<usize>,
    }

    impl<'de> DeserializeSeed<'de> for Free<'_> {
        type Value = Value;

        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
            charge(self.local)?;
            d.deserialize_any(self)
        }
    }

    impl<'de> Visitor<'de> for Free<'_> {
        type Value = Value;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("any JSON value")
        }

        fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
            Ok(Value::Bool(v))
        }

        fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
            Ok(Value::from(v))
        }

        fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
            Ok(Value::from(v))
        }

        fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
            Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
        }

        fn visit_str<E>(self, v: &str) -> Result<Value, E> {
            Ok(Value::String(v.to_owned()))
        }

        fn visit_string<E>(self, v: String) -> Result<Value, E> {
            Ok(Value::String(v))
        }

        fn visit_unit<E>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }

        fn visit_none<E>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }

        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
            d.deserialize_any(self)
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
            let mut out = Vec::new();
            while let Some(v) = seq.next_element_seed(Free { local: self.local })? {
                out.push(v);
            }
            Ok(Value::Array(out))
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
            let mut out = Map::new();
            while let Some(k) = map.next_key::<String>()? {
                let v = map.next_value_seed(Free { local: self.local })?;
                out.insert(k, v);
            }
            Ok(Value::Object(out))
        }
    }

    /// A bounded free-form value (`arguments`, `parameters`).
    pub(super) fn value<'de, D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        Free {
            local: &Cell::new(0),
        }
        .deserialize(d)
    }

    /// Any JSON value, read and dropped: nothing is built, and unlike serde's
    /// `IgnoredAny` (which serde_json skips with a stack of one byte per open bracket, not
    /// held to its recursion limit) each level is one `deserialize_any`, so nesting past
    /// [`super::MAX_DEPTH`] is serde_json's "recursion limit exceeded".
    struct Skip;

    impl<'de> Deserialize<'de> for Skip {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(SkipVisitor)
        }
    }

    struct SkipVisitor;

    impl<'de> Visitor<'de> for SkipVisitor {
        type Value = Skip;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("any JSON value")
        }

        fn visit_bool<E>(self, _: bool) -> Result<Skip, E> {
            Ok(Skip)
        }

        fn visit_i64<E>(self, _: i64) -> Result<Skip, E> {
            Ok(Skip)
        }

        fn visit_u64<E>(self, _: u64) -> Result<Skip, E> {
            Ok(Skip)
        }

        fn visit_f64<E>(self, _: f64) -> Result<Skip, E> {
            Ok(Skip)
        }

        fn visit_str<E>(self, _: &str) -> Result<Skip, E> {
            Ok(Skip)
        }

        fn visit_unit<E>(self) -> Result<Skip, E> {
            Ok(Skip)
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Skip, A::Error> {
            while seq.next_element::<Skip>()?.is_some() {}
            Ok(Skip)
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Skip, A::Error> {
            while map.next_entry::<Skip, Skip>()?.is_some() {}
            Ok(Skip)
        }
    }

    /// The `version` of a cassette's text alone (`None`: absent or not a non-negative
    /// integer), every other key's value skipped unbuilt ([`Skip`]). A duplicate `version`
    /// is an error, as in the types.
    pub(super) struct VersionOnly {
        pub(super) version: Option<u64>,
    }

    impl<'de> Deserialize<'de> for VersionOnly {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_map(VersionOnlyVisitor)
        }
    }

    struct VersionOnlyVisitor;

    impl<'de> Visitor<'de> for VersionOnlyVisitor {
        type Value = VersionOnly;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("struct Cassette")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<VersionOnly, A::Error> {
            let mut version: Option<Option<u64>> = None;
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                if key == "version" {
                    if version.is_some() {
                        return Err(de::Error::duplicate_field("version"));
                    }
                    version = Some(map.next_value_seed(VersionSeed)?);
                } else {
                    map.next_value::<Skip>()?;
                }
            }
            Ok(VersionOnly {
                version: version.flatten(),
            })
        }
    }

    /// `Some` for a non-negative integer, `None` for any other value (skipped unbuilt).
    struct VersionSeed;

    impl<'de> DeserializeSeed<'de> for VersionSeed {
        type Value = Option<u64>;

        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<u64>, D::Error> {
            d.deserialize_any(self)
        }
    }

    impl<'de> Visitor<'de> for VersionSeed {
        type Value = Option<u64>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("any JSON value")
        }

        fn visit_u64<E>(self, v: u64) -> Result<Option<u64>, E> {
            Ok(Some(v))
        }

        fn visit_i64<E>(self, v: i64) -> Result<Option<u64>, E> {
            Ok(u64::try_from(v).ok())
        }

        fn visit_f64<E>(self, _: f64) -> Result<Option<u64>, E> {
            Ok(None)
        }

        fn visit_bool<E>(self, _: bool) -> Result<Option<u64>, E> {
            Ok(None)
        }

        fn visit_str<E>(self, _: &str) -> Result<Option<u64>, E> {
            Ok(None)
        }

        fn visit_unit<E>(self) -> Result<Option<u64>, E> {
            Ok(None)
        }

        fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Option<u64>, A::Error> {
            SkipVisitor.visit_seq(seq).map(|_| None)
        }

        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Option<u64>, A::Error> {
            SkipVisitor.visit_map(map).map(|_| None)
        }
    }
}

fn validate(c: &Cassette) -> Result<(), CassetteError> {
    if c.interactions.len() > MAX_INTERACTIONS {
        return Err(err(
            CassetteErrorKind::Invalid,
            format!(
                "{} interactions, over the limit of {MAX_INTERACTIONS}",
                c.interactions.len()
            ),
        ));
    }
    for (i, it) in c.interactions.iter().enumerate() {
        if it.seq != i as u64 {
            return Err(err(
                CassetteErrorKind::Invalid,
                format!("interaction {i} has `seq` {} (expected {i})", it.seq),
            ));
        }
        if let Some(p) = &it.request.system
            && !c.prompts.contains_key(p)
        {
            return Err(err(
                CassetteErrorKind::Invalid,
                format!("interaction {i}: `system` names `{p}`, which `prompts` does not hold"),
            ));
        }
        if let Some(t) = &it.request.toolset
            && !c.toolsets.contains_key(t)
        {
            return Err(err(
                CassetteErrorKind::Invalid,
                format!("interaction {i}: `toolset` names `{t}`, which `toolsets` does not hold"),
            ));
        }
    }
    Ok(())
}

/// Reads and parses the cassette at `path` (workspace-relative) through `fs`.
/// `Ok(None)` when there is no such file; a file over [`MAX_BYTES`] is refused before it is
/// read (kind `TooLarge`); another read failure (a link leaving the workspace) is `Err` with
/// kind `Syntax` and the file layer's reason; see [`parse`] for the rest.
pub fn load(fs: &dyn FileAccess, path: &str) -> Result<Option<Cassette>, CassetteError> {
    match fs.read_text_max(path, MAX_BYTES as u64) {
        Ok(text) => parse(&text).map(Some),
        Err(FileError::NotFound) => Ok(None),
        Err(e @ FileError::TooLarge { .. }) => Err(err(
            CassetteErrorKind::TooLarge,
            format!("cannot read `{path}`: {e}"),
        )),
        Err(e) => Err(err(
            CassetteErrorKind::Syntax,
            format!("cannot read `{path}`: {e}"),
        )),
    }
}

/// The cassette as its file text: pretty-printed JSON (two-space indent, keys in field
/// order, a final newline) with every value of `secrets` replaced by its placeholder.
/// Returns the text and the number of replacements made.
///
/// Redaction is [`Cassette::redact`] on a copy, then the types are written as they are:
/// no `serde_json::Value` of the whole cassette is built.
pub fn to_json(c: &Cassette, secrets: &Secrets) -> (String, usize) {
    let (text, n) = if secrets.is_empty() {
        (serde_json::to_string_pretty(c), 0)
    } else {
        let mut copy = c.clone();
        let n = copy.redact(secrets);
        (serde_json::to_string_pretty(&copy), n)
    };
    let mut text = text.unwrap_or_default();
    text.push('\n');
    (text, n)
}

impl Cassette {
    /// Replaces every value of `secrets` in every string of the cassette, map keys and the
    /// strings and keys inside `arguments` and `parameters` included, in place; returns the
    /// count replaced. Each struct is taken apart whole, so a string field added to the
    /// format cannot be left out silently. Source: docs/cassettes.md ("Secrets").
    pub fn redact(&mut self, secrets: &Secrets) -> usize {
        if secrets.is_empty() {
            return 0;
        }
        let Cassette {
            version: _,
            recorded_with,
            recorded_at,
            clock:
                RecordedClock {
                    start_ms: _,
                    step_ms: _,
                    zone,
                },
            model,
            endpoint,
            case,
            inputs:
                InputDigests {
                    case: case_digest,
                    workflow,
                },
            prompts,
            toolsets,
            interactions,
        } = self;
        let mut n = 0;
        for s in [
            recorded_with,
            recorded_at,
            zone,
            model,
            endpoint,
            case,
            case_digest,
            workflow,
        ] {
            n += secrets.redact_in_place(s);
        }
        n += redact_keys(prompts, secrets);
        for p in prompts.values_mut() {
            n += secrets.redact_in_place(p);
        }
        n += redact_keys(toolsets, secrets);
        for RecordedTool {
            name,
            description,
            parameters,
        } in toolsets.values_mut().flatten()
        {
            n += secrets.redact_in_place(name) + secrets.redact_in_place(description);
            n += secrets.redact_value(parameters);
        }
        for it in interactions {
            let Interaction {
                seq: _,
                role: _,
                run: _,
                call: _,
                step: _,
                state,
                request:
                    RecordedRequest {
                        model,
                        temperature: _,
                        max_tokens: _,
                        system,
                        tools,
                        toolset,
                        messages_from: _,
                        messages,
                    },
                response:
                    RecordedResponse {
                        content,
                        tool_calls,
                        finish_reason,
                        model: answered_by,
                        usage: _,
                    },
            } = it;
            for s in [state, system, toolset, content, finish_reason, answered_by]
                .into_iter()
                .flatten()
                .chain([model])
                .chain(tools.iter_mut())
            {
                n += secrets.redact_in_place(s);
            }
            for RecordedMessage {
                role: _,
                content,
                tool_calls: _,
                tool_call_id,
            } in messages.iter_mut()
            {
                for s in [content, tool_call_id].into_iter().flatten() {
                    n += secrets.redact_in_place(s);
                }
            }
            let calls = messages
                .iter_mut()
                .flat_map(|m| m.tool_calls.iter_mut())
                .chain(tool_calls.iter_mut());
            for RecordedToolCall {
                id,
                name,
                arguments,
                raw_arguments,
            } in calls
            {
                n += secrets.redact_in_place(id) + secrets.redact_in_place(name);
                n += secrets.redact_value(arguments);
                if let Some(raw) = raw_arguments {
                    n += secrets.redact_in_place(raw);
                }
            }
        }
        n
    }
}

/// Redacts the keys of `map` (rebuilt in order only when one held a secret); the count.
fn redact_keys<V>(map: &mut IndexMap<String, V>, secrets: &Secrets) -> usize {
    let keys: Vec<(String, usize)> = map.keys().map(|k| secrets.redact(k)).collect();
    let n: usize = keys.iter().map(|(_, c)| c).sum();
    if n > 0 {
        let old = std::mem::take(map);
        for ((k, _), (_, v)) in keys.into_iter().zip(old) {
            map.insert(k, v);
        }
    }
    n
}

/// True when the file name makes it a cassette (`*.cassette.json`).
pub fn is_cassette_name(path: &str) -> bool {
    path.ends_with(".cassette.json")
}

/// The 64-bit FNV-1a digest of `text`'s bytes as `fnv1a64:<16 lower-case hex digits>`:
/// a cheap change detector for [`InputDigests`], not a cryptographic hash.
pub fn digest(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("fnv1a64:{h:016x}")
}

/// Values that must never reach a cassette, each with the name of its environment variable.
///
/// Built from the environment by the caller ([`Secrets::from_env`]): the value of
/// `ARCHMAX_API_KEY` and of every variable whose name contains `KEY`, `TOKEN`, `SECRET`,
/// `PASSWORD` or `CREDENTIAL` (any case), when it is at least [`Secrets::MIN_LEN`]
/// characters long. Shorter values (`1`, `true`, or the placeholder key `none` a local
/// llama.cpp server takes) are no provider's credential, and replacing them would rewrite
/// ordinary words of the recorded prompts, so every replay would warn of prompt drift.
/// Source: design doc §5.5, STYLE §10; docs/cassettes.md "Secrets".
#[derive(Debug, Default)]
pub struct Secrets {
    /// (name, value), longest value first, so a value containing another is replaced whole.
    values: Vec<(String, String)>,
    /// One automaton over every value (leftmost-longest) with each value's placeholder,
    /// built on first use after the last [`Secrets::add`]: one pass over a string finds
    /// every secret, so redaction costs O(string length), not O(secrets × length)
    /// (third break-it pass, F3: 10,000 secrets × a 7 MB cassette took 49 CPU s).
    matcher: std::sync::OnceLock<Option<(aho_corasick::AhoCorasick, Vec<String>)>>,
    /// Work done, for the bounded-work tests: automata built, strings scanned.
    builds: std::sync::atomic::AtomicUsize,
    scans: std::sync::atomic::AtomicUsize,
    /// The values offered were over [`Secrets::MAX_VALUES`] or [`Secrets::MAX_BYTES`]:
    /// what was offered (see [`Secrets::overflow`]).
    overflow: Option<SecretsOverflow>,
}

impl Clone for Secrets {
    fn clone(&self) -> Self {
        Self {
            values: self.values.clone(),
            matcher: self.matcher.clone(),
            builds: Default::default(),
            scans: Default::default(),
            overflow: self.overflow,
        }
    }
}

impl PartialEq for Secrets {
    fn eq(&self, other: &Self) -> bool {
        self.values == other.values && self.overflow == other.overflow
    }
}

/// The secret values offered to a [`Secrets`] were more than it takes: their count and
/// their total length in bytes (distinct values of at least [`Secrets::MIN_LEN`]
/// characters of key-like variables). Its `Display` is the error line callers print, naming
/// the bounds and never a value or a variable's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SecretsOverflow {
    /// Distinct values offered.
    pub values: usize,
    /// Their total length, bytes.
    pub bytes: usize,
}

impl std::fmt::Display for SecretsOverflow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the key-like variables of the environment and `.env` hold {} secret values of {} bytes together, more than the {} values or {} KiB that redaction by value takes (its automaton grows with every byte); nothing was written — remove the variables that hold no credential, or rename them so that their names do not contain KEY, TOKEN, SECRET, PASSWORD or CREDENTIAL",
            self.values,
            self.bytes,
            Secrets::MAX_VALUES,
            Secrets::MAX_BYTES / 1024
        )
    }
}

impl Eq for Secrets {}

/// Work a [`Secrets`] has done since it was made or cloned: how many times its automaton
/// was built and how many strings (values and object keys) it scanned.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RedactWork {
    /// Automata built (one per set of secrets, however many strings are redacted).
    pub builds: usize,
    /// Strings scanned (each once, however many secrets there are).
    pub scans: usize,
}

impl Secrets {
    /// The shortest value of a key-like variable (`ARCHMAX_API_KEY` included) that is
    /// redacted, in characters.
    pub const MIN_LEN: usize = 8;

    /// The most distinct values one set redacts (issue 24, item 3). More is an
    /// [`Secrets::overflow`].
    pub const MAX_VALUES: usize = 1_000;

    /// The most bytes the values of one set hold together, 256 KiB: the automaton costs
    /// about 50 bytes per byte of value (10,000 values of 1,000 bytes in `.env` built
    /// 477 MB). A few hundred PEM keys or JWTs fit. More is an [`Secrets::overflow`].
    pub const MAX_BYTES: usize = 256 * 1024;

    /// True when `name` looks like it holds a secret (see the type's docs).
    pub fn is_secret_name(name: &str) -> bool {
        let up = name.to_ascii_uppercase();
        up == "ARCHMAX_API_KEY"
            || ["KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL"]
                .iter()
                .any(|w| up.contains(w))
    }

    /// The secrets among `vars` (name, value pairs, e.g. `std::env::vars()` plus the
    /// workspace's `.env`).
    pub fn from_env(vars: impl IntoIterator<Item = (String, String)>) -> Self {
        let mut s = Self::default();
        for (name, value) in vars {
            if Self::is_secret_name(&name) && value.chars().count() >= Self::MIN_LEN {
                s.values.push((name, value));
            }
        }
        s.normalise();
        s
    }

    /// Adds one secret (an empty value is ignored).
    pub fn add(&mut self, name: impl Into<String>, value: impl Into<String>) {
        let (name, value) = (name.into(), value.into());
        if value.is_empty() {
            return;
        }
        self.values.push((name, value));
        self.normalise();
    }

    /// One entry per value (the first name kept, as [`Secrets::add`] always did), within
    /// [`Secrets::MAX_VALUES`] and [`Secrets::MAX_BYTES`] (past them: the overflow is
    /// recorded, and the set keeps `ARCHMAX_API_KEY`'s value, then the others in the order
    /// given while they fit, so a caller that goes on anyway, e.g. to redact its own error
    /// line, still redacts the model key), longest value first (ties by name), and the
    /// automaton rebuilt on next use.
    fn normalise(&mut self) {
        let mut seen = std::collections::HashSet::new();
        self.values.retain(|(_, v)| seen.insert(v.clone()));
        let bytes: usize = self.values.iter().map(|(_, v)| v.len()).sum();
        if self.values.len() > Self::MAX_VALUES || bytes > Self::MAX_BYTES {
            self.overflow = Some(SecretsOverflow {
                values: self.values.len(),
                bytes,
            });
            let all = std::mem::take(&mut self.values);
            let (first, rest): (Vec<_>, Vec<_>) =
                all.into_iter().partition(|(n, _)| n == "ARCHMAX_API_KEY");
            let mut used = 0usize;
            for (n, v) in first.into_iter().chain(rest) {
                if self.values.len() < Self::MAX_VALUES && used + v.len() <= Self::MAX_BYTES {
                    used += v.len();
                    self.values.push((n, v));
                }
            }
        }
        self.values
            .sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(&b.0)));
        self.matcher = std::sync::OnceLock::new();
    }

    /// `Some` when the values offered were more than [`Secrets::MAX_VALUES`] or
    /// [`Secrets::MAX_BYTES`] (then only some are redacted). A caller about to write
    /// redacted text to a file (a recording, `scrub`, `export-agent`) refuses with this
    /// as its error: a set it cannot redact whole is never treated as done (docs/cassettes.md,
    /// "Secrets").
    pub fn overflow(&self) -> Option<SecretsOverflow> {
        self.overflow
    }

    /// True when there is nothing to redact.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The work done so far (see [`RedactWork`]).
    pub fn work(&self) -> RedactWork {
        use std::sync::atomic::Ordering::Relaxed;
        RedactWork {
            builds: self.builds.load(Relaxed),
            scans: self.scans.load(Relaxed),
        }
    }

    fn matcher(&self) -> Option<&(aho_corasick::AhoCorasick, Vec<String>)> {
        self.matcher
            .get_or_init(|| {
                if self.values.is_empty() {
                    return None;
                }
                self.builds
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let ac = aho_corasick::AhoCorasick::builder()
                    .match_kind(aho_corasick::MatchKind::LeftmostLongest)
                    .build(self.values.iter().map(|(_, v)| v.as_str()))
                    .ok()?;
                let names = self.values.iter().map(|(n, _)| placeholder(n)).collect();
                Some((ac, names))
            })
            .as_ref()
    }

    /// `text` with every secret value replaced by its placeholder, and the count replaced.
    /// One leftmost-longest pass: where two values overlap, the longer one is replaced whole.
    /// A text holding a backslash is scanned a second time as one JSON string decoding
    /// would read it (`\u0073`, `\"`, `\n`, …; [`json_unescaped`]), and a value found there
    /// replaces the escapes that spell it: a text holding JSON (a judge's verdict, a tool
    /// result, arguments that are not JSON) is redacted as the parser that later reads it
    /// sees it, not only as written (issue 24).
    pub fn redact(&self, text: &str) -> (String, usize) {
        match self.redacted(text) {
            (Some(out), n) => (out, n),
            (None, _) => (text.to_owned(), 0),
        }
    }

    /// Redacts `s` in place; returns the count replaced. Nothing is copied when no secret
    /// occurs in `s`.
    pub fn redact_in_place(&self, s: &mut String) -> usize {
        match self.redacted(s) {
            (Some(out), n) => {
                *s = out;
                n
            }
            (None, _) => 0,
        }
    }

    /// The redacted text and the count, `None` when nothing was replaced (no copy made).
    fn redacted(&self, text: &str) -> (Option<String>, usize) {
        let Some((ac, placeholders)) = self.matcher() else {
            return (None, 0);
        };
        self.scans
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // (start, end, pattern) in `text`, from the text as written, then as decoded.
        let mut found: Vec<(usize, usize, usize)> = ac
            .find_iter(text)
            .map(|m| (m.start(), m.end(), m.pattern().as_usize()))
            .collect();
        if text.contains('\\')
            && let Some(view) = json_unescaped(text)
        {
            for m in ac.find_iter(&view.text) {
                found.push((
                    view.start_in_source(m.start()),
                    view.end_in_source(m.end()),
                    m.pattern().as_usize(),
                ));
            }
            // Earliest first, the longest of those starting together; overlaps dropped.
            found.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        }
        let mut out: Option<String> = None;
        let mut n = 0;
        let mut last = 0;
        for (start, end, pattern) in found {
            if start < last {
                continue;
            }
            let o = out.get_or_insert_with(|| String::with_capacity(text.len()));
            o.push_str(text.get(last..start).unwrap_or(""));
            o.push_str(placeholders.get(pattern).map_or("", String::as_str));
            last = end;
            n += 1;
        }
        if let Some(o) = &mut out {
            o.push_str(text.get(last..).unwrap_or(""));
        }
        (out, n)
    }

    /// Redacts every string of a JSON value, object keys included, in place; returns the
    /// count replaced. Iterative (a work list), so depth costs no stack; each string and
    /// key is scanned once.
    pub fn redact_value(&self, v: &mut Value) -> usize {
        if self.values.is_empty() {
            return 0;
        }
        let mut n = 0;
        let mut work: Vec<&mut Value> = vec![v];
        while let Some(v) = work.pop() {
            match v {
                Value::String(s) => n += self.redact_in_place(s),
                Value::Array(a) => work.extend(a.iter_mut()),
                Value::Object(o) => {
                    let keys: Vec<(String, usize)> = o.keys().map(|k| self.redact(k)).collect();
                    let c: usize = keys.iter().map(|(_, c)| c).sum();
                    if c > 0 {
                        n += c;
                        let old = std::mem::take(o);
                        for ((k2, _), (_, val)) in keys.into_iter().zip(old) {
                            o.insert(k2, val);
                        }
                    }
                    work.extend(o.values_mut());
                }
                _ => {}
            }
        }
        n
    }
}

/// A text as one JSON string decoding reads it ([`json_unescaped`]), with where each
/// decoded escape came from, so a range found in the decoded text maps back to the source.
#[derive(Debug)]
pub struct Unescaped {
    /// The decoded text.
    pub text: String,
    /// Per escape decoded, in order: (start in `text`, its length there, start in the
    /// source, its length there), bytes. Runs between escapes are copied unchanged.
    escapes: Vec<(usize, usize, usize, usize)>,
}

impl Unescaped {
    /// The last escape starting at or before decoded byte `at`.
    fn escape_at(&self, at: usize) -> Option<&(usize, usize, usize, usize)> {
        let i = self.escapes.partition_point(|e| e.0 <= at);
        i.checked_sub(1).and_then(|i| self.escapes.get(i))
    }

    /// The source offset where decoded byte `at` starts (an escape's first byte when `at`
    /// is inside one).
    pub fn start_in_source(&self, at: usize) -> usize {
        match self.escape_at(at) {
            None => at,
            Some(&(d, dl, o, _)) if at < d + dl => o,
            Some(&(d, dl, o, ol)) => at - (d + dl) + (o + ol),
        }
    }

    /// The source offset where a decoded range ending (exclusive) at `end` ends (past the
    /// whole escape its last byte came from).
    pub fn end_in_source(&self, end: usize) -> usize {
        let Some(last) = end.checked_sub(1) else {
            return 0;
        };
        match self.escape_at(last) {
            None => end,
            Some(&(d, dl, o, ol)) if last < d + dl => o + ol,
            Some(&(d, dl, o, ol)) => end - (d + dl) + (o + ol),
        }
    }
}

/// `text` read as the inside of one JSON string (RFC 8259 §7): `\"` `\\` `\/` `\b` `\f`
/// `\n` `\r` `\t` and `\uXXXX` (a surrogate pair as one character) decoded, anything
/// else (a lone surrogate, `\x`, a raw quote) kept as it is. `None` when there is no escape
/// to decode. Linear in the text; the decoded text is never longer.
pub fn json_unescaped(text: &str) -> Option<Unescaped> {
    let hex4 = |at: usize| -> Option<u32> {
        let h = text.get(at..at + 4)?;
        if h.bytes().all(|b| b.is_ascii_hexdigit()) {
            u32::from_str_radix(h, 16).ok()
        } else {
            None
        }
    };
    let mut out = Unescaped {
        text: String::new(),
        escapes: Vec::new(),
    };
    let mut copied = 0usize;
    let mut i = 0usize;
    while let Some(off) = text.get(i..).and_then(|r| r.find('\\')) {
        let at = i + off;
        let next = text.as_bytes().get(at + 1).copied();
        let simple = match next {
            Some(b'"') => Some('"'),
            Some(b'\\') => Some('\\'),
            Some(b'/') => Some('/'),
            Some(b'b') => Some('\u{8}'),
            Some(b'f') => Some('\u{c}'),
            Some(b'n') => Some('\n'),
            Some(b'r') => Some('\r'),
            Some(b't') => Some('\t'),
            _ => None,
        };
        let decoded: Option<(char, usize)> = match (simple, next) {
            (Some(c), _) => Some((c, 2)),
            (None, Some(b'u')) => match hex4(at + 2) {
                Some(hi @ 0xD800..=0xDBFF) => {
                    let lo = (text.get(at + 6..at + 8) == Some("\\u"))
                        .then(|| hex4(at + 8))
                        .flatten()
                        .filter(|lo| (0xDC00..=0xDFFF).contains(lo));
                    lo.and_then(|lo| {
                        char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
                    })
                    .map(|c| (c, 12))
                }
                Some(cp) => char::from_u32(cp).map(|c| (c, 6)),
                None => None,
            },
            _ => None,
        };
        match decoded {
            Some((c, len)) => {
                out.text.push_str(text.get(copied..at).unwrap_or(""));
                out.escapes.push((out.text.len(), c.len_utf8(), at, len));
                out.text.push(c);
                copied = at + len;
                i = at + len;
            }
            // Not an escape: the backslash is text (and so is what follows).
            None => i = at + 1,
        }
    }
    if out.escapes.is_empty() {
        return None;
    }
    out.text.push_str(text.get(copied..).unwrap_or(""));
    Some(out)
}

/// A key-shaped string found by [`key_shaped`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyShaped {
    /// Byte range in the scanned text.
    pub start: usize,
    /// End (exclusive), bytes.
    pub end: usize,
    /// What it looks like: `sk- key`, `bearer token`, `AWS access key id`, `GitHub token`,
    /// `Slack token`, `high-entropy token`.
    pub kind: &'static str,
}

/// At most this many findings are returned by [`key_shaped`].
pub const MAX_KEY_SHAPED: usize = 100;

/// Finds strings in `text` that look like credentials, for warnings (never for redaction:
/// redaction is by value, [`Secrets`]). Shapes: `sk-…`/`sk_…` with 16+ more token
/// characters; `Bearer ` followed by 16+; `AKIA`/`ASIA` + 16 upper-case letters or digits;
/// `ghp_`/`gho_`/`ghs_`/`github_pat_` + 20+; `xoxb-`/`xoxp-`/`xoxa-` + 10+; and any other
/// run of 32+ token characters (`A-Z a-z 0-9 - _ + / =`) mixing upper case, lower case and
/// digits with at least 4 bits of entropy per character. Placeholders (`<ENV:…>`) and
/// lower-case hex digests do not match. Linear in the text; at most [`MAX_KEY_SHAPED`]
/// findings.
pub fn key_shaped(text: &str) -> Vec<KeyShaped> {
    let bytes = text.as_bytes();
    let is_tok = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'+' | b'/' | b'=');
    let mut out = Vec::new();
    let mut i = 0usize;
    while i < bytes.len() && out.len() < MAX_KEY_SHAPED {
        if !bytes.get(i).copied().is_some_and(is_tok) {
            // `Bearer <token>`: the word, one space, then a run.
            if text.get(i..).is_some_and(|r| r.starts_with(' '))
                && i >= 6
                && text
                    .get(i - 6..i)
                    .is_some_and(|w| w.eq_ignore_ascii_case("bearer"))
                && (i < 7 || !bytes.get(i - 7).copied().is_some_and(is_tok))
            {
                let run_end = run_end(bytes, i + 1, is_tok);
                if run_end - (i + 1) >= 16 {
                    out.push(KeyShaped {
                        start: i - 6,
                        end: run_end,
                        kind: "bearer token",
                    });
                    i = run_end;
                    continue;
                }
            }
            i += 1;
            continue;
        }
        let end = run_end(bytes, i, is_tok);
        let run = text.get(i..end).unwrap_or("");
        if let Some(kind) = classify_run(run) {
            out.push(KeyShaped {
                start: i,
                end,
                kind,
            });
        }
        i = end;
    }
    out
}

fn run_end(bytes: &[u8], from: usize, is_tok: impl Fn(u8) -> bool) -> usize {
    let mut j = from;
    while bytes.get(j).copied().is_some_and(&is_tok) {
        j += 1;
    }
    j
}

fn classify_run(run: &str) -> Option<&'static str> {
    let after = |p: &str| run.strip_prefix(p).map_or(0, str::len);
    if after("sk-") >= 16 || after("sk_") >= 16 {
        return Some("sk- key");
    }
    if (run.starts_with("AKIA") || run.starts_with("ASIA"))
        && run.len() >= 20
        && run
            .bytes()
            .take(20)
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
    {
        return Some("AWS access key id");
    }
    if ["ghp_", "gho_", "ghs_", "ghu_", "github_pat_"]
        .iter()
        .any(|p| after(p) >= 20)
    {
        return Some("GitHub token");
    }
    if ["xoxb-", "xoxp-", "xoxa-"].iter().any(|p| after(p) >= 10) {
        return Some("Slack token");
    }
    if run.len() >= 32
        && run.bytes().any(|b| b.is_ascii_uppercase())
        && run.bytes().any(|b| b.is_ascii_lowercase())
        && run.bytes().any(|b| b.is_ascii_digit())
        && entropy_bits(run) >= 4.0
    {
        return Some("high-entropy token");
    }
    None
}

/// Shannon entropy of the bytes of `s`, in bits per byte.
fn entropy_bits(s: &str) -> f64 {
    let mut counts = [0u32; 256];
    for b in s.bytes() {
        if let Some(c) = counts.get_mut(usize::from(b)) {
            *c += 1;
        }
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|c| **c > 0)
        .map(|c| {
            let p = f64::from(*c) / n;
            -p * p.log2()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::MemFiles;
    use serde_json::json;

    fn sample() -> Cassette {
        Cassette {
            version: VERSION,
            recorded_with: "wfx-lsp 0.1.0".into(),
            recorded_at: "2026-12-03T08:52:53Z".into(),
            clock: RecordedClock {
                start_ms: 1_796_287_973_000,
                step_ms: 1,
                zone: "UTC".into(),
            },
            model: "m".into(),
            endpoint: "127.0.0.1:9".into(),
            case: "refund".into(),
            inputs: InputDigests {
                case: digest("a"),
                workflow: digest("b"),
            },
            prompts: [("p0".to_owned(), "You are …".to_owned())]
                .into_iter()
                .collect(),
            toolsets: [(
                "t0".to_owned(),
                vec![RecordedTool {
                    name: "archmax_advance".into(),
                    description: "Move".into(),
                    parameters: json!({"type": "object"}),
                }],
            )]
            .into_iter()
            .collect(),
            interactions: vec![Interaction {
                seq: 0,
                role: InteractionRole::Agent,
                run: 0,
                call: 0,
                step: Some(1),
                state: Some("intake".into()),
                request: RecordedRequest {
                    model: "m".into(),
                    temperature: None,
                    max_tokens: None,
                    system: Some("p0".into()),
                    tools: vec!["archmax_advance".into()],
                    toolset: Some("t0".into()),
                    messages_from: 0,
                    messages: vec![RecordedMessage {
                        role: MessageRole::User,
                        content: Some("hi".into()),
                        tool_calls: vec![],
                        tool_call_id: None,
                    }],
                },
                response: RecordedResponse {
                    content: None,
                    tool_calls: vec![RecordedToolCall {
                        id: "c1".into(),
                        name: "archmax_advance".into(),
                        arguments: json!({"to": "done"}),
                        raw_arguments: None,
                    }],
                    finish_reason: Some("tool_calls".into()),
                    model: None,
                    usage: Some(RecordedUsage {
                        prompt_tokens: 10,
                        completion_tokens: 2,
                        cached_tokens: 0,
                    }),
                },
            }],
        }
    }

    #[test]
    fn round_trip_is_exact_and_pretty() {
        let c = sample();
        let (text, n) = to_json(&c, &Secrets::default());
        assert_eq!(n, 0);
        assert!(
            text.starts_with("{\n  \"version\": 1,\n  \"recordedWith\""),
            "{text}"
        );
        assert!(text.ends_with("}\n"));
        assert_eq!(parse(&text), Ok(c));
        assert_eq!(sample().total_usage().prompt_tokens, 10);
    }

    #[test]
    fn unknown_keys_and_versions_are_refused() {
        let (text, _) = to_json(&sample(), &Secrets::default());
        let extra = text.replacen("\"seq\": 0,", "\"seq\": 0,\n      \"sneaky\": 1,", 1);
        let e = parse(&extra).unwrap_err();
        assert_eq!(e.kind, CassetteErrorKind::Syntax);
        assert!(
            e.message.contains("unknown field `sneaky`"),
            "{}",
            e.message
        );
        let at = e.offset.unwrap();
        assert!(extra[..=at].ends_with("\"sneaky\""), "{}", &extra[..=at]);

        let v2 = text.replacen("\"version\": 1", "\"version\": 2", 1);
        let e = parse(&v2).unwrap_err();
        assert_eq!(e.kind, CassetteErrorKind::Version(Some(2)));
        assert!(
            e.message.contains("version 2 is not supported"),
            "{}",
            e.message
        );
        let none = text.replacen("\"version\": 1", "\"version\": \"1\"", 1);
        assert_eq!(
            parse(&none).unwrap_err().kind,
            CassetteErrorKind::Version(None)
        );

        let e = parse("{ not json").unwrap_err();
        assert_eq!((e.kind, e.offset), (CassetteErrorKind::Syntax, Some(2)));
    }

    #[test]
    fn inconsistent_cassettes_are_refused() {
        let mut c = sample();
        c.interactions[0].seq = 3;
        let e = parse(&to_json(&c, &Secrets::default()).0).unwrap_err();
        assert_eq!(e.kind, CassetteErrorKind::Invalid);
        assert!(e.message.contains("`seq` 3"), "{}", e.message);
        let mut c = sample();
        c.prompts.clear();
        let e = parse(&to_json(&c, &Secrets::default()).0).unwrap_err();
        assert!(e.message.contains("`system` names `p0`"), "{}", e.message);
        let mut c = sample();
        c.toolsets.clear();
        let e = parse(&to_json(&c, &Secrets::default()).0).unwrap_err();
        assert!(e.message.contains("`toolset` names `t0`"), "{}", e.message);
        let big = " ".repeat(MAX_BYTES + 1);
        assert_eq!(parse(&big).unwrap_err().kind, CassetteErrorKind::TooLarge);
    }

    #[test]
    fn load_goes_through_the_file_layer() {
        let mut fs = MemFiles::new();
        assert_eq!(load(&fs, "w/tests/a.cassette.json"), Ok(None));
        fs.insert(
            "w/tests/a.cassette.json",
            to_json(&sample(), &Secrets::default()).0,
        );
        assert_eq!(load(&fs, "w/tests/a.cassette.json"), Ok(Some(sample())));
        fs.insert("w/tests/b.cassette.json", "[]");
        assert!(load(&fs, "w/tests/b.cassette.json").is_err());
    }

    #[test]
    fn the_path_rule_and_discovery() {
        assert_eq!(
            cassette_path("w/tests/a.test.yaml"),
            "w/tests/a.cassette.json"
        );
        assert_eq!(
            cassette_path("w/tests/s/a.test.yml"),
            "w/tests/s/a.cassette.json"
        );
        assert!(is_cassette_name(&cassette_path("x.test.yaml")));
        assert!(!crate::workspace::is_case_name(&cassette_path(
            "x.test.yaml"
        )));
        let mut fs = MemFiles::new();
        fs.insert("workflows/w/tests/a.test.yaml", "title: t\n");
        fs.insert("workflows/w/tests/a.cassette.json", "{}");
        let dir = crate::workspace::WorkflowDir {
            root: String::new(),
            slug: "w".into(),
        };
        assert_eq!(
            crate::workspace::discover_cases(&fs, &dir),
            vec!["workflows/w/tests/a.test.yaml".to_owned()]
        );
        // A cassette is its own kind of file (`check` validates it: WFX450-454), never a case.
        assert_eq!(
            crate::workspace::classify("workflows/w/tests/a.cassette.json"),
            crate::workspace::FileKind::Cassette(dir)
        );
    }

    #[test]
    fn secrets_are_redacted_by_value_everywhere() {
        let s = Secrets::from_env([
            ("ARCHMAX_API_KEY".to_owned(), "k-123456".to_owned()),
            (
                "GITHUB_TOKEN".to_owned(),
                concat!("ghp", "_aaaaaaaaaaaaaaaaaaaaaaaa").to_owned(),
            ),
            ("MY_PASSWORD".to_owned(), "short".to_owned()),
            ("HOME".to_owned(), "/home/someone-long".to_owned()),
            (
                "aws_secret_access_key".to_owned(),
                "AbCdEfGh12345678".to_owned(),
            ),
        ]);
        let mut c = sample();
        c.interactions[0].request.messages[0].content = Some(
            concat!(
                "key k-123456 and ghp",
                "_aaaaaaaaaaaaaaaaaaaaaaaa; short; /home/someone-long"
            )
            .into(),
        );
        c.interactions[0].response.tool_calls[0].arguments =
            json!({"k-123456": ["x AbCdEfGh12345678 y"]});
        let (text, n) = to_json(&c, &s);
        assert_eq!(n, 4);
        for leaked in ["k-123456", "ghp_aaaa", "AbCdEfGh"] {
            assert!(!text.contains(leaked), "{leaked} in {text}");
        }
        for kept in [
            "<ENV:ARCHMAX_API_KEY> and <ENV:GITHUB_TOKEN>; short; /home/someone-long",
            "\"<ENV:ARCHMAX_API_KEY>\": [",
            "x <ENV:aws_secret_access_key> y",
        ] {
            assert!(text.contains(kept), "{kept} not in {text}");
        }
        assert!(parse(&text).is_ok());
    }

    #[test]
    fn many_secrets_times_many_strings_is_one_automaton_and_one_scan_per_string() {
        // Third break-it pass, F3: the per-value loop scanned every string once per secret
        // (10,000 `.env` keys × a 7 MB cassette: 49 CPU s). Now one automaton, one pass.
        // All but one of the secrets one set takes (Secrets::MAX_VALUES; one is added below).
        let secrets = Secrets::MAX_VALUES - 1;
        let strings = 500;
        let s = Secrets::from_env(
            (0..secrets).map(|i| (format!("K{i}_TOKEN"), format!("secret-value-{i:06}"))),
        );
        // Built lazily: nothing is built before the first redaction.
        assert_eq!(s.work(), RedactWork::default());
        let mut v = Value::Object(
            (0..strings)
                .map(|i| {
                    (
                        format!("key {i}"),
                        json!(format!("a string holding secret-value-{:06} once", i * 2)),
                    )
                })
                .collect(),
        );
        let n = s.redact_value(&mut v);
        assert_eq!(n, strings);
        // One automaton; each key and each value scanned once, not once per secret.
        assert_eq!(
            s.work(),
            RedactWork {
                builds: 1,
                scans: 2 * strings
            }
        );
        let text = v.to_string();
        assert!(!text.contains("secret-value-"), "{text}");
        assert!(text.contains("holding <ENV:K4_TOKEN> once"), "{text}");
        // Again: the automaton is reused.
        s.redact("secret-value-000001");
        assert_eq!(s.work().builds, 1);
        // Adding a secret rebuilds it once, on next use.
        let mut s2 = s.clone();
        s2.add("EXTRA_KEY", "another-secret");
        assert_eq!(s2.redact("x another-secret secret-value-000002").1, 2);
        assert_eq!(s2.work().builds, 1);
    }

    #[test]
    fn a_value_spelled_with_json_escapes_is_replaced_where_it_is_spelled() {
        // Issue 24: a text holding JSON (a judge's verdict, a tool result) is read by a
        // parser later; the key spelled with escapes there is whole only after decoding.
        let key = concat!("sk-", "escape-PLANTED-0000");
        let s = Secrets::from_env([("ARCHMAX_API_KEY".to_owned(), key.to_owned())]);
        let p = "<ENV:ARCHMAX_API_KEY>";
        let tail = &key[1..];
        for (text, want) in [
            (
                format!("{{\"r\": \"\\u0073{tail}\"}}"),
                format!("{{\"r\": \"{p}\"}}"),
            ),
            (
                format!("a \\u0073k\\u002d{} b", &key[3..]),
                format!("a {p} b"),
            ),
            // Upper-case hex, and the raw spelling beside an escaped one: two replacements.
            (format!("sk\\u002D{} {key}", &key[3..]), format!("{p} {p}")),
            // A surrogate pair before it is decoded as one character and left as written.
            (
                format!("\\ud83d\\ude00\\u0073{tail}"),
                format!("\\ud83d\\ude00{p}"),
            ),
        ] {
            let (out, n) = s.redact(&text);
            assert_eq!(out, want, "{text}");
            assert_eq!(n, want.matches(p).count(), "{text}");
        }
        // Escapes that spell nothing secret, and backslashes that are no escape, are kept.
        for kept in [
            "line\\none \\\"quoted\\\" \\x \\ud800 alone",
            "C:\\path\\to\\file",
        ] {
            assert_eq!(s.redact(kept), (kept.to_owned(), 0), "{kept}");
        }
        // The decoded view maps back to the source.
        let u = json_unescaped("ab\\u0063d\\ne").unwrap();
        assert_eq!(u.text, "abcd\ne");
        assert_eq!((u.start_in_source(2), u.end_in_source(3)), (2, 8));
        assert_eq!((u.start_in_source(3), u.end_in_source(5)), (8, 11));
        assert_eq!(u.start_in_source(5), 11);
        assert!(json_unescaped("no escapes \\q").is_none());
        // Through a cassette: a recorded judge answer holding the escaped key.
        let mut c = sample();
        c.interactions[0].response.content = Some(format!(
            "{{\"score\": 1, \"reason\": \"ok \\u0073{tail}\"}}"
        ));
        let (text, n) = to_json(&c, &s);
        assert_eq!(n, 1);
        assert!(!text.contains(&key[3..]), "{text}");
    }

    #[test]
    fn a_value_containing_another_is_replaced_whole() {
        let s = Secrets::from_env([
            ("SHORT_KEY".to_owned(), "abcdefgh".to_owned()),
            ("LONG_KEY".to_owned(), "xxabcdefghyy".to_owned()),
        ]);
        let (out, n) = s.redact("1 xxabcdefghyy 2 abcdefgh 3");
        assert_eq!(out, "1 <ENV:LONG_KEY> 2 <ENV:SHORT_KEY> 3");
        assert_eq!(n, 2);
    }

    #[test]
    fn check_reads_cassettes_up_to_the_cassette_bound_not_the_document_bound() {
        // Third break-it pass, F7: a 13.5 MB cassette was WFX008 in `check` (8 MiB, the
        // document bound) while `test` replayed it (16 MiB). Both now use `MAX_BYTES`.
        let path = "workflows/w/tests/refund.cassette.json";
        let padded = |size: usize| {
            let (mut text, _) = to_json(&sample(), &Secrets::default());
            text.push_str(&" ".repeat(size - text.len()));
            text
        };
        let codes = |fs: &MemFiles| -> Vec<String> {
            crate::check::check_file(fs, path)
                .iter()
                .map(|d| format!("{} {}", d.code.code, d.message))
                .collect()
        };
        // 9 MiB: over the document bound, under the cassette bound: read and parsed (the
        // one finding is its staleness: there is no case beside it), loadable by a run.
        let mut fs = MemFiles::new();
        fs.insert(path, padded(9 * 1024 * 1024).into_bytes());
        let found = codes(&fs);
        assert!(found.iter().all(|c| !c.starts_with("WFX008")), "{found:?}");
        assert!(
            !found.is_empty(),
            "a stale cassette must be reported: {found:?}"
        );
        assert!(load(&fs, path).unwrap().is_some());
        // 17 MiB: refused unread by `check` (WFX008) and by a run's load (TooLarge).
        let mut fs = MemFiles::new();
        fs.insert(path, padded(17 * 1024 * 1024).into_bytes());
        let found = codes(&fs);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("WFX008"), "{found:?}");
        assert!(
            found[0].contains("16 MiB") && found[0].contains("not read"),
            "{found:?}"
        );
        assert_eq!(
            load(&fs, path).unwrap_err().kind,
            CassetteErrorKind::TooLarge
        );
    }

    #[test]
    fn a_placeholder_key_shorter_than_the_bound_leaves_the_prompts_alone() {
        // A local server's placeholder key (`ARCHMAX_API_KEY=none`, docs/live-agent.md's
        // llama.cpp example) is no secret; redacting it rewrote every "none" of the recorded
        // prompts and made each replay drift (new-user finding, 2026-12-03).
        let s = Secrets::from_env([("ARCHMAX_API_KEY".to_owned(), "none".to_owned())]);
        assert!(s.is_empty());
        let mut c = sample();
        c.interactions[0].request.messages[0].content =
            Some("a request that names none of those".into());
        let (text, n) = to_json(&c, &s);
        assert_eq!(n, 0);
        assert!(text.contains("names none of those"), "{text}");
        // A value of exactly the bound's length is redacted.
        let long =
            Secrets::from_env([("ARCHMAX_API_KEY".to_owned(), "x".repeat(Secrets::MIN_LEN))]);
        assert!(!long.is_empty());
    }

    #[test]
    fn key_shaped_strings() {
        let found = |t: &str| key_shaped(t).iter().map(|k| k.kind).collect::<Vec<_>>();
        // Key-shaped values are built at run time from a prefix and an obviously fake body,
        // so no committed line holds one.
        let fake = |prefix: &str, body: &str| format!("{prefix}{body}");
        let sk = fake("sk-", "FAKEnotAkey0000000000");
        assert_eq!(found(&format!("use {sk} now")), ["sk- key"]);
        assert_eq!(
            found(&format!(
                "Authorization: {}",
                fake("Bearer ", "FAKEnotAtoken0000000")
            )),
            ["bearer token"]
        );
        assert_eq!(
            found(&fake("AKIA", "FAKENOTAKEY00000")),
            ["AWS access key id"]
        );
        assert_eq!(
            found(&fake("ghp_", "FAKEnotAtoken000000000000")),
            ["GitHub token"]
        );
        assert_eq!(found(&fake("xoxb-", "0000000000-fake")), ["Slack token"]);
        assert_eq!(
            found(&fake("tok ", "Zq8Lm2Rt7Xv4Np9Ks3Hd6Wc1Fb5Gy0Je")),
            ["high-entropy token"]
        );
        for clean in [
            "sk-short",
            "<ENV:ARCHMAX_API_KEY>",
            "fnv1a64:0123456789abcdef",
            "0123456789abcdef0123456789abcdef0123456789abcdef",
            "archmax_workflow_customer_support_order_lookup_tool",
            "Bearer <ENV:ARCHMAX_API_KEY>",
            "",
        ] {
            assert_eq!(found(clean), Vec::<&str>::new(), "{clean}");
        }
        let k = &key_shaped(&format!("x {sk}"))[0];
        assert_eq!((k.start, k.end), (2, 2 + sk.len()));
        assert_eq!(
            key_shaped(&format!("{sk} ").repeat(500)).len(),
            MAX_KEY_SHAPED
        );
    }
}
