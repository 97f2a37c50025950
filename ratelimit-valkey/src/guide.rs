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
#[doc = "[g-subject]: ../../../ratelimit_core/guide/glossary/index.html#subject"]
#[doc = "[g-key-part]: ../../../ratelimit_core/guide/glossary/index.html#key-part"]
#[doc = "[g-site-wide-rule]: ../../../ratelimit_core/guide/glossary/index.html#site-wide-rule"]
#[doc = "[g-partner]: ../../../ratelimit_core/guide/glossary/index.html#partner"]
#[doc = "[g-backstop]: ../../../ratelimit_core/guide/glossary/index.html#backstop"]
#[doc = "[g-slot]: ../../../ratelimit_core/guide/glossary/index.html#slot"]
#[doc = "[g-penalty]: ../../../ratelimit_core/guide/glossary/index.html#penalty"]
#[doc = "[g-lift]: ../../../ratelimit_core/guide/glossary/index.html#lift"]
#[doc = "[g-switch]: ../../../ratelimit_core/guide/glossary/index.html#switch"]
#[doc = "[g-hold]: ../../../ratelimit_core/guide/glossary/index.html#hold"]
#[doc = "[g-log-rule]: ../../../ratelimit_core/guide/glossary/index.html#log-rule"]
#[doc = "[g-canary]: ../../../ratelimit_core/guide/glossary/index.html#canary"]
#[doc = "[g-fleet-size]: ../../../ratelimit_core/guide/glossary/index.html#fleet-size"]
#[doc = "[g-hash-key]: ../../../ratelimit_core/guide/glossary/index.html#hash-key"]
#[doc = "[g-fail-mode]: ../../../ratelimit_core/guide/glossary/index.html#fail-mode"]
#[doc = "[g-count-rule]: ../../../ratelimit_core/guide/glossary/index.html#count-rule"]
#[doc = "[g-login-tuples]: ../../../ratelimit_core/guide/glossary/index.html#login-tuples"]
#[doc = "[g-publish]: ../../../ratelimit_core/guide/glossary/index.html#publish"]
#[doc = include_str!("../docs/valkey.md")]
pub mod valkey {}

// The chapter on running a fleet, rendered from `docs/fleet.md`.
#[doc = "[valkey]: crate::guide::valkey"]
#[doc = "[g-subject]: ../../../ratelimit_core/guide/glossary/index.html#subject"]
#[doc = "[g-key-part]: ../../../ratelimit_core/guide/glossary/index.html#key-part"]
#[doc = "[g-site-wide-rule]: ../../../ratelimit_core/guide/glossary/index.html#site-wide-rule"]
#[doc = "[g-partner]: ../../../ratelimit_core/guide/glossary/index.html#partner"]
#[doc = "[g-backstop]: ../../../ratelimit_core/guide/glossary/index.html#backstop"]
#[doc = "[g-slot]: ../../../ratelimit_core/guide/glossary/index.html#slot"]
#[doc = "[g-penalty]: ../../../ratelimit_core/guide/glossary/index.html#penalty"]
#[doc = "[g-lift]: ../../../ratelimit_core/guide/glossary/index.html#lift"]
#[doc = "[g-switch]: ../../../ratelimit_core/guide/glossary/index.html#switch"]
#[doc = "[g-hold]: ../../../ratelimit_core/guide/glossary/index.html#hold"]
#[doc = "[g-log-rule]: ../../../ratelimit_core/guide/glossary/index.html#log-rule"]
#[doc = "[g-canary]: ../../../ratelimit_core/guide/glossary/index.html#canary"]
#[doc = "[g-fleet-size]: ../../../ratelimit_core/guide/glossary/index.html#fleet-size"]
#[doc = "[g-hash-key]: ../../../ratelimit_core/guide/glossary/index.html#hash-key"]
#[doc = "[g-fail-mode]: ../../../ratelimit_core/guide/glossary/index.html#fail-mode"]
#[doc = "[g-count-rule]: ../../../ratelimit_core/guide/glossary/index.html#count-rule"]
#[doc = "[g-login-tuples]: ../../../ratelimit_core/guide/glossary/index.html#login-tuples"]
#[doc = "[g-publish]: ../../../ratelimit_core/guide/glossary/index.html#publish"]
#[doc = include_str!("../docs/fleet.md")]
pub mod fleet {}
