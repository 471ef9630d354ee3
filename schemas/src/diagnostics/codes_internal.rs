//! Registry of `WFX9xx`: internal failures (a caught panic, an unreadable file).

use crate::code;
use crate::diagnostics::CodeInfo;

code!(
    INTERNAL_ERROR,
    "WFX901",
    "internal-error",
    Error,
    "wfx",
    "the checker failed on this file",
    "A bug in wfx: the analysis of this file panicked and was caught. Please report it with the file.\n\nFails: (never on purpose)\nPasses: every other file."
);
code!(
    UNREADABLE_FILE,
    "WFX902",
    "unreadable-file",
    Error,
    "wfx",
    "a file could not be read",
    "The file exists but could not be read (permissions, a directory, too large).\n\nFails: a case file without read permission.\nPasses: a readable file."
);

/// The `WFX9xx` codes.
pub static CODES: &[&CodeInfo] = &[&INTERNAL_ERROR, &UNREADABLE_FILE];
