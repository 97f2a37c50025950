//! Match expressions: a documented subset of the Cloudflare rules language.
