//! The expression lexer: tokens, one-based char columns, string escapes,
//! and errors that point at the offending character.

use super::*;

fn toks(src: &str) -> Vec<(Tok, usize)> {
    tokenize(src)
        .unwrap()
        .into_iter()
        .map(|t| (t.tok, t.col))
        .collect()
}

fn word(w: &str) -> Tok {
    Tok::Word(w.to_owned())
}

#[test]
fn columns_are_one_based_and_count_chars_not_bytes() {
    assert_eq!(
        toks("\"ü\" eq x"),
        vec![
            (Tok::Str("ü".into()), 1),
            (word("eq"), 5),
            (word("x"), 8),
            (Tok::Eof, 9)
        ]
    );
    assert_eq!(tokenize("x é").unwrap_err().column(), 3);
}

#[test]
fn words_cover_fields_and_bare_networks() {
    assert_eq!(
        toks("ip.src in {10.0.0.0/8 2001:db8::/32}"),
        vec![
            (word("ip.src"), 1),
            (word("in"), 8),
            (Tok::LBrace, 11),
            (word("10.0.0.0/8"), 12),
            (word("2001:db8::/32"), 23),
            (Tok::RBrace, 36),
            (Tok::Eof, 37),
        ]
    );
}

#[test]
fn two_char_operators_are_single_tokens() {
    let got: Vec<Tok> = toks("== != ! && ||").into_iter().map(|t| t.0).collect();
    assert_eq!(
        got,
        vec![
            Tok::EqEq,
            Tok::BangEq,
            Tok::Bang,
            Tok::AndAnd,
            Tok::OrOr,
            Tok::Eof
        ]
    );
}

#[test]
fn string_escapes_resolve_quote_and_backslash() {
    assert_eq!(
        toks(r#""a\"b\\c" x"#),
        vec![
            (Tok::Str("a\"b\\c".into()), 1),
            (word("x"), 11),
            (Tok::Eof, 12)
        ]
    );
}

#[test]
fn unterminated_string_points_at_the_opening_quote() {
    let err = tokenize(r#"http.host eq "abc"#).unwrap_err();
    assert_eq!((err.column(), err.message()), (14, "unterminated string"));
    let err = tokenize(r#"x "ab\"#).unwrap_err();
    assert_eq!(err.column(), 3);
}

#[test]
fn unknown_escape_points_at_the_backslash() {
    let err = tokenize(r#""ab\n""#).unwrap_err();
    assert_eq!(err.column(), 4);
    assert!(err.message().starts_with("unknown escape `\\n`"));
}

#[test]
fn lone_symbols_and_foreign_characters_are_refused() {
    for (src, col) in [
        ("a = b", 3),
        ("a & b", 3),
        ("a | b", 3),
        ("a @", 3),
        ("ab\u{0}", 3),
    ] {
        assert_eq!(tokenize(src).unwrap_err().column(), col, "{src:?}");
    }
}
