//! The guide's chapters on the HTTP side, rendered from `docs/*.md`:
//! [Getting started](getting_started) first.
//!
//! Built only by rustdoc (and its doctests): a normal build never reads
//! the files. The index of the guide is
//! [`ratelimit_core::guide`](../../ratelimit_core/guide/index.html).

/// Links every chapter of this crate resolves the same way.
macro_rules! chapter {
    ($name:ident, $file:literal) => {
        #[doc = "[rules]: ../../../ratelimit_core/guide/rules/index.html"]
        #[doc = "[expressions]: ../../../ratelimit_core/guide/expressions/index.html"]
        #[doc = "[keyed]: ../../../ratelimit_core/guide/keyed/index.html"]
        #[doc = "[observability]: ../../../ratelimit_core/guide/observability/index.html"]
        #[doc = "[valkey]: ../../../ratelimit_valkey/guide/valkey/index.html"]
        #[doc = "[nginx]: ../../../ratelimit_nginx/guide/migrating_from_nginx/index.html"]
        #[doc = "[security]: crate::guide::security"]
        #[doc = "[glossary]: ../../../ratelimit_core/guide/glossary/index.html"]
        #[doc = include_str!("../docs/glossary-links.txt")]
        #[doc = "[security-proxies]: ../security/index.html#behind-proxies"]
        #[doc = "[cli]: ../../../ratelimit_cli/guide/cli/index.html"]
        #[doc = "[production]: ../../../ratelimit_cli/guide/production/index.html"]
        #[doc = "[valkey-hash-key]: ../../../ratelimit_valkey/guide/valkey/index.html#the-fleets-hash-key"]
        #[doc = "[fleet]: ../../../ratelimit_valkey/guide/fleet/index.html"]
        #[doc = "[operators-metrics]: ../../../ratelimit_admin/guide/operators/index.html#every-metric"]
        #[doc = "[client_ip]: crate::ClientIp"]
        #[doc = "[set_client_ip]: crate::SetClientIp"]
        #[doc = "[shared_bucket]: crate::RateLimitLayer::shared_bucket_without_peer"]
        #[doc = "[trusted_proxies]: crate::TrustedProxies"]
        #[doc = "[viewer]: crate::ViewerHeaders"]
        #[doc = "[verified_claims]: crate::VerifiedClaims"]
        #[doc = "[max_uri]: crate::RateLimitLayer::max_uri_bytes"]
        #[doc = "[make_response]: crate::RateLimitLayer::make_response"]
        #[doc = "[legacy]: crate::RateLimitLayer::legacy_headers"]
        #[doc = "[key_part]: crate::RateLimitLayer::key_part"]
        #[doc = "[hash_key]: ratelimit_core::HashKey"]
        #[doc = "[quota]: ratelimit_core::keyed::Quota"]
        #[doc = "[response_cost]: crate::ResponseCost"]
        #[doc = "[charge]: crate::Charge"]
        #[doc = "[charge_add]: crate::Charge::add"]
        #[doc = "[charge_before_end]: crate::RateLimitLayer::charge_before_end"]
        #[doc = "[limiter_charge]: ratelimit_core::Limiter::charge"]
        #[doc = "[charges]: crate::guide::charges"]
        #[doc = include_str!(concat!("../docs/", $file))]
        pub mod $name {}
    };
}

chapter!(getting_started, "getting-started.md");
chapter!(security, "security.md");
chapter!(charges, "charges.md");
chapter!(grpc, "grpc.md");
chapter!(
    migrating_from_tower_governor,
    "migrating-from-tower-governor.md"
);
