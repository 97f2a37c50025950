//! Recursive descent from tokens to a [`Node`] tree.
//!
//! ```text
//! expr    = and { ("or" | "||") and }
//! and     = unary { ("and" | "&&") unary }
//! unary   = ("not" | "!") unary | primary
//! primary = "(" expr ")" | "true" | "false"
//!         | ("starts_with" | "ends_with") "(" subject "," string ")"
//!         | subject operator
//! subject = field | "lower" "(" subject ")"                  (subject.rs)
//! field   = name | "http.request.headers" "[" string "]"
//! operator = ("eq" | "ne" | "==" | "!=") value              (operator.rs)
//!          | "in" "{" value { [","] value } [","] "}"
//!          | "contains" string | "matches" string
//! ```
//!
//! Every `not`, parenthesis and function call is one level of nesting; more
//! than [`MAX_DEPTH`] levels is an error, so the recursion stays shallow.

use super::ast::{Node, StrOp, StrTest};
use super::error::ExprError;
use super::lexer::{tokenize, Tok, Token};
use super::subject::Operand;

/// The deepest nesting of `not`, parentheses and function calls.
pub(super) const MAX_DEPTH: usize = 64;

/// Returned by [`Parser::peek`] past the end; never reached in practice, as
/// the parser never steps over the final [`Tok::Eof`].
static PAST_END: Token = Token {
    tok: Tok::Eof,
    col: 0,
};

/// Parses a whole expression.
pub(super) fn parse(src: &str) -> Result<Node, ExprError> {
    let mut p = Parser {
        toks: tokenize(src)?,
        pos: 0,
        depth: 0,
    };
    let node = p.expr()?;
    let end = p.bump();
    match end.tok {
        Tok::Eof => Ok(node),
        Tok::RParen => Err(ExprError::new(
            end.col,
            "unexpected `)` without a matching `(`",
        )),
        other => Err(ExprError::new(
            end.col,
            format!(
                "expected `and`, `or` or the end of the expression, found {}",
                other.describe()
            ),
        )),
    }
}

/// A cursor over the tokens, with the current nesting depth.
///
/// The grammar is spread over three files: this one holds the boolean
/// structure, `subject.rs` the left side of a comparison and `operator.rs`
/// the operator and its right side.
#[derive(Debug)]
pub(super) struct Parser {
    toks: Vec<Token>,
    pos: usize,
    depth: usize,
}

impl Parser {
    pub(super) fn peek(&self) -> &Token {
        self.toks.get(self.pos).unwrap_or(&PAST_END)
    }

    fn peek_second(&self) -> &Tok {
        self.toks.get(self.pos + 1).map_or(&Tok::Eof, |t| &t.tok)
    }

    /// Takes the next token; stays on the final [`Tok::Eof`].
    pub(super) fn bump(&mut self) -> Token {
        let t = self.peek().clone();
        if t.tok != Tok::Eof {
            self.pos += 1;
        }
        t
    }

