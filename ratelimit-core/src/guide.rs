//! The guide's chapters, rendered from `docs/*.md`: built only by rustdoc
//! (and its doctests), so the files outside the crate are never read by a
//! normal build.
//!
//! Each chapter is a Markdown file with relative links for reading on a
//! forge; the link definitions written before it here come first, so
//! rustdoc resolves the same labels to items and to the other chapters.
//!
#![doc = "[getting-started]: ../../ratelimit_tower/guide/getting_started/index.html"]
#![doc = "[glossary]: crate::guide::glossary"]
#![doc = "[operators]: ../../ratelimit_admin/guide/operators/index.html"]
#![doc = "[rules]: crate::guide::rules"]
#![doc = "[expressions]: crate::guide::expressions"]
#![doc = "[keyed]: crate::guide::keyed"]
#![doc = "[observability]: crate::guide::observability"]
#![doc = "[valkey]: ../../ratelimit_valkey/guide/valkey/index.html"]
#![doc = "[fleet]: ../../ratelimit_valkey/guide/fleet/index.html"]
#![doc = "[security]: ../../ratelimit_tower/guide/security/index.html"]
#![doc = "[charges]: ../../ratelimit_tower/guide/charges/index.html"]
#![doc = "[grpc]: ../../ratelimit_tower/guide/grpc/index.html"]
#![doc = "[governor]: ../../ratelimit_tower/guide/migrating_from_tower_governor/index.html"]
#![doc = "[nginx]: ../../ratelimit_nginx/guide/migrating_from_nginx/index.html"]
#![doc = "[schema]: crate::rules::RuleSet::json_schema"]
#![doc = "[cli]: ../../ratelimit_cli/guide/cli/index.html"]
#![doc = "[production]: ../../ratelimit_cli/guide/production/index.html"]
#![doc = include_str!("../docs/README.md")]

/// Links every chapter of this crate resolves the same way.
macro_rules! chapter {
    ($(#[$attr:meta])* $name:ident, $file:literal) => {
        #[doc = "[glossary]: crate::guide::glossary"]
        #[doc = include_str!("../docs/glossary-links.txt")]
        #[doc = "[production]: ../../../ratelimit_cli/guide/production/index.html"]
        #[doc = "[rules]: crate::guide::rules"]
        #[doc = "[expressions]: crate::guide::expressions"]
        #[doc = "[keyed]: crate::guide::keyed"]
        #[doc = "[observability]: crate::guide::observability"]
        #[doc = "[valkey]: ../../../ratelimit_valkey/guide/valkey/index.html"]
        #[doc = "[valkey-hash-key]: ../../../ratelimit_valkey/guide/valkey/index.html#the-fleets-hash-key"]
        #[doc = "[fleet]: ../../../ratelimit_valkey/guide/fleet/index.html"]
        #[doc = "[security]: ../../../ratelimit_tower/guide/security/index.html"]
        #[doc = "[governor]: ../../../ratelimit_tower/guide/migrating_from_tower_governor/index.html"]
        #[doc = "[grpc]: ../../../ratelimit_tower/guide/grpc/index.html"]
        #[doc = "[nginx]: ../../../ratelimit_nginx/guide/migrating_from_nginx/index.html"]
        #[doc = "[schema]: crate::rules::RuleSet::json_schema"]
        #[doc = "[operators]: ../../../ratelimit_admin/guide/operators/index.html"]
        #[doc = "[from_json]: crate::rules::RuleSet::from_json"]
        #[doc = "[json_schema]: crate::rules::RuleSet::json_schema"]
        #[doc = "[builder]: crate::rules::RuleBuilder"]
        #[doc = "[warnings]: crate::rules::Warning"]
        #[doc = "[publish]: crate::Limiter::publish"]
        #[doc = "[record_response]: crate::Limiter::record_response"]
        #[doc = "[charge]: crate::Limiter::charge"]
        #[doc = "[add_temporary]: crate::Limiter::add_temporary"]
        #[doc = "[penalty_capacity]: crate::LimiterBuilder::penalty_cache_capacity"]
        #[doc = "[local_capacity]: crate::LimiterBuilder::local_capacity"]
        #[doc = "[count_capacity]: crate::LimiterBuilder::count_capacity"]
        #[doc = "[fleet_size]: crate::LimiterBuilder::fleet_size"]
        #[doc = "[switches]: crate::switches::Switches"]
        #[doc = "[hash_key]: crate::HashKey"]
        #[doc = "[app_value]: crate::RequestAttrs::with_app_value"]
        #[doc = "[with_cost]: crate::RequestAttrs::with_cost"]
        #[doc = "[expression]: crate::Expression::parse"]
        #[doc = "[attrs]: crate::RequestAttrs::host"]
        #[doc = "[keyed_rule]: crate::Limiter::keyed_rule"]
        #[doc = "[keyed_quota]: crate::Limiter::keyed_quota"]
        #[doc = "[keyed_limit]: crate::keyed::KeyedLimit"]
        #[doc = "[quota]: crate::keyed::Quota"]
        #[doc = "[key]: crate::keyed::Key"]
        #[doc = "[keyed_decision]: crate::keyed::KeyedDecision"]
        #[doc = "[keyed_error]: crate::keyed::KeyedError"]
        #[doc = "[until_ready]: crate::keyed::KeyedLimit::until_ready"]
        #[doc = "[rule_stats]: crate::Limiter::rule_stats"]
        #[doc = "[layer]: ../../../ratelimit_tower/struct.RateLimitLayer.html"]
        #[doc = "[layer_json]: ../../../ratelimit_tower/struct.RateLimitLayer.html#method.from_json_str"]
        #[doc = "[legacy]: ../../../ratelimit_tower/struct.RateLimitLayer.html#method.legacy_headers"]
        #[doc = include_str!(concat!("../docs/", $file))]
        $(#[$attr])*
        pub mod $name {}
    };
}

chapter!(rules, "rules.md");
chapter!(expressions, "expressions.md");
chapter!(keyed, "keyed.md");
chapter!(observability, "observability.md");
chapter!(glossary, "glossary.md");
