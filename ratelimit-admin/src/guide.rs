//! The guide's chapter on operating the limiter, rendered from
//! `docs/operators.md`: every metric in one table, the dashboard, the admin
//! page.
//!
//! Built only by rustdoc (and its doctests): a normal build never reads
//! the file. The index of the guide is
//! [`ratelimit_core::guide`](../../ratelimit_core/guide/index.html).

// Link definitions first: they win over the file's own relative links.
#[doc = "[observability]: ../../../ratelimit_core/guide/observability/index.html"]
#[doc = "[glossary]: ../../../ratelimit_core/guide/glossary/index.html"]
#[doc = "[fleet]: ../../../ratelimit_valkey/guide/fleet/index.html"]
#[doc = "[fleet-workflow]: ../../../ratelimit_valkey/guide/fleet/index.html#the-workflow"]
#[doc = include_str!("../docs/glossary-links.txt")]
#[doc = include_str!("../docs/operators.md")]
pub mod operators {}
