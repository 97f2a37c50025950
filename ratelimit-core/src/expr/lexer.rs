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
            '\'' => return Err(ExprError::new(start, single_quoted(chars.collect()))),
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

/// The message for a string in single quotes, `rest` the text after the
/// opening quote: strings take double quotes, shown on the string itself.
fn single_quoted(rest: String) -> String {
    let fix = match rest.split_once('\'') {
        Some((inner, _)) if !inner.contains(['"', '\\']) => {
            format!(": write {}", quote(&format!("\"{inner}\"")))
        }
        _ => String::new(),
    };
    format!("strings take double quotes, not `'`{fix}")
}

#[cfg(test)]
mod tests;
