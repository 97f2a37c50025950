//! The message for a key part that is none: the valid parts, and the one
//! meant when it is near (`client_ip` -> `ip`, `header.x-tenant` ->
//! `header:x-tenant`).

use crate::suggest::closest;

/// The parts without a name.
const PLAIN: [&str; 8] = [
    "ip", "host", "method", "country", "asnum", "ja4", "locale", "constant",
];

/// The parts that take a name after a colon.
const NAMED: [&str; 5] = ["header", "cookie", "query", "jwt_claim", "app"];

/// `unknown key part "client_ip": did you mean "ip"? The parts are ...`.
pub(super) fn unknown_part(s: &str) -> String {
    let list = PLAIN
        .iter()
        .map(|p| (*p).to_owned())
        .chain(NAMED.iter().map(|p| format!("{p}:<name>")))
        .collect::<Vec<_>>()
        .join(", ");
    match meant(s) {
        Some(part) => {
            format!("unknown key part {s:?}: did you mean {part:?}? The parts are {list}")
        }
        None => format!("unknown key part {s:?}; the parts are {list}"),
    }
}

/// The part `s` most likely means: a slip in a plain name (`mehtod`), a
/// named part with another separator than `:` (`header.x-tenant`, or a slip
/// in the prefix: `heder:x`), or a plain name as one word of `s`
/// (`client_ip`, `ip_address`, `country_code`).
fn meant(s: &str) -> Option<String> {
    if let Some(p) = closest(s, &PLAIN) {
        return Some(p.to_owned());
    }
    for (at, sep) in s.char_indices() {
        if matches!(sep, ':' | '.' | '_' | '-' | '=' | '/') && at + 1 < s.len() {
            let (prefix, name) = (&s[..at], &s[at + 1..]);
            if let Some(p) = closest(prefix, &NAMED) {
                return Some(format!("{p}:{name}"));
            }
        }
    }
    let words = || {
        s.split(['_', '-', '.', ':', ' '])
            .map(str::to_ascii_lowercase)
    };
    PLAIN
        .iter()
        .find(|p| words().any(|w| w == **p))
        .map(|p| (*p).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_near_part_is_suggested() {
        assert_eq!(meant("client_ip").as_deref(), Some("ip"));
        assert_eq!(meant("ip_address").as_deref(), Some("ip"));
        assert_eq!(meant("IP").as_deref(), Some("ip"));
        assert_eq!(meant("mehtod").as_deref(), Some("method"));
        assert_eq!(meant("country_code").as_deref(), Some("country"));
        assert_eq!(meant("header.x-tenant").as_deref(), Some("header:x-tenant"));
        assert_eq!(meant("jwt_claim.sub").as_deref(), Some("jwt_claim:sub"));
        assert_eq!(
            meant("heder:x-api-key").as_deref(),
            Some("header:x-api-key")
        );
        assert_eq!(meant("user"), None);
        assert_eq!(meant(""), None);
    }
}
