//! This module holds the implementations of data structures that are
//! used in the program.
//!

pub mod dag;
pub mod map;
