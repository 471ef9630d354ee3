//! Registry of `WFX4xx`: agent scripts of the runner (`tests/*.agent.yaml`). Only declarations live here.

#[allow(unused_imports)]
use crate::code;
use crate::diagnostics::CodeInfo;

/// The codes of this file.
pub static CODES: &[&CodeInfo] = &[];
