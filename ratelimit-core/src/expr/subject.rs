//! The left side of a comparison: a field, a header by name, or `lower(…)`.
//!
//! ```text
//! subject = field | "lower" "(" subject ")"
//! field   = name | "http.request.headers" "[" string "]" | claim | app
//! ```
//!
//! `claim` and `app` are in `vouched.rs`.

use super::ast::{
    is_header_name, is_keyword, lookup_field, FieldKind, StrField, Subject, FIELD_NAMES,
    HEADERS_FIELD,
};
use super::error::{quote, ExprError};
use super::lexer::Tok;
use super::parser::Parser;
use super::vouched::app_dotted;

/// The left side of a comparison.
#[derive(Debug)]
pub(super) enum Operand {
    /// A string field, maybe lower-cased.
    Str(Subject),
    /// `ip.src`.
    Ip,
}

impl Parser {
    /// A field or `lower(…)` of one, and the column it starts at.
    pub(super) fn subject(&mut self) -> Result<(Operand, usize), ExprError> {
        let t = self.bump();
        let Tok::Word(name) = &t.tok else {
            let msg = format!("expected a field, found {}", t.tok.describe());
            return Err(ExprError::new(t.col, msg));
        };
        if self.peek().tok == Tok::LParen {
            return match name.as_str() {
                "lower" => self.lower_call(t.col),
                "starts_with" | "ends_with" => Err(ExprError::new(
                    t.col,
                    format!("{} is a condition, not a field", quote(name)),
                )),
                _ => Err(ExprError::new(
                    t.col,
                    format!("unknown function {}", quote(name)),
                )),
            };
        }
        let operand = match lookup_field(name) {
            Some(FieldKind::Str(field)) => Operand::Str(Subject {
                field,
                lower: false,
            }),
            Some(FieldKind::Ip) => Operand::Ip,
            Some(FieldKind::Headers) => Operand::Str(Subject {
                field: self.header_name()?,
                lower: false,
            }),
            Some(FieldKind::Claims) => Operand::Str(Subject {
                field: self.claim_field()?,
                lower: false,
            }),
            Some(FieldKind::App) => Operand::Str(Subject {
                field: self.app_field()?,
                lower: false,
            }),
            None if is_keyword(name) || name == "true" || name == "false" => {
                let msg = format!("expected a field, found {}", quote(name));
                return Err(ExprError::new(t.col, msg));
            }
            None if name.starts_with("app.") => Operand::Str(Subject {
                field: app_dotted(name, t.col).expect("an app. word")?,
                lower: false,
            }),
            None => return Err(ExprError::new(t.col, unknown_field(name))),
        };
        Ok((operand, t.col))
    }

    /// The rest of `lower(subject)`, the name at `col` already taken.
    fn lower_call(&mut self, col: usize) -> Result<(Operand, usize), ExprError> {
        self.enter(col)?;
        let open = self.bump();
        let (inner, inner_col) = self.subject()?;
        let Operand::Str(mut subject) = inner else {
            let msg = "`lower` needs a string field; `ip.src` is an address";
            return Err(ExprError::new(inner_col, msg));
        };
        self.close_paren(open.col)?;
        self.leave();
        subject.lower = true;
        Ok((Operand::Str(subject), col))
    }

    /// The `["name"]` after `http.request.headers`.
    fn header_name(&mut self) -> Result<StrField, ExprError> {
        let open = self.bump();
        if open.tok != Tok::LBracket {
            let msg = format!(
                "expected `[\"name\"]` after `{HEADERS_FIELD}`, found {}",
                open.tok.describe()
            );
            return Err(ExprError::new(open.col, msg));
        }
        let (name, col) = self.string_after("`[`")?;
        if !is_header_name(&name) {
            return Err(ExprError::new(
                col,
                format!("invalid header name {}", quote(&name)),
            ));
        }
        let close = self.bump();
        match close.tok {
            Tok::RBracket => Ok(StrField::Header(name.to_ascii_lowercase())),
            Tok::Eof => Err(ExprError::new(
                close.col,
                "missing `]` after the header name",
            )),
            other => Err(ExprError::new(
                close.col,
                format!(
                    "expected `]` after the header name, found {}",
                    other.describe()
                ),
            )),
        }
    }
}

/// The message for a word that is no field: the closest field when one is
/// near (`http.request.uri.pth`), else the list.
fn unknown_field(name: &str) -> String {
    match crate::suggest::closest(name, &FIELD_NAMES) {
        Some(field) => format!("unknown field {}: did you mean `{field}`?", quote(name)),
        None => format!(
            "unknown field {}; the fields are {}",
            quote(name),
            FIELD_NAMES.map(|f| format!("`{f}`")).join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use crate::expr::ast::{Node, StrField, StrTest};
    use crate::expr::parser::parse;

    fn field_of(src: &str) -> (StrField, bool) {
        match parse(src).unwrap() {
            Node::Str(StrTest { subject, .. }) => (subject.field, subject.lower),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn header_names_are_lowercased_at_parse_time() {
        let (field, _) = field_of(r#"http.request.headers["X-Api-KEY"] eq "k""#);
        assert_eq!(field, StrField::Header("x-api-key".into()));
    }

    #[test]
    fn lower_marks_the_subject() {
        assert_eq!(
            field_of(r#"lower(http.host) eq "a""#),
            (StrField::Host, true)
        );
        assert_eq!(field_of(r#"http.host eq "a""#), (StrField::Host, false));
    }

    #[test]
    fn user_agent_and_cookie_fields_resolve() {
        assert_eq!(field_of(r#"http.user_agent eq "a""#).0, StrField::UserAgent);
        assert_eq!(field_of(r#"http.cookie eq "a""#).0, StrField::Cookie);
    }
}
