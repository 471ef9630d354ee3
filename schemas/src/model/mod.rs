//! Typed models of `workflow.yaml` and case documents, built leniently from the span tree.
//!
//! Builders never fail and never report: they pick out what is there with its range and
//! leave every judgement to `rules`. Consumers (rules, IDE features, the runner) read the
//! model for meaning and the [`crate::yaml::Node`] tree for exact positions.

pub mod case;
pub mod workflow;

use crate::text::TextRange;
use crate::yaml::Node;

/// A value with the byte range it was written at.
#[derive(Clone, Debug, PartialEq)]
pub struct Spanned<T> {
    /// The value.
    pub value: T,
    /// Its byte range.
    pub range: TextRange,
}

impl<T> Spanned<T> {
    /// Pairs a value with a range.
    pub fn new(value: T, range: TextRange) -> Self {
        Self { value, range }
    }
}

/// The string scalar at `node` with its range.
pub(crate) fn spanned_str(node: &Node) -> Option<Spanned<String>> {
    node.as_str()
        .map(|s| Spanned::new(s.to_owned(), node.range))
}

/// A list of strings (or a single string) at `node`, keeping only string items.
pub(crate) fn spanned_strs(node: Option<&Node>) -> Vec<Spanned<String>> {
    match node {
        None => Vec::new(),
        Some(n) => match n.as_seq() {
            Some(items) => items.iter().filter_map(spanned_str).collect(),
            None => spanned_str(n).into_iter().collect(),
        },
    }
}

/// A non-negative integer at `node`.
pub(crate) fn as_u64(node: Option<&Node>) -> Option<u64> {
    match node.map(|n| &n.value) {
        Some(crate::yaml::Value::Int(i)) if *i >= 0 => u64::try_from(*i).ok(),
        _ => None,
    }
}
