//! The guide's chapters on the command line and the production checklist,
//! rendered from `docs/*.md` (a link to the workspace's guide).
//!
//! Built only by rustdoc (and its doctests): a normal build never reads
//! the files. The index of the guide is
//! [`ratelimit_core::guide`](../../ratelimit_core/guide/index.html).

#[doc = include_str!("../docs/glossary-links.txt")]
#[doc = include_str!("../docs/cli.md")]
pub mod cli {}

#[doc = include_str!("../docs/glossary-links.txt")]
#[doc = include_str!("../docs/production.md")]
pub mod production {}
