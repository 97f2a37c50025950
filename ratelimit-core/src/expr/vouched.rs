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
mod tests {
    use std::collections::BTreeMap;

    use crate::{Expression, RequestAttrs};

    fn req() -> RequestAttrs {
        RequestAttrs::new("192.0.2.1".parse().unwrap())
    }

    fn pro() -> RequestAttrs {
        let claims = BTreeMap::from([("plan".to_owned(), "pro".to_owned())]);
        req()
            .with_jwt_claims(claims)
            .with_app_value("tenant", "Acme")
    }

    fn parse(src: &str) -> Expression {
        Expression::parse(src).unwrap_or_else(|e| panic!("{src}: {e}"))
    }

    fn err(src: &str) -> String {
        Expression::parse(src).unwrap_err().to_string()
    }

    #[test]
    fn claims_read_the_verified_claims_only() {
        for src in [
            r#"http.request.jwt.claims["plan"][0] eq "pro""#,
            r#"http.request.jwt.claims["plan"] eq "pro""#,
            r#"http.request.jwt.claims["plan"] in { "pro" "team" }"#,
            r#"lower(http.request.jwt.claims["plan"]) eq "pro""#,
        ] {
            let e = parse(src);
            assert!(e.matches(&pro()), "{src}");
            assert!(!e.matches(&req()), "{src}: no verified token");
            let spoofed = req()
                .with_header("plan", "pro")
                .with_app_value("plan", "pro");
            assert!(
                !e.matches(&spoofed),
                "{src}: not from headers or app values"
            );
        }
        let missing = parse(r#"http.request.jwt.claims["plan"] eq """#);
        assert!(
            missing.matches(&req()),
            "a missing claim is the empty string"
        );
    }

    #[test]
    fn app_values_read_the_applications_values_only() {
        for src in [
            r#"app.tenant eq "Acme""#,
            r#"app["tenant"] eq "Acme""#,
            r#"starts_with(app.tenant, "Ac")"#,
            r#"app["tenant"] matches "^A""#,
        ] {
            let e = parse(src);
            assert!(e.matches(&pro()), "{src}");
            assert!(!e.matches(&req().with_header("tenant", "Acme")), "{src}");
        }
        let first = req().with_app_value("t", "one").with_app_value("t", "two");
        assert!(
            parse(r#"app.t eq "one""#).matches(&first),
            "the first counts"
        );
    }

    #[test]
    fn a_rule_with_a_bad_field_fails_to_load_naming_the_rule_and_field() {
        let json = r#"[{"id": "pro", "expression": "http.request.jwt.claims[\"plan\"][2] eq \"pro\"",
            "algorithm": "fixed_window", "limit": 5, "period": "1m", "key": ["jwt_claim:sub"]}]"#;
        let e = crate::rules::RuleSet::from_json(json)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("pro") && e.contains("expression") && e.contains("[0]"),
            "{e}"
        );
    }

    #[test]
    fn the_jwt_switch_hides_claims_from_expressions() {
        let e = parse(r#"http.request.jwt.claims["plan"] eq "pro""#);
        assert!(e.matches_with(&pro(), false));
        assert!(!e.matches_with(&pro(), true));
        assert!(parse(r#"app.tenant eq "Acme""#).matches_with(&pro(), true));
    }

    #[test]
    fn bad_claims_and_app_fields_are_refused_at_load() {
        let cases = [
            (
                r#"http.request.jwt.claims eq "x""#,
                "column 25: expected `[\"name\"]` after `http.request.jwt.claims`, found `eq`",
            ),
            (
                r#"http.request.jwt.claims[""] eq "x""#,
                "column 25: empty claim name",
            ),
            (
                r#"http.request.jwt.claims["p"][1] eq "x""#,
                "column 30: only `[0]` may follow a claim (a claim holds one value), found `1`",
            ),
            (
                r#"http.request.jwt.claims["p"][0 eq "x""#,
                "column 32: expected `]` after the claim's index, found `eq`",
            ),
            (
                r#"http.request.jwt.claims["p" eq "x""#,
                "column 29: expected `]` after the claim name, found `eq`",
            ),
            (r#"app. eq "x""#, "column 1: empty application value name"),
            (
                r#"app eq "x""#,
                "column 5: expected `[\"name\"]` after `app`, found `eq`",
            ),
            (r#"app.t"#, ""),
        ];
        for (src, want) in cases {
            let got = err(src);
            if !want.is_empty() {
                assert_eq!(got, want, "{src}");
            }
        }
        assert_eq!(
            err("app[\"a\u{1}b\"] eq \"x\""),
            "column 5: invalid application value name `a\\u{1}b`"
        );
        let long = format!(r#"app.{} eq "x""#, "n".repeat(129));
        assert_eq!(
            err(&long),
            "column 1: application value name longer than 128 bytes"
        );
        assert!(Expression::parse(&format!(r#"app.{} eq "x""#, "n".repeat(128))).is_ok());
    }
}
