//! Plays the conformance timeline cases against a backend and reports each.
#![forbid(unsafe_code)]

fn main() {}
