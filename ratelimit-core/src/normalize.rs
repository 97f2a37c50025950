//! The normalized forms of a host and a path, shared by the rule keys and
//! the nginx-compatible keys (`$host`, `$path`) of `ratelimit-nginx`.
//!
//! # Examples
//!
//! ```
//! use ratelimit_core::{normalize_host, normalize_path};
//!
//! assert_eq!(normalize_host("WWW.Example.COM.:8080"), "www.example.com");
//! assert_eq!(normalize_path(b"/a/./b/../%57p-Login.php"), &b"/a/Wp-Login.php"[..]);
//! ```

use std::borrow::Cow;

/// Lower-cases a host, drops its port and a trailing dot; IPv6 brackets stay.
pub fn normalize_host(host: &str) -> String {
    let host = host.trim();
    let without_port = if let Some(rest) = host.strip_prefix('[') {
        match rest.find(']') {
            Some(end) => &host[..end + 2],
            None => host,
        }
    } else {
        match host.rfind(':') {
            Some(colon) if host[colon + 1..].bytes().all(|b| b.is_ascii_digit()) => &host[..colon],
            _ => host,
        }
    };
    without_port.trim_end_matches('.').to_ascii_lowercase()
}

/// Decodes `%XX` escapes, merges repeated slashes and resolves `.` and
/// `..` segments (never above the root). Case is kept.
pub fn normalize_path(path: &[u8]) -> Cow<'_, [u8]> {
    let clean = path.first() == Some(&b'/')
        && !path.contains(&b'%')
        && !path.windows(2).any(|w| w == b"//" || w == b"/.");
    if clean {
        return Cow::Borrowed(path);
    }
    let decoded = percent_decode(path);
    let mut segments: Vec<&[u8]> = Vec::new();
    let parts: Vec<&[u8]> = decoded.split(|&b| b == b'/').collect();
    let last = parts.len().saturating_sub(1);
    let mut trailing_slash = false;
    for (n, seg) in parts.iter().enumerate() {
        match *seg {
            b"" => trailing_slash = n == last,
            b"." => trailing_slash = true,
            b".." => {
                segments.pop();
                trailing_slash = true;
            }
            s => {
                segments.push(s);
                trailing_slash = false;
            }
        }
    }
    let mut out = Vec::with_capacity(decoded.len() + 1);
    for s in &segments {
        out.push(b'/');
        out.extend_from_slice(s);
    }
    if trailing_slash || segments.is_empty() {
        out.push(b'/');
    }
    Cow::Owned(out)
}

fn percent_decode(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'%' {
            if let (Some(h), Some(l)) = (s.get(i + 1).and_then(hex), s.get(i + 2).and_then(hex)) {
                out.push(h << 4 | l);
                i += 3;
                continue;
            }
        }
        out.push(s[i]);
        i += 1;
    }
    out
}

fn hex(b: &u8) -> Option<u8> {
    (*b as char).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(p: &str) -> String {
        String::from_utf8_lossy(&normalize_path(p.as_bytes())).into_owned()
    }

    #[test]
    fn dot_segments_and_repeated_slashes_are_resolved() {
        assert_eq!(path("/"), "/");
        assert_eq!(path("/downloads/"), "/downloads/");
        assert_eq!(path("/a//b"), "/a/b");
        assert_eq!(path("/a/./b/."), "/a/b/");
        assert_eq!(path("/a/b/.."), "/a/");
        assert_eq!(path("/../../etc"), "/etc");
        assert_eq!(path(""), "/");
        assert_eq!(path("a/b"), "/a/b");
    }

    #[test]
    fn escapes_are_decoded_before_dot_segments_and_case_is_kept() {
        assert_eq!(path("/a/%2e%2E/Login"), "/Login");
        assert_eq!(path("/%41%4"), "/A%4");
        assert_eq!(path("/x%2Fy"), "/x/y");
        assert_eq!(normalize_path(b"/%ff").as_ref(), b"/\xff");
    }

    #[test]
    fn hosts_lose_port_case_and_trailing_dot() {
        assert_eq!(normalize_host("Example.com"), "example.com");
        assert_eq!(normalize_host("example.com.:443"), "example.com");
        assert_eq!(normalize_host("[2001:DB8::1]:8080"), "[2001:db8::1]");
        assert_eq!(normalize_host("[::1"), "[::1");
        assert_eq!(normalize_host(""), "");
    }
}
