//! Registry of `WFX3xx (301-339)`: cross-file case rules (FORMAT §B.8, §B.10, our own case ↔ workflow checks). Only declarations live here.

#[allow(unused_imports)]
use crate::code;
use crate::diagnostics::CodeInfo;

/// The codes of this file.
pub static CODES: &[&CodeInfo] = &[];
