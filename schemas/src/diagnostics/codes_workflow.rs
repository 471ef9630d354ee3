//! Registry of `WFX2xx`: workflow.yaml (FORMAT §A). Only declarations live here; the checks are in `rules`.

#[allow(unused_imports)]
use crate::code;
use crate::diagnostics::CodeInfo;

/// The `WFX2xx` codes.
pub static CODES: &[&CodeInfo] = &[];
