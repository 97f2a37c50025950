//! Splits an expression into tokens, each with its 1-based column.
//!
//! Words are runs of ASCII letters, digits, `_`, `.`, `:` and `/`, so one
//! word covers a field (`http.request.uri.path`), a keyword (`and`), a
//! function name (`lower`) or a bare address or network (`2001:db8::/32`);
//! the parser decides which from context.

use super::error::{quote, ExprError};

/// One token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Tok {
    /// A keyword, field, function name or bare address.
    Word(String),
    /// A double-quoted string, escapes resolved.
    Str(String),
    LParen,
    RParen,
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    Comma,
    /// `==`
    EqEq,
    /// `!=`
    BangEq,
    /// `!`
    Bang,
    /// `&&`
    AndAnd,
    /// `||`
    OrOr,
    /// The end of the input; always the last token.
    Eof,
}

impl Tok {
    /// How the token is named in an error message.
    pub(super) fn describe(&self) -> String {
        let fixed = match self {
            Tok::Word(w) => return quote(w),
            Tok::Str(_) => "a string",
            Tok::LParen => "`(`",
            Tok::RParen => "`)`",
            Tok::LBrace => "`{`",
            Tok::RBrace => "`}`",
            Tok::LBracket => "`[`",
            Tok::RBracket => "`]`",
            Tok::Comma => "`,`",
            Tok::EqEq => "`==`",
            Tok::BangEq => "`!=`",
            Tok::Bang => "`!`",
            Tok::AndAnd => "`&&`",
            Tok::OrOr => "`||`",
            Tok::Eof => "the end of the expression",
        };
        fixed.to_owned()
    }

    /// Whether the token is the word `w`.
    pub(super) fn is_word(&self, w: &str) -> bool {
        matches!(self, Tok::Word(x) if x == w)
    }
}

/// A token and the column of its first character.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Token {
    pub(super) tok: Tok,
    pub(super) col: usize,
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '/')
}

/// Tokenizes `src`; the result always ends with [`Tok::Eof`].
///
/// # Errors
///
/// An unterminated string, an unknown escape, a lone `=`, `&` or `|`, or a
/// character outside the language.
pub(super) fn tokenize(src: &str) -> Result<Vec<Token>, ExprError> {
    let mut out = Vec::new();
    let mut chars = src.chars().peekable();
    // Column of the character last taken from `chars`.
    let mut col = 0usize;
    while let Some(c) = chars.next() {
        col += 1;
        let start = col;
        let mut pair = |second: char, tok: Tok, alone: Result<Tok, &str>| {
            if chars.next_if_eq(&second).is_some() {
                col += 1;
                Ok(tok)
            } else {
                alone.map_err(|msg| ExprError::new(start, msg))
            }
        };
        let tok = match c {
            c if c.is_whitespace() => continue,
            '(' => Tok::LParen,
            ')' => Tok::RParen,
            '{' => Tok::LBrace,
            '}' => Tok::RBrace,
            '[' => Tok::LBracket,
            ']' => Tok::RBracket,
            ',' => Tok::Comma,
            '=' => pair('=', Tok::EqEq, Err("expected `==`, found a lone `=`"))?,
            '!' => pair('=', Tok::BangEq, Ok(Tok::Bang))?,
            '&' => pair('&', Tok::AndAnd, Err("expected `&&`, found a lone `&`"))?,
            '|' => pair('|', Tok::OrOr, Err("expected `||`, found a lone `|`"))?,
            '"' => {
                let mut s = String::new();
                loop {
                    match chars.next() {
                        None => return Err(ExprError::new(start, "unterminated string")),
                        Some('"') => break,
                        Some('\\') => {
                            let escape_col = col + 1;
                            match chars.next() {
                                Some(e @ ('"' | '\\')) => s.push(e),
                                Some(e) => {
                                    let msg = format!(
                                        "unknown escape `\\{}` in string; only `\\\"` and `\\\\` are allowed",
                                        e.escape_debug()
                                    );
                                    return Err(ExprError::new(escape_col, msg));
                                }
                                None => return Err(ExprError::new(start, "unterminated string")),
                            }
                            col += 1;
                        }
                        Some(other) => s.push(other),
                    }
                    col += 1;
                }
                col += 1;
                Tok::Str(s)
            }
            c if is_word_char(c) => {
                let mut w = String::from(c);
                while let Some(next) = chars.next_if(|&n| is_word_char(n)) {
                    col += 1;
                    w.push(next);
                }
                Tok::Word(w)
            }
            other => {
                let msg = format!("unexpected character `{}`", other.escape_debug());
                return Err(ExprError::new(start, msg));
            }
        };
        out.push(Token { tok, col: start });
    }
    out.push(Token {
        tok: Tok::Eof,
        col: col + 1,
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
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
}
