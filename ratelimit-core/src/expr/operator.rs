//! The operator of a comparison and its right side: a string, a set, an
//! address or a regular expression.
//!
//! ```text
//! operator = ("eq" | "ne" | "==" | "!=") value
//!          | "in" "{" value { [","] value } [","] "}"
//!          | "contains" string | "matches" string
//! ```

use super::ast::{IpTest, Node, StrOp, StrTest};
use super::error::{quote, ExprError};
use super::lexer::{Tok, Token};
use super::parser::Parser;
use super::pattern::Pattern;
use super::subject::Operand;
use crate::cidr::{parse_addr, parse_net, IpSet};

impl Parser {
    pub(super) fn operator(&mut self, operand: Operand) -> Result<Node, ExprError> {
        let op = self.bump();
        let name = op.tok.describe();
        let which = match &op.tok {
            Tok::EqEq => "eq",
            Tok::BangEq => "ne",
            Tok::Word(w) if matches!(w.as_str(), "eq" | "ne" | "in" | "contains" | "matches") => w,
            other => {
                let msg = format!(
                    "expected an operator (`eq`, `ne`, `in`, `contains`, `matches`), found {}",
                    other.describe()
                );
                return Err(ExprError::new(op.col, msg));
            }
        };
        let Operand::Str(subject) = operand else {
            return self.ip_operator(which, &name, op.col).map(Node::Ip);
        };
        let op = match which {
            "eq" => StrOp::Eq(self.string_after(&name)?.0),
            "ne" => StrOp::Ne(self.string_after(&name)?.0),
            "contains" => StrOp::Contains(self.string_after(&name)?.0),
            "matches" => {
                let (pattern, col) = self.string_after(&name)?;
                StrOp::Matches(Pattern::compile(&pattern, col)?)
            }
            _ => {
                let mut items: Vec<String> = self.set(false)?.into_iter().map(|(s, _)| s).collect();
                items.sort_unstable();
                items.dedup();
                StrOp::In(items)
            }
        };
        Ok(Node::Str(StrTest { subject, op }))
    }

    /// The right side of an operator on `ip.src`.
    fn ip_operator(&mut self, which: &str, name: &str, op_col: usize) -> Result<IpTest, ExprError> {
        if which == "in" {
            let mut nets = Vec::new();
            for (text, col) in self.set(true)? {
                let net = parse_net(&text).ok_or_else(|| {
                    ExprError::new(
                        col,
                        format!("invalid IP address or network {}", quote(&text)),
                    )
                })?;
                nets.push(net);
            }
            return Ok(IpTest::In(IpSet::new(nets)));
        }
        if which != "eq" && which != "ne" {
            let msg = format!("{name} needs a string field; `ip.src` is an address");
            return Err(ExprError::new(op_col, msg));
        }
        let t = self.bump();
        let (Tok::Word(text) | Tok::Str(text)) = t.tok else {
            return Err(value_error(&t, name, "an address"));
        };
        let addr = parse_addr(&text).ok_or_else(|| {
            let msg = if text.contains('/') {
                format!("{name} compares one address; use `in {{ … }}` for a network")
            } else {
                format!("invalid IP address {}", quote(&text))
            };
            ExprError::new(t.col, msg)
        })?;
        Ok(if which == "eq" {
            IpTest::Eq(addr)
        } else {
            IpTest::Ne(addr)
        })
    }

    /// A string literal after `after`, and its column.
    pub(super) fn string_after(&mut self, after: &str) -> Result<(String, usize), ExprError> {
        let t = self.bump();
        match t.tok {
            Tok::Str(s) => Ok((s, t.col)),
            _ => Err(value_error(&t, after, "a string in double quotes")),
        }
    }

    /// `{ a b … }` after `in`: the items with their columns; bare words are
    /// items only when `bare` (addresses), otherwise only strings are.
    fn set(&mut self, bare: bool) -> Result<Vec<(String, usize)>, ExprError> {
        let open = self.bump();
        if open.tok != Tok::LBrace {
            return Err(value_error(&open, "`in`", "`{`"));
        }
        let wanted = if bare {
            "an address"
        } else {
            "a string in double quotes"
        };
        let mut items = Vec::new();
        loop {
            let t = self.bump();
            match t.tok {
                Tok::RBrace if items.is_empty() => {
                    return Err(ExprError::new(
                        open.col,
                        "empty set; expected at least one value",
                    ));
                }
                Tok::RBrace => return Ok(items),
                Tok::Str(s) => items.push((s, t.col)),
                Tok::Word(w) if bare => items.push((w, t.col)),
                Tok::Eof => {
                    let msg = format!("missing `}}` to close the set at column {}", open.col);
                    return Err(ExprError::new(t.col, msg));
                }
                other => {
                    let msg = format!(
                        "expected {wanted} or `}}` in the set, found {}",
                        other.describe()
                    );
                    return Err(ExprError::new(t.col, msg));
                }
            }
            if self.peek().tok == Tok::Comma {
                self.bump();
            }
        }
    }
}

/// The error for token `t` where `wanted` should follow `after`.
fn value_error(t: &Token, after: &str, wanted: &str) -> ExprError {
    let msg = match &t.tok {
        Tok::Eof => format!("expected a value after {after}"),
        other => format!(
            "expected {wanted} after {after}, found {}",
            other.describe()
        ),
    };
    ExprError::new(t.col, msg)
}

#[cfg(test)]
mod tests {
    use crate::expr::ast::{IpTest, Node, StrOp, StrTest};
    use crate::expr::parser::parse;

    #[test]
    fn string_sets_are_sorted_without_repeats() {
        let n = parse(r#"http.host in { "b" "a", "b" }"#).unwrap();
        let Node::Str(StrTest {
            op: StrOp::In(items),
            ..
        }) = n
        else {
            panic!("{n:?}")
        };
        assert_eq!(items, ["a", "b"]);
    }

    #[test]
    fn ip_eq_stores_the_canonical_address() {
        let n = parse("ip.src eq ::ffff:192.0.2.1").unwrap();
        let Node::Ip(IpTest::Eq(addr)) = n else {
            panic!("{n:?}")
        };
        assert_eq!(addr, "192.0.2.1".parse::<std::net::IpAddr>().unwrap());
    }

    /// Found by replaying the `expression` fuzz corpus in a debug build:
    /// `a++++…` (240 nested repetitions, under the regex crate's default
    /// nest limit of 250) recursed in the regex compiler until the 2 MiB
    /// stack of a test thread overflowed, aborting the process.
    #[test]
    fn regex_nesting_overflowed_the_stack() {
        let run = |pattern: String| {
            std::thread::Builder::new()
                .stack_size(2 << 20)
                .spawn(move || parse(&format!(r#"http.host matches "{pattern}""#)).map(|_| ()))
                .expect("thread")
                .join()
                .expect("no stack overflow")
        };
        let err = run(format!("a{}", "+".repeat(240))).unwrap_err();
        assert!(err.message().contains("nest"), "{}", err.message());
        assert!(run(format!("a{}", "+".repeat(60))).is_ok());
        assert!(run(format!("{}a{}", "(".repeat(30), ")".repeat(30))).is_ok());
    }

    #[test]
    fn regex_syntax_errors_keep_only_the_last_line() {
        let err = parse(r#"http.host matches "a{2,1}""#).unwrap_err();
        assert!(err.message().starts_with("invalid regular expression: "));
        assert!(!err.message().contains('\n'));
    }
}
