//! [`ForwardedHeader`]: which forwarding header carries the chain, and how
//! much of it is read.

use http::header::HeaderName;

/// `X-Forwarded-For`, parsed once.
const X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");

/// Most forwarding entries looked at, from the right.
pub const MAX_CHAIN: usize = 64;

/// Which forwarding header carries the chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ForwardedHeader {
    /// `X-Forwarded-For: client, proxy1, proxy2`.
    #[default]
    XForwardedFor,
    /// RFC 7239 `Forwarded: for=client, for="[2001:db8::1]:4711"`.
    Forwarded,
}

impl ForwardedHeader {
    /// The header's (lower-case) name.
    pub fn name(self) -> &'static str {
        match self {
            ForwardedHeader::XForwardedFor => "x-forwarded-for",
            ForwardedHeader::Forwarded => "forwarded",
        }
    }

    /// The header's name, parsed.
    pub(crate) fn header_name(self) -> HeaderName {
        match self {
            ForwardedHeader::XForwardedFor => X_FORWARDED_FOR,
            ForwardedHeader::Forwarded => http::header::FORWARDED,
        }
    }
}
