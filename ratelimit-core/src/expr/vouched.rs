//! Fields the application vouches for: verified JWT claims and the
//! application's own values.
//!
//! ```text
//! claim = "http.request.jwt.claims" "[" string "]" [ "[" "0" "]" ]
//! app   = "app." name | "app" "[" string "]"
//! ```
//!
//! They read [`RequestAttrs::jwt_claims`](crate::RequestAttrs::jwt_claims)
//! and [`RequestAttrs::app_values`](crate::RequestAttrs::app_values) only,
//! which the tower layer fills from the `VerifiedClaims` and `AppValues`
//! extensions and its key extractors, never from request headers.

use super::ast::{StrField, CLAIMS_FIELD};
use super::error::{quote, ExprError};
use super::lexer::Tok;
use super::parser::Parser;

/// The longest claim or value name, in bytes (as for `jwt_claim:` and
/// `app:` key parts).
const MAX_NAME_BYTES: usize = 128;

/// Checks a claim or value name found at `col`.
fn check_name(name: &str, col: usize, what: &str) -> Result<(), ExprError> {
    if name.is_empty() {
        return Err(ExprError::new(col, format!("empty {what} name")));
    }
    if name.len() > MAX_NAME_BYTES {
        let msg = format!("{what} name longer than {MAX_NAME_BYTES} bytes");
        return Err(ExprError::new(col, msg));
    }
    if name.chars().any(char::is_control) {
        let msg = format!("invalid {what} name {}", quote(name));
        return Err(ExprError::new(col, msg));
    }
    Ok(())
}

/// The field of a word `app.NAME` found at `col`, if the word is one.
pub(super) fn app_dotted(word: &str, col: usize) -> Option<Result<StrField, ExprError>> {
    let name = word.strip_prefix("app.")?;
    Some(check_name(name, col, "application value").map(|()| StrField::App(name.to_owned())))
}

impl Parser {
    /// The `["name"]` (and an optional `[0]`) after
    /// `http.request.jwt.claims`.
    pub(super) fn claim_field(&mut self) -> Result<StrField, ExprError> {
        let name = self.bracketed_name(CLAIMS_FIELD, "claim")?;
        if self.peek().tok == Tok::LBracket {
            self.bump();
            let index = self.bump();
            if !index.tok.is_word("0") {
                let msg = format!(
                    "only `[0]` may follow a claim (a claim holds one value), found {}",
                    index.tok.describe()
                );
                return Err(ExprError::new(index.col, msg));
            }
            self.close_bracket("the claim's index")?;
        }
        Ok(StrField::Claim(name))
    }

    /// The `["name"]` after `app`.
    pub(super) fn app_field(&mut self) -> Result<StrField, ExprError> {
        let name = self.bracketed_name("app", "application value")?;
        Ok(StrField::App(name))
    }

    /// `["name"]` after the field `field`, naming a `what`.
    fn bracketed_name(&mut self, field: &str, what: &str) -> Result<String, ExprError> {
        let open = self.bump();
        if open.tok != Tok::LBracket {
            let msg = format!(
                "expected `[\"name\"]` after `{field}`, found {}",
                open.tok.describe()
            );
            return Err(ExprError::new(open.col, msg));
        }
        let (name, col) = self.string_after("`[`")?;
        check_name(&name, col, what)?;
        self.close_bracket(&format!("the {what} name"))?;
        Ok(name)
    }

    /// A `]` after `what`.
    fn close_bracket(&mut self, what: &str) -> Result<(), ExprError> {
        let close = self.bump();
        match close.tok {
            Tok::RBracket => Ok(()),
            Tok::Eof => Err(ExprError::new(
                close.col,
                format!("missing `]` after {what}"),
            )),
            other => Err(ExprError::new(
                close.col,
                format!("expected `]` after {what}, found {}", other.describe()),
            )),
        }
    }
}

#[cfg(test)]
mod tests;
