//! Registry of `WFX0xx`: YAML syntax and stream-level problems shared by every file kind.
//! Only declarations live here; the checks are in `rules`.

use crate::code;
use crate::diagnostics::CodeInfo;

code!(
    YAML_SYNTAX,
    "WFX001",
    "yaml-syntax",
    Error,
    "§A.0, §B.0",
    "the file is not valid YAML",
    "The YAML parser stopped at this position; nothing after it is checked.\n\nFails:\n```yaml\nsteps: [send: hi\n```\nPasses:\n```yaml\nsteps: [{send: hi}]\n```"
);
code!(
    DUPLICATE_KEY,
    "WFX002",
    "duplicate-key",
    Error,
    "§A.0, §B.0",
    "a mapping repeats a key",
    "YAML mappings may not repeat a key; the reference's parser rejects the document. The diagnostic sits on the second key and points at the first.\n\nFails:\n```yaml\ntitle: a\ntitle: b\n```\nPasses:\n```yaml\ntitle: a\n```"
);
code!(
    YAML_TOO_DEEP,
    "WFX003",
    "yaml-too-deep",
    Error,
    "wfx",
    "collections are nested too deeply",
    "Nesting beyond 256 levels is refused so no file can exhaust the checker.\n\nFails: 300 nested `[`.\nPasses: ordinary documents."
);
code!(
    ALIAS_BOMB,
    "WFX004",
    "alias-expansion",
    Error,
    "§A.0, §B.0",
    "aliases are used more than the reference's YAML library allows",
    "The reference's YAML library (`yaml` 2.9.1, `maxAliasCount` 100) refuses a document when an alias brings its anchor's use count (the definition included) times the anchor's weight over 100; the weight is 1 for content holding a scalar, for content holding aliases the largest use count times weight among them, and 0 for an empty collection. So 100 aliases of one anchor, or a few doubling levels, are refused (a \"billion laughs\" defence). Independently, whatever the count, the copies anchors and aliases make in one file are bounded: past 200,000 nodes or 8 MiB of text (string scalars and keys) the copy is refused and the alias becomes `null`, so one large scalar aliased 99 times is refused too.\n\nFails:\n```yaml\na0: &a0 [x, x, x, x]\na1: &a1 [*a0, *a0, *a0, *a0]\na2: &a2 [*a1, *a1, *a1, *a1]\na3: &a3 [*a2, *a2, *a2, *a2]\n```\nPasses: a few aliases."
);
code!(
    COMPLEX_KEY,
    "WFX005",
    "complex-key",
    Error,
    "§A.0, §B.0",
    "a mapping key is a list or a mapping",
    "Keys are names. A list or mapping used as a key can never match a known key.\n\nFails:\n```yaml\n? [a, b]\n: 1\n```\nPasses:\n```yaml\na: 1\n```"
);
code!(
    INVALID_UTF8,
    "WFX006",
    "invalid-utf8",
    Error,
    "wfx",
    "the file is not valid UTF-8",
    "The file contains a byte sequence that is not UTF-8; YAML files must be text.\n\nFails: a file with a stray `0xFF` byte.\nPasses: UTF-8 text."
);

code!(
    MULTIPLE_DOCUMENTS,
    "WFX007",
    "multiple-documents",
    Error,
    "§A.0, §B.0",
    "a file holds more than one YAML document",
    "A case or workflow file is exactly one YAML document; a `---` that starts a second one is refused by the reference's loader.\n\nFails:\n```yaml\ntitle: a\n---\ntitle: b\n```\nPasses: one document per file."
);

code!(
    FILE_TOO_LARGE,
    "WFX008",
    "file-too-large",
    Error,
    "wfx",
    "the file is too large to check",
    "Files over 8 MiB are refused by their size before any of them is read (so a hundred 60 MB files cost `check` nothing to hold), and parsing stops at a file of more than 500,000 YAML nodes (scalars, aliases, lists and mappings, keys included): a case or workflow is a few kilobytes (the largest in real use are around 100 KiB, a few thousand nodes), and an editor must stay responsive whatever file is opened. The file is reported, not silently passed, so `check` fails.\n\nFails: a generated 50 MB case; `steps: [a, a, …]` with 2.6 million items.\nPasses: any file under 8 MiB and 500,000 nodes."
);
code!(
    TOO_MANY_PROBLEMS,
    "WFX009",
    "too-many-problems",
    Error,
    "wfx",
    "more problems in this file than are reported",
    "At most 1,000 diagnostics are reported per file; this one stands for the rest and says how many there are (past 2,000 per rule pass they are counted without being built, so the count stays exact at any size). Its severity is that of the most severe problem left out (so an error is never hidden behind a warning). Fix the reported problems and check again.\n\nFails: a file with 100,000 unknown keys.\nPasses: a file with at most 1,000 problems."
);

code!(
    LINK_OUTSIDE_WORKSPACE,
    "WFX010",
    "link-outside-workspace",
    Error,
    "wfx",
    "a symbolic link leads outside the workspace",
    "The file (or a folder above it) is a symbolic link that resolves outside the workspace root (the folder above `workflows/`). It is not read: a hostile repository could otherwise make `check` print a private key or the environment into a CI log. The diagnostic names the link, never its target's content. Links that stay inside the workspace work as usual.\n\nFails: `workflows/a/tests/x.test.yaml -> /proc/self/environ`.\nPasses: `workflows/a/tests/x.test.yaml -> ../shared/x.test.yaml` inside the workspace, or a regular file."
);

code!(
    HARD_LINK,
    "WFX011",
    "hard-link",
    Error,
    "wfx",
    "a file with more than one hard link is not read",
    "A regular file with more than one hard link is refused, never read: a hard link makes a file from elsewhere on the same file system (a private key, another checkout's secrets) appear inside the workspace, where no link check can see where it came from. Git never creates hard links, so in a cloned repository one was planted. Copy the file instead of linking it.\n\nFails: `ln ~/.ssh/id_ed25519 workflows/a/tests/x.test.yaml`.\nPasses: a regular file (one link), or a symbolic link inside the workspace."
);

code!(
    DISCOVERY_BOUND,
    "WFX012",
    "discovery-bound",
    Error,
    "wfx",
    "discovery stopped at a bound; files below this folder were not found",
    "Cases, agent scripts and cassettes are searched for below `workflows/<slug>/tests/` at most 32 folders deep, and among at most 100,000 folder entries per workflow (`files::MAX_WALK_DEPTH`, `files::MAX_WALK_ENTRIES`): a hostile repository of 1,000 nested folders would otherwise make every `check` and every editor start walk all of them. The diagnostic sits on the first folder left unlisted and counts the others; nothing below them is checked, and `wfx-lsp test` fails the run rather than skip their cases silently. Move the cases higher, or split the workflow.\n\nFails: `workflows/a/tests/1/2/…/33/x.test.yaml`.\nPasses: `workflows/a/tests/1/2/…/32/x.test.yaml`."
);

/// The `WFX0xx` codes.
pub static CODES: &[&CodeInfo] = &[
    &YAML_SYNTAX,
    &DUPLICATE_KEY,
    &YAML_TOO_DEEP,
    &ALIAS_BOMB,
    &COMPLEX_KEY,
    &INVALID_UTF8,
    &MULTIPLE_DOCUMENTS,
    &FILE_TOO_LARGE,
    &TOO_MANY_PROBLEMS,
    &LINK_OUTSIDE_WORKSPACE,
    &HARD_LINK,
    &DISCOVERY_BOUND,
];
