//! Where a rule and its fields are in a rule file: line and column.
//!
//! The loader names a rule (by id, or `#index` when it has no usable id)
//! and a field; this finds them in the text. It scans JSON that
//! `serde_json` has already accepted, so it only tracks strings and
//! nesting.

/// A 1-based line and column (in characters) in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Position {
    /// The line, from 1.
    pub line: usize,
    /// The column, from 1, in characters.
    pub column: usize,
}

/// The line and column of byte `offset` of `text`.
pub(crate) fn position(text: &str, offset: usize) -> Position {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    Position { line, column }
}

/// One rule object of a rule file: where it starts, and where each of its
/// fields' names is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RuleSpan {
    /// The byte offset of its `{` (or of the value, when not an object).
    pub start: usize,
    /// Each field's name (decoded) and the offset of its opening quote.
    pub fields: Vec<(String, usize)>,
}

impl RuleSpan {
    /// The offset of `field`'s name, else the rule's start.
    pub(crate) fn offset_of(&self, field: Option<&str>) -> usize {
        field
            .and_then(|f| self.fields.iter().find(|(n, _)| n == f))
            .map_or(self.start, |(_, at)| *at)
    }
}

/// The rules of `text` (a JSON list, or `{"rules": [...]}`), in order;
/// `None` when it is neither.
pub(crate) fn rule_spans(text: &str) -> Option<Vec<RuleSpan>> {
    let b = text.as_bytes();
    let mut at = ws(b, 0);
    if b.get(at) == Some(&b'{') {
        let (fields, _) = object(b, at)?;
        at = fields.iter().find(|(n, _)| n == "rules")?.1;
        // From the key's quote to its value.
        at = string_end(b, at)?;
        at = ws(b, at);
        at = ws(b, at + 1); // the ':'
    }
    if b.get(at) != Some(&b'[') {
        return None;
    }
    let mut spans = Vec::new();
    at = ws(b, at + 1);
    while b.get(at).is_some_and(|&c| c != b']') {
        let fields = match b[at] {
            b'{' => object(b, at)?.0,
            _ => Vec::new(),
        };
        spans.push(RuleSpan { start: at, fields });
        at = ws(b, value_end(b, at)?);
        if b.get(at) == Some(&b',') {
            at = ws(b, at + 1);
        }
    }
    Some(spans)
}

fn ws(b: &[u8], mut at: usize) -> usize {
    while b.get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    at
}

/// The offset just past the string starting (with its quote) at `at`.
fn string_end(b: &[u8], at: usize) -> Option<usize> {
    let mut i = at + 1;
    loop {
        match b.get(i)? {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
}

/// The offset just past the value starting at `at`.
fn value_end(b: &[u8], at: usize) -> Option<usize> {
    match b.get(at)? {
        b'"' => string_end(b, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = at;
            loop {
                match b.get(i)? {
                    b'"' => {
                        i = string_end(b, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        _ => {
            let mut i = at;
            while b.get(i).is_some_and(|c| !b",]} \t\r\n".contains(c)) {
                i += 1;
            }
            Some(i)
        }
    }
}

/// The fields of the object at `at` (names decoded, offsets of their
/// quotes) and the offset past it.
fn object(b: &[u8], at: usize) -> Option<(Vec<(String, usize)>, usize)> {
    let mut fields = Vec::new();
    let mut i = ws(b, at + 1);
    while b.get(i) == Some(&b'"') {
        let end = string_end(b, i)?;
        let name: String = serde_json::from_slice(&b[i..end]).ok()?;
        fields.push((name, i));
        i = ws(b, end);
        i = ws(b, i + 1); // the ':'
        i = ws(b, value_end(b, i)?);
        if b.get(i) == Some(&b',') {
            i = ws(b, i + 1);
        }
    }
    Some((fields, i + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_rules_and_fields_in_both_shapes() {
        let list = "[\n {\"id\": \"a\", \"limit\": [1, {\"x\": \"]\"}]},\n {\"id\": \"b\\\"\", \"key\": 2}\n]";
        let spans = rule_spans(list).unwrap();
        assert_eq!(spans.len(), 2);
        assert_eq!(
            position(list, spans[1].start),
            Position { line: 3, column: 2 }
        );
        let at = spans[1].offset_of(Some("key"));
        assert_eq!(&list[at..at + 5], "\"key\"");
        assert_eq!(spans[0].offset_of(Some("missing")), spans[0].start);
        let wrapped = "{\"rules\" : [ 7, {\"id\": \"c\"} ]}";
        let spans = rule_spans(wrapped).unwrap();
        assert_eq!(spans.len(), 2);
        assert_eq!(&wrapped[spans[1].start..spans[1].start + 1], "{");
        assert!(rule_spans("42").is_none());
    }

    #[test]
    fn columns_count_characters() {
        assert_eq!(position("é\"x\"", 2), Position { line: 1, column: 2 });
        assert_eq!(position("ab", 99), Position { line: 1, column: 3 });
        assert_eq!(position("[\n  {}", 4), Position { line: 2, column: 3 });
    }
}
