//! Registry of `WFX3xx`: cross-file rules (FORMAT §B.10, §D). Only declarations live here; the checks are in `rules`.

#[allow(unused_imports)]
use crate::code;
use crate::diagnostics::CodeInfo;

/// The `WFX3xx` codes.
pub static CODES: &[&CodeInfo] = &[];
