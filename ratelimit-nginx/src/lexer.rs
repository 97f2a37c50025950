//! Splits nginx configuration text into directives: words, `;`, quotes, `#` comments.
//!
//! Blocks (`{ ... }`) are not read here: a level is applied per route.

use super::error::{ConfigError, ConfigErrorKind, Span};

/// One directive: its name and its arguments, each with where it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Directive {
    pub(crate) name: String,
    pub(crate) span: Span,
    pub(crate) args: Vec<(String, Span)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(String),
    Semicolon,
    Open,
    Close,
}

struct Lexer<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    line: u32,
    column: u32,
}

impl Lexer<'_> {
    fn here(&self) -> Span {
        Span::new(self.line, self.column)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.chars.next()?;
        if c == '\n' {
            self.line = self.line.saturating_add(1);
            self.column = 1;
        } else {
            self.column = self.column.saturating_add(1);
        }
        Some(c)
    }

    fn next_token(&mut self) -> Result<Option<(Token, Span)>, ConfigError> {
        loop {
            match self.chars.peek() {
                None => return Ok(None),
                Some(c) if c.is_whitespace() => {
                    self.bump();
                }
                Some('#') => {
                    while self.chars.peek().is_some_and(|c| *c != '\n') {
                        self.bump();
                    }
                }
                Some(_) => break,
            }
        }
        let span = self.here();
        let token = match self.chars.peek().copied() {
            Some(';') => Token::Semicolon,
            Some('{') => Token::Open,
            Some('}') => Token::Close,
            Some(q @ ('"' | '\'')) => {
                self.bump();
                return self.quoted(q, span).map(|w| Some((Token::Word(w), span)));
            }
            _ => return Ok(Some((Token::Word(self.word()), span))),
        };
        self.bump();
        Ok(Some((token, span)))
    }

    fn quoted(&mut self, quote: char, start: Span) -> Result<String, ConfigError> {
        let mut word = String::new();
        loop {
            match self.bump() {
                None => {
                    return Err(ConfigError::new(
                        ConfigErrorKind::Syntax,
                        "unexpected end of input in a quoted string",
                    )
                    .at(Some(start)))
                }
                Some(c) if c == quote => return Ok(word),
                Some('\\') => word.push(self.escaped()),
                Some(c) => word.push(c),
            }
        }
    }

    fn escaped(&mut self) -> char {
        match self.bump() {
            Some('t') => '\t',
            Some('r') => '\r',
            Some('n') => '\n',
            Some(c) => c,
            None => '\\',
        }
    }

    fn word(&mut self) -> String {
        let mut word = String::new();
        while let Some(&c) = self.chars.peek() {
            match c {
                '{' if word.ends_with('$') => {
                    // `${name}` is a variable, not a block.
                    while let Some(c) = self.bump() {
                        word.push(c);
                        if c == '}' {
                            break;
                        }
                    }
                }
                ';' | '{' | '}' => break,
                c if c.is_whitespace() => break,
                '\\' => {
                    self.bump();
                    word.push(self.escaped());
                }
                c => {
                    self.bump();
                    word.push(c);
                }
            }
        }
        word
    }
}

/// Reads every directive of `text`.
///
/// # Errors
///
/// [`ConfigErrorKind::Syntax`] for an open quote, a stray `;` or `}` or a
/// missing `;`, and [`ConfigErrorKind::NotAllowedHere`] for a block.
pub(crate) fn directives(text: &str) -> Result<Vec<Directive>, ConfigError> {
    let mut lexer = Lexer {
        chars: text.chars().peekable(),
        line: 1,
        column: 1,
    };
    let mut out = Vec::new();
    let mut current: Option<Directive> = None;
    while let Some((token, span)) = lexer.next_token()? {
        match (token, current.as_mut()) {
            (Token::Word(w), None) => {
                current = Some(Directive {
                    name: w,
                    span,
                    args: Vec::new(),
                })
            }
            (Token::Word(w), Some(d)) => d.args.push((w, span)),
            (Token::Semicolon, Some(_)) => out.extend(current.take()),
            (Token::Semicolon, None) => return Err(syntax("unexpected \";\"", span)),
            (Token::Open, d) => {
                let err = ConfigError::new(
                    ConfigErrorKind::NotAllowedHere,
                    "blocks are not supported here; apply a level to each route (location) instead",
                )
                .at(Some(span));
                return Err(match d {
                    Some(d) => err.in_directive(&d.name),
                    None => err,
                });
            }
            (Token::Close, _) => return Err(syntax("unexpected \"}\"", span)),
        }
    }
    match current {
        Some(d) => {
            Err(syntax("unexpected end of input, expecting \";\"", d.span).in_directive(&d.name))
        }
        None => Ok(out),
    }
}

fn syntax(message: &str, span: Span) -> ConfigError {
    ConfigError::new(ConfigErrorKind::Syntax, message).at(Some(span))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names_and_args(text: &str) -> Vec<(String, Vec<String>)> {
        directives(text)
            .expect("valid")
            .into_iter()
            .map(|d| (d.name, d.args.into_iter().map(|(a, _)| a).collect()))
            .collect()
    }

    #[test]
    fn comments_quotes_and_several_directives_per_line() {
        let got = names_and_args("a 1 2; # note ; {\nb \"x y\" 'q\\'s';c${v}d e#f;");
        assert_eq!(
            got,
            [
                ("a".to_owned(), vec!["1".to_owned(), "2".to_owned()]),
                ("b".to_owned(), vec!["x y".to_owned(), "q's".to_owned()]),
                ("c${v}d".to_owned(), vec!["e#f".to_owned()]),
            ]
        );
    }

    #[test]
    fn spans_count_lines_and_characters_from_one() {
        let d = directives("\n  é x;\n\tlimit_req  zone=a;").expect("valid");
        assert_eq!((d[0].span.line(), d[0].span.column()), (2, 3));
        assert_eq!((d[0].args[0].1.line(), d[0].args[0].1.column()), (2, 5));
        assert_eq!((d[1].args[0].1.line(), d[1].args[0].1.column()), (3, 13));
    }

    #[test]
    fn syntax_errors_point_at_the_token() {
        let e = directives("a;\n  ;").expect_err("stray");
        assert_eq!(
            (e.line(), e.column(), e.kind()),
            (Some(2), Some(3), &ConfigErrorKind::Syntax)
        );
        let e = directives("a \"open").expect_err("quote");
        assert_eq!((e.line(), e.column()), (Some(1), Some(3)));
        let e = directives("x 1;\nlimit_conn a 1").expect_err("no ;");
        assert_eq!((e.line(), e.directive()), (Some(2), Some("limit_conn")));
        let e = directives("site a {").expect_err("block");
        assert_eq!(
            (e.kind(), e.directive()),
            (&ConfigErrorKind::NotAllowedHere, Some("site"))
        );
        assert!(directives("}").is_err());
        assert_eq!(directives("  # only a comment").map(|d| d.len()), Ok(0));
    }
}
