//! Registry of `WFX1xx`: the case schema (FORMAT §B). Only declarations live here; the checks are in `rules`.

#[allow(unused_imports)]
use crate::code;
use crate::diagnostics::CodeInfo;

/// The `WFX1xx` codes.
pub static CODES: &[&CodeInfo] = &[];
