//! This module contains the implementation of the standard built-in shapes.

pub mod render;
pub mod shapes;
