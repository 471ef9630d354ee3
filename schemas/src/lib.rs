//! `wfx-schemas`: the archmax workflow and case formats.
//!
//! Pure: no LSP types, no clock, no environment, no IO except through
//! [`files::FileAccess`]. The entry points in [`check`] turn files into a sorted list of
//! [`diagnostics::Diagnostic`]s; every caller (CLI, server, runner, tests) uses them, so the
//! editor and CI cannot disagree. Rules cite the FORMAT.md section they enforce.

pub mod cassette;
pub mod check;
pub mod coverage;
pub mod diagnostics;
pub mod docs;
pub mod files;
pub mod glob;
pub mod graph;
pub mod inert;
pub mod jsregex;
pub mod model;
pub mod rules;
pub mod satisfy;
pub mod signature;
pub mod text;
pub mod workspace;
pub mod yaml;