    pub(super) fn enter(&mut self, col: usize) -> Result<(), ExprError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(ExprError::new(
                col,
                format!("nesting deeper than {MAX_DEPTH} levels"),
            ));
        }
        Ok(())
    }

    pub(super) fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Takes the `)` closing the `(` at `open_col`.
    pub(super) fn close_paren(&mut self, open_col: usize) -> Result<(), ExprError> {
        let t = self.bump();
        match t.tok {
            Tok::RParen => Ok(()),
            Tok::Eof => Err(ExprError::new(
                t.col,
                format!("missing `)` to close the `(` at column {open_col}"),
            )),
            other => Err(ExprError::new(
                t.col,
                format!(
                    "expected `)` to close the `(` at column {open_col}, found {}",
                    other.describe()
                ),
            )),
        }
    }

    fn expr(&mut self) -> Result<Node, ExprError> {
        self.chain("or", &Tok::OrOr, Self::and, Node::Or)
    }

    fn and(&mut self) -> Result<Node, ExprError> {
        self.chain("and", &Tok::AndAnd, Self::unary, Node::And)
    }

    /// `item { sep item }`, as one flat node when there are several items.
    fn chain(
        &mut self,
        word: &str,
        symbol: &Tok,
        item: fn(&mut Self) -> Result<Node, ExprError>,
        flat: fn(Vec<Node>) -> Node,
    ) -> Result<Node, ExprError> {
        let is_sep = |t: &Tok| t == symbol || t.is_word(word);
        let first = item(self)?;
        if !is_sep(&self.peek().tok) {
            return Ok(first);
        }
        let mut items = vec![first];
        while is_sep(&self.peek().tok) {
            self.bump();
            items.push(item(self)?);
        }
        // Cheap tests first: evaluation has no side effects, so the order
        // of `and` / `or` terms never changes the result, only what a
        // short-circuit saves.
        items.sort_by_key(Node::runs_a_regex);
        Ok(flat(items))
    }

    fn unary(&mut self) -> Result<Node, ExprError> {
        let t = self.peek();
        if t.tok == Tok::Bang || t.tok.is_word("not") {
            let col = t.col;
            self.enter(col)?;
            self.bump();
            let inner = self.unary()?;
            self.leave();
            return Ok(Node::Not(Box::new(inner)));
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Node, ExprError> {
        let t = self.peek().clone();
        match &t.tok {
            Tok::LParen => {
                self.enter(t.col)?;
                self.bump();
                let inner = self.expr()?;
                self.close_paren(t.col)?;
                self.leave();
                Ok(inner)
            }
            Tok::Word(w) if w == "true" || w == "false" => {
                self.bump();
                Ok(Node::Const(w == "true"))
            }
            Tok::Word(w)
                if (w == "starts_with" || w == "ends_with")
                    && *self.peek_second() == Tok::LParen =>
            {
                self.affix_call(w == "starts_with")
            }
            Tok::Word(_) => {
                let (operand, _) = self.subject()?;
                self.operator(operand)
            }
            other => Err(ExprError::new(
                t.col,
                format!("expected a condition, found {}", other.describe()),
            )),
        }
    }

    /// `starts_with(subject, "x")` or `ends_with(subject, "x")`.
    fn affix_call(&mut self, starts: bool) -> Result<Node, ExprError> {
        let name = self.bump();
        let open = self.bump();
        self.enter(name.col)?;
        let (operand, col) = self.subject()?;
        let Operand::Str(subject) = operand else {
            let msg = format!(
                "{} needs a string field; `ip.src` is an address",
                name.tok.describe()
            );
            return Err(ExprError::new(col, msg));
        };
        let comma = self.bump();
        if comma.tok != Tok::Comma {
            let msg = format!(
                "expected `,` after the field, found {}",
                comma.tok.describe()
            );
            return Err(ExprError::new(comma.col, msg));
        }
        let (text, _) = self.string_after("`,`")?;
        self.close_paren(open.col)?;
        self.leave();
        let op = if starts {
            StrOp::StartsWith(text)
        } else {
            StrOp::EndsWith(text)
        };
        Ok(Node::Str(StrTest { subject, op }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(src: &str) -> Node {
        parse(src).unwrap()
    }

    #[test]
    fn and_or_chains_are_flat_lists() {
        let n = tree("true and false and true or false");
        let Node::Or(items) = n else { panic!("{n:?}") };
        assert_eq!(items.len(), 2);
        assert!(matches!(&items[0], Node::And(a) if a.len() == 3));
        assert!(matches!(&items[1], Node::Const(false)));
    }

    #[test]
    fn regex_terms_run_after_cheap_ones() {
        let n = tree(
            r#"http.host matches "a+" and (ip.src eq 192.0.2.1 or http.host matches "b") and http.host eq "c""#,
        );
        let Node::And(items) = n else { panic!("{n:?}") };
        assert!(
            matches!(&items[0], Node::Str(t) if matches!(t.op, StrOp::Eq(_))),
            "{items:?}"
        );
        assert!(items[1].runs_a_regex() && items[2].runs_a_regex());
        let Node::Or(inner) = &items[2] else {
            panic!("{items:?}")
        };
        assert!(matches!(&inner[0], Node::Ip(_)), "{inner:?}");
    }

    #[test]
    fn parentheses_add_no_node() {
        assert!(matches!(tree("((( true )))"), Node::Const(true)));
        assert!(matches!(tree("!(true)"), Node::Not(inner) if matches!(*inner, Node::Const(true))));
    }

    #[test]
    fn depth_returns_to_zero_after_each_group() {
        let group = format!("{}true{}", "(".repeat(MAX_DEPTH), ")".repeat(MAX_DEPTH));
        let many = [group.as_str(); 3].join(" and ");
        assert!(parse(&many).is_ok());
    }

    #[test]
    fn functions_build_affix_tests() {
        let n = tree(r#"ends_with(http.host, ".com")"#);
        assert!(matches!(n, Node::Str(StrTest { op: StrOp::EndsWith(ref s), .. }) if s == ".com"));
    }
}
