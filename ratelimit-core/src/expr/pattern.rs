//! The compiled form of a `matches` pattern: a DFA built when the rules
//! load, so that a request costs one table step per byte of its value.
//!
//! A regular-expression engine that builds its automaton lazily (the regex
//! crate's) is linear in the input only while its cache of states holds; a
//! pattern such as `(?:a{1,60}){1,16}b` has more states than the cache, and
//! the engine falls back to simulating the NFA, which is the input's length
//! times the pattern's size: 14-194 ms on a 16 KiB path. Here the whole
//! automaton is built once, at load, within [`DFA_SIZE_LIMIT`] (and
//! [`DETERMINIZE_SIZE_LIMIT`] of work to build it); a pattern whose
//! automaton is larger is refused, naming the column. A search then reads
//! each byte of the value at most once and does nothing else, whatever the
//! pattern and the value.
//!
//! Unicode word boundaries (`\b`, `\B` outside `(?-u:…)`) cannot be decided
//! by such an automaton byte by byte, so they are refused with a hint to the
//! ASCII form.

use std::fmt;
use std::sync::Arc;

use regex_automata::dfa::{dense, Automaton, StartKind};
use regex_automata::nfa::thompson::{self, WhichCaptures, NFA};
use regex_automata::Input;
use regex_syntax::hir::Hir;

use super::error::ExprError;

/// The longest pattern `matches` accepts, in characters.
const MAX_REGEX_CHARS: usize = 1000;
/// The size bound of a pattern's NFA, in bytes.
const NFA_SIZE_LIMIT: usize = 1 << 20;
/// The size bound of a pattern's DFA, in bytes: the memory it holds.
pub(super) const DFA_SIZE_LIMIT: usize = 2 << 20;
/// The bound of the memory used while building the DFA, in bytes: the
/// load-time work of a pattern.
const DETERMINIZE_SIZE_LIMIT: usize = 1 << 20;
/// The deepest nesting of groups, repetitions and classes in a `matches`
/// pattern (the regex crate's 250 overflows a 2 MiB stack in debug builds).
const NEST_LIMIT: u32 = 64;

/// A compiled `matches` pattern; clones share the automaton.
#[derive(Clone)]
pub(crate) struct Pattern {
    dfa: Arc<dense::DFA<Vec<u32>>>,
    source: Arc<str>,
}

impl Pattern {
    /// Compiles `pattern`, found at column `col` of the expression.
    pub(super) fn compile(pattern: &str, col: usize) -> Result<Pattern, ExprError> {
        let refuse = |msg: String| ExprError::new(col, msg);
        if pattern.chars().count() > MAX_REGEX_CHARS {
            return Err(refuse(format!(
                "regular expression longer than {MAX_REGEX_CHARS} characters"
            )));
        }
        let hir = parse(pattern).map_err(refuse)?;
        if hir.properties().look_set().contains_word_unicode() {
            return Err(refuse(
                "regular expression uses a Unicode word boundary (\\b, \\B, \\<, \\>), which \
                 cannot be checked in one pass; write (?-u:\\b) for an ASCII word boundary"
                    .to_owned(),
            ));
        }
        let nfa = nfa(&hir).map_err(refuse)?;
        if let Some(msg) = super::regex_cost::refusal(&hir) {
            return Err(refuse(msg));
        }
        let dfa = dfa(&nfa).map_err(refuse)?;
        Ok(Pattern {
            dfa: Arc::new(dfa),
            source: pattern.into(),
        })
    }

    /// Whether the pattern matches anywhere in `value`: one step per byte,
    /// stopping at the first match or when no match can follow.
    pub(super) fn is_match(&self, value: &str) -> bool {
        // The automaton has no quit bytes (Unicode word boundaries are
        // refused) and supports unanchored searches, the only errors a
        // search can return; were one possible, it would not match.
        self.dfa
            .try_search_fwd(&Input::new(value).earliest(true))
            .is_ok_and(|m| m.is_some())
    }

    /// The bytes of memory the automaton holds.
    #[cfg(test)]
    pub(super) fn memory_usage(&self) -> usize {
        self.dfa.memory_usage()
    }
}

impl fmt::Debug for Pattern {
    /// The pattern's text, not its tables.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Pattern").field(&self.source).finish()
    }
}

/// The syntax tree of `pattern`, or the last line of the parser's message.
fn parse(pattern: &str) -> Result<Hir, String> {
    regex_syntax::ParserBuilder::new()
        .nest_limit(NEST_LIMIT)
        .build()
        .parse(pattern)
        .map_err(|e| {
            let text = e.to_string();
            let detail = text
                .lines()
                .rev()
                .find_map(|l| l.trim().strip_prefix("error: "))
                .unwrap_or("syntax error");
            format!("invalid regular expression: {detail}")
        })
}

/// The NFA of `hir`, within its size limit.
fn nfa(hir: &Hir) -> Result<NFA, String> {
    thompson::Compiler::new()
        .configure(
            thompson::Config::new()
                .nfa_size_limit(Some(NFA_SIZE_LIMIT))
                .which_captures(WhichCaptures::None),
        )
        .build_from_hir(hir)
        .map_err(|_| "regular expression too large once compiled".to_owned())
}

/// The unanchored DFA of `nfa`, within the size limits. The builder
/// checks [`DFA_SIZE_LIMIT`] while it determinizes; what it adds after (a
/// few hundred bytes) can pass it, so the DFA as built is checked too.
fn dfa(nfa: &NFA) -> Result<dense::DFA<Vec<u32>>, String> {
    let dfa = dense::Builder::new()
        .configure(
            dense::Config::new()
                .start_kind(StartKind::Unanchored)
                .dfa_size_limit(Some(DFA_SIZE_LIMIT))
                .determinize_size_limit(Some(DETERMINIZE_SIZE_LIMIT)),
        )
        .build_from_nfa(nfa)
        .map_err(|e| match e.is_size_limit_exceeded() {
            true => too_costly(),
            false => format!("invalid regular expression: {e}"),
        })?;
    if dfa.memory_usage() > DFA_SIZE_LIMIT {
        return Err(too_costly());
    }
    Ok(dfa)
}

/// The refusal of a pattern whose automaton exceeds [`DFA_SIZE_LIMIT`] or
/// takes more than [`DETERMINIZE_SIZE_LIMIT`] to build.
fn too_costly() -> String {
    format!(
        "regular expression too costly to run on every request (its automaton \
         exceeds {} MiB): nested or overlapping repetitions such as \
         (a{{1,60}}){{1,16}} multiply its states; separate the repeated parts \
         (/[a-z]{{1,60}}), use fewer counted repetitions, or ASCII classes",
        DFA_SIZE_LIMIT >> 20
    )
}

#[cfg(test)]
mod tests;
