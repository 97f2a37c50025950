//! The guide's chapters on Valkey and on running a fleet, rendered from
//! `docs/valkey.md` and `docs/fleet.md`.
//!
//! Built only by rustdoc (and its doctests): a normal build never reads
//! the files. The index of the guide is
//! [`ratelimit_core::guide`](../../ratelimit_core/guide/index.html).

// Link definitions first: they win over the file's own relative links.
#[doc = "[rules]: ../../../ratelimit_core/guide/rules/index.html"]
#[doc = "[observability]: ../../../ratelimit_core/guide/observability/index.html"]
#[doc = "[builder]: crate::ValkeyBackend::builder"]
#[doc = "[key_of]: crate::key_of"]
#[doc = "[backend_key_of]: crate::ValkeyBackend::key_of"]
#[doc = "[require_connection]: crate::ValkeyBuilder::require_connection"]
#[doc = "[hash_key]: crate::ValkeyBuilder::hash_key"]
#[doc = "[live_fleet]: crate::ValkeyBackend::live_fleet"]
#[doc = include_str!("../docs/glossary-links.txt")]
#[doc = include_str!("../docs/valkey.md")]
pub mod valkey {}

// The chapter on running a fleet, rendered from `docs/fleet.md`.
#[doc = "[valkey]: crate::guide::valkey"]
#[doc = include_str!("../docs/glossary-links.txt")]
#[doc = include_str!("../docs/fleet.md")]
pub mod fleet {}
