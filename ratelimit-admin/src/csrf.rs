//! CSRF protection: a random nonce in a cookie, and a token bound to it.
//!
//! A page load sets the cookie `ratelimit_admin_csrf` (a random 128-bit
//! nonce, `HttpOnly`, `SameSite=Strict`) and writes into every form the
//! token `SipHash-2-4-128(secret, nonce)`, where the secret is the
//! fleet's (`Control::csrf_secret`: kept in Valkey for a fleet, drawn from
//! the operating system's random source for one process), so a form
//! rendered by one instance posts back to any other.
//! A POST is served only when its form's token is the MAC of its cookie's
//! nonce. Another site can neither read the cookie nor compute a token
//! for a nonce it planted (it does not know the secret). The page keeps
//! the secret as [`fleet`] says: read again on every render, and when a
//! token fails against the last one read.

mod fleet;

use http::HeaderMap;
use ratelimit_core::HashKey;

pub(crate) use fleet::FleetCsrf;

/// The cookie's name.
pub(crate) const COOKIE: &str = "ratelimit_admin_csrf";

/// The form field that carries the token.
pub(crate) const FIELD: &str = "csrf";

/// The fleet's secret, as a MAC key.
#[derive(Debug, Clone)]
pub(crate) struct Csrf {
    secret: HashKey,
}

impl Csrf {
    #[cfg(test)]
    pub(crate) fn new() -> Self {
        Self {
            secret: HashKey::random(),
        }
    }

    /// Keyed with the fleet's shared secret (`Control::csrf_secret`).
    pub(crate) fn from_secret(secret: &[u8; 32]) -> Self {
        let mut key = [0u8; 16];
        key.copy_from_slice(&secret[..16]);
        Self {
            secret: HashKey::new(key).derive(&secret[16..]),
        }
    }

    /// A fresh nonce, 32 lower-case hex characters.
    pub(crate) fn nonce() -> String {
        let mut bytes = [0u8; 16];
        if getrandom::fill(&mut bytes).is_err() {
            // Never on supported platforms; a random key's digest of a
            // constant is as unpredictable.
            bytes = HashKey::random().digest(b"nonce").0;
        }
        ratelimit_core::KeyDigest(bytes).to_hex()
    }

    /// The token of `nonce`.
    pub(crate) fn token(&self, nonce: &str) -> String {
        self.secret
            .derive(b"ratelimit-admin csrf")
            .digest(nonce.as_bytes())
            .to_hex()
    }

    /// Whether `nonce` and `token` have the shape of a pair (32 hex
    /// digits each), whatever the secret.
    pub(crate) fn well_formed(nonce: &str, token: &str) -> bool {
        let hex32 = |s: &str| s.len() == 32 && s.bytes().all(|b| b.is_ascii_hexdigit());
        hex32(nonce) && hex32(token)
    }

    /// Whether `token` is the token of `nonce` (compared in constant time).
    pub(crate) fn verify(&self, nonce: &str, token: &str) -> bool {
        if nonce.len() != 32 || !nonce.bytes().all(|b| b.is_ascii_hexdigit()) {
            return false;
        }
        let want = self.token(nonce);
        want.len() == token.len()
            && want
                .bytes()
                .zip(token.bytes())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    }
}

/// The nonce in the request's cookies, if any.
pub(crate) fn nonce_of(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(http::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.trim().to_owned())
}

/// The `Set-Cookie` value for `nonce`, scoped to `path`.
///
/// `path` is the mount path as the request spelled it (under a path
/// parameter, the client chose part of it), so it is encoded by
/// [`cookie_path`]: a `;` in it cannot end the attribute and add others.
pub(crate) fn set_cookie(nonce: &str, path: &str, secure: bool) -> String {
    let path = if path.is_empty() {
        "/".to_owned()
    } else {
        cookie_path(path)
    };
    let secure = if secure { "; Secure" } else { "" };
    format!("{COOKIE}={nonce}; Path={path}; HttpOnly; SameSite=Strict{secure}")
}

/// `path` with every byte outside the URI path characters that are also
/// plain in a cookie attribute (letters, digits, `-._~/!$&'()*+=:@%`)
/// percent-encoded: no `;` (the attribute separator), `,`, quote, space,
/// control or non-ASCII byte is left. A path that needed encoding no longer
/// matches the request's own, so the browser does not send the cookie back
/// and the page's forms are refused: such a path is an attack, not a mount.
pub(crate) fn cookie_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/!$&'()*+=:@%".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_verifies_only_for_its_nonce_and_its_secret() {
        let c = Csrf::new();
        let n = Csrf::nonce();
        let t = c.token(&n);
        assert!(c.verify(&n, &t));
        assert!(!c.verify(&Csrf::nonce(), &t), "another nonce");
        assert!(!Csrf::new().verify(&n, &t), "another instance's secret");
        assert!(!c.verify(&n, &t[..31]), "a truncated token");
        assert!(!c.verify(&n, ""), "no token");
        assert!(!c.verify("", &c.token("")), "an empty nonce");
    }

    #[test]
    fn the_cookie_path_cannot_end_its_attribute() {
        assert_eq!(cookie_path("/ops/limits"), "/ops/limits");
        assert_eq!(cookie_path("/t/a%3Bb"), "/t/a%3Bb", "already encoded");
        assert_eq!(cookie_path("/t/a;Domain=x"), "/t/a%3BDomain=x");
        assert_eq!(cookie_path("/t/a, b\"c\r\n"), "/t/a%2C%20b%22c%0D%0A");
        assert_eq!(cookie_path("/t/é"), "/t/%C3%A9");
        assert_eq!(
            set_cookie("n", "", false),
            format!("{COOKIE}=n; Path=/; HttpOnly; SameSite=Strict")
        );
    }

    #[test]
    fn the_nonce_is_read_among_other_cookies() {
        let mut h = HeaderMap::new();
        h.append(
            "cookie",
            "a=1; ratelimit_admin_csrf=abc ; b=2".parse().unwrap(),
        );
        assert_eq!(nonce_of(&h).as_deref(), Some("abc"));
        assert_eq!(nonce_of(&HeaderMap::new()), None);
    }
}
