//! Registry of `WFX3xx (340-399)`: cross-file workflow rules (FORMAT §D.2). Only declarations live here.

#[allow(unused_imports)]
use crate::code;
use crate::diagnostics::CodeInfo;

/// The codes of this file.
pub static CODES: &[&CodeInfo] = &[];
