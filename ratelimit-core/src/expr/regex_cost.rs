//! What a `matches` pattern costs per request, bounded when the rules load.
//!
//! A pattern is searched on every request it applies to, over values up to
//! 16 KiB. The regex crate's search is linear in the input, but its factor
//! grows with the pattern once compiled: each counted repetition copies its
//! sub-pattern, and a Unicode class such as `\w` (Unicode by default, as in
//! the regex crate's documentation) is an automaton of hundreds of byte
//! ranges. So a pattern is refused when
//!
//! - a counted repetition asks for more than [`MAX_REPEAT`] copies
//!   (`[\w\W]{100}z`), or
//! - its size with every repetition expanded, each class weighing by its
//!   number of ranges, is over [`MAX_COST`] (`\w{10,30}\.\w{2,5}`, where
//!   `\w` alone weighs about a hundred; write `[A-Za-z0-9_]` or `(?-u:\w)`
//!   for ASCII word characters).
//!
//! `*`, `+` and `?` cost their sub-pattern once: they loop, adding no copies.
//!
//! These bound the work of building the automaton; its size, which is what a
//! pattern such as `(?:a{1,60}){1,16}b` blows up without being large, is
//! bounded in [`super::pattern`].

use regex_syntax::hir::{Class, Hir, HirKind};

/// Most copies a counted repetition (`{n}`, `{n,m}`, `{n,}`) may ask for.
pub(super) const MAX_REPEAT: u32 = 64;
/// Largest weighted size of a pattern, repetitions expanded.
pub(super) const MAX_COST: u64 = 1024;
/// Ranges of a class that weigh as much as one literal.
const RANGES_PER_UNIT: u64 = 8;

/// Why a pattern is refused, if it is.
pub(super) fn refusal(hir: &Hir) -> Option<String> {
    match cost(hir) {
        Err(n) => Some(format!(
            "regular expression repeats a part {n} times; at most {MAX_REPEAT} (every copy is \
             paid on each request)"
        )),
        Ok(c) if c > MAX_COST => Some(format!(
            "regular expression too costly to run on every request (size {c} once expanded, \
             at most {MAX_COST}); use ASCII classes such as [A-Za-z0-9_] or (?-u:\\w) instead \
             of Unicode \\w, and fewer counted repetitions"
        )),
        Ok(_) => None,
    }
}

/// The weighted size of `hir`, or `Err(n)` for a repetition of `n` copies
/// over [`MAX_REPEAT`]. The nesting is bounded by the parser's nest limit.
fn cost(hir: &Hir) -> Result<u64, u32> {
    Ok(match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => 0,
        HirKind::Literal(_) => 1,
        HirKind::Class(Class::Unicode(c)) => 1 + c.ranges().len() as u64 / RANGES_PER_UNIT,
        HirKind::Class(Class::Bytes(c)) => 1 + c.ranges().len() as u64 / RANGES_PER_UNIT,
        HirKind::Repetition(r) => {
            let copies = match r.max {
                Some(max) => max,
                None => r.min,
            };
            if copies > MAX_REPEAT {
                return Err(copies);
            }
            u64::from(copies.max(1)).saturating_mul(cost(&r.sub)?)
        }
        HirKind::Capture(c) => cost(&c.sub)?,
        HirKind::Concat(v) | HirKind::Alternation(v) => {
            let mut sum = 0u64;
            for h in v {
                sum = sum.saturating_add(cost(h)?);
            }
            sum
        }
    })
}
