//! Registry of `WFX45x`: cassettes (`tests/<case>.cassette.json`, docs/cassettes.md), the
//! second half of the runner's `WFX4xx` block. Only declarations live here.

use crate::code;
use crate::diagnostics::CodeInfo;

code!(
    CASSETTE_INVALID,
    "WFX450",
    "cassette-invalid",
    Error,
    "wfx",
    "a cassette is not valid JSON of the cassette format",
    "A cassette (`tests/<case>.cassette.json`, docs/cassettes.md) is one JSON object of the version-1 format: every key present with the right type, `seq` equal to the interaction's position, every `system` and `toolset` id declared in `prompts` and `toolsets`, at most 10,000 interactions, 500,000 JSON values in its lists, maps, `arguments` and `parameters` together, 127 levels of nesting, and 16 MiB. A replay refuses any other file, so `check` says so first.\n\nFails:\n```json\n{ \"version\": 1, \"interactions\": [ ] \n```\nPasses: a cassette written by `wfx-lsp test --live --record once`."
);
code!(
    CASSETTE_VERSION,
    "WFX451",
    "cassette-version",
    Error,
    "wfx",
    "a cassette's `version` is not one this build reads",
    "This build reads cassettes of version 1 only. A cassette from a newer wfx-lsp, or one whose `version` is missing, is refused rather than half-read; re-record it with `wfx-lsp test --live --record all`.\n\nFails:\n```json\n{ \"version\": 2, \"…\": \"…\" }\n```\nPasses:\n```json\n{ \"version\": 1, \"…\": \"…\" }\n```"
);
code!(
    CASSETTE_UNKNOWN_KEY,
    "WFX452",
    "cassette-unknown-key",
    Error,
    "wfx",
    "a cassette has a key the format does not know",
    "Every object of a cassette refuses unknown keys (fail-closed, as the case format does): a hand edit with a typo, or a field from another tool, would otherwise be ignored silently.\n\nFails:\n```json\n{ \"version\": 1, \"recordedWith\": \"wfx-lsp 0.1.0\", \"recordedBy\": \"me\", \"…\": \"…\" }\n```\nPasses: the same without `recordedBy`."
);
code!(
    CASSETTE_KEY_SHAPED,
    "WFX453",
    "cassette-key-shaped-string",
    Warning,
    "wfx",
    "a cassette holds a string that looks like a credential",
    "Cassettes are committed, so a credential in one is published. Recording replaces the values of `ARCHMAX_API_KEY` and of key-like environment variables by `<ENV:NAME>`, but a key the model saw elsewhere (a tool output, a fixture) is not an environment variable. This warning finds strings shaped like keys (`sk-…`, `Bearer …`, AWS access key ids, GitHub and Slack tokens, long high-entropy tokens). `check` never prints the string itself: the code frame masks it. Remove it, or run `wfx-lsp scrub` with the variable set to redact it by value.\n\nWarns:\n```json\n\"content\": \"use sk-proj-EXAMPLEonlyNOTaREALkey\"\n```\nPasses:\n```json\n\"content\": \"use <ENV:OPENAI_API_KEY>\"\n```"
);

code!(
    CASSETTE_STALE,
    "WFX454",
    "cassette-stale",
    Information,
    "wfx",
    "the case or `workflow.yaml` changed since the cassette was recorded",
    "A cassette stores a digest of its case and of `workflow.yaml` as they were when it was recorded (`inputs`, 64-bit FNV-1a of the text). When either differs now, the cassette is stale: a replay may still pass (an edited title changes nothing the model saw) or may diverge from the recording. The digests are never used for matching; this note only tells the author which input changed, so they know whether to re-record.\n\nNotes: a cassette whose `inputs.case` is not the digest of the case text.\nPasses: a cassette recorded from the current case and workflow."
);

/// The `WFX45x` codes.
pub static CODES: &[&CodeInfo] = &[
    &CASSETTE_INVALID,
    &CASSETTE_VERSION,
    &CASSETTE_UNKNOWN_KEY,
    &CASSETTE_KEY_SHAPED,
    &CASSETTE_STALE,
];
