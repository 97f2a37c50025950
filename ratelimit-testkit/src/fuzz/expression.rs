//! Target `expression`: the match-expression parser and evaluator.

use ratelimit_core::Expression;

use super::request::request_from_bytes;

/// Target `expression`: [`Expression::parse`] on the text before the first
/// NUL byte (UTF-8 only); when it parses, [`Expression::matches`] on the
/// request read from the bytes after it (see [`request_from_bytes`]).
pub fn expression(data: &[u8]) {
    let (src, rest) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let Ok(src) = std::str::from_utf8(src) else {
        return;
    };
    match Expression::parse(src) {
        Ok(expr) => {
            assert_eq!(expr.to_string(), src);
            assert_eq!(expr.source(), src);
            let (req, _) = request_from_bytes(rest);
            let first = expr.matches(&req);
            assert_eq!(expr.clone().matches(&req), first);
            let _ = expr.is_always_true();
        }
        Err(err) => {
            // The 1-based column, at most one past the last character.
            let chars = src.chars().count();
            assert!(
                (1..=chars + 1).contains(&err.column()),
                "column {} of {} characters: {err}",
                err.column(),
                chars
            );
            assert_eq!(
                err.to_string(),
                format!("column {}: {}", err.column(), err.message())
            );
        }
    }
}
