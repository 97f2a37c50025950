//! Generated `matches` patterns and values, shared by the pattern tests
//! (`expr::pattern`) and the `patterns` bench, which includes this file.
//!
//! The patterns nest groups three deep, with alternations and (often
//! nested) counted repetitions up to 60: the shapes that blow up an
//! automaton, such as `(?:a{1,60}){1,16}b`.

use proptest::prelude::*;

/// Pieces of generated patterns: literals, classes (ASCII and Unicode), the
/// separators of paths.
pub(crate) fn atom() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "a",
        "b",
        "z",
        "/",
        "-",
        ".",
        "é",
        "[a-z]",
        "[a-z0-9_-]",
        "[^/]",
        r"\w",
        r"\d",
        r"\s",
        r"(?-u:\w)",
        "[ab]",
        "^",
        "$",
    ])
    .prop_map(str::to_owned)
}

/// A repetition suffix: none, `*`, `+`, `?`, or counted up to 60.
fn repetition() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => Just(String::new()),
        1 => prop::sample::select(vec!["*", "+", "?"]).prop_map(str::to_owned),
        3 => (0u32..4, 0u32..60).prop_map(|(n, extra)| format!("{{{n},{}}}", n + extra.max(1))),
        1 => (1u32..17).prop_map(|n| format!("{{1,{n}}}")),
    ]
}

/// Patterns of groups nested three deep, with alternations and (often
/// nested) counted repetitions: the shapes that blow up an automaton.
pub(crate) fn pattern() -> impl Strategy<Value = String> {
    let piece = (atom(), repetition()).prop_map(|(a, r)| {
        let anchor = a == "^" || a == "$";
        if anchor {
            a
        } else {
            a + &r
        }
    });
    let leaf = prop::collection::vec(piece, 1..4).prop_map(|v| v.concat());
    let tree = leaf.prop_recursive(3, 24, 3, |inner| {
        (
            prop::collection::vec(inner, 1..3),
            any::<bool>(),
            repetition(),
        )
            .prop_map(|(parts, alternate, r)| {
                let body = parts.join(if alternate { "|" } else { "" });
                format!("(?:{body}){r}")
            })
    });
    (any::<bool>(), prop::collection::vec(tree, 1..3))
        .prop_map(|(fold, v)| format!("{}{}", if fold { "(?i)" } else { "" }, v.concat()))
}

/// Short values over the patterns' alphabet, for the comparison.
pub(crate) fn value() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec!["a", "b", "z", "/", "-", ".", "é", "_", "0", "A", " "]),
        0..40,
    )
    .prop_map(|v| v.concat())
}

/// Values of 16 KiB, the longest a path may be: runs of what generated
/// patterns repeat.
pub(crate) fn long_values() -> Vec<String> {
    ["a", "/a", "ab", "a-", "é", "/", "a0_", "z"]
        .iter()
        .map(|unit| unit.repeat(16 * 1024 / unit.len()))
        .collect()
}
